"""Terminal previews: `render --format pretty` and the `stats` table.

Pure functions from results to text; colour is added only when asked (TTY).
"""

from __future__ import annotations

from .bundle import RoleBundle
from .request import PromptRequest

BAR = 24
_COLORS = {"kept": "32", "trimmed": "33", "truncated": "33", "dropped": "31", "empty": "90", "skipped": "90"}


def _c(text: str, code: str, color: bool) -> str:
    return f"\x1b[{code}m{text}\x1b[0m" if color else text


def _bar(tokens: int, budget: int) -> str:
    if budget <= 0:
        return ""
    filled = min(BAR, round(BAR * tokens / budget))
    return "█" * filled + "·" * (BAR - filled)


def pretty(req: PromptRequest, *, color: bool = False, show_text: bool = True) -> str:
    """Each section with id, tokens, share of the budget as a bar, and what was dropped."""
    out = []
    head = f"{req.role} → {req.provider}  {req.tokens}/{req.budget} tokens ({100 * req.tokens / req.budget:.1f}%)"
    head += f"  tokenizer {req.tokenizer}{'' if req.exact else ' (estimate)'}"
    out.append(_c(head, "1", color))
    out.append(_bar(req.tokens, req.budget))
    out.append("budget: " + f"max_tokens {req.max_tokens} - reserve {req.reserve}" + (f" - margin {req.margin_tokens}" if req.margin_tokens else ""))
    for key, where in req.budget_origins.items():
        out.append(f"  {key:<14} from {where}")
    out.append("")
    width = max([28] + [len(s.id) for s in req.sections])
    for s in req.sections:
        status = _c(f"{s.status:<9}", _COLORS.get(s.status, "0"), color)
        tokens = f"{s.tokens:>6}" if s.present else "     -"
        line = f"{s.id:<{width}} {status} {tokens}  {_bar(s.tokens, req.budget)}  {s.message}/{s.stability}"
        out.append(line)
        if s.items_total is not None and s.items_dropped:
            uncounted = s.items_total - s.items_counted
            out.append(
                f"    kept {len(s.items_kept)} of {s.items_total} items; dropped {list(s.items_dropped)[:12]}"
                + ("…" if len(s.items_dropped) > 12 else "")
                + (f" ({uncounted} never rendered)" if uncounted > 0 else "")
            )
        if s.reason and s.status != "kept":
            out.append(f"    {s.reason}")
        if show_text and s.present:
            for text_line in s.text.splitlines():
                out.append(_c("    │ ", "90", color) + text_line)
    if req.events:
        out.append("")
        out.append("events:")
        for e in req.events:
            out.append("  " + event_line(e))
    return "\n".join(out)


def event_line(e: dict) -> str:
    """One render event as a line: what happened, to which id, where, from whom."""
    kind = e.get("type", "?")
    layer = f"layer {e['layer']}" if e.get("layer") is not None else "own context"
    if kind == "system_prompt":
        n = len(e.get("sections", ()))
        return f"{kind:<19} {e.get('tokens')} tokens from {n} section{'' if n == 1 else 's'}"
    if kind == "context_injected":
        return f"{kind:<19} {e.get('id')}  at {e.get('position')}  {layer}  {e.get('tokens')} tokens  by {e.get('by')}"
    if kind == "context_skipped":
        return f"{kind:<19} {e.get('id')}  at {e.get('position')}  {layer}  by {e.get('by')}  ({e.get('reason')})"
    if kind == "context_suppressed":
        return f"{kind:<19} {e.get('id')}  at {e.get('position')} from {e.get('from')}  by {e.get('by')}"
    return f"{kind:<19} " + ", ".join(f"{k}={v}" for k, v in e.items() if k != "type" and v is not None)


def stats_table(bundles: dict[str, RoleBundle]) -> str:
    """One row per role: sections, static tokens, dynamic sections, budget."""
    rows = [("role", "sections", "static tokens", "dynamic", "budget", "tokenizer")]
    for rid in sorted(bundles):
        b = bundles[rid]
        static = sum(s.tokens for s in b.sections if s.kind == "static")
        dynamic = sum(1 for s in b.sections if s.kind != "static")
        rows.append((rid, str(len(b.sections)), str(static), str(dynamic), f"{b.budget.max_tokens - b.budget.reserve}", b.tokenizer))
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    lines = []
    for n, r in enumerate(rows):
        lines.append("  ".join(cell.ljust(w) if i == 0 else cell.rjust(w) for i, (cell, w) in enumerate(zip(r, widths, strict=True))).rstrip())
        if n == 0:
            lines.append("  ".join("-" * w for w in widths))
    return "\n".join(lines)
