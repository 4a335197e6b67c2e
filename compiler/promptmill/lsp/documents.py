"""The editor's open buffers, as an overlay over the files on disk that `Workspace.refresh` reads, and the
one rule for what else the server reads (docs/hostile-lsp.md):

- an open buffer's text comes from the editor, never from the disk;
- a file that is not open is read only when it is a regular file inside the workspace folder (after
  links), at most `MAX_DOCUMENT` bytes, through `core.userfiles` (a FIFO, `/dev/zero`, a file outside:
  nothing is read, the request gets an empty answer);
- a buffer longer than `MAX_DOCUMENT` characters is not analysed, and its edits are not followed (so a
  keystroke in a 50 MB buffer costs nothing): it gets one PM105 diagnostic until the editor sends its
  whole text again under the limit, saves it under the limit, or closes it.
"""

from __future__ import annotations

from pathlib import Path

from pygls.uris import to_fs_path

from ..core.diagnostics import Diagnostic
from ..core.errors import PromptmillError
from ..core.userfiles import read_text
from ..source.loader import DEFAULT_LIMITS

MAX_DOCUMENT = DEFAULT_LIMITS.max_file_bytes  # the loader's own limit for a template file (1 MiB)


def path_of(uri: str) -> Path | None:
    """The resolved file of a `file:` URI (None for other schemes: untitled buffers, git views)."""
    try:
        fs = to_fs_path(uri) if uri.startswith("file:") else None
        return Path(fs).resolve() if fs and "\x00" not in fs else None
    except (OSError, ValueError, RuntimeError):
        return None


def read_closed(path: Path, workspace: Path) -> str | None:
    """A file's text when it is a regular file inside `workspace` of at most MAX_DOCUMENT bytes; else None."""
    try:
        return read_text(path, limit=MAX_DOCUMENT, root=workspace, what="file")
    except PromptmillError:
        return None


def too_large(path: Path, size: int) -> Diagnostic:
    return Diagnostic(
        code="PM105",
        severity="error",
        file=str(path),
        line=1,
        col=1,
        message=f"the buffer is {size:,} characters; the limit is {MAX_DOCUMENT:,} bytes: promptmill does not analyse it",
        hint="make it smaller and save it (or close it); edits to a buffer over the limit are not followed",
    )


class Overlay:
    """Unsaved text by resolved path; `generation` counts edits, so a check can tell it is out of date.
    `oversize` holds the buffers over MAX_DOCUMENT (path -> characters): the linter sees them empty."""

    def __init__(self) -> None:
        self._buffers: dict[Path, bytes] = {}
        self.oversize: dict[Path, int] = {}
        self.generation = 0

    def put(self, uri: str, text: str) -> None:
        path = path_of(uri)
        if path is not None:
            # a lone surrogate cannot be UTF-8: keep it escaped, and the loader reports the text (PM102)
            self._buffers[path] = text.encode("utf-8", "surrogatepass")
            self.oversize.pop(path, None)
        self.generation += 1

    def put_oversize(self, uri: str, size: int) -> None:
        path = path_of(uri)
        if path is not None:
            self._buffers[path] = b""
            self.oversize[path] = size
        self.generation += 1

    def drop(self, uri: str) -> None:
        path = path_of(uri)
        if path is not None:
            self._buffers.pop(path, None)
            self.oversize.pop(path, None)
        self.generation += 1

    def snapshot(self) -> dict[Path, bytes]:
        return dict(self._buffers)

    def text(self, path: Path) -> str | None:
        raw = self._buffers.get(path)
        return raw.decode("utf-8", "replace") if raw is not None and path not in self.oversize else None
