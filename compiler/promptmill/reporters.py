"""TEMPORARY stand-in (replaced by the loader branch). Same public API."""
from __future__ import annotations

from collections.abc import Sequence
from typing import TextIO

from .diagnostics import Diagnostic, sort_diagnostics

FORMATS = ("text", "json", "github", "sarif")


def report(diagnostics: Sequence[Diagnostic], fmt: str, stream: TextIO, *, color: bool = False, files_checked: int | None = None) -> None:
    diags = sort_diagnostics(diagnostics)
    for d in diags:
        stream.write(d.format() + "\n")
    e = sum(d.severity == "error" for d in diags)
    w = sum(d.severity == "warning" for d in diags)
    stream.write(f"{e} errors, {w} warnings\n" if diags else "no problems\n")
