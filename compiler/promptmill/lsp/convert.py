"""promptmill's `Diagnostic` (1-based line and column, display path) -> lsprotocol's (0-based `Range`, URI)."""

from __future__ import annotations

import os
import re
from pathlib import Path

from lsprotocol import types
from pygls.uris import from_fs_path

from ..core.diagnostics import Diagnostic

_SEVERITY = {
    "error": types.DiagnosticSeverity.Error,
    "warning": types.DiagnosticSeverity.Warning,
    "info": types.DiagnosticSeverity.Information,
}
# another place a message names, `prompts/roles/a.yaml:3:1` (a duplicate id's first file, an extends parent)
_MENTION = re.compile(r"([^\s:'\"(),]+\.ya?ml):(\d+):(\d+)")


def file_path(display: str) -> Path:
    """The absolute path of a diagnostic's file (display paths are relative to the working folder)."""
    return Path(os.path.abspath(display))


def uri_of(path: Path) -> str:
    return from_fs_path(str(path)) or path.as_uri()


def lsp_range(line: int, col: int) -> types.Range:
    """A 1-based line and column (0: unknown) as a one-character LSP range."""
    start = types.Position(line=max(line - 1, 0), character=max(col - 1, 0))
    return types.Range(start=start, end=types.Position(line=start.line, character=start.character + 1))


def lsp_diagnostic(diag: Diagnostic) -> types.Diagnostic:
    """One promptmill diagnostic for the editor; the hint follows the message and rides along in `data`."""
    message = diag.message if not diag.hint else f"{diag.message}\nhint: {diag.hint}"
    related = [
        types.DiagnosticRelatedInformation(
            location=types.Location(uri=uri_of(file_path(m.group(1))), range=lsp_range(int(m.group(2)), int(m.group(3)))),
            message=f"{m.group(1)}:{m.group(2)}:{m.group(3)}",
        )
        for m in _MENTION.finditer(f"{diag.message} {diag.hint or ''}")
        if file_path(m.group(1)).is_file()
    ]
    return types.Diagnostic(
        range=lsp_range(diag.line, diag.col),
        message=message,
        severity=_SEVERITY[diag.severity],
        code=diag.code,
        source="promptmill",
        related_information=related or None,
        data={"hint": diag.hint} if diag.hint else None,
    )
