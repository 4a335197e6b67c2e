"""Compile the constraint sets a section includes into rule lines.

Sets render in the order the section lists them, each as its title followed by
its rules as a list. A rule id present in two included sets is rendered once:
the first occurrence wins (PM604 warns). When the first occurrence has a
condition, later ones get its negation folded in, so exactly the first
occurrence whose condition holds is rendered. Conditions are decided at compile
time as far as `role.*` and `model` allow; what is left is tested per render.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..core.diagnostics import Diagnostic
from ..core.suggest import did_you_mean, suggest
from ..runtime import conditions
from ..runtime.bundle import RuleLine
from .model import ConstraintSet, SectionDef, Template
from .resolve import Index


def compile_rules(
    s: SectionDef,
    index: Index,
    facts: dict[str, Any],
    use: Callable[[Template], None],
    diags: list[Diagnostic],
) -> tuple[tuple[RuleLine, ...], bool, set[str]] | None:
    """(lines, has runtime conditions, state inputs used), or None when a set is missing."""
    lines: list[RuleLine] = []
    first_set: dict[str, str] = {}  # rule id -> set that had it first
    accepted: dict[str, list[dict | None]] = {}  # rule id -> conditions of its rendered occurrences
    runtime = False
    used: set[str] = set()
    for group, set_id in enumerate(s.get("constraints")):
        found = index.get("constraints", set_id)
        if not isinstance(found, ConstraintSet):
            other = next((k for k in ("role", "fragment", "output") if index.get(k, set_id) is not None), None)
            close = suggest(set_id, index.ids("constraints"))
            diags.append(
                Diagnostic.at(
                    s.pos("constraints", group),
                    "PM304" if other else "PM302",
                    f"'{set_id}' is a {other}, not a constraint set" if other else f"unknown constraint set '{set_id}'",
                    hint=did_you_mean([close]) if close else None,
                )
            )
            return None
        use(found)
        if found.title:
            lines.append(RuleLine(found.title, group, is_title=True))
        for rule in found.rules:
            if rule.id in first_set and first_set[rule.id] != set_id:
                diags.append(
                    Diagnostic.at(
                        s.pos("constraints", group),
                        "PM604",
                        f"rule '{rule.id}' of set '{set_id}' ({rule.pos.file}:{rule.pos.line}) is also in set "
                        f"'{first_set[rule.id]}', included earlier by section '{s.id}'; the first occurrence wins",
                        hint="drop one of the two rules, or give them different ids if both should render",
                    )
                )
            first_set.setdefault(rule.id, set_id)
            settled = conditions.partial(rule.when, facts)
            if settled is False:
                continue
            left = None if settled is True else settled
            prior = accepted.setdefault(rule.id, [])
            if any(p is None for p in prior):
                continue
            prior.append(left)
            when = conditions.conjoin(left, *({"not": p} for p in prior[:-1]))
            runtime = runtime or when is not None
            used.update(p.split(".")[1] for _, p in conditions.paths(when) if p.startswith("state."))
            text = "- " + rule.text.strip().replace("\n", "\n  ")
            lines.append(RuleLine(text, group, when=when, rule_id=rule.id))
    return tuple(lines), runtime, used
