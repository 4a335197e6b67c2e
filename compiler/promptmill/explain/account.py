"""Human-readable account of a render: what was kept and trimmed, and why."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..runtime.request import PromptRequest, RenderedSection


def _items(s: RenderedSection) -> str:
    if s.items_total is None:
        return ""
    dropped = s.items_total - len(s.items_kept)
    if not dropped:
        return f"{s.items_total} items"
    uncounted = s.items_total - s.items_counted
    extra = f", {uncounted} never rendered" if uncounted > 0 else ""
    return f"{len(s.items_kept)} of {s.items_total} items ({dropped} dropped{extra})"


def items_note(s: RenderedSection) -> str | None:
    """Which list items a section kept and dropped (the pretty preview and the web page), or None."""
    if s.items_total is None or not s.items_dropped:
        return None
    shown = ", ".join(str(i) for i in list(s.items_dropped)[:12]) + (", …" if len(s.items_dropped) > 12 else "")
    uncounted = s.items_total - s.items_counted
    note = f"kept {len(s.items_kept)} of {s.items_total} items; dropped items [{shown}]"
    return note + (f" ({uncounted} never rendered)" if uncounted > 0 else "")


def shown_reason(s: RenderedSection) -> str | None:
    """Why a section is not simply kept, where the previews show it (a list that kept some
    items says so in its `items_note` instead), or None."""
    return s.reason if s.reason and s.status != "kept" and (s.items_total is None or s.status == "dropped") else None


def dropped_entry(s: RenderedSection) -> str | None:
    """The previews' "dropped:" entry for a section: whole, truncated, or some of its items; or None."""
    if s.status == "dropped":
        return f"{s.id} (whole section)"
    if s.status == "truncated":
        return f"{s.id} (truncated)"
    if s.items_total is not None and s.items_dropped:
        return f"{s.id} ({len(s.items_dropped)} of {s.items_total} items)"
    return None


def explain(req: PromptRequest) -> str:
    """A human-readable account of a render: each section with its tokens and share of the budget,
    what was trimmed and why, and the total against the budget (`req.explain()`)."""
    share = 100.0 * req.tokens / req.budget if req.budget else 0.0
    lines = [
        f"role {req.role} for {req.provider}: {req.tokens} of {req.budget} tokens ({share:.1f}%), {req.tokenizer}, {req.count_note}",
        f"budget: {budget_sum(req)}",
    ]
    for key, where in req.budget_origins.items():
        lines.append(f"  {key}: {where}")
    width = max((len(s.id) for s in req.sections), default=4)
    lines.append("sections:")
    for s in req.sections:
        tokens = f"{s.tokens:>6}" if s.present else "     -"
        detail = _items(s)
        why = s.reason if s.status not in ("kept",) else ""
        note = "; ".join(x for x in (detail, why) if x)
        lines.append(f"  {s.id:<{width}}  {s.status:<9} {tokens}  p{s.priority:<4} {s.stability:<7} {note}".rstrip())
    overhead = req.tokens - sum(s.tokens for s in req.sections if s.present)
    lines.append(f"separators, joins and message overhead: {overhead} tokens")
    if req.events:
        lines.append("events:")
        for e in req.events:
            lines.append("  " + ", ".join(f"{k}={v}" for k, v in e.items() if v is not None))
    return "\n".join(lines)


def budget_sum(req: PromptRequest) -> str:
    """How the budget came about: `max_tokens 8192 - reserve 1024 - margin 717`, or from a render-time budget."""
    base = (req.budget if req.model_budget is None else req.model_budget) + req.margin_tokens
    if base == req.max_tokens - req.reserve:
        out = f"max_tokens {req.max_tokens} - reserve {req.reserve}"
    else:
        out = f"render budget {base} (below max_tokens {req.max_tokens} - reserve {req.reserve})"
    out += f" - margin {req.margin_tokens}" if req.margin_tokens else ""
    if req.model_budget is not None:
        # the unit is the model whose ratio applies; "any <provider> model" names none, so the wire's
        unit = req.ratio_for if req.ratio_for and not req.ratio_for.startswith("any ") else req.provider
        out += f" = {req.model_budget} {unit} tokens, / ratio {req.ratio:g} = {req.budget} {req.tokenizer} tokens"
    return out
