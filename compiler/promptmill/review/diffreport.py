"""`promptmill diff`'s result as Markdown (a GitHub step summary or a pull-request comment),
JSON or plain text. Pure functions from a `PromptDiff` to text; the order is sorted, so the
same change gives the same bytes."""

from __future__ import annotations

import html
import json
from collections.abc import Callable

from ..core.showtext import one_line
from . import DIFF_FORMATS
from .diff import PromptDiff, WireChange
from .revisions import REVISION_FILE_LIMIT


def _signed(n: int) -> str:
    return f"+{n}" if n > 0 else str(n)


def _growth(c: WireChange) -> str:
    return f" ({c.growth:+.1f}%)" if c.growth is not None else ""


def _tokens(c: WireChange) -> str:
    a = "-" if c.tokens_before is None else str(c.tokens_before)
    b = "-" if c.tokens_after is None else str(c.tokens_after)
    return f"{a} → {b}"


def _delta(c: WireChange) -> str:
    return _signed((c.tokens_after or 0) - (c.tokens_before or 0)) + _growth(c)


def headline(d: PromptDiff) -> str:
    """`2 of 22 renders changed, tokens 8123 → 8160 (+37); cache prefix changed: planner (anthropic)`."""
    before, after = d.total
    line = f"{len(d.changed)} of {len(d.changes)} renders changed, tokens {before} → {after} ({_signed(after - before)})"
    if d.cache_breaks:
        line += "; cache prefix changed: " + ", ".join(d.cache_breaks)
    return line


def _notes(d: PromptDiff) -> list[str]:
    out = []
    if d.cache_breaks:
        out.append("cache prefix changed (the provider's prompt cache misses on the next request): " + ", ".join(d.cache_breaks))
    if d.contracts_changed:
        out.append("output contract changed: " + ", ".join(d.contracts_changed))
    if d.roles_added:
        out.append("roles added: " + ", ".join(d.roles_added))
    if d.roles_removed:
        out.append("roles removed: " + ", ".join(d.roles_removed))
    for label, case in d.errors:
        assert case.error is not None
        out.append(f"{label}: {case.state}: error[{case.error.code}] role {case.role}: {case.error.message}")
    for label, path, size in d.skipped:
        out.append(f"{label}: {path}: not read ({size:,} bytes; the limit for a file read from a revision is {REVISION_FILE_LIMIT:,})")
    return out


def _section_lines(c: WireChange) -> list[str]:
    rows = []
    for s in c.sections:
        a = f"{s.before[0]} {s.before[1]}" if s.before else "-"
        b = f"{s.after[0]} {s.after[1]}" if s.after else "-"
        rows.append((s.id, a, b, _signed(s.delta)))
    return [f"  {sid}: {a} → {b} ({delta})" for sid, a, b, delta in rows]


def text(d: PromptDiff) -> str:
    lines = [f"promptmill diff {d.base} → {d.head}: " + headline(d), *_notes(d)]
    for c in d.changed:
        lines += ["", f"{c.role}/{one_line(c.state)} → {c.wire}: {c.status}, tokens {_tokens(c)}, {_delta(c)}"]
        lines += _section_lines(c)
        if c.newly_trimmed:
            lines.append("  newly trimmed: " + "; ".join(c.newly_trimmed))
        lines += c.diff
    return "\n".join(lines) + "\n"


def _html(name: str) -> str:
    """A file name inside HTML (a PR comment's <summary>): one line, `<`, `>` and `&` as entities, so a name
    cannot close the element or add markup."""
    return html.escape(one_line(name), quote=False)


def _md_code(name: str) -> str:
    """A file name as a code span in a Markdown table cell: one line, `|` escaped (it would end the cell), and
    a name that holds a backtick as HTML code instead (a backtick would end the span)."""
    shown = one_line(name)
    if "`" in shown:
        return f"<code>{_html(name).replace('|', '&#124;')}</code>"
    return "`" + shown.replace("|", "\\|") + "`"


def markdown(d: PromptDiff) -> str:
    lines = [f"### promptmill diff: `{d.base}` → `{d.head}`", "", headline(d) + "."]
    notes = _notes(d)
    if notes:
        lines += [""] + [f"- **{n.split(':', 1)[0]}**:{n.split(':', 1)[1]}" for n in notes]
    if d.changed:
        lines += ["", "| role | state | wire | tokens | change |", "|---|---|---|---:|---:|"]
        for c in d.changed:
            lines.append(f"| {c.role} | {_md_code(c.state)} | {c.wire} | {_tokens(c)} | {_delta(c)} |")
    for c in d.changed:
        lines += ["", f"<details><summary>{c.role} / <code>{_html(c.state)}</code> → {c.wire}: {_delta(c)}</summary>", ""]
        if c.sections:
            lines += ["| section | before | after | change |", "|---|---|---|---:|"]
            for s in c.sections:
                a = f"{s.before[0]} {s.before[1]}" if s.before else "-"
                b = f"{s.after[0]} {s.after[1]}" if s.after else "-"
                lines.append(f"| {s.id} | {a} | {b} | {_signed(s.delta)} |")
            lines.append("")
        if c.newly_trimmed:
            lines += ["Newly trimmed: " + "; ".join(c.newly_trimmed), ""]
        if c.diff:
            fence = "````" if any(line.startswith("```") for line in c.diff) else "```"
            lines += [f"{fence}diff", *c.diff, fence, ""]
        lines.append("</details>")
    if not d.changed and not notes:
        lines += ["", "No rendered prompt changed."]
    return "\n".join(lines) + "\n"


def as_json(d: PromptDiff) -> str:
    before, after = d.total
    payload = {
        "version": 1,
        "base": d.base,
        "head": d.head,
        "tokens": {"before": before, "after": after, "delta": after - before},
        "cache_breaks": list(d.cache_breaks),
        "contracts_changed": list(d.contracts_changed),
        "roles_added": list(d.roles_added),
        "roles_removed": list(d.roles_removed),
        "errors": [
            {"side": label, "role": c.role, "state": c.state, "code": c.error.code, "message": c.error.message}
            for label, c in d.errors
            if c.error is not None
        ],
        "not_read": [{"side": label, "file": path, "bytes": size} for label, path, size in d.skipped],
        "changes": [
            {
                "role": c.role,
                "state": c.state,
                "wire": c.wire,
                "status": c.status,
                "tokens": {"before": c.tokens_before, "after": c.tokens_after},
                "growth_percent": None if c.growth is None else round(c.growth, 2),
                "sections": [
                    {
                        "id": s.id,
                        "before": None if s.before is None else {"status": s.before[0], "tokens": s.before[1]},
                        "after": None if s.after is None else {"status": s.after[0], "tokens": s.after[1]},
                        "delta": s.delta,
                    }
                    for s in c.sections
                ],
                "newly_trimmed": list(c.newly_trimmed),
                "cache_break": c.cache_break,
                "diff": list(c.diff),
            }
            for c in d.changed
        ],
    }
    return json.dumps(payload, indent=2, ensure_ascii=False) + "\n"


WRITERS: dict[str, Callable[[PromptDiff], str]] = {"markdown": markdown, "json": as_json, "text": text}
assert tuple(WRITERS) == DIFF_FORMATS


def format_diff(result: PromptDiff, fmt: str = "markdown") -> str:
    """`result` as `fmt` (one of DIFF_FORMATS)."""
    if fmt not in WRITERS:
        raise ValueError(f"unknown format {fmt!r}; expected one of {', '.join(DIFF_FORMATS)}")
    return WRITERS[fmt](result)
