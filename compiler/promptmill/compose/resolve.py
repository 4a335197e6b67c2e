"""Resolve references: the id index along the search path, and composed roles.

`Index` maps (kind, id) to the template found first along the layers (project,
search path, user folder, shipped library); a project overrides a shipped
fragment simply by defining the same id, and `shadowed` keeps what lost. Two
files of one layer defining the same id is an error (PM301); an id that hides
one further down the search path is noted (PM306, info).

`Composer(index, project).compose(role)` walks the extends chain (see
`promptmill.compose.extends`) and merges sections, inputs, settings, budgets, context
and injection rules (the user rules file's, promptmill.yaml's, then the
roles') into a `ComposedRole`. One composer serves every role of a
compile, so each chain is walked once.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..core.diagnostics import Diagnostic, Position
from ..source.loader import Document
from ..source.project import USER_RULES_SOURCE
from .extends import MAX_CHAIN, Chains, compose_sections, merge_inputs
from .model import Fragment, Role, SectionDef, Template, condition_diagnostics

__all__ = ["DEFAULT_LAYERS", "MAX_CHAIN", "ComposedRole", "Composer", "ContextEntry", "Index", "InjectRule", "build_index", "compose"]

DEFAULT_LAYERS = {"user": 0, "role": 1, "project": 3}  # default `layer:` of an injection rule, by where it is written
SETTINGS = ("model", "provider", "tool_mode", "cache", "separator", "category", "output")


@dataclass
class Index:
    """First match wins along the layers; `shadowed` keeps what lost, in layer order."""

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
            if key not in index.shadowed:
                hidden = t.pos("id")
                diags.append(
                    Diagnostic.at(
                        first.pos("id"),
                        "PM306",
                        f"{t.kind} '{t.id}' ({first.layer.name}) shadows the one in the {t.layer.name} "
                        f"layer ({hidden.file}:{hidden.line})",
                        hint=f"`promptmill which {t.id}` shows the whole cascade",
                    )
                )
            index.shadowed.setdefault(key, []).append(t)
    return index, diags


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
    rules: list[InjectRule] = field(default_factory=list)  # every injection rule that applies
    facts: dict = field(default_factory=dict)  # compile-time condition context: role, model

    def setting(self, key: str, default: Any = None) -> Any:
        found = self.settings.get(key)
        return found[0] if found is not None else default


def project_rules(config: dict, doc: Document | None) -> list[InjectRule]:
    """The `inject:` rules of promptmill.yaml."""
    if doc is None:
        return []
    return [
        InjectRule(r, doc, ("inject", i), -1, "promptmill.yaml", "project") for i, r in enumerate(config.get("inject", ()))
    ]


def user_rules(doc: Document | None) -> list[InjectRule]:
    """The `inject:` rules of the user rules file (`$PROMPTMILL_USER_DIR/promptmill.yaml`)."""
    if doc is None:
        return []
    return [
        InjectRule(r, doc, ("inject", i), -1, USER_RULES_SOURCE, "user") for i, r in enumerate(doc.data.get("inject", ()))
    ]


class Composer:
    """Composes roles of one index; chains and shared checks are computed once."""

    def __init__(
        self,
        index: Index,
        config: dict | None = None,
        config_doc: Document | None = None,
        user_doc: Document | None = None,
    ) -> None:
        self.index = index
        self.config = config or {}
        self.chains = Chains(index)
        self.project_rules = project_rules(self.config, config_doc)
        self.user_rules = user_rules(user_doc)
        self.diagnostics: list[Diagnostic] = []  # about the shared rules themselves, reported once
        for rule in self.user_rules + self.project_rules:
            if "when" in rule.data:
                self.diagnostics.extend(condition_diagnostics(rule.doc, rule.path + ("when",), rule.data["when"]))

    def compose(self, role: Role) -> tuple[ComposedRole | None, list[Diagnostic]]:
        """Compose `role` with its ancestors, or report why it cannot be."""
        from .context import compose_context

        chain, diags = self.chains.resolve(role)
        if chain is None:
            return None, diags
        sections, sdiags = compose_sections(chain)
        diags.extend(sdiags)
        settings: dict[str, tuple[Any, Role]] = {}
        for r in chain:
            for key in SETTINGS:
                if key in r.data:
                    settings[key] = (r.data[key], r)
        model = settings["model"][0] if "model" in settings else self.config.get("model")
        category = settings["category"][0] if "category" in settings else ""
        facts = {"role": {"id": role.id, "category": category}, "model": model}
        rules = self.user_rules + self.project_rules
        for depth, r in enumerate(chain):
            rules += [InjectRule(x, r.doc, ("inject", i), depth, f"role {r.id}") for i, x in enumerate(r.get("inject", ()))]
        context, events, cdiags = compose_context(chain, self.index, rules, facts)
        diags.extend(cdiags)
        composed = ComposedRole(
            role=role,
            chain=chain,
            sections=sections,
            inputs=merge_inputs(chain),
            settings=settings,
            budgets=[(r.data["budget"], r) for r in chain if "budget" in r.data],
            context=context,
            events=events,
            rules=rules,
            facts=facts,
        )
        return composed, diags


def compose(
    role: Role,
    index: Index,
    *,
    config: dict | None = None,
    config_doc: Document | None = None,
    user_doc: Document | None = None,
) -> tuple[ComposedRole | None, list[Diagnostic]]:
    """Compose one role with a fresh `Composer` (use one composer for many roles).

    `config` and `config_doc` are promptmill.yaml's data and document (defaults, inject rules);
    `user_doc` is the user rules file (`Project.user_doc`).
    """
    return Composer(index, config, config_doc, user_doc).compose(role)
