"""Context composition: fragments placed around a role's sections.

Sources, in order of precedence for each position:
1. injection rules (`inject:` in promptmill.yaml, layer 3 by default, and in
   roles, layer 1 by default), sorted by layer (lower first), then definition
   order;
2. the `context:` of each role along the extends chain, root-first.

A fragment appears once: the first occurrence wins (a later one at another
position is reported, PM605). `suppress:` drops inherited or injected
fragments by exact id (never by basename). By default a fragment is wrapped as
`<Name id="..." type="fragment">...</Name>`, where Name is the PascalCase form
of the fragment's `name` (or the last segment of its id).
"""

from __future__ import annotations

import re
from typing import Any

from .diagnostics import Diagnostic, Position
from .model import Fragment, Role
from .resolve import ContextEntry, Index
from .schemacheck import suggest

POSITIONS = ("system", "before", "after")
_XML_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_.-]*$")
DEFAULT_LAYERS = {"role": 1, "project": 3}


def tag_name(fragment: Fragment) -> str:
    """PascalCase XML tag name of a fragment."""
    base = fragment.get("name") or fragment.id.rsplit("/", 1)[-1]
    parts = [p for p in re.split(r"[^0-9A-Za-z]+", base) if p]
    return "".join(p[:1].upper() + p[1:] for p in parts)


def valid_tag(name: str) -> bool:
    return bool(_XML_NAME.match(name)) and not name.lower().startswith("xml")


def xml_attr(value: str) -> str:
    return (
        value.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&quot;")
    )


def wrapped_text(fragment: Fragment, wrap: bool) -> str:
    """The text a fragment contributes, wrapped in its tag unless `wrap` is false."""
    text = fragment.text.strip("\n")
    if not wrap:
        return text
    tag = tag_name(fragment)
    kind = fragment.get("type", "fragment")
    return f'<{tag} id="{xml_attr(fragment.id)}" type="{xml_attr(kind)}">\n{text}\n</{tag}>'


def _ref(item: Any) -> tuple[str, bool | None]:
    if isinstance(item, str):
        return item, None
    return item["id"], item.get("wrap")


def _event_condition(rule: dict) -> dict | None:
    event = rule.get("event", "any")
    conds = []
    if event != "any":
        conds.append({"path": "event", "op": "eq", "value": event})
    if rule.get("when") is not None:
        conds.append(rule["when"])
    if not conds:
        return None
    return conds[0] if len(conds) == 1 else {"all": conds}


def compose_context(
    chain: list[Role] | tuple[Role, ...],
    index: Index,
    project_rules: list[tuple[dict, Position]] | None = None,
) -> tuple[list[ContextEntry], list[dict], list[Diagnostic]]:
    """Context entries for a role, root-first, deduplicated and suppressed.

    `project_rules` are `(rule, Position)` pairs from promptmill.yaml.
    """
    diags: list[Diagnostic] = []
    events: list[dict] = []
    candidates: list[tuple[ContextEntry, Any]] = []  # entry, Position for diagnostics

    def fragment_for(fid: str, where) -> Fragment | None:
        frag = index.get("fragment", fid)
        if not isinstance(frag, Fragment):
            close = suggest(fid, index.ids("fragment"))
            diags.append(
                Diagnostic.at(
                    where,
                    "PM302",
                    f"unknown fragment '{fid}'",
                    hint=f"did you mean '{close}'?" if close else None,
                )
            )
            return None
        if not valid_tag(tag_name(frag)):
            diags.append(
                Diagnostic.at(
                    frag.pos("name") if "name" in frag.data else frag.pos("id"),
                    "PM608",
                    f"fragment '{fid}' cannot form an XML tag (got '{tag_name(frag)}'); "
                    "give it a `name:` starting with a letter, or use it with wrap: false",
                )
            )
        return frag

    # 1. injection rules, by layer then definition order
    rules: list[tuple[int, int, dict, Any, str]] = []
    order = 0
    for rule, where in project_rules or ():
        order += 1
        rules.append((rule.get("layer", DEFAULT_LAYERS["project"]), order, rule, where))
    for role in chain:
        for i, rule in enumerate(role.get("inject", ())):
            order += 1
            rules.append((rule.get("layer", DEFAULT_LAYERS["role"]), order, rule, role.pos("inject", i, "fragment")))
    for layer, _, rule, pos in sorted(rules, key=lambda r: (r[0], r[1])):
        frag = fragment_for(rule["fragment"], pos)
        if frag is None:
            continue
        wrap = rule.get("wrap", frag.get("wrap", True))
        entry = ContextEntry(
            frag,
            rule.get("position", "before"),
            wrap,
            f"inject:{rule.get('id', rule['fragment'])}",
            layer=layer,
            when=_event_condition(rule),
        )
        candidates.append((entry, pos))
    # 2. role context, root-first
    for role in chain:
        ctx = role.get("context") or {}
        for position in POSITIONS:
            for i, item in enumerate(ctx.get(position, ())):
                fid, wrap = _ref(item)
                where = role.pos("context", position, i)
                frag = fragment_for(fid, where)
                if frag is None:
                    continue
                entry = ContextEntry(frag, position, wrap if wrap is not None else frag.get("wrap", True), role.id)
                candidates.append((entry, where))
    # 3. suppression: by exact id, applied to what came from ancestors and injections
    suppressed: dict[str, str] = {}
    for role in chain:
        for i, fid in enumerate((role.get("context") or {}).get("suppress", ())):
            provided = [e.fragment.id for e, _ in candidates]
            if fid not in provided:
                close = suggest(fid, provided)
                diags.append(
                    Diagnostic.at(
                        role.pos("context", "suppress", i),
                        "PM603",
                        f"suppress '{fid}' matches no fragment that this role inherits or is injected with",
                        hint=f"did you mean '{close}'?" if close else "suppress takes exact fragment ids",
                    )
                )
            suppressed.setdefault(fid, role.id)
    later_roles = {r.id: d for d, r in enumerate(chain)}
    entries: list[ContextEntry] = []
    seen: dict[str, ContextEntry] = {}
    for entry, where in candidates:
        fid = entry.fragment.id
        by = suppressed.get(fid)
        if by is not None and not (entry.declared_by in later_roles and later_roles[entry.declared_by] >= later_roles[by]):
            events.append({"type": "context_suppressed", "id": fid, "by": by, "position": entry.position})
            continue
        first = seen.get(fid)
        if first is not None:
            if first.position != entry.position:
                diags.append(
                    Diagnostic.at(
                        where,
                        "PM605",
                        f"fragment '{fid}' is already placed at '{first.position}' (by {first.declared_by}); "
                        f"this '{entry.position}' placement is ignored",
                    )
                )
            continue
        seen[fid] = entry
        entries.append(entry)
    return entries, events, diags
