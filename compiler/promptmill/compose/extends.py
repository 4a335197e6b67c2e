"""Extends chains: a role's ancestors, and how their sections and inputs merge.

`Chains(index).resolve(role)` returns the chain root-first. It walks parents in
a loop (never recursively) and memoises every role it passes, so resolving all
roles of a project costs one walk per role, whatever the depth. A missing
parent (PM302), a parent of the wrong kind (PM304), a cycle (PM303) and a chain
deeper than `MAX_CHAIN` (PM601) are each reported once, where the fix belongs,
with the whole chain and `file:line` for every link; roles that extend a broken
chain fail silently (their ancestor's diagnostic says why).

`compose_sections(chain)` applies each role's sections root-first: a section
with an inherited id and content replaces it; one without content patches the
inherited settings; `before`/`after` insert or move; `remove: true` drops. The
order is kept in a linked list, so every step costs O(1).

`merge_inputs(chain)` extends the inputs schema: properties merge, nested
object properties merge recursively, `required` lists are unioned.

`candidate_roles(role)` gives, for a role with `extends_when`, the role as it is
compiled with each candidate parent: the same template with `extends` set to the
candidate, reporting chain problems at the candidate's `role:`. The compiler
builds each of these chains ahead of time; the runtime picks one per render.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import TYPE_CHECKING, Any

from ..core.diagnostics import Diagnostic, Position
from ..core.suggest import did_you_mean, suggest
from .model import Role, SectionDef, Template

if TYPE_CHECKING:
    from .index import Index

MAX_CHAIN = 256
_SHOWN = 6  # links printed around the gap of a too-deep chain


def _link(role: Role) -> str:
    p = role.pos("extends") if role.extends is not None else role.pos("id")
    return f"{role.id} ({p.file}:{p.line})"


def _links(roles: list[Role]) -> str:
    if len(roles) > 2 * _SHOWN:
        hidden = len(roles) - 2 * _SHOWN
        return " -> ".join([_link(r) for r in roles[:_SHOWN]] + [f"... {hidden} more ..."] + [_link(r) for r in roles[-_SHOWN:]])
    return " -> ".join(_link(r) for r in roles)


@dataclass(frozen=True)
class CandidateRole(Role):
    """A role compiled with its `extends_when` candidate number `candidate` as its parent."""

    candidate: int = 0

    def pos(self, *sub: Any) -> Position:
        if sub[:1] == ("extends",):
            sub = ("extends_when", self.candidate, "role", *sub[1:])
        return super().pos(*sub)


def candidate_roles(role: Role) -> list[tuple[str, dict, CandidateRole]]:
    """(parent id, condition, role with that parent) for each of `role`'s `extends_when`."""
    out: list[tuple[str, dict, CandidateRole]] = []
    for i, choice in enumerate(role.get("extends_when") or ()):
        kept = {f.name: getattr(role, f.name) for f in fields(Role)}
        kept["data"] = {**role.data, "extends": choice["role"]}
        out.append((choice["role"], choice["when"], CandidateRole(**kept, candidate=i)))
    return out


class Chains:
    """Extends chains of one index, resolved once per role."""

    def __init__(self, index: Index | _Only) -> None:
        self.index = index
        self._done: dict[str, tuple[Role, ...] | None] = {}  # role id -> chain, None when broken

    def resolve(self, role: Role) -> tuple[tuple[Role, ...] | None, list[Diagnostic]]:
        """The chain of `role`, root-first, or None and the reason (reported once)."""
        if self.index.get("role", role.id) is not role:  # not the indexed role: do not memoise
            return Chains(_Only(self.index, role)).resolve(role)
        if role.id in self._done:
            return self._done[role.id], []
        path: list[Role] = []  # leaf first, up to (excluding) the point where the walk stopped
        on_path: dict[str, int] = {}
        current = role
        base: tuple[Role, ...] | None = ()
        diags: list[Diagnostic] = []
        while True:
            if current.id in self._done:
                base = self._done[current.id]
                break
            on_path[current.id] = len(path)
            path.append(current)
            parent_id = current.extends
            if parent_id is None:
                break
            if parent_id in on_path:
                diags.append(
                    Diagnostic.at(
                        current.pos("extends"),
                        "PM303",
                        f"extends cycle: {_links(path)} -> {parent_id}",
                        hint=f"one of the roles from '{parent_id}' on must extend something else (or nothing)",
                    )
                )
                base = None
                break
            parent = self.index.get("role", parent_id)
            if not isinstance(parent, Role):
                diags.append(self._missing(current, parent_id, path))
                base = None
                break
            current = parent
        self._fill(path, base, diags)
        return self._done[role.id], diags

    def _missing(self, current: Role, parent_id: str, path: list[Role]) -> Diagnostic:
        other = next((k for k in ("fragment", "constraints", "output") if self.index.get(k, parent_id) is not None), None)
        chain = f"{_links(path)} -> {parent_id}"
        if other is not None:
            return Diagnostic.at(
                current.pos("extends"),
                "PM304",
                f"role '{current.id}' extends '{parent_id}', which is a {other}, not a role (chain: {chain})",
            )
        close = suggest(parent_id, self.index.ids("role"))
        return Diagnostic.at(
            current.pos("extends"),
            "PM302",
            f"role '{current.id}' extends unknown role '{parent_id}' (chain: {chain} [missing])",
            hint=did_you_mean([close]) if close else "no role of the project, search path or library has this id",
        )

    def _fill(self, path: list[Role], base: tuple[Role, ...] | None, diags: list[Diagnostic]) -> None:
        """Record chains root-down along `path`; report a chain that first exceeds MAX_CHAIN."""
        chain = base
        for n in range(len(path) - 1, -1, -1):
            role = path[n]
            if chain is not None:
                chain = chain + (role,)
                if len(chain) > MAX_CHAIN:
                    deep = list(reversed(chain))
                    diags.append(
                        Diagnostic.at(
                            role.pos("extends"),
                            "PM601",
                            f"role '{role.id}' is {len(chain)} roles deep in its extends chain, more than the "
                            f"limit of {MAX_CHAIN}: {_links(deep)}",
                            hint="flatten the hierarchy; roles that extend this one are not compiled either",
                        )
                    )
                    chain = None
            self._done[role.id] = chain


class _Only:
    """An index view in which `role` stands for its id (for roles outside the index)."""

    def __init__(self, index: Index | _Only, role: Role) -> None:
        self.index, self.role = index, role

    def get(self, kind: str, tid: str) -> Template | None:
        if kind == "role" and tid == self.role.id:
            return self.role
        return self.index.get(kind, tid)

    def ids(self, kind: str) -> list[str]:
        return self.index.ids(kind)


class _Order:
    """Sections in order, as a doubly linked list keyed by section id."""

    _END = ""  # section ids are never empty

    def __init__(self) -> None:
        self.defs: dict[str, SectionDef] = {}
        self.next: dict[str, str] = {self._END: self._END}
        self.prev: dict[str, str] = {self._END: self._END}

    def __contains__(self, sid: str) -> bool:
        return sid in self.defs

    def _link(self, s: SectionDef, after: str) -> None:
        nxt = self.next[after]
        self.next[after], self.prev[nxt] = s.id, s.id
        self.prev[s.id], self.next[s.id] = after, nxt
        self.defs[s.id] = s

    def append(self, s: SectionDef) -> None:
        self._link(s, self.prev[self._END])

    def insert(self, s: SectionDef, anchor: str, before: bool) -> None:
        self._link(s, self.prev[anchor] if before else anchor)

    def remove(self, sid: str) -> None:
        p, n = self.prev.pop(sid), self.next.pop(sid)
        self.next[p], self.prev[n] = n, p
        del self.defs[sid]

    def ids(self) -> list[str]:
        return list(self.defs)

    def items(self) -> list[SectionDef]:
        out, sid = [], self.next[self._END]
        while sid != self._END:
            out.append(self.defs[sid])
            sid = self.next[sid]
        return out


def _patched(inherited: SectionDef, patch: SectionDef) -> SectionDef:
    data = {**inherited.data, **{k: v for k, v in patch.data.items() if k not in ("before", "after")}}
    return SectionDef(inherited.doc, inherited.path, inherited.id, inherited.source, data, inherited.patches + (patch,))


def compose_sections(chain: tuple[Role, ...] | list[Role]) -> tuple[list[SectionDef], list[Diagnostic]]:
    """The role's sections after applying every role of the chain, root-first."""
    order = _Order()
    diags: list[Diagnostic] = []

    def unknown(s: SectionDef, key: str, target: str, what: str) -> None:
        close = suggest(target, order.ids())
        diags.append(
            Diagnostic.at(
                s.pos(key),
                "PM602",
                what,
                hint=did_you_mean([close]) if close else ("inherited sections: " + ", ".join(order.ids()[:20])) if order.ids() else None,
            )
        )

    for role in chain:
        for s in role.sections:
            if s.get("remove"):
                if s.id in order:
                    order.remove(s.id)
                else:
                    unknown(s, "id", s.id, f"cannot remove section '{s.id}': no inherited section has this id")
                continue
            key = "before" if s.get("before") else "after" if s.get("after") else None
            anchor = s.get(key) if key else None
            if s.id in order:
                inherited = order.defs[s.id]
                s = _patched(inherited, s) if s.source is None else s
                if anchor is None:
                    order.defs[s.id] = s  # replace in place
                    continue
                order.remove(s.id)
            elif s.source is None:
                if role is chain[0]:
                    continue  # a role that extends nothing: model.py already reports the missing content
                diags.append(
                    Diagnostic.at(
                        s.pos(),
                        "PM204",
                        f"section '{s.id}' has no content and no inherited section has this id",
                        hint="give it text, template, each, constraints, output, fragment, history or tools",
                    )
                )
                continue
            if anchor is None:
                order.append(s)
            elif anchor in order:
                order.insert(s, anchor, before=key == "before")
            else:
                assert key is not None  # an anchor is the value of `before:` or `after:`
                unknown(s, key, anchor, f"section '{s.id}' is placed {key} '{anchor}', which no section has as id")
                order.append(s)
    return order.items(), diags


def _is_object(schema: Any) -> bool:
    return isinstance(schema, dict) and isinstance(schema.get("properties"), dict)


def _merge_schema(parent: dict, child: dict) -> dict:
    """`child` over `parent`: object properties merge recursively, `required` is unioned."""
    if not (_is_object(parent) and _is_object(child)) or child.get("type", parent.get("type")) != parent.get("type"):
        return dict(child) if child.get("properties") or "type" in child else {**parent, **child}
    props = dict(parent["properties"])
    for name, sub in child["properties"].items():
        mergeable = isinstance(sub, dict) and isinstance(props.get(name), dict)
        props[name] = _merge_schema(props[name], sub) if mergeable else sub
    merged = {**parent, **child, "properties": props}
    # an invalid schema (PM701, reported where it is written) must not stop composition
    required = list(_strings(parent.get("required")))
    required += [r for r in _strings(child.get("required")) if r not in required]
    if required:
        merged["required"] = required
    return merged


def _strings(value: Any) -> list:
    return [v for v in value if isinstance(v, str)] if isinstance(value, list) else []


def merge_inputs(chain: tuple[Role, ...] | list[Role]) -> dict:
    """The inputs schema of the chain's leaf: each role extends its parent's."""
    merged: dict = {}
    for role in chain:
        own = role.get("inputs")
        if isinstance(own, dict) and own:
            merged = _merge_schema(merged, own) if merged else dict(own)
    return merged
