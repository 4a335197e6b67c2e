"""`Workspace`: a project kept in memory, so that recompiling after an edit redoes only what the edit touched.

It owns the two caches `load_project` and `compile_bundles` accept: loaded files by
content hash, compiled roles by dependency hash (`compiling/freshness.py`).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from ..compose.budgets import model_table
from ..core.diagnostics import Diagnostic, has_errors, sort_diagnostics
from ..runtime.bundle import RoleBundle
from ..runtime.engine import Runtime
from ..source.project import Project
from .api import DocEntry, DocKey, Loaded, RoleMemo, abstract_roles, compile_bundles, load_project


class Workspace:
    """A project kept in memory so that recompiling after an edit is fast.

        ws = Workspace("path/to/project")
        runtime, diagnostics = ws.refresh()   # after every save
        if runtime is not None:
            req = runtime.render("executor", state)

    Each `refresh()` walks the project again (new, deleted and renamed files
    are seen), but a file whose bytes did not change is not parsed or checked
    again, and a role whose sources did not change is not compiled again: only
    what an edit touched costs time. Files are compared by content hash, so a
    caller need not say what changed. `reparsed` and `recompiled` tell what the
    last refresh actually redid, and `removed` which files it no longer found.
    """

    def __init__(self, path: str | os.PathLike[str] = ".") -> None:
        self.path = Path(path)
        self._docs: dict[DocKey, DocEntry] = {}
        self._roles: RoleMemo = {}
        self.reparsed: tuple[str, ...] = ()
        self.removed: tuple[str, ...] = ()
        self.recompiled: tuple[str, ...] = ()
        self.project: Project | None = None
        self.loaded: Loaded | None = None  # the last refresh's templates and index
        self.bundles: dict[str, RoleBundle] = {}  # the last refresh's roles that compiled, errors elsewhere or not

    def source_paths(self) -> list[Path]:
        """What an edit to the templates touches, for a watcher: the project's own template
        folders (the shipped library aside) and promptmill.yaml; before a refresh found a
        project, the workspace folder itself."""
        project = self.project
        if project is None:
            return [self.path]
        return [*(layer.root for layer in project.layers if layer.name != "library"), project.root / "promptmill.yaml"]

    def refresh(self, overlay: Mapping[Path, bytes] | None = None) -> tuple[Runtime | None, list[Diagnostic]]:
        """Recompile in memory: (Runtime, diagnostics), or (None, diagnostics) when there are errors.

        Never raises for template problems; a missing project folder is a
        diagnostic (PM011) like any other. `overlay` (resolved path -> bytes)
        replaces files' contents, for an editor's unsaved buffers.
        """
        before_docs = set(self._docs)
        before_sources = {entry.source for entry in self._docs.values()}
        before_roles = {rid: entry.key for rid, entry in self._roles.items()}
        loaded = load_project(self.path, cache=self._docs, overlay=overlay)
        bundles, _, diags = compile_bundles(loaded, memo=self._roles)
        self.project = loaded.project
        self.loaded = loaded
        self.bundles = {rid: entry.bundle for rid, entry in self._roles.items() if entry.bundle is not None}
        self.reparsed = tuple(sorted(self._docs[key].source for key in set(self._docs) - before_docs))
        self.removed = tuple(sorted(before_sources - {entry.source for entry in self._docs.values()}))
        self.recompiled = tuple(sorted(rid for rid, entry in self._roles.items() if before_roles.get(rid) != entry.key))
        all_diags = sort_diagnostics(loaded.diagnostics + diags)
        if has_errors(all_diags):
            return None, all_diags
        return Runtime(
            bundles, base_dir=loaded.project.root, abstract=abstract_roles(loaded), models=model_table(loaded.project)
        ), all_diags
