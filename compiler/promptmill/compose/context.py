"""Context composition: fragments placed around a role's sections.

Candidates, in precedence order:
1. injection rules (`inject:` in the user rules file, layer 0 by default, in
   promptmill.yaml, layer 3 by default, and in roles, layer 1 by default),
   sorted by layer (lower first), then definition order (user rules, project
   rules, then the roles' rules root-first);
2. the `context:` of each role along the extends chain, root-first (within a
   role: system, before, after, each in list order).
Within a position, fragments appear in this order too: injected ones first,
then the roles' own; except `after`, where the roles' own after-context comes
first, right after the body, and injected after-context follows it (the order
seed 001 gives the first user message: hook before-context, own before-context,
body, own after-context, hook after-context).

Conditions are applied as far as compile-time facts allow (`role.id`,
`role.category`, `model`); a rule that can never fire for a role is left out.

`suppress:` in a role drops, by exact id (never by basename), the placements
that role inherits: its ancestors' context and every injection rule declared
outside it or its descendants. The role itself (and its descendants) may place
the same fragment again, so `suppress: [X]` plus `after: [X]` moves X.

A fragment appears once: the first placement wins. When an earlier placement
is conditional, a later one gets the negation of its condition folded in, so
at run time exactly the first placement whose condition holds appears. Two
placements at different positions are reported (PM605).

By default a fragment is wrapped as `<Name id="..." type="...">...</Name>`,
where Name is the PascalCase form of the fragment's `name` (or of the last
segment of its id); `wrap: false` injects the bare text.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import Any

from ..core.diagnostics import Diagnostic, Position
from ..core.suggest import ID_CUTOFF, did_you_mean, nearest, suggest
from ..runtime import conditions
from ..source.loader import Document
from .index import Index
from .model import Fragment, Role

POSITIONS = ("system", "before", "after")
DEFAULT_LAYERS = {"user": 0, "role": 1, "project": 3}  # default `layer:` of an injection rule, by where it is written
_XML_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_.-]*$")


@dataclass(frozen=True)
class InjectRule:
    """One `inject:` rule: from the user rules file or promptmill.yaml (owner -1), or a role
    (owner = its depth in the chain)."""

    data: dict
    doc: Document
    path: tuple
    owner: int
    origin: str  # "user:promptmill.yaml", "promptmill.yaml" or "role <id>"
    scope: str = "role"  # "user", "project" or "role": the default layer, and how reports name it

    def pos(self, *sub: Any) -> Position:
        return self.doc.pos(self.path + sub)

    @property
    def name(self) -> str:
        return self.data.get("id") or self.data["fragment"]

    @property
    def layer(self) -> int:
        """The explicit `layer:`, else the default of where the rule was written."""
        return self.data.get("layer", DEFAULT_LAYERS[self.scope])

    @property
    def declared_by(self) -> str:
        """How events and reports name the rule: `inject:<id>`, `user:inject:<id>` from the user file."""
        return f"user:inject:{self.name}" if self.scope == "user" else f"inject:{self.name}"


@dataclass(frozen=True)
class ContextEntry:
    """A fragment placed around the role's sections."""

    fragment: Fragment
    position: str  # system | before | after
    wrap: bool
    declared_by: str  # "role:<id>", "inject:<rule id>" or "user:inject:<rule id>"
    layer: int | None = None  # injection layer (None for a role's own context)
    when: dict | None = None  # runtime condition left after compile-time facts were applied
    injected: bool = False
    owner: int = -1  # depth of the declaring role in the chain (-1: the project)
    where: Position | None = None  # where it was declared
    yields_to: tuple[str, ...] = ()  # earlier conditional placements that win when they apply


def tag_name(fragment: Fragment) -> str:
    """PascalCase XML tag name of a fragment (from `name`, else the id's last segment)."""
    base = fragment.get("name") or fragment.id.rsplit("/", 1)[-1]
    parts = [p for p in re.split(r"[^0-9A-Za-z]+", base) if p]
    return "".join(p[:1].upper() + p[1:] for p in parts)


def valid_tag(name: str) -> bool:
    """True when `name` can be an XML element name (and does not start with 'xml')."""
    return bool(_XML_NAME.match(name)) and not name.lower().startswith("xml")


def xml_attr(value: str) -> str:
    return value.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&quot;")


def wrapped_text(fragment: Fragment, wrap: bool) -> str:
    """The text a fragment contributes, wrapped in its tag unless `wrap` is false."""
    text = fragment.text.strip("\n")
    if not wrap:
        return text
    tag = tag_name(fragment)
    kind = fragment.get("type", "fragment")
    return f'<{tag} id="{xml_attr(fragment.id)}" type="{xml_attr(kind)}">\n{text}\n</{tag}>'


def tag_diagnostic(fragment: Fragment, used_at: Position) -> Diagnostic | None:
    """PM608 when a fragment used wrapped cannot form an XML tag."""
    tag = tag_name(fragment)
    if valid_tag(tag):
        return None
    where = fragment.pos("name") if "name" in fragment.data else fragment.pos("id")
    return Diagnostic.at(
        where,
        "PM608",
        f"fragment '{fragment.id}' cannot form an XML tag (its name gives '{tag}'), but {used_at.file}:{used_at.line} uses it wrapped",
        hint="give it a `name:` that starts with a letter (not 'xml'), or use it with wrap: false",
    )


def nearest_ids(fid: str, ids: list[str], n: int = 3) -> list[str]:
    """Ids close to `fid`: same last segment first, then similar spelling."""
    base = fid.rsplit("/", 1)[-1].lower()
    found = [i for i in ids if i != fid and i.rsplit("/", 1)[-1].lower() == base]
    found += [i for i in nearest(fid, ids, n=n + 1, cutoff=ID_CUTOFF) if i != fid]
    return list(dict.fromkeys(found))[:n]


def _ref(item: Any) -> tuple[str, bool | None]:
    if isinstance(item, str):
        return item, None
    return item["id"], item.get("wrap")


def _event_condition(rule: dict) -> dict | None:
    event = rule.get("event", "any")
    on_event = None if event == "any" else {"path": "event", "op": "eq", "value": event}
    return conditions.conjoin(on_event, rule.get("when"))


def compose_context(
    chain: tuple[Role, ...] | list[Role],
    index: Index,
    rules: list[InjectRule],
    facts: dict,
) -> tuple[list[ContextEntry], list[dict], list[Diagnostic]]:
    """Context entries of a role (see the module docstring), events and diagnostics.

    `rules` are every injection rule in scope; `facts` is the compile-time
    condition context (`role`, `model`).
    """
    diags: list[Diagnostic] = []
    events: list[dict] = []
    candidates: list[ContextEntry] = []

    def fragment_for(fid: str, where: Position, wrap: bool | None) -> tuple[Fragment, bool] | None:
        frag = index.get("fragment", fid)
        if not isinstance(frag, Fragment):
            close = suggest(fid, index.ids("fragment"))
            other = next((k for k in ("role", "constraints", "output") if index.get(k, fid) is not None), None)
            diags.append(
                Diagnostic.at(
                    where,
                    "PM304" if other else "PM302",
                    f"'{fid}' is a {other}, not a fragment" if other else f"unknown fragment '{fid}'",
                    hint=did_you_mean([close]) if close else None,
                )
            )
            return None
        wrap = frag.get("wrap", True) if wrap is None else wrap
        bad_tag = tag_diagnostic(frag, where) if wrap else None
        if bad_tag is not None:
            diags.append(bad_tag)
        return frag, wrap

    # 1. injection rules, by layer then definition order (the sort is stable)
    for rule in sorted(rules, key=lambda r: r.layer):
        found = fragment_for(rule.data["fragment"], rule.pos("fragment"), rule.data.get("wrap"))
        when = conditions.partial(_event_condition(rule.data), facts)
        if found is None or when is False:
            continue
        candidates.append(
            ContextEntry(
                found[0],
                rule.data.get("position", "before"),
                found[1],
                rule.declared_by,
                layer=rule.layer,
                when=None if when is True else when,
                injected=True,
                owner=rule.owner,
                where=rule.pos("fragment"),
            )
        )
    # 2. each role's own context, root-first
    for depth, role in enumerate(chain):
        ctx = role.get("context") or {}
        for position in POSITIONS:
            for i, item in enumerate(ctx.get(position, ())):
                fid, wrap = _ref(item)
                where = role.pos("context", position, i)
                found = fragment_for(fid, where, wrap)
                if found is not None:
                    candidates.append(ContextEntry(found[0], position, found[1], f"role:{role.id}", owner=depth, where=where))
    # 3. suppressions: exact ids, of what each suppressing role inherits
    suppressors: dict[str, list[tuple[int, Role]]] = {}
    for depth, role in enumerate(chain):
        for i, fid in enumerate((role.get("context") or {}).get("suppress", ())):
            # what could reach it from outside: ancestors' context and injection rules declared
            # outside it, including rules whose compile-time condition rules them out for this role
            inherited = list(
                dict.fromkeys(
                    [e.fragment.id for e in candidates if e.owner < depth] + [r.data["fragment"] for r in rules if r.owner < depth]
                )
            )
            if fid not in inherited:
                own = any(e.fragment.id == fid and e.owner == depth for e in candidates)
                close = nearest_ids(fid, inherited) or nearest_ids(fid, index.ids("fragment"))
                if own:
                    hint = "this role places it itself; suppress drops inherited placements only"
                else:
                    hint = ("nearest ids: " + ", ".join(f"'{c}'" for c in close) + "; " if close else "") + (
                        "suppress takes exact fragment ids, never basenames"
                    )
                diags.append(
                    Diagnostic.at(
                        role.pos("context", "suppress", i),
                        "PM603",
                        f"suppress '{fid}' matches no fragment that role '{role.id}' inherits or is injected with",
                        hint=hint,
                    )
                )
            suppressors.setdefault(fid, []).append((depth, role))
    # 4. first placement wins; later ones only when the earlier conditions fail
    entries: list[ContextEntry] = []
    accepted: dict[str, list[ContextEntry]] = {}  # as declared, before folding
    for entry in candidates:
        fid = entry.fragment.id
        by = next((r for d, r in suppressors.get(fid, ()) if entry.owner < d), None)
        if by is not None:
            events.append(
                {"type": "context_suppressed", "id": fid, "position": entry.position, "from": entry.declared_by, "by": f"role:{by.id}"}
            )
            continue
        prior = accepted.setdefault(fid, [])
        if prior:
            blocked = any(p.when is None for p in prior)
            moved = next((p for p in prior if p.position != entry.position), None)
            if moved is not None and entry.where is not None:
                effect = "is ignored" if blocked else "applies only when the earlier one does not"
                diags.append(
                    Diagnostic.at(
                        entry.where,
                        "PM605",
                        f"fragment '{fid}' is already placed at '{moved.position}' by {moved.declared_by}; "
                        f"this '{entry.position}' placement {effect}",
                        hint="place a fragment once, or suppress the inherited placement first",
                    )
                )
            if blocked:
                continue
        prior.append(entry)
        earlier = prior[:-1]
        entries.append(
            replace(
                entry,
                when=conditions.conjoin(entry.when, *({"not": p.when} for p in earlier)),
                yields_to=tuple(p.declared_by for p in earlier),
            )
        )
    # the roles' own after-context sits between the body and injected after-context
    entries.sort(key=lambda e: e.position == "after" and e.injected)
    return entries, events, diags
