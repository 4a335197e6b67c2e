"""`promptmill diff BASE [HEAD]`: what a change did to the rendered prompts.

Both sides are rendered as the snapshots are (`snapshots.render_all`: every role with
each of its example states, for its provider and text) from a git revision read into
a temporary folder, or a folder (`revisions.py`); HEAD omitted is the working tree.
For every role, state and wire: the unified diff of the messages, the tokens of each
section and in total, what is newly trimmed or dropped, and whether the cacheable
prefix changed (the provider's prompt cache misses on the next request). Per role:
a changed output contract, and the roles added or removed.
"""

from __future__ import annotations

import dataclasses
import difflib
import os
from dataclasses import dataclass
from pathlib import Path

from ..core.errors import ConfigError
from ..core.showtext import one_line
from ..explain.account import dropped_entry
from ..runtime.request import PromptRequest
from .revisions import side
from .snapshots import Case, Rendered, _flat, cache_prefix, message_lines, render_all


@dataclass(frozen=True)
class SectionDelta:
    id: str
    before: tuple[str, int] | None  # (status, tokens) or None when the section is not there
    after: tuple[str, int] | None

    @property
    def delta(self) -> int:
        return (self.after[1] if self.after else 0) - (self.before[1] if self.before else 0)


@dataclass(frozen=True)
class WireChange:
    """One role, state and wire, before and after: `changed`, `added`, `removed` or `same`."""

    role: str
    state: str
    wire: str
    status: str
    tokens_before: int | None
    tokens_after: int | None
    sections: tuple[SectionDelta, ...] = ()
    newly_trimmed: tuple[str, ...] = ()  # the `dropped:` entries the head has and the base had not
    cache_break: bool = False  # the base had a cacheable prefix and the head's differs
    diff: tuple[str, ...] = ()

    @property
    def growth(self) -> float | None:
        """Percent the prompt grew (negative: shrank); None when a side is missing or empty."""
        if self.tokens_before is None or self.tokens_after is None or self.tokens_before == 0:
            return None
        return 100.0 * (self.tokens_after - self.tokens_before) / self.tokens_before


@dataclass(frozen=True)
class PromptDiff:
    base: str
    head: str
    changes: tuple[WireChange, ...]
    roles_added: tuple[str, ...]
    roles_removed: tuple[str, ...]
    contracts_changed: tuple[str, ...]
    errors: tuple[tuple[str, Case], ...]  # (side label, case) whose render failed
    skipped: tuple[tuple[str, str, int], ...] = ()  # (side label, file, size): over the cap for a file read from a revision

    @property
    def changed(self) -> tuple[WireChange, ...]:
        return tuple(c for c in self.changes if c.status != "same")

    @property
    def cache_breaks(self) -> tuple[str, ...]:
        """`role (wire)` for each role and wire whose cacheable prefix changed."""
        return tuple(sorted({f"{c.role} ({c.wire})" for c in self.changes if c.cache_break}))

    @property
    def total(self) -> tuple[int, int]:
        """Tokens of every case both sides render, before and after."""
        both = [c for c in self.changes if c.tokens_before is not None and c.tokens_after is not None]
        return sum(c.tokens_before or 0 for c in both), sum(c.tokens_after or 0 for c in both)


def diff(base: str, head: str | None = None, *, project: str | os.PathLike[str] = ".") -> PromptDiff:
    """Render the project at `base` and at `head` (git revisions or folders; `head` None: the
    working tree) and compare every role, state and wire. Nothing in the working tree changes."""
    if not Path(project).is_dir():
        raise ConfigError(f"{Path(project).as_posix()}: the project folder does not exist", code="PM011", hint="give --project a folder")
    root = Path(project).resolve()
    with side(base, root) as old:
        before = render_all(old.folder)
        with side(head, root) as new:
            after = render_all(new.folder)
            skipped = tuple((old.label, path, size) for path, size in old.skipped) + tuple((new.label, p, n) for p, n in new.skipped)
            return dataclasses.replace(compare(before, after, old.label, new.label), skipped=skipped)


def _contract(rendered: Rendered, role: str) -> list[tuple[str, str]]:
    out = rendered.runtime.bundle(role).output
    if out is None:
        return []
    return _flat({f.name: getattr(out, f.name) for f in dataclasses.fields(out) if f.name != "origin"})


def compare(before: Rendered, after: Rendered, base: str, head: str) -> PromptDiff:
    """The differences between two rendered projects (see `diff`)."""
    roles_a, roles_b = set(before.runtime.roles), set(after.runtime.roles)
    contracts = tuple(sorted(r for r in roles_a & roles_b if _contract(before, r) != _contract(after, r)))
    errors = [(base, c) for c in before.cases if c.error is not None] + [(head, c) for c in after.cases if c.error is not None]
    old = {(k.role, k.state, r.provider): r for k in before.cases for r in k.requests}
    new = {(k.role, k.state, r.provider): r for k in after.cases for r in k.requests}
    changes = [_change(key, old.get(key), new.get(key), base, head) for key in sorted(set(old) | set(new))]
    return PromptDiff(
        base, head, tuple(changes), tuple(sorted(roles_b - roles_a)), tuple(sorted(roles_a - roles_b)), contracts, tuple(errors)
    )


def _change(key: tuple[str, str, str], a: PromptRequest | None, b: PromptRequest | None, base: str, head: str) -> WireChange:
    role, state, wire = key
    lines_a = message_lines(a) if a is not None else []
    lines_b = message_lines(b) if b is not None else []
    where = f"{role}/{one_line(state)} → {wire}"  # a file name may hold a newline: the header stays one line
    text_diff = tuple(difflib.unified_diff(lines_a, lines_b, fromfile=f"{base}: {where}", tofile=f"{head}: {where}", lineterm=""))
    sections = _sections(a, b)
    if a is None or b is None:
        status = "added" if a is None else "removed"
    else:
        same = not text_diff and all(s.before == s.after for s in sections) and a.tokens == b.tokens
        status = "same" if same else "changed"
    dropped_a = {e for e in (dropped_entry(s) for s in a.sections) if e} if a is not None else set()
    dropped_b = [e for e in (dropped_entry(s) for s in b.sections) if e] if b is not None else []
    prefix_a = cache_prefix(a)[2] if a is not None else ""
    prefix_b = cache_prefix(b)[2] if b is not None else ""
    return WireChange(
        role,
        state,
        wire,
        status,
        a.tokens if a is not None else None,
        b.tokens if b is not None else None,
        tuple(s for s in sections if s.before != s.after),
        tuple(e for e in dropped_b if e not in dropped_a) if a is not None else (),
        bool(prefix_a) and b is not None and prefix_a != prefix_b,
        text_diff,
    )


def _sections(a: PromptRequest | None, b: PromptRequest | None) -> list[SectionDelta]:
    def row(req: PromptRequest | None) -> dict[str, tuple[str, int]]:
        return {s.id: (s.status, s.tokens if s.present else 0) for s in req.sections} if req is not None else {}

    old, new = row(a), row(b)
    order = list(new) + [sid for sid in old if sid not in new]
    return [SectionDelta(sid, old.get(sid), new.get(sid)) for sid in order]


def policy_failures(result: PromptDiff, *, fail_on_growth: float | None = None, fail_on_cache_break: bool = False) -> list[str]:
    """The CI policy `result` breaks, one line each: a prompt that grew more than `fail_on_growth`
    percent, a cacheable prefix that changed."""
    out = []
    if fail_on_growth is not None:
        for c in result.changes:
            if c.growth is not None and c.growth > fail_on_growth:
                grew = f"grew {c.growth:.1f}% ({c.tokens_before} → {c.tokens_after} tokens)"
                out.append(f"{c.role}/{one_line(c.state)} → {c.wire} {grew}, over {fail_on_growth:g}%")
    if fail_on_cache_break and result.cache_breaks:
        out.append("the cacheable prefix changed for " + ", ".join(result.cache_breaks) + ": the provider's prompt cache misses")
    return out
