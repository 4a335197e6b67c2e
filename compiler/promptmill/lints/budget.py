"""The budget as compiled: PM501, sections that are never trimmed do not fit it on their own;
PM505, the role counts tokens approximately.

Static, unconditional `trim: never` sections are always sent; when they alone
need more tokens than `max_tokens - reserve`, no render can succeed, so the
compiler says so once instead of every render raising BudgetError.
"""

from __future__ import annotations

from ..compose.resolve import ComposedRole
from ..core.diagnostics import Diagnostic
from .context import LintContext


def static_over_budget(role: ComposedRole, ctx: LintContext) -> list[Diagnostic]:
    """PM501 at the role's id when the fixed sections exceed the budget, else nothing."""
    budget, separator = ctx.budget, ctx.separator
    if budget.reserve >= budget.max_tokens:
        return []  # PM503 already says what is wrong
    fixed = [s for s in ctx.sections if s.kind == "static" and s.trim == "never" and s.when is None]
    parts: list[str] = []
    for s in fixed:
        if parts:
            parts.append(separator)
        if s.title:
            parts.append(s.title + "\n")
        parts.append(s.text or "")
    total = ctx.counter.count_parts(parts)
    room = budget.max_tokens - budget.reserve
    if total <= room:
        return []
    detail = ", ".join(f"{s.id} ({s.tokens})" for s in sorted(fixed, key=lambda s: -s.tokens)[:8])
    return [
        Diagnostic.at(
            role.role.pos("id"),
            "PM501",
            f"static sections that are never trimmed need {total} tokens, but the budget allows "
            f"{room} (max_tokens {budget.max_tokens} - reserve {budget.reserve}): {detail}",
            hint="raise budget.max_tokens, shorten these sections, or let some be trimmed",
        )
    ]


def approximate_counts(role: ComposedRole, ctx: LintContext) -> list[Diagnostic]:
    """PM505 when the role's tokenizer only estimates counts."""
    if ctx.counter.tokenizer.exact:
        return []
    return [
        Diagnostic.at(
            role.role.pos("id"),
            "PM505",
            f"role '{role.role.id}' counts tokens with '{ctx.tokenizer}', an approximation: budgets are estimates",
            hint="name a real tokenizer (o200k_base, cl100k_base, hf:PATH) or a model",
        )
    ]
