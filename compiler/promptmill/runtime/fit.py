"""Fit filled sections into the token budget (the contract in docs/budget.md).

1. Sections with `trim: never` are placed whole; if they alone exceed the
   budget, `BudgetError` names them with their counts.
2. The others are offered in priority order (higher first; ties: document
   order). Lists offer their items best-score first; each item is rendered and
   counted only when offered. The first thing that does not fit ends the
   filling: a `truncate` section is cut to what is left, and everything of
   lower priority is dropped without being rendered or counted.
3. The final layout is counted exactly (pieces are cached; only short regions
   around soft joins are re-tokenized) and, should an estimate have been short,
   the most recently added units are removed until it fits.

Kept items stay in their original order; empty sections vanish with their
title; nothing inside the stable prefix is altered by trimming because stable
sections are never trimmed by default and trimming only removes whole units.

With `tool_mode: native` on a chat wire, a tools section is not message text:
each kept tool costs its declaration as the provider sees it, and the payload
carries the declarations (the wire, `runtime/wire.py` and `promptmill/wires/`, holds the layout and counting model). The
structured-return tool and a native contract's schema are fixed costs.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, Any

from ..core.errors import BudgetError
from . import tooldecl
from .fill import Candidate, PreparedRole, check_item, render_item, strip_text
from .placed import Container, Placed, turn_content

if TYPE_CHECKING:
    from .wire import Wire


def _settle(p: Placed, fits_all: bool) -> None:
    """A list section's status once its items were offered."""
    n = len(p.cand.items or ())
    if not p.kept:
        p.status = "empty" if fits_all else "dropped"
        p.reason = "no items" if n == 0 else ("all items are empty" if fits_all else "no item fits the budget left")
    elif len(p.kept) < n:
        p.status, p.reason = "trimmed", f"kept {len(p.kept)} of {n} items"
    else:
        p.status = "kept"


@dataclass
class FitResult:
    placed: list[Placed]  # document order
    containers: list[Container]
    tokens: int
    budget: int
    fitter: Fitter  # the fitter that placed them (its layout rules, for the summary)


class Fitter:
    def __init__(self, prepared: PreparedRole, wire: Wire, budget: int, ctx: Mapping[str, Any]) -> None:
        self.p = prepared
        self.counter = prepared.counter
        self.wire = wire
        self.budget = budget
        self.ctx = ctx
        self.sep = prepared.bundle.separator
        self.sep_cost = self.counter.count(self.sep)
        self.seq = 0
        bundle = prepared.bundle
        self.layout = wire.layout(bundle)
        self.extra_tools = wire.extra_tools(bundle.output, bundle.tool_mode)
        self.forced = wire.forced_tool(bundle.output) is not None
        self.output_cost = wire.output_cost(self.counter, bundle.output)

    # -- layout (the wire decides it) ---------------------------------------------
    def declarations(self, placed: list[Placed]) -> list[dict]:
        """Native tool declarations of the kept tools, sections in order, items in their order."""
        out: list[dict] = []
        for p in placed:
            if p.present and self.layout.native_tools(p):
                out.extend(tooldecl.normalize(p.cand.items[i]) for i in sorted(p.kept))  # type: ignore[index]
        return out

    def container_parts(self, c: Container) -> list[str]:
        if c.turn is not None:
            return [c.turn["content"]]
        parts: list[str] = []
        for n, p in enumerate(c.placed):
            if n:
                parts.append(self.sep)
            parts.extend(p.pieces())
        return parts

    def exact_total(self, placed: list[Placed]) -> tuple[int, list[Container]]:
        containers = self.layout.containers(placed)
        count_parts = self.counter.count_parts
        total = self.wire.fixed_overhead if containers else 0
        for c in containers:
            c.tokens = count_parts(self.container_parts(c))
            total += self.wire.message_overhead + c.tokens
        if not self.wire.single:
            decls = self.declarations(placed) + self.extra_tools
            total += self.wire.tool_cost(self.counter, decls, self.forced) + self.output_cost
        return total, containers

    # -- costs ------------------------------------------------------------
    def _open_cost(self, p: Placed, open_roles: set[str]) -> int:
        role = self.layout.key(p)
        if role == "tools":
            opened = role in open_roles or self.extra_tools
            return 0 if opened else self.wire.tool_frame_cost(self.counter, self.forced)
        title = p.spec.title_tokens if p.spec.title else 0
        if role in open_roles:
            return title + self.sep_cost
        return title + self.wire.message_overhead

    def _item_cost(self, p: Placed, i: int, text: str) -> int:
        """What a chat turn or a native tool adds (plain items: `_offer_plain`)."""
        if self.layout.native_tools(p):
            return self.wire.tool_item_cost(self.counter, text)
        return self.counter.count(p.cand.rendered[i]) + self.wire.message_overhead

    # -- filling ------------------------------------------------------------
    def _offer_items(self, p: Placed, used: int, open_roles: set[str], must: bool) -> tuple[int, bool]:
        spec = p.spec
        chat_turns = self.layout.chat_turns(p)
        native = self.layout.native_tools(p)
        if not chat_turns and not native:
            used, fits_all = self._offer_plain(p, used, open_roles, must)
        else:
            used, fits_all = self._offer_turns_or_tools(p, used, open_roles, must, chat_turns)
        if spec.kind == "history" and p.kept and (not fits_all or (self.wire.user_first and min(p.kept) > 0)):
            self._history_start(p, align=not fits_all)  # trimmed, or blank turns skipped at the start
        _settle(p, fits_all)
        if p.kept:
            open_roles.add(self.layout.key(p))
        return used, fits_all

    def _offer_turns_or_tools(self, p: Placed, used: int, open_roles: set[str], must: bool, chat_turns: bool) -> tuple[int, bool]:
        """`_offer_items` for history turns sent as chat messages and for native tools
        (memoised per provider; chat turns are not memoised)."""
        cand = p.cand
        spec = p.spec
        memo = None if chat_turns or spec.id not in self.p.memo_sections else self.p.memo
        prefix = (self.p.bundle.id, cand.index, self.wire.name)
        items = cand.items or ()
        fits_all = True
        for i in cand.order or ():
            key = memo.key(prefix, items[i]) if memo is not None else None
            hit = memo.get(key) if key is not None else None  # type: ignore[union-attr]
            if hit is not None:  # this exact tool was checked and declared before
                text = hit[0]
            elif chat_turns:
                _, text = turn_content(check_item(self.p, cand, i), spec.id, i, spec.path)
                cand.rendered[i] = cand.units[i] = text
            else:
                text = self.wire.tool_text(tooldecl.normalize(check_item(self.p, cand, i)))
                if key is not None and cand.checked:
                    memo.put(key, (text, None))  # type: ignore[union-attr]
            p.offered += 1
            if not text.strip():
                continue
            cost = self._item_cost(p, i, text) + (0 if p.kept else self._open_cost(p, open_roles))
            if must or used + cost <= self.budget:
                p.kept.append(i)
                used += cost
                self.seq += 1
                p.order_key = self.seq
                continue
            fits_all = False
            break
        return used, fits_all

    def _offer_plain(self, p: Placed, used: int, open_roles: set[str], must: bool) -> tuple[int, bool]:
        """`_offer_items` for items that are prompt text (not chat turns, not native tools):
        the loop every render runs over its memory entries, kept tight."""
        cand = p.cand
        memo = self.p.memo if p.spec.id in self.p.memo_sections else None
        prefix = (self.p.bundle.id, cand.index, "")
        unscored = self.p.memo_unscored.get(p.spec.id)
        items = cand.items or ()
        rendered, units, kept = cand.rendered, cand.units, p.kept
        count = self.counter.count
        budget = self.budget
        open_cost = self._open_cost(p, open_roles)
        memo_key = None if memo is None else (memo.key if unscored is None else partial(memo.key_without, name=unscored))
        remember = memo is not None and cand.checked
        offered = 0
        fits_all = True
        for i in cand.order or ():
            key = None if memo_key is None else memo_key(prefix, items[i])
            hit = None if key is None else memo.get(key)  # type: ignore[union-attr]  # a key needs a memo
            if hit is not None:  # this exact item was checked and rendered before
                text, unit = rendered[i], units[i] = hit
            else:
                text = render_item(self.p, cand, i, self.ctx)
                unit = units[i]
                if remember and key is not None:
                    memo.put(key, (text, unit))  # type: ignore[union-attr]
            offered += 1
            if not text:  # rendered blank (render_item strips)
                continue
            cost = count(unit) + (0 if kept else open_cost)
            if must or used + cost <= budget:
                kept.append(i)
                used += cost
                continue
            fits_all = False
            break
        p.offered += offered
        if kept:
            self.seq += len(kept)
            p.order_key = self.seq
        return used, fits_all

    def _history_start(self, p: Placed, align: bool = True) -> None:
        """Drop the oldest kept turns of a history until it starts on a multiple of `step`
        (when `align`: cache-aware trimming moves the start only in steps) and, on wires whose
        conversation must open with the user (anthropic, gemini), on a user turn; no kept
        turn is both: the history is dropped."""
        step = p.spec.step if align else 1
        items = p.cand.items or ()
        user_first = self.wire.user_first
        start = next((i for i in sorted(p.kept) if i % step == 0 and (not user_first or items[i].get("role") == "user")), None)
        p.kept = [] if start is None else [i for i in p.kept if i >= start]

    def _truncate(self, p: Placed, room: int) -> bool:
        spec = p.spec
        tok = self.counter.tokenizer
        marker = spec.truncate_marker
        body = p.cand.body or ""
        n = room - self.counter.count(marker) - 1
        for _ in range(8):
            if n <= 0:
                return False
            cut = strip_text(tok.truncate(body, n, spec.truncate_keep))
            text = f"{cut}\n{marker}" if spec.truncate_keep == "head" else f"{marker}\n{cut}"
            cost = self.counter.count(text)
            if cost <= room:
                p.body = text
                return True
            n -= cost - room
        return False

    def fit(self, cands: list[Candidate]) -> FitResult:
        placed = [Placed(c) for c in cands]
        never = [p for p in placed if p.spec.trim == "never"]
        rest = sorted((p for p in placed if p.spec.trim != "never"), key=lambda p: (-p.spec.priority, p.cand.index))
        open_roles: set[str] = set()
        for p in never:
            if p.is_list:
                self._offer_items(p, 0, open_roles, must=True)
            elif p.cand.body:
                p.body, p.status = p.cand.body, "kept"
            else:
                p.status, p.reason = "empty", "rendered empty"
        used, _ = self.exact_total(placed)
        if used > self.budget:
            counts = ", ".join(f"{p.spec.id} ({self._tokens(p)} tokens)" for p in never if p.present)
            if self.extra_tools or self.output_cost:
                counts += f", and the structured-output declaration of contract '{self.p.bundle.output.id}'"  # type: ignore[union-attr]
            raise BudgetError(
                f"sections that are never trimmed need {used} tokens, over the budget of {self.budget}: {counts}",
                code="PM830",
                hint="raise the budget, or let some of these sections be trimmed (trim: drop, items or truncate)",
            )
        for p in never:
            if p.present:
                open_roles.add(self.layout.key(p))
        exhausted = False
        for p in rest:
            if exhausted:
                p.status, p.reason = "dropped", "lower priority than content that did not fit"
                continue
            if p.is_list:
                used, fits = self._offer_items(p, used, open_roles, must=False)
                exhausted = not fits
                continue
            body = p.cand.body
            if not body:
                p.status, p.reason = "empty", "rendered empty"
                continue
            cost = self._open_cost(p, open_roles) + self.counter.count(body)
            if p.spec.title:
                cost += self.counter.join_delta(p.spec.title + "\n", body)
            if used + cost <= self.budget:
                p.body, p.status = body, "kept"
            elif p.spec.trim == "truncate" and self._truncate(p, self.budget - used - self._open_cost(p, open_roles)):
                p.status, p.reason = "truncated", "cut to fit the budget"
                cost = self._open_cost(p, open_roles) + self.counter.count(p.body or "")
            else:
                p.status, p.reason = "dropped", "does not fit the budget left"
                exhausted = True
                continue
            self.seq += 1
            p.order_key = self.seq
            used += cost
            open_roles.add(self.layout.key(p))
            if p.status == "truncated":
                exhausted = True
        total, containers = self.exact_total(placed)
        while total > self.budget:
            self._remove_last(rest)
            total, containers = self.exact_total(placed)
        return FitResult(placed, containers, total, self.budget, self)

    def _tokens(self, p: Placed) -> int:
        """Tokens of one placed section alone (native tools: their declarations)."""
        if self.layout.native_tools(p):
            return self.wire.tool_cost(self.counter, self.declarations([p]), self.forced)
        return self.counter.count_parts(p.pieces())

    def _remove_last(self, rest: list[Placed]) -> None:
        """Undo the most recently added unit (an estimate was short)."""
        candidates = [p for p in rest if p.present]
        if not candidates:  # pragma: no cover - never-sections were checked exactly
            raise BudgetError("cannot fit the budget", code="PM830")
        last = max(candidates, key=lambda p: p.order_key)
        if last.is_list and len(last.kept) > 1:
            last.kept.pop()
            if last.spec.kind == "history":
                self._history_start(last)
            if not last.kept:
                last.status, last.reason = "dropped", "does not fit the budget left"
                return
            last.status, last.reason = "trimmed", f"kept {len(last.kept)} of {len(last.cand.items or ())} items"
        else:
            last.kept = []
            last.body = None
            last.status, last.reason = "dropped", "does not fit the budget left"
