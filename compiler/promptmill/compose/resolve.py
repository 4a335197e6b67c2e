"""Resolve references: composed roles.

`Composer(index, project).compose(role)` walks the extends chain (see
`promptmill.compose.extends`) and merges sections, inputs, settings, budgets, context
and injection rules (the user rules file's, promptmill.yaml's, then the
roles') into a `ComposedRole`. One composer serves every role of a
compile, so each chain is walked once.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..core.diagnostics import Diagnostic
from ..runtime import conditions
from ..source.loader import Document
from ..source.project import USER_RULES_SOURCE
from .context import DEFAULT_LAYERS, ContextEntry, InjectRule, compose_context
from .extends import MAX_CHAIN, Chains, compose_sections, merge_inputs
from .index import Index, build_index
from .model import Role, SectionDef, condition_diagnostics

__all__ = ["DEFAULT_LAYERS", "MAX_CHAIN", "ComposedRole", "Composer", "ContextEntry", "Index", "InjectRule", "build_index", "compose"]

SETTINGS = ("model", "provider", "tool_mode", "cache", "separator", "category", "output")


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
    return [InjectRule(r, doc, ("inject", i), -1, "promptmill.yaml", "project") for i, r in enumerate(config.get("inject", ()))]


def user_rules(doc: Document | None) -> list[InjectRule]:
    """The `inject:` rules of the user rules file (`$PROMPTMILL_USER_DIR/promptmill.yaml`)."""
    if doc is None:
        return []
    return [InjectRule(r, doc, ("inject", i), -1, USER_RULES_SOURCE, "user") for i, r in enumerate(doc.data.get("inject", ()))]


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
        context, events, cdiags = compose_context(chain, self.index, rules, conditions.compile_facts(facts))
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
