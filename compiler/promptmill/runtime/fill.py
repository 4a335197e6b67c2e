"""Fill compiled sections with render state: templates, list items, rules.

A `PreparedRole` is built once per role (at first render) from its bundle:
compiled Jinja templates, fast plans, the state validator. `Candidate` holds a
section while it is being filled; list items are rendered lazily, only when the
fitter asks for them, so items that can never reach the prompt cost nothing
beyond reading their sort key.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..core.errors import RenderError, StateError
from . import conditions
from .bundle import RoleBundle, RuleLine, Section
from .counting import Counter
from .itemmemo import SANDBOX_GLOBALS, ItemMemo, item_reads, score_only_orders
from .itemproof import ItemCheck, item_checks
from .plans import run_plan
from .schema.validate import Validator
from .statelimits import check_state_data

MISSING = object()


def strip_text(text: str) -> str:
    """Rendered text as placed in a prompt: no leading blank lines, no trailing whitespace."""
    return text.lstrip("\n").rstrip()


def assemble_rules(lines: tuple[RuleLine, ...], included: list[bool]) -> str:
    """Constraint-set lines as text: a set's title shows only when one of its rules does."""
    groups: dict[int, list[RuleLine]] = {}
    titles: dict[int, RuleLine] = {}
    for line, keep in zip(lines, included, strict=True):
        if line.is_title:
            titles[line.group] = line
        elif keep:
            groups.setdefault(line.group, []).append(line)
    blocks = []
    for group in sorted(groups):
        block = [titles[group].text] if group in titles else []
        block += [line.text for line in groups[group]]
        blocks.append("\n".join(block))
    return ("\n\n" if titles else "\n").join(blocks)


def state_path(path: tuple[str | int, ...]) -> str:
    out = "state"
    for p in path:
        out += f"[{p}]" if isinstance(p, int) else f".{p}"
    return out


def lookup_list(state: Mapping[str, Any], path: tuple[str, ...], section: str) -> list | None:
    """The list at `path`, None when absent/null; StateError when it is not a list."""
    value: Any = state
    for part in path:
        if not isinstance(value, Mapping):
            return None
        value = value.get(part, MISSING)
        if value is MISSING or value is None:
            return None
    if not isinstance(value, list):
        raise StateError(
            "",
            [(state_path(path), f"expected a list for section '{section}', got {type(value).__name__}")],
            code="PM810",
        )
    return value


@dataclass
class PreparedRole:
    """A bundle made ready to render: templates compiled, validator built."""

    bundle: RoleBundle
    counter: Counter
    validator: Validator | None
    templates: dict[str, Any] = field(default_factory=dict)
    declared: tuple[str, ...] = ()
    defaults: dict[str, Any] = field(default_factory=dict)
    memo: ItemMemo | None = None  # checked, rendered items by content (shared by the runtime's roles)
    memo_sections: frozenset[str] = frozenset()  # list sections whose item text depends on the item alone
    memo_unscored: Mapping[str, str] = field(default_factory=dict)  # section -> score field its memo keys leave out
    proven: Mapping[tuple[str, ...], ItemCheck] = field(default_factory=dict)  # lazy path -> one-pass item check (item_proofs)

    @classmethod
    def prepare(cls, bundle: RoleBundle, counter: Counter, memo: ItemMemo | None = None) -> PreparedRole:
        validator = Validator(bundle.inputs, lazy_paths=bundle.lazy_paths) if bundle.inputs else None
        templates: dict[str, Any] = {}
        for s in bundle.sections:
            if s.template is not None and s.plan is None:  # it needs Jinja on every render: compile it now
                templates[s.id] = _compile(s)
            if s.kind == "static" and s.text:
                counter.cache.put(s.text, s.tokens)
            if s.title:
                counter.cache.put(s.title + "\n", s.title_tokens)
        props = bundle.inputs.get("properties", {}) if bundle.inputs else {}
        defaults = {k: (v.get("default") if isinstance(v, dict) else None) for k, v in props.items()}
        reads = {
            s.id: s.item_reads if s.item_reads is not None else item_reads(s.kind, s.template, s.item_name, s.order_by)
            for s in bundle.sections
            if s.kind in ("each", "tools", "history")
        }
        memo_sections = frozenset(sid for sid, r in reads.items() if r != "more")
        unscored = {
            s.id: s.order_by[0]
            for s in bundle.sections
            if reads.get(s.id) == "item-without-score" and _score_only_orders(s, bundle, validator)
        }
        proven = item_checks(bundle.item_proofs, bundle.lazy_paths) if validator is not None else {}
        return cls(bundle, counter, validator, templates, tuple(props), defaults, memo, memo_sections, unscored, proven)

    def template(self, section: Section) -> Any:
        """The section's compiled Jinja template: compiled on first use when the section has a plan
        (its plan defers to Jinja only for an unexpected value), so most renders never load Jinja."""
        compiled = self.templates.get(section.id)
        if compiled is None:
            compiled = self.templates[section.id] = _compile(section)
        return compiled

    def context(self, state: Mapping[str, Any]) -> dict[str, Any]:
        """Template variables: declared inputs (absent optional ones as their default or None)."""
        ctx = dict(self.defaults)
        ctx.update(state)
        for name in SANDBOX_GLOBALS.intersection(state).difference(self.declared):
            del ctx[name]  # an undeclared state key must not shadow `range` or `dict`
        return ctx

    def render(self, section: Section, ctx: Mapping[str, Any], item: Any = MISSING, where: Any = None) -> str:
        """Fill a section's template (per item when `item` is given)."""
        if section.plan is not None:
            if item is MISSING:
                text = run_plan(section.plan, ctx)
            else:
                text = run_plan(section.plan, {section.item_name: item}, ctx)
            if text is not None:
                return text
        from .jinja.sandbox import render

        if item is not MISSING:
            ctx = {**ctx, section.item_name: item}
        try:
            return render(self.template(section), ctx)
        except RenderError as exc:
            place = f"section '{section.id}'" + (f", {where()}" if where is not None else "")
            raise RenderError(f"{place}: {exc.message}", code=exc.code, hint=exc.hint) from exc


def _compile(section: Section) -> Any:
    from .jinja.sandbox import compile_template

    if section.template is None:  # never: only sections with a template are rendered through Jinja
        raise RenderError(f"section '{section.id}' has no template")
    try:
        return compile_template(section.template)
    except Exception as exc:  # a bundle that passed compile checks parses; guard anyway
        raise RenderError(f"section '{section.id}': template does not parse: {exc}") from exc


def _score_only_orders(spec: Section, bundle: RoleBundle, validator: Validator | None) -> bool:
    """True, for a section whose items' text never reads the score they are ordered by
    (`item_reads` "item-without-score"), when that score, as any finite number, cannot change
    whether an item is valid: the item memo then recognises an item whose score alone changed
    (an agent's memory re-ranked)."""
    if spec.path not in bundle.lazy_paths:
        return True  # the whole list, scores included, is checked before any item is offered
    return validator is not None and score_only_orders(validator.item_schema(spec.path), spec.order_by[0])


@dataclass
class Candidate:
    """A section being filled for one render."""

    spec: Section
    index: int  # position in the role (document order)
    body: str | None = None  # static, template and rules sections
    items: list | None = None  # each, tools, history
    order: list[int] | None = None  # item indices in the order they are offered to the budget
    rendered: dict[int, str] = field(default_factory=dict)
    units: dict[int, str] = field(default_factory=dict)  # rendered text + item separator, counted as one piece
    checked: bool = True  # items are checked against the inputs schema when offered (render's validate)
    declared: int = 0  # tools: items before this index are the section's static declarations

    def item_where(self, i: int) -> str:
        """Where item `i` comes from: its state path, or the section's `declare` list."""
        if i < self.declared:
            return f"declare[{i}]"
        return state_path((*self.spec.path, i - self.declared))


def make_candidate(
    prepared: PreparedRole,
    spec: Section,
    index: int,
    state: Mapping[str, Any],
    ctx: Mapping[str, Any],
    cond_ctx: Mapping[str, Any],
    checked: bool = True,
) -> Candidate:
    """Render a non-list section now; for lists, read the items and their order only."""
    cand = Candidate(spec, index, checked=checked)
    if spec.kind == "static":
        cand.body = spec.text or ""  # the body only: pieces() places the title line
    elif spec.kind == "template":
        cand.body = strip_text(prepared.render(spec, ctx))
    elif spec.kind == "rules":
        included = [line.is_title or conditions.evaluate(line.when, cond_ctx) for line in spec.rules]
        cand.body = assemble_rules(spec.rules, included)
    else:
        items = (lookup_list(state, spec.path, spec.id) or []) if spec.path else []
        if spec.declared:
            items = [*spec.declared, *items]
            cand.declared = len(spec.declared)
        cand.items = items
        cand.order = item_order(spec, items)
    return cand


def unique_tool_names(cands: list[Candidate], reserved: Mapping[str, str]) -> None:
    """Providers refuse two tools of one name: a state tool may not repeat a declared one, another
    state tool, one of another tools section, or a `reserved` name (name -> what holds it:
    the output contract's return tool)."""
    seen: dict[str, tuple[Candidate, int]] = {}
    for cand in cands:
        if cand.spec.kind != "tools":
            continue
        for i, item in enumerate(cand.items or ()):
            name = item.get("name") if isinstance(item, Mapping) else None
            if not isinstance(name, str):
                continue  # reported when the item is offered
            first = seen.setdefault(name, (cand, i))
            if name in reserved:
                where = reserved[name]
            elif first[0] is not cand or first[1] != i:
                where = first[0].item_where(first[1])
                if first[0] is not cand and first[1] < first[0].declared:
                    where = f"section '{first[0].spec.id}' {where}"
            else:
                continue
            raise StateError("", [(cand.item_where(i) + ".name", f"repeats the name '{name}' of {where}; tool names must be unique")])


def item_order(spec: Section, items: list) -> list[int]:
    """Indices in the order items are offered: best score first, or by `keep`."""
    n = len(items)
    if spec.order_by:
        key = spec.order_by
        if len(key) == 1 and all(type(item) is dict for item in items):
            scores = [item.get(key[0], MISSING) for item in items]
        else:
            scores = [_score(item, key) for item in items]
        if not all(type(v) is int or (type(v) is float and math.isfinite(v)) for v in scores):
            _bad_score(spec, scores)
            # items without a score (absent, null, or not a mapping: checked when offered) come last
            unscored = [i for i in range(n) if scores[i] is MISSING or scores[i] is None]
            scored = [i for i in range(n) if not (scores[i] is MISSING or scores[i] is None)]
            return sorted(scored, key=scores.__getitem__, reverse=spec.order_desc) + unscored
        # sorting is stable, also in reverse: equal scores keep their list order
        return sorted(range(n), key=scores.__getitem__, reverse=spec.order_desc)
    if spec.keep == "last":
        return list(range(n - 1, -1, -1))
    return list(range(n))


def check_item(prepared: PreparedRole, cand: Candidate, i: int) -> Any:
    """Item `i`, validated first when its list is validated lazily."""
    spec = cand.spec
    item = cand.items[i]  # type: ignore[index]
    if i < cand.declared:
        return item
    validator = prepared.validator
    if cand.checked and spec.path in prepared.bundle.lazy_paths:
        # lists at lazy paths skip the up-front check: each item is checked when offered, in one
        # pass where the compiler proved the item schema a record, else (or when that pass says no)
        # as JSON data and against the item schema, which name what is wrong
        proven = prepared.proven.get(spec.path)
        if proven is None or not proven(item, len(spec.path) + 1):
            check_state_data(item, at=(*spec.path, i - cand.declared))
            if validator is not None and not validator.item_valid(spec.path, item):
                raise StateError("", validator.item_errors(spec.path, i - cand.declared, item))
    if spec.kind == "tools":
        from .tooldecl import problems, with_defaults

        found = problems(item)
        if found:
            where = cand.item_where(i)
            raise StateError("", [(where + sub, message) for sub, message in found])
        return with_defaults(item)  # templates may read description and parameters, which are optional
    return item


def _score(item: Any, key: tuple[str, ...]) -> Any:
    value: Any = item
    for part in key:
        value = value.get(part, MISSING) if isinstance(value, Mapping) else MISSING
    return value


def _bad_score(spec: Section, scores: list) -> None:
    """StateError for the first score that is there but not a finite number."""
    for i, value in enumerate(scores):
        if value is MISSING or value is None:
            continue
        where = state_path((*spec.path, i, *spec.order_by))
        if type(value) not in (int, float):
            raise StateError("", [(where, f"expected a number to order section '{spec.id}' by, got {type(value).__name__}")])
        if type(value) is float and not math.isfinite(value):  # an int is finite, however large (math.isfinite would overflow)
            raise StateError("", [(where, "is not a finite number")], code="PM811")


def render_item(prepared: PreparedRole, cand: Candidate, i: int, ctx: Mapping[str, Any]) -> str:
    """Text of item `i` (validated first when its list is validated lazily)."""
    text = cand.rendered.get(i)
    if text is not None:
        return text
    spec = cand.spec
    item = check_item(prepared, cand, i)
    text = strip_text(prepared.render(spec, ctx, item, lambda: cand.item_where(i)))
    cand.rendered[i] = text
    cand.units[i] = text + spec.item_separator
    return text
