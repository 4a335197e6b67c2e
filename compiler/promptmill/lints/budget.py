"""PM501: the sections that are never trimmed do not fit the budget on their own.

Static, unconditional `trim: never` sections are always sent; when they alone
need more tokens than `max_tokens - reserve`, no render can succeed, so the
compiler says so once instead of every render raising BudgetError.
"""

from __future__ import annotations

from ..core.diagnostics import Diagnostic, Position
from ..runtime.bundle import Budget, Section
from ..runtime.counting import Counter


def static_over_budget(sections: list[Section], counter: Counter, budget: Budget, separator: str, at: Position) -> list[Diagnostic]:
    """PM501 at `at` (the role's id) when the fixed sections exceed the budget, else nothing."""
    fixed = [s for s in sections if s.kind == "static" and s.trim == "never" and s.when is None]
    parts: list[str] = []
    for s in fixed:
        if parts:
            parts.append(separator)
        if s.title:
            parts.append(s.title + "\n")
        parts.append(s.text or "")
    total = counter.count_parts(parts)
    room = budget.max_tokens - budget.reserve
    if total <= room:
        return []
    detail = ", ".join(f"{s.id} ({s.tokens})" for s in sorted(fixed, key=lambda s: -s.tokens)[:8])
    return [
        Diagnostic.at(
            at,
            "PM501",
            f"static sections that are never trimmed need {total} tokens, but the budget allows "
            f"{room} (max_tokens {budget.max_tokens} - reserve {budget.reserve}): {detail}",
            hint="raise budget.max_tokens, shorten these sections, or let some be trimmed",
        )
    ]
