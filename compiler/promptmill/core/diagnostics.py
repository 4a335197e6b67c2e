"""Diagnostics: the one value every compile-time check produces.

A `Diagnostic` is data (code, severity, position, message, hint). Checks collect
them; reporters in `promptmill.cli.reporters` print them once at the end. Nothing in
here imports YAML, jsonschema or click, so the runtime may use these types too.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from .codes import Severity
from .showtext import visible

_SEVERITY_RANK = {"error": 0, "warning": 1, "info": 2}


@dataclass(frozen=True, slots=True)
class Position:
    """A place in a source file: 1-based line and column (0 when unknown)."""

    file: str
    line: int = 0
    col: int = 0

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.col}"


@dataclass(frozen=True, slots=True)
class Diagnostic:
    """One finding: `file:line:col: severity[CODE] message` plus an optional hint."""

    code: str
    severity: Severity
    file: str
    line: int
    col: int
    message: str
    hint: str | None = None

    @classmethod
    def at(
        cls,
        pos: Position,
        code: str,
        message: str,
        *,
        hint: str | None = None,
        severity: Severity | None = None,
    ) -> Diagnostic:
        from .codes import default_severity

        return cls(
            code=code,
            severity=severity or default_severity(code),
            file=pos.file,
            line=pos.line,
            col=pos.col,
            message=message,
            hint=hint,
        )

    @property
    def position(self) -> Position:
        return Position(self.file, self.line, self.col)

    def format(self) -> str:
        """One line (two with a hint); invisible and bidi characters shown as escapes."""
        text = f"{visible(self.file)}:{self.line}:{self.col}: {self.severity}[{self.code}] {visible(self.message)}"
        if self.hint:
            text += f"\n    hint: {visible(self.hint)}"
        return text

    def sort_key(self) -> tuple[str, int, int, int, str, str]:
        return (self.file, self.line, self.col, _SEVERITY_RANK[self.severity], self.code, self.message)


def sort_diagnostics(diags: Iterable[Diagnostic]) -> list[Diagnostic]:
    """Deduplicate and order diagnostics by file, line, column, severity, code."""
    return sorted(set(diags), key=Diagnostic.sort_key)


def has_errors(diags: Iterable[Diagnostic], *, strict: bool = False) -> bool:
    """True when any diagnostic fails the run (warnings count only when strict)."""
    failing = {"error", "warning"} if strict else {"error"}
    return any(d.severity in failing for d in diags)
