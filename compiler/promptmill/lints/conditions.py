"""Condition lint: the paths and values of a role's conditions, against its inputs schema.

The shape of each condition (operators, value types per operator, regexes,
roots) is checked where it is loaded (`conditions.problems`). Here, per
composed role, every `state.` path is looked up in the role's composed inputs
schema (through `properties`, `items` for numeric segments and schema-valued
`additionalProperties`) and each compared value is checked against the type
and `enum` found there.

Who owns a condition decides how strict the check is:
- the role's own conditions (section `when:` along the chain, role `inject:`
  rules): a path the inputs do not declare is an error (PM607), and so is a
  value that can never match (PM609);
- shared conditions (rules of included constraint sets, `inject:` rules of
  promptmill.yaml and of the user rules file) serve many roles, and a role that does not declare a
  path's first field simply never has it (the condition sees it missing). They
  are checked only where they touch this role: when the role declares the first
  field, or declares one spelled almost the same (a likely typo). Findings are
  warnings, placed where the role includes the set (or at the project rule).
Conditions whose compile-time part (`role.*`, `model`) rules them out for the
role are not checked for it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from ..compose.model import ConstraintSet
from ..compose.resolve import ComposedRole
from ..core.diagnostics import Diagnostic, Position
from ..core.suggest import did_you_mean, suggest
from ..core.typenames import json_type
from ..runtime import conditions
from ..source.loader import DocPath
from .context import LintContext

_OPAQUE = ("$ref", "anyOf", "oneOf", "allOf", "not", "if", "patternProperties", "$dynamicRef")
_ORDERED = ("gt", "gte", "lt", "lte")


def _types(node: Mapping[str, Any]) -> set[str]:
    t = node.get("type")
    if isinstance(t, str):
        return {t}
    if isinstance(t, list):
        return {x for x in t if isinstance(x, str)}
    if isinstance(node.get("enum"), list):
        return {json_type(v) for v in node["enum"]}
    if "const" in node:
        return {json_type(node["const"])}
    return set()


def _fits(v: Any, types: set[str]) -> bool:
    jt = json_type(v)
    if jt in types or (jt == "integer" and "number" in types):
        return True
    return jt == "number" and "integer" in types and float(v).is_integer()


def _describe(types: set[str]) -> str:
    return " or ".join(sorted(types))


def schema_at(inputs: Mapping[str, Any], path: str) -> tuple[Mapping[str, Any] | None, tuple[str, str | None] | None]:
    """Schema node of a `state.` path: (node, None); (None, None) when the schema leaves it open;
    (None, (message, did-you-mean)) when the path cannot exist."""
    segments = path.split(".")[1:]
    node: Any = {**inputs, "properties": inputs.get("properties") or {}}
    for i, seg in enumerate(segments):
        if not isinstance(node, Mapping) or any(k in node for k in _OPAQUE):
            return None, None
        props = node.get("properties") if isinstance(node.get("properties"), Mapping) else None
        types = _types(node)
        if props is not None and seg in props:
            node = props[seg]
            continue
        items = node.get("items")
        if seg.isdigit() and ("array" in types or isinstance(items, Mapping)):
            node = items if isinstance(items, Mapping) else {}
            continue
        extra = node.get("additionalProperties")
        if isinstance(extra, Mapping) and not (types - {"object"}):
            node = extra
            continue
        shown = "state." + ".".join(segments[:i]) if i else "the state"
        if props is not None:
            return None, (f"'{path}' is not in the inputs schema: {shown} has no property '{seg}'", suggest(seg, list(props)))
        if "array" in types:
            return None, (f"'{path}' is not in the inputs schema: {shown} is a list; index it with a number", None)
        if types and "object" not in types:
            return None, (f"'{path}' is not in the inputs schema: {shown} is {_describe(types)} and has no fields", None)
        return None, None  # an object without declared properties: anything goes
    if not isinstance(node, Mapping):  # a boolean schema (true/false): nothing to check a value against
        return None, None
    return node, None


def value_problem(op: str, value: Any, node: Mapping[str, Any], path: str) -> str | None:
    """Why `path <op> value` can never hold given the schema `node`, or None."""
    types, enum = _types(node), node.get("enum")
    values = [value] if op in ("eq", "ne") else (value if op == "in" and isinstance(value, list) else None)
    for v in values or ():
        if types and not _fits(v, types):
            return f"'{path}' is {_describe(types)} in the inputs schema; {v!r} ({json_type(v)}) can never equal it"
        if isinstance(enum, list) and not any(conditions._equal(v, e) for e in enum):
            return f"'{path}' is one of {enum} in the inputs schema; {v!r} can never equal it"
    if op in _ORDERED and types:
        numeric = bool(types & {"number", "integer"}) and json_type(value) in ("integer", "number")
        if not numeric and not ("string" in types and isinstance(value, str)):
            return f"'{path}' is {_describe(types)} in the inputs schema; it cannot be compared with {value!r}"
    if op == "regex" and types and "string" not in types:
        return f"'{path}' is {_describe(types)} in the inputs schema; regex tests strings"
    if op == "contains" and types:
        if not types & {"string", "array", "object"}:
            return f"'{path}' is {_describe(types)} in the inputs schema; contains needs a string, list or mapping"
        items = node.get("items")
        if types == {"array"} and isinstance(items, Mapping) and _types(items) and not _fits(value, _types(items)):
            return f"'{path}' holds {_describe(_types(items))} items; it can never contain {value!r}"
        if types == {"string"} and not isinstance(value, str):
            return f"'{path}' is a string; it can only contain a string, not {value!r}"
    return None


def check_condition(
    cond: Any,
    inputs: Mapping[str, Any],
    facts: Mapping[str, Any],
    report: Callable[[DocPath, str, str, str | None], None],
    *,
    shared: bool,
) -> None:
    """Check one condition; `report(location, code, message, hint)` receives each finding.
    A condition the role's `role.*` facts rule out is skipped; one that fails only for the
    role's own `model` is checked, since a render for another model can make it hold."""
    if not isinstance(cond, Mapping) or conditions.problems(cond):
        return  # malformed: already reported where it was loaded
    if conditions.partial(cond, conditions.compile_facts(facts)) is False:
        return
    declared = list(inputs.get("properties") or {})
    for loc, leaf in conditions.leaves(cond):
        path = leaf["path"]
        if not path.startswith("state."):
            continue
        first = path.split(".")[1]
        if shared and first not in declared and suggest(first, declared) is None:
            continue
        node, missing = schema_at(inputs, path)
        if missing is not None:
            message, close = missing
            report(loc + ("path",), "PM607", message, did_you_mean([close]) if close else None)
        elif node is not None:
            problem = value_problem(leaf["op"], leaf.get("value"), node, path)
            if problem:
                report(loc + ("value",), "PM609", problem, None)


def condition_mismatches(composed: ComposedRole, ctx: LintContext) -> list[Diagnostic]:
    """Path and value findings for every condition that can reach `composed`."""
    index = ctx.index
    out: list[Diagnostic] = []
    inputs, facts, rid = composed.inputs or {}, composed.facts, composed.role.id

    def owned(pos: Callable[..., Position]) -> Callable[[DocPath, str, str, str | None], None]:
        def report(loc: DocPath, code: str, message: str, hint: str | None) -> None:
            out.append(Diagnostic.at(pos(*loc), code, message, hint=hint))

        return report

    def shared(pos: Callable[..., Position], what: str) -> Callable[[DocPath, str, str, str | None], None]:
        def report(loc: DocPath, code: str, message: str, hint: str | None) -> None:
            out.append(Diagnostic.at(pos(*loc), code, f"{what}, for role '{rid}': {message}", hint=hint, severity="warning"))

        return report

    for s in composed.sections:
        if "when" in s.data:
            src = s.owner("when")
            check_condition(s.data["when"], inputs, facts, owned(lambda *sub, src=src: src.pos("when", *sub)), shared=False)
        for i, set_id in enumerate(s.get("constraints") or ()):
            found = index.get("constraints", set_id)
            if not isinstance(found, ConstraintSet):
                continue
            for rule in found.rules:
                if rule.when is not None:
                    what = f"rule '{rule.id}' of constraint set '{set_id}' ({rule.pos.file}:{rule.pos.line})"
                    at = s.pos("constraints", i)  # where this role includes the set: the role's own file
                    check_condition(rule.when, inputs, facts, shared(lambda *_, at=at: at, what), shared=True)
    for inject in composed.rules:
        if "when" not in inject.data:
            continue
        if inject.owner >= 0:
            check_condition(inject.data["when"], inputs, facts, owned(lambda *sub, r=inject: r.pos("when", *sub)), shared=False)
        else:
            where = "the user rules file" if inject.scope == "user" else inject.origin
            what = f"injection rule '{inject.name}' of {where}"
            check_condition(inject.data["when"], inputs, facts, shared(lambda *sub, r=inject: r.pos("when", *sub), what), shared=True)
    return out
