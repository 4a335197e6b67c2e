"""The editor's open buffers, as an overlay over the files on disk that `Workspace.refresh` reads."""

from __future__ import annotations

from pathlib import Path

from pygls.uris import to_fs_path


def path_of(uri: str) -> Path | None:
    """The resolved file of a `file:` URI (None for other schemes: untitled buffers, git views)."""
    fs = to_fs_path(uri) if uri.startswith("file:") else None
    return Path(fs).resolve() if fs else None


class Overlay:
    """Unsaved text by resolved path; `generation` counts edits, so a check can tell it is out of date."""

    def __init__(self) -> None:
        self._buffers: dict[Path, bytes] = {}
        self.generation = 0

    def put(self, uri: str, text: str) -> None:
        path = path_of(uri)
        if path is not None:
            # a lone surrogate cannot be UTF-8: keep it escaped, and the loader reports the text (PM102)
            self._buffers[path] = text.encode("utf-8", "surrogatepass")
        self.generation += 1

    def drop(self, uri: str) -> None:
        path = path_of(uri)
        if path is not None:
            self._buffers.pop(path, None)
        self.generation += 1

    def snapshot(self) -> dict[Path, bytes]:
        return dict(self._buffers)

    def text(self, path: Path) -> str | None:
        raw = self._buffers.get(path)
        return raw.decode("utf-8", "replace") if raw is not None else None
