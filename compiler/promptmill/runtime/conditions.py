"""The condition language shared by `when:` on sections and rules and by injection rules.

A condition is data:
    {path: state.subtask.kind, op: eq, value: code}
    {any: [cond, ...]}   {all: [cond, ...]}   {not: cond}

Paths are dotted and look into the render context: `state.<...>` (the render
state; numeric segments index lists), `role.id`, `role.category`, `model`,
`provider`, `event`. Operators: eq, ne, gt, gte, lt, lte, in, contains, regex,
exists. Comparisons never raise: a missing path or mismatched types make the
comparison false (`ne` true, `exists` false), so a condition can be evaluated
on any state.

`evaluate` runs on every render and imports nothing heavy. A `regex` runs on
the `regex` engine (already loaded by tiktoken) with a deadline
(`REGEX_TIMEOUT`), so a pattern that backtracks on crafted state fails the
render with PM821, naming the path and the pattern, instead of hanging it. `problems` is the
compile-time check of a condition's shape (operators, value types, regexes,
roots). `partial` decides what the facts it is given settle and returns the rest:
compile settles `role.*` only, so a condition on `model` stays in the bundle and is
decided on each render for the model rendered for (the role's, or `render(model=...)`);
lints also pass `model` to tell what holds for the role's own model. `conjoin`
builds `all` of several conditions.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from functools import lru_cache
from typing import Any

import regex as re  # the engine `re` is, plus a timeout; a pattern means the same to both

from ..core.choices import EVENTS
from ..core.errors import RenderError

OPERATORS = ("eq", "ne", "gt", "gte", "lt", "lte", "in", "contains", "regex", "exists")
ROOTS = ("state", "role", "model", "provider", "event")
ROLE_FIELDS = ("id", "category")
# Paths `partial` may settle from its facts. Compile passes `role` only (SETTLED_AT_COMPILE):
# `model` can change at render time (render(model=...)), so compile keeps conditions on it.
COMPILE_TIME_ROOTS = ("role", "model")
SETTLED_AT_COMPILE = ("role",)

_MISSING = object()


def lookup(context: Mapping[str, Any], path: str) -> Any:
    """Value at a dotted path, or the private MISSING marker."""
    value: Any = context
    for part in path.split("."):
        if isinstance(value, Mapping):
            value = value.get(part, _MISSING)
        elif isinstance(value, list) and part.isdigit():
            index = int(part)
            value = value[index] if index < len(value) else _MISSING
        else:
            return _MISSING
        if value is _MISSING:
            return _MISSING
    return value


def _is_number(x: Any) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool)


def _equal(a: Any, b: Any) -> bool:
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    return a == b


REGEX_CACHE = 512  # compiled patterns kept (they come from bundles, not from the state)
REGEX_TIMEOUT = 0.1  # seconds one condition's regex may run on one value


@lru_cache(maxsize=REGEX_CACHE)
def _regex(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern)


class ConditionTimeout(RenderError):
    """PM821: a condition's regex ran past `REGEX_TIMEOUT` on a state value."""

    code = "PM821"


def _search(pattern: str, text: str, path: str) -> bool:
    try:
        # positional (string, pos, endpos, concurrent, partial, timeout): a keyword costs a microsecond
        return _regex(pattern).search(text, None, None, None, False, REGEX_TIMEOUT) is not None
    except TimeoutError:
        raise ConditionTimeout(
            f"{path}: the condition regex {pattern!r} ran past its {REGEX_TIMEOUT * 1000:.0f} ms limit "
            f"on this value ({len(text):,} characters)",
            hint="the pattern backtracks on this input (lint warns with PM613): anchor it, or drop the nested or adjacent repeats",
        ) from None


def _compare(op: str, actual: Any, value: Any, path: str = "") -> bool:
    if op == "exists":
        want = True if value is None else bool(value)
        return (actual is not _MISSING and actual is not None) == want
    if actual is _MISSING:
        return op == "ne"
    if op == "eq":
        return _equal(actual, value)
    if op == "ne":
        return not _equal(actual, value)
    if op in ("gt", "gte", "lt", "lte"):
        if not ((_is_number(actual) and _is_number(value)) or (isinstance(actual, str) and isinstance(value, str))):
            return False
        if op == "gt":
            return actual > value
        if op == "gte":
            return actual >= value
        if op == "lt":
            return actual < value
        return actual <= value
    if op == "in":
        return isinstance(value, list) and any(_equal(actual, v) for v in value)
    if op == "contains":
        if isinstance(actual, str):
            return isinstance(value, str) and value in actual
        if isinstance(actual, list):
            return any(_equal(item, value) for item in actual)
        if isinstance(actual, Mapping):
            return isinstance(value, str) and value in actual
        return False
    if op == "regex":
        return isinstance(actual, str) and isinstance(value, str) and _search(value, actual, path)
    return False


def evaluate(condition: Mapping[str, Any] | None, context: Mapping[str, Any]) -> bool:
    """True when `condition` holds in `context` (None always holds)."""
    if condition is None:
        return True
    if "any" in condition:
        return any(evaluate(c, context) for c in condition["any"])
    if "all" in condition:
        return all(evaluate(c, context) for c in condition["all"])
    if "not" in condition:
        return not evaluate(condition["not"], context)
    return _compare(condition["op"], lookup(context, condition["path"]), condition.get("value"), condition["path"])


def paths(condition: Mapping[str, Any] | None) -> Iterator[tuple[tuple[str, ...], str]]:
    """Every `(location, path)` in a condition; location is the key path inside it."""
    if not condition:
        return
    stack: list[tuple[tuple[str, ...], Mapping[str, Any]]] = [((), condition)]
    while stack:
        where, cond = stack.pop()
        for combo in ("any", "all"):
            if isinstance(cond.get(combo), list):
                for i, sub in enumerate(cond[combo]):
                    if isinstance(sub, Mapping):
                        stack.append((where + (combo, str(i)), sub))
        if isinstance(cond.get("not"), Mapping):
            stack.append((where + ("not",), cond["not"]))
        if isinstance(cond.get("path"), str):
            yield where + ("path",), cond["path"]


def leaves(condition: Any, where: tuple = ()) -> Iterator[tuple[tuple, Mapping[str, Any]]]:
    """Every `(location, comparison)` of a condition: the mappings with a `path` and a known `op`,
    through `any`, `all` and `not` (location indices are ints). Malformed parts are skipped."""
    stack = [(where, condition)]
    while stack:
        loc, c = stack.pop()
        if not isinstance(c, Mapping):
            continue
        for combo in ("any", "all"):
            subs = c.get(combo)
            for i, sub in enumerate(subs if isinstance(subs, list) else ()):
                stack.append((loc + (combo, i), sub))
        if "not" in c:
            stack.append((loc + ("not",), c["not"]))
        if isinstance(c.get("path"), str) and c.get("op") in OPERATORS:
            yield loc, c


def is_compile_time(condition: Mapping[str, Any] | None) -> bool:
    """True when every path is fixed per role (role.*, model)."""
    return all(p.split(".", 1)[0] in COMPILE_TIME_ROOTS for _, p in paths(condition))


def partial(condition: Mapping[str, Any] | None, known: Mapping[str, Any]) -> bool | dict:
    """Decide what `known` (some of the roots role, model; a root it lacks stays undecided) can decide.

    Returns True or False when the condition is settled, else the condition
    with every decided part removed (what the runtime still has to test). A
    malformed condition is left undecided (PM609 is reported where it is written).
    """
    if condition is None:
        return True
    if not isinstance(condition, Mapping) or problems(condition, roots=False):
        return dict(condition) if isinstance(condition, Mapping) else {}
    return _partial(condition, known)


def _partial(condition: Mapping[str, Any], known: Mapping[str, Any]) -> bool | dict:
    for combo in ("all", "any"):
        if combo in condition:
            rest = []
            for sub in condition[combo]:
                r = _partial(sub, known)
                if r is (combo == "any"):
                    return r
                if not isinstance(r, bool):
                    rest.append(r)
            if not rest:
                return combo == "all"
            return rest[0] if len(rest) == 1 else {combo: rest}
    if "not" in condition:
        r = _partial(condition["not"], known)
        return (not r) if isinstance(r, bool) else {"not": r}
    root = condition["path"].split(".", 1)[0]
    if root in COMPILE_TIME_ROOTS and root in known:
        return evaluate(condition, known)
    return dict(condition)


def compile_facts(facts: Mapping[str, Any]) -> dict[str, Any]:
    """The part of a role's facts compile may settle conditions with (SETTLED_AT_COMPILE)."""
    return {root: facts[root] for root in SETTLED_AT_COMPILE if root in facts}


def conjoin(*conds: Mapping[str, Any] | None) -> dict | None:
    """`all` of the given conditions (None ones hold always); None when nothing is left."""
    parts = [dict(c) for c in conds if c is not None]
    if not parts:
        return None
    return parts[0] if len(parts) == 1 else {"all": parts}


def _path_problem(path: str) -> str | None:
    root, _, rest = path.partition(".")
    if root not in ROOTS:
        return f"path '{path}' must start with one of: {', '.join(ROOTS)}"
    if root == "role" and rest not in ROLE_FIELDS:
        return f"path '{path}': the role has only {', '.join('role.' + f for f in ROLE_FIELDS)}"
    if root in ("model", "provider", "event") and rest:
        return f"path '{path}': '{root}' is a plain value and has no fields"
    if root == "state" and (not rest or "" in rest.split(".")):
        return f"path '{path}' must name a field of the state, e.g. state.subtask.id"
    return None


def problems(condition: Any, where: tuple[str, ...] = (), *, roots: bool = True) -> list[tuple[tuple[str, ...], str, str]]:
    """Shape problems as `(location, code, message)`; [] when the condition is well formed.

    With `roots=False` paths are not checked against the render context (for
    conditions whose paths are relative to something else, like contract checks).
    """
    out: list[tuple[tuple[str, ...], str, str]] = []
    if not isinstance(condition, Mapping):
        return [(where, "PM609", "a condition must be a mapping")]
    forms = [k for k in ("path", "any", "all", "not") if k in condition]
    if len(forms) != 1:
        return [(where, "PM609", "a condition needs exactly one of: path (with op), any, all, not")]
    form = forms[0]
    if form in ("any", "all"):
        if set(condition) - {form}:
            out.append((where, "PM609", f"'{form}' cannot be combined with other keys"))
        if not isinstance(condition[form], list) or not condition[form]:
            return out + [(where + (form,), "PM609", f"'{form}' needs a non-empty list of conditions")]
        for i, sub in enumerate(condition[form]):
            out.extend(problems(sub, where + (form, str(i)), roots=roots))
        return out
    if form == "not":
        if set(condition) - {"not"}:
            out.append((where, "PM609", "'not' cannot be combined with other keys"))
        return out + problems(condition["not"], where + ("not",), roots=roots)
    op = condition.get("op")
    if op not in OPERATORS:
        return [(where + ("op",), "PM609", f"unknown operator {op!r}; expected one of {', '.join(OPERATORS)}")]
    path = condition["path"]
    if not isinstance(path, str) or not path:
        return [(where + ("path",), "PM609", "'path' must be a dotted path such as state.subtask.id")]
    bad_path = _path_problem(path) if roots else None
    if bad_path:
        out.append((where + ("path",), "PM607", bad_path))
    if op != "exists" and "value" not in condition:
        out.append((where, "PM609", f"operator '{op}' needs a value"))
    value = condition.get("value")
    if op == "in" and not isinstance(value, list):
        out.append((where + ("value",), "PM609", "operator 'in' needs a list value"))
    if op in ("gt", "gte", "lt", "lte") and not (_is_number(value) or isinstance(value, str)):
        out.append((where + ("value",), "PM609", f"operator '{op}' needs a number or string value"))
    if op == "regex":
        if not isinstance(value, str):
            out.append((where + ("value",), "PM609", "operator 'regex' needs a string pattern"))
        else:
            try:
                re.compile(value)
            except re.error as exc:
                out.append((where + ("value",), "PM606", f"invalid regex {value!r}: {exc}"))
    if op == "exists" and value is not None and not isinstance(value, bool):
        out.append((where + ("value",), "PM609", "operator 'exists' takes true or false"))
    if roots and path == "event" and op in ("eq", "ne", "in"):
        for v in value if isinstance(value, list) else [value]:
            if v not in EVENTS:
                out.append((where + ("value",), "PM609", f"event {v!r} never happens; events are: {', '.join(EVENTS)}"))
    return out


def describe(condition: Mapping[str, Any]) -> str:
    """A condition on one line: `path op value` (the value as JSON), any/all/not spelled out."""
    import json

    if "any" in condition or "all" in condition:
        key = "any" if "any" in condition else "all"
        return f"{key}(" + ", ".join(describe(c) for c in condition[key]) + ")"
    if "not" in condition:
        return f"not({describe(condition['not'])})"
    if "value" not in condition:
        return f"{condition['path']} {condition['op']}"
    return f"{condition['path']} {condition['op']} {json.dumps(condition['value'], ensure_ascii=False)}"
