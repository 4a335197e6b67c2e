"""Resolve references: the id index along the search path, and extends chains.

`Index` maps (kind, id) to the template found first along the layers (project,
search path, user folder, shipped library); a project overrides a shipped
fragment simply by defining the same id. Two files of one layer defining the
same id is an error.

`compose(role, index)` walks the extends chain (root-first, any length up to
`MAX_CHAIN`, never recursively) and merges sections, inputs, context and
settings into a `ComposedRole`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .diagnostics import Diagnostic
from .model import Fragment, Role, SectionDef, Template
from .schemacheck import suggest

MAX_CHAIN = 256
SETTINGS = ("model", "provider", "tool_mode", "cache", "separator", "category", "output")


@dataclass
class Index:
    """First match wins along the layers; `shadowed` keeps what lost."""

    templates: dict[tuple[str, str], Template] = field(default_factory=dict)
    shadowed: dict[tuple[str, str], list[Template]] = field(default_factory=dict)

    def get(self, kind: str, tid: str) -> Template | None:
        return self.templates.get((kind, tid))

    def ids(self, kind: str) -> list[str]:
        return sorted(t for k, t in self.templates if k == kind)


def build_index(templates: list[Template]) -> tuple[Index, list[Diagnostic]]:
    """Index templates given in layer order (project first)."""
    index = Index()
    diags: list[Diagnostic] = []
    for t in templates:
        key = (t.kind, t.id)
        first = index.templates.get(key)
        if first is None:
            index.templates[key] = t
        elif first.layer.name == t.layer.name:
            where = first.pos("id")
            diags.append(
                Diagnostic.at(
                    t.pos("id"),
                    "PM301",
                    f"{t.kind} id '{t.id}' is already defined in {where.file}:{where.line}:{where.col}",
                    hint="ids must be unique within a folder; rename one of them",
                )
            )
        else:
            index.shadowed.setdefault(key, []).append(t)
    return index, diags


@dataclass(frozen=True)
class ContextEntry:
    """A fragment placed around the role's sections."""

    fragment: Fragment
    position: str  # system | before | after
    wrap: bool
    declared_by: str  # role id, or "inject:<rule id>"
    layer: int | None = None  # injection layer
    when: dict | None = None  # injection condition (event folded in)


@dataclass
class ComposedRole:
    role: Role
    chain: tuple[Role, ...]
    sections: list[SectionDef]
    inputs: dict
    settings: dict[str, tuple[Any, Role]]  # key -> (value, role that set it)
    budgets: list[tuple[dict, Role]]  # each role's own budget, root-first
    context: list[ContextEntry]
    events: list[dict]

    def setting(self, key: str, default: Any = None) -> Any:
        found = self.settings.get(key)
        return found[0] if found is not None else default


def _chain(role: Role, index: Index) -> tuple[list[Role], list[Diagnostic]]:
    chain: list[Role] = [role]
    seen = {role.id: 0}
    current = role
    while current.extends is not None:
        parent_id = current.extends
        if len(chain) >= MAX_CHAIN:
            return chain, [
                Diagnostic.at(
                    role.pos("extends"),
                    "PM601",
                    f"extends chain of role '{role.id}' is longer than {MAX_CHAIN} roles",
                    hint="flatten the hierarchy; deep chains are hard to read",
                )
            ]
        if parent_id in seen:
            links = chain[seen[parent_id] :] + [chain[seen[parent_id]]]
            text = " -> ".join(f"{r.id} ({r.pos('extends').file}:{r.pos('extends').line})" for r in links[:-1])
            return chain, [
                Diagnostic.at(role.pos("extends"), "PM303", f"extends cycle: {text} -> {links[-1].id}")
            ]
        parent = index.get("role", parent_id)
        if not isinstance(parent, Role):
            close = suggest(parent_id, index.ids("role"))
            links = " -> ".join(f"{r.id} ({r.pos('extends').file}:{r.pos('extends').line})" for r in chain)
            return chain, [
                Diagnostic.at(
                    current.pos("extends"),
                    "PM302",
                    f"role '{current.id}' extends unknown role '{parent_id}' (chain: {links} -> {parent_id})",
                    hint=f"did you mean '{close}'?" if close else None,
                )
            ]
        seen[parent_id] = len(chain)
        chain.append(parent)
        current = parent
    chain.reverse()
    return chain, []


def _index_of(sections: list[SectionDef], sid: str) -> int | None:
    for i, s in enumerate(sections):
        if s.id == sid:
            return i
    return None


def _compose_sections(chain: list[Role]) -> tuple[list[SectionDef], list[Diagnostic]]:
    sections: list[SectionDef] = []
    diags: list[Diagnostic] = []
    for role in chain:
        for s in role.sections:
            at = _index_of(sections, s.id)
            if s.get("remove"):
                if at is None:
                    close = suggest(s.id, [x.id for x in sections])
                    diags.append(
                        Diagnostic.at(
                            s.pos("id"),
                            "PM602",
                            f"cannot remove section '{s.id}': no inherited section has this id",
                            hint=f"did you mean '{close}'?" if close else None,
                        )
                    )
                else:
                    del sections[at]
                continue
            anchor = s.get("before") or s.get("after")
            if at is not None:
                inherited = sections[at]
                if s.source is None:  # a patch of the inherited section's settings
                    patch = {k: v for k, v in s.data.items() if k not in ("before", "after")}
                    s = SectionDef(inherited.doc, inherited.path, inherited.id, inherited.source, {**inherited.data, **patch})
                if anchor is None:
                    sections[at] = s
                    continue
                del sections[at]
            elif s.source is None:
                diags.append(
                    Diagnostic.at(
                        s.pos(),
                        "PM204",
                        f"section '{s.id}' is not inherited from a parent and has no content",
                    )
                )
                continue
            if anchor is None:
                sections.append(s)
                continue
            target = _index_of(sections, anchor)
            if target is None:
                close = suggest(anchor, [x.id for x in sections])
                key = "before" if s.get("before") else "after"
                diags.append(
                    Diagnostic.at(
                        s.pos(key),
                        "PM602",
                        f"section '{s.id}' is placed {key} '{anchor}', which no section has as id",
                        hint=f"did you mean '{close}'?" if close else None,
                    )
                )
                sections.append(s)
                continue
            sections.insert(target if s.get("before") else target + 1, s)
    return sections, diags


def _merge_inputs(chain: list[Role]) -> dict:
    merged: dict = {}
    for role in chain:
        own = role.get("inputs")
        if not own:
            continue
        if not merged:
            merged = dict(own)
            continue
        props = dict(merged.get("properties", {}))
        props.update(own.get("properties", {}))
        required = list(merged.get("required", []))
        required += [r for r in own.get("required", []) if r not in required]
        merged = {**merged, **own, "properties": props}
        if required:
            merged["required"] = required
    return merged


def compose(
    role: Role, index: Index, project_rules: list[tuple[dict, Any]] | None = None
) -> tuple[ComposedRole | None, list[Diagnostic]]:
    """Compose `role` with its ancestors, or report why it cannot be.

    `project_rules` are the injection rules of promptmill.yaml as (rule, Position).
    """
    chain, diags = _chain(role, index)
    if diags:
        return None, diags
    sections, sdiags = _compose_sections(chain)
    diags.extend(sdiags)
    settings: dict[str, tuple[Any, Role]] = {}
    for r in chain:
        for key in SETTINGS:
            if key in r.data:
                settings[key] = (r.data[key], r)
    budgets = [(r.data["budget"], r) for r in chain if "budget" in r.data]
    from .context import compose_context

    context, events, cdiags = compose_context(chain, index, project_rules)
    diags.extend(cdiags)
    composed = ComposedRole(
        role=role,
        chain=tuple(chain),
        sections=sections,
        inputs=_merge_inputs(chain),
        settings=settings,
        budgets=budgets,
        context=context,
        events=events,
    )
    return composed, diags
