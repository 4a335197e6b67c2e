"""Assemble a fit result into a `PromptRequest`: sections, messages, events."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, NamedTuple

from . import tooldecl
from .bundle import RoleBundle, Section
from .counting import Counter
from .fill import PreparedRole
from .fit import FitResult, Placed
from .request import Message, PromptRequest, RenderedSection

if TYPE_CHECKING:
    from .wire import Wire


def _section(p: Placed, counter: Counter, wire: Wire, native: bool = False, text: str = "") -> RenderedSection:
    items = p.cand.items
    items_total: int | None = None
    kept: tuple[int, ...] = ()
    dropped: tuple[int, ...] = ()
    if items is not None:
        items_total = len(items)
        kept = tuple(sorted(p.kept))
        if len(kept) != items_total:
            kept_set = set(kept)
            dropped = tuple(i for i in range(items_total) if i not in kept_set)
    count = (lambda _text: _native_tokens(p, counter, wire)) if native else (lambda _text: counter.count_parts(p.pieces()))
    return RenderedSection.create(
        p.spec.report_fields,
        status=p.status,
        reason=p.reason,
        text=text,
        items_total=items_total,
        items_kept=kept,
        items_dropped=dropped,
        items_counted=p.offered,
        _count=count,
    )


def _native_tokens(p: Placed, counter: Counter, wire: Wire) -> int:
    """Tokens of a native tools section's declarations as counted alone (no frame, no pad)."""
    items = p.cand.items or []
    return sum(counter.count(wire.tool_text(tooldecl.normalize(items[i]))) for i in p.kept)


def _skipped(spec: Section) -> RenderedSection:
    yields = (spec.context or {}).get("yields_to")
    reason = "its `when` condition is false" + (f", or {', '.join(yields)} placed the fragment first" if yields else "")
    return RenderedSection.create(spec.report_fields, status="skipped", reason=reason, text="")


class Counted(NamedTuple):
    """How a render's counts relate to its model's tokens."""

    ratio: float  # the model's tokens per counted token (1: the count is the provider's own)
    origin: str  # where the ratio came from ("" when 1)
    model: str | None  # the model rendered for
    max_tokens: int = 0  # the budget after the model's window
    reserve: int = 0  # the reply limit after the model's
    limit: int = 0  # the budget in the model's tokens, less the margin, before the ratio
    ratio_for: str | None = None  # whose ratio it is: a model id, or `any <provider> model`
    breakpoints: int | None = None  # the model's `cache.breakpoints` (None: no model, or no row)


def assemble(
    prepared: PreparedRole,
    wire: Wire,
    result: FitResult,
    skipped: list[Section],
    limit: int,
    origins: dict[str, str],
    margin_tokens: int,
    state: Mapping[str, Any],
    counted: Counted | None = None,
) -> PromptRequest:
    bundle = prepared.bundle
    counter = prepared.counter
    fitter = result.fitter
    by_id = {p.spec.id: p for p in result.placed}
    skipped_ids = {s.id for s in skipped}
    texts: dict[int, str] = {}  # id(placed) -> its text, joined once for its section and its message
    sections = []
    for spec in bundle.sections:
        if spec.id in skipped_ids:
            sections.append(_skipped(spec))
        else:
            placed = by_id[spec.id]
            native = fitter.layout.native_tools(placed)
            text = texts[id(placed)] = placed.text() if placed.present and not native else ""
            sections.append(_section(placed, counter, wire, native, text))
    messages = []
    sep = fitter.sep
    for c in result.containers:
        if c.turn is None:
            content = sep.join([texts[id(p)] for p in c.placed])  # as "".join(fitter.container_parts(c))
            ids = tuple(p.spec.id for p in c.placed)
        else:
            content = c.turn["content"]
            ids = (c.turn_of.spec.id,)  # type: ignore[union-attr]
        stable = c.turn is None and all(p.spec.stability == "stable" for p in c.placed)
        messages.append(Message(c.role, content, c.tokens, ids, stable=stable, turn=c.turn is not None))
    events = _events(bundle, sections, messages, counter)
    tools = fitter.declarations(result.placed)
    estimated = bool(tools or fitter.extra_tools or fitter.output_cost)
    b = bundle.budget
    return PromptRequest(
        role=bundle.id,
        provider=wire.name,
        tokenizer=bundle.tokenizer,
        exact=counter.tokenizer.exact and not wire.estimate and not estimated,
        tokens=result.tokens,
        budget=limit,
        max_tokens=b.max_tokens if counted is None else counted.max_tokens,
        reserve=b.reserve if counted is None else counted.reserve,
        margin_tokens=margin_tokens,
        budget_origins=origins,
        separator=bundle.separator,
        sections=tuple(sections),
        messages=tuple(messages),
        tools=tuple(tools),
        tool_mode=bundle.tool_mode,
        cache=bundle.cache,
        output=bundle.output,
        events=tuple(events),
        state=state,
        model=bundle.model if counted is None or counted.model is None else counted.model,
        ratio=1.0 if counted is None else counted.ratio,
        model_budget=None if counted is None or counted.ratio == 1 else counted.limit,
        ratio_for=None if counted is None or counted.ratio == 1 else counted.ratio_for,
        source_hash=bundle.source_hash,
        cache_breakpoints=None if counted is None else counted.breakpoints,
    )


def _events(bundle: RoleBundle, sections: list[RenderedSection], messages: list[Message], counter: Counter) -> list[dict]:
    """What the render did, in order: compile-time suppressions, each context item
    injected (or skipped by its condition), then the system prompt assembled."""
    events: list[dict] = [dict(e) for e in bundle.events]
    for s, spec in zip(sections, bundle.sections, strict=True):
        if not spec.fragment or not (s.present or s.status == "skipped"):
            continue
        ctx = spec.context or {}
        event = {
            "type": "context_injected" if s.present else "context_skipped",
            "id": spec.fragment,
            "section": spec.id,
            "position": ctx.get("position"),
            "layer": ctx.get("layer"),
            "by": ctx.get("by"),
        }
        if s.present:
            event["tokens"] = s.tokens
        else:
            yields = ctx.get("yields_to")
            event["reason"] = "condition false" + (f" or placed first by {', '.join(yields)}" if yields else "")
        events.append(event)
    system = [s for s in sections if s.present and s.message == "system"]
    if any(m.role == "system" for m in messages):
        tokens = sum(m.tokens for m in messages if m.role == "system")
    else:  # one text (text, live): the system-marked sections as they appear in it
        parts: list[str] = []
        for s in system:
            parts += [bundle.separator, s.text] if parts else [s.text]
        tokens = counter.count_parts(parts) if parts else 0
    events.append({"type": "system_prompt", "tokens": tokens, "sections": [s.id for s in system]})
    return events
