"""Terminal previews: `render --format pretty|json`, and the `stats` table.

Pure functions from results to text or data; colour is added only when asked
(the CLI asks on a TTY without NO_COLOR).

- `pretty(req)`: each section with its id, status, token count and share of
  the budget as a bar, which items or sections were dropped and why, and the
  total against the budget; the section text follows each row.
- `request_data(req)`: every field of the `PromptRequest` (the state aside)
  plus the assembled `text`, as plain JSON data in a fixed order.
- `stats_table(bundles)`: one row per role.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from ..core.jsontypes import JSON
from ..core.showtext import visible
from ..explain.account import budget_sum, dropped_entry, items_note, shown_reason
from ..runtime.bundle import RoleBundle, plain
from ..runtime.request import PromptRequest, RenderedSection

BAR = 24
RENDER_FORMAT = "promptmill-render"
RENDER_FORMAT_VERSION = 1
_COLORS = {"kept": "32", "trimmed": "33", "truncated": "33", "dropped": "31", "empty": "90", "skipped": "90"}


def _c(text: str, code: str, color: bool) -> str:
    return f"\x1b[{code}m{text}\x1b[0m" if color else text


def _bar(tokens: int, budget: int) -> str:
    if budget <= 0:
        return ""
    filled = min(BAR, round(BAR * tokens / budget))
    if tokens > 0 and filled == 0:
        filled = 1 if tokens * BAR * 4 >= budget else 0  # show a sliver for an eighth of a cell or more
    return "█" * filled + "·" * (BAR - filled)


def _pct(tokens: int, budget: int) -> str:
    return f"{100 * tokens / budget:5.1f}%" if budget > 0 else "     -"


def pretty(req: PromptRequest, *, color: bool = False, show_text: bool = True) -> str:
    """The render, section by section, for a person at a terminal."""
    out = []
    share = _pct(req.tokens, req.budget).strip()
    head = f"{req.role} → {req.provider}   {req.tokens} / {req.budget} tokens ({share})   {req.tokenizer}, {req.count_note}"
    out.append(_c(head, "1", color))
    if req.ratio != 1:
        out.append(f"about {req.estimated_tokens} {req.ratio_for} tokens: {req.tokens} {req.tokenizer} tokens x {req.ratio:g}")
    out.append(f"[{_bar(req.tokens, req.budget)}]")
    out.append(f"budget {req.budget}: {budget_sum(req)}")
    for key, where in req.budget_origins.items():
        out.append(f"  {key:<12} from {where}")
    out.append("")
    width = min(40, max([len(s.id) for s in req.sections] + [7]))
    out.append(_c(f"{'section':<{width}}  {'status':<9}  {'tokens':>6}  {'share of budget':<{BAR + 7}}  message/stability", "1", color))
    dropped = []
    for s in req.sections:
        status = _c(f"{s.status:<9}", _COLORS.get(s.status, "0"), color)
        tokens = f"{s.tokens:>6}" if s.present else "     -"
        share = f"{_bar(s.tokens, req.budget)} {_pct(s.tokens, req.budget)}" if s.present else " " * (BAR + 7)
        name = s.id
        if len(name) > width:  # a long id gets a line of its own, so the columns stay aligned
            out.append(name)
            name = ""
        out.append(f"{name:<{width}}  {status}  {tokens}  {share}  {s.message}/{s.stability}")
        note = items_note(s)
        if note:
            out.append(f"    {note}")
        reason = shown_reason(s)
        if reason:
            out.append(f"    {reason}")
        entry = dropped_entry(s)
        if entry:
            dropped.append(entry)
        if show_text and s.present:
            for text_line in _shown_lines(req, s):
                out.append(_c("    │ ", "90", color) + visible(text_line))  # state text cannot move the cursor or reorder the line
    out.append("")
    out.append("dropped: " + ("; ".join(dropped) if dropped else "nothing"))
    if req.events:
        out.append("events:")
        for e in req.events:
            out.append("  " + event_line(e))
    left = req.budget - req.tokens
    out.append(_c(f"total: {req.tokens} of {req.budget} tokens ({_pct(req.tokens, req.budget).strip()}), {left} left", "1", color))
    return "\n".join(out)


def _shown_lines(req: PromptRequest, s: RenderedSection) -> list[str]:
    """A section's text by lines; history sent as turns (chat providers) shows one turn per
    line group, `role: text`, as the model gets them, not run together."""
    turns = [m for m in req.messages if m.turn and s.id in m.sections]
    if not turns:
        return s.text.splitlines()
    lines = []
    for m in turns:
        body = m.content.splitlines() or [""]
        lines.append(f"{m.role}: {body[0]}")
        lines.extend(body[1:])
    return lines


def request_data(req: PromptRequest) -> dict[str, Any]:
    """Every field of `req` as JSON data (the render state excluded), in a fixed order.

    Keys: format, format_version, then the request's fields in declaration
    order, then `text` (the assembled prompt).
    """
    data: dict[str, Any] = {"format": RENDER_FORMAT, "format_version": RENDER_FORMAT_VERSION}
    for f in dataclasses.fields(req):
        if f.name == "state":
            continue
        value = getattr(req, f.name)
        data[f.name] = _json(value)
    data["text"] = req.text
    return data


def _json(value: Any) -> Any:
    if isinstance(value, RenderedSection):
        return _json(value.as_dict())
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: _json(getattr(value, f.name)) for f in dataclasses.fields(value) if not f.name.startswith("_")}
    if isinstance(value, (list, tuple)):
        return [_json(v) for v in value]
    if isinstance(value, dict) or hasattr(value, "items"):
        return {str(k): _json(v) for k, v in value.items()}
    return plain(value)


def event_line(e: JSON) -> str:
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
    if kind == "parent_chosen":
        from ..runtime.conditions import describe

        why = f"candidate {e['candidate']}: {describe(e['when'])}" if e.get("when") else "no candidate's condition holds: extends"
        return f"{kind:<19} {e.get('parent') or '(none)'}  ({why})"
    return f"{kind:<19} " + ", ".join(f"{k}={v}" for k, v in e.items() if k != "type" and v is not None)


def stats_table(bundles: dict[str, RoleBundle]) -> str:
    """One row per role: sections, static tokens, dynamic sections (those whose text depends on the
    render state, by the same stability `render` shows), budget, tokenizer."""
    rows = [("role", "sections", "static tokens", "dynamic", "budget", "tokenizer")]
    for rid in sorted(bundles):
        b = bundles[rid]
        static = sum(s.tokens for s in b.sections if s.kind == "static")
        dynamic = sum(1 for s in b.sections if s.stability != "stable")  # as render reports them
        counting = b.tokenizer if b.budget.ratio is None else f"{b.tokenizer}, estimated, ratio {b.budget.ratio:g} for {b.model}"
        rows.append((rid, str(len(b.sections)), str(static), str(dynamic), f"{b.budget.max_tokens - b.budget.reserve}", counting))
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    lines = []
    for n, r in enumerate(rows):
        lines.append(
            "  ".join(cell.ljust(w) if i in (0, 5) else cell.rjust(w) for i, (cell, w) in enumerate(zip(r, widths, strict=True))).rstrip()
        )
        if n == 0:
            lines.append("  ".join("-" * w for w in widths))
    total_static = sum(sum(s.tokens for s in b.sections if s.kind == "static") for b in bundles.values())
    lines.append(f"{len(bundles)} role(s), {total_static} static tokens in all")
    return "\n".join(lines)
