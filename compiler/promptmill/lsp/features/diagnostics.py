"""Diagnostics: the project linted with the open buffers over the files on disk, per file, none stale."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping
from pathlib import Path

from lsprotocol import types

from ...compiling.workspace import Workspace
from ..convert import file_path, lsp_diagnostic, uri_of
from ..documents import too_large


class Checker:
    """Lints the project at `root` through one `Workspace`, so an edit recompiles only what it touched
    (a fragment's edit recompiles the roles that use it). Remembers which files it published for, so
    that a file that became clean gets an empty list."""

    def __init__(self, root: Path) -> None:
        self.workspace = Workspace(root)
        self._published: set[str] = set()
        self.inputs: dict[str, dict] = {}  # role id -> its merged inputs schema, the last that compiled (kept while an edit breaks it)

    def lint(self, overlay: dict[Path, bytes], oversize: Mapping[Path, int] | None = None) -> dict[str, list[types.Diagnostic]]:
        """URI -> diagnostics of every file that has some (files named but absent are left out); a buffer
        in `oversize` (path -> characters) was linted empty and gets its one PM105 instead."""
        oversize = oversize or {}
        _, diags = self.workspace.refresh(overlay)
        self.inputs.update({rid: bundle.inputs for rid, bundle in self.workspace.bundles.items()})
        by_uri: dict[str, list[types.Diagnostic]] = defaultdict(list)
        for diag in diags:
            path = file_path(diag.file)
            if path.resolve() in oversize:
                continue
            if path.is_file() or path.resolve() in overlay:
                by_uri[uri_of(path)].append(lsp_diagnostic(diag))
        for path, size in oversize.items():
            by_uri[uri_of(path)] = [lsp_diagnostic(too_large(path, size))]
        return dict(by_uri)

    def to_publish(self, found: dict[str, list[types.Diagnostic]]) -> dict[str, list[types.Diagnostic]]:
        """What to send for `found`: it, plus an empty list for each file published before that is clean now."""
        send = dict(found)
        for uri in self._published - set(found):
            send[uri] = []
        self._published = set(found)
        return send
