"""Compile a JSON Schema (draft 2020-12) into nested closures that say valid or invalid.

`Compiler(document).compile(node)` returns a `Check` (instance -> bool) whose
answer is exactly `jsonschema.Draft202012Validator(document)`'s `is_valid` for
the schema at `node`: the same type rules (`integer` accepts 3.0, booleans are
not numbers), the same equality (`json_values` copies jsonschema's `equal` and `uniq`, so
1 == 1.0 but 1 != True), `re.search` for patterns, and multipleOf computed the
same way. Schemas are compiled once; `$ref` targets are compiled once each and
recursion goes through a placeholder, so recursive schemas terminate.

Anything whose answer could differ from jsonschema's (unevaluated*,
`$dynamicRef`, non-local or anchor refs, nested `$id`, keyword values of the
wrong shape, patterns Python cannot compile) raises `Unsupported`; the caller
then validates the whole schema with jsonschema instead.

This module imports neither jsonschema nor yaml: it is on the runtime path.
"""

from __future__ import annotations

import itertools
import math
import re
from collections.abc import Callable, Sequence
from fractions import Fraction
from typing import Any
from urllib.parse import unquote

from .json_values import TYPE_TESTS, Check, enum_check, is_integer, is_number, type_check, uniq


def _always(check: Check | None) -> Check:
    """A strict check (the instance must have the type) is never None; only a lenient one
    may be, when it has nothing to test."""
    assert check is not None
    return check


class Unsupported(Exception):
    """The schema needs something these closures cannot decide exactly like jsonschema."""


_UNSUPPORTED = ("unevaluatedProperties", "unevaluatedItems", "$dynamicRef", "$recursiveRef")
_INF = math.inf


def _true(x: Any) -> bool:
    return True


def _false(x: Any) -> bool:
    return False


# --- combining checks --------------------------------------------------------


def _all_of(checks: list[Check]) -> Check:
    checks = [c for c in checks if c is not _true]
    if any(c is _false for c in checks):
        return _false
    if not checks:
        return _true
    if len(checks) == 1:
        return checks[0]
    if len(checks) == 2:
        a, b = checks
        return lambda x: a(x) and b(x)
    seq = tuple(checks)

    def check(x: Any) -> bool:
        for c in seq:
            if not c(x):
                return False
        return True

    return check


def _num(node: dict, key: str, default: Any = None) -> Any:
    if key not in node:
        return default
    v = node[key]
    if not isinstance(v, (int, float)) or v != v:
        raise Unsupported(f"{key} must be a number")
    return v


def _regex(pattern: Any) -> re.Pattern:
    if not isinstance(pattern, str):
        raise Unsupported("pattern must be a string")
    try:
        return re.compile(pattern)
    except (re.error, RecursionError, OverflowError) as err:
        raise Unsupported(f"pattern {pattern!r} does not compile") from err


def _strings(v: Any) -> list[str]:
    if not isinstance(v, list) or not all(isinstance(s, str) for s in v):
        raise Unsupported("expected a list of strings")
    return v


class Compiler:
    """Compiles the schemas of one document; `$ref`s resolve against `document`.

    `roots` are extra nodes that stand for the document root (copies of it made
    by the caller), so a `$id` on them is the root's and not a nested resource.
    """

    def __init__(self, document: Any, roots: Sequence[Any] = ()) -> None:
        self.document = document
        self._roots = {id(document), *map(id, roots)}
        self._memo: dict[int, Check] = {}

    def compile(self, node: Any) -> Check:
        """The check for the schema `node` (a dict or a boolean) of this document."""
        if node is True:
            return _true
        if node is False:
            return _false
        if not isinstance(node, dict):
            raise Unsupported(f"a schema must be an object or a boolean, not {node!r}")
        key = id(node)
        done = self._memo.get(key)
        if done is not None:
            return done
        cell: list[Check] = []
        self._memo[key] = lambda x: cell[0](x)  # used by recursive refs while building
        check = self._build(node)
        cell.append(check)
        self._memo[key] = check
        return check

    def _build(self, node: dict) -> Check:
        for word in _UNSUPPORTED:
            if word in node:
                raise Unsupported(f"{word} is not compiled")
        if "$id" in node and (id(node) not in self._roots or not isinstance(node["$id"], str)):
            raise Unsupported("nested $id")
        parts = self._typed(node)
        if "$ref" in node:
            parts.append(self.compile(self._resolve(node["$ref"])))
        if "enum" in node:
            if not isinstance(node["enum"], list):
                raise Unsupported("enum must be a list")
            parts.append(enum_check(node["enum"]))
        if "const" in node:
            parts.append(enum_check([node["const"]]))
        parts.extend(self._applicators(node))
        return _all_of(parts)

    def _subschemas(self, node: dict, key: str) -> list[Check]:
        value = node[key]
        if not isinstance(value, list):
            raise Unsupported(f"{key} must be a list")
        return [self.compile(s) for s in value]

    def _applicators(self, node: dict) -> list[Check]:
        parts: list[Check] = []
        if "allOf" in node:
            parts.extend(self._subschemas(node, "allOf"))
        if "anyOf" in node:
            options = self._subschemas(node, "anyOf")
            if _true not in options:
                parts.append(_any_of(tuple(options)))
        if "oneOf" in node:
            parts.append(_one_of(tuple(self._subschemas(node, "oneOf"))))
        if "not" in node:
            negated = self.compile(node["not"])
            parts.append(lambda x: not negated(x))
        if "if" in node:
            cond = self.compile(node["if"])
            then = self.compile(node["then"]) if "then" in node else _true
            other = self.compile(node["else"]) if "else" in node else _true
            if then is not _true or other is not _true:
                parts.append(lambda x: then(x) if cond(x) else other(x))
        return parts

    def _typed(self, node: dict) -> list[Check]:
        """`type` plus the keywords that apply to one instance type only."""
        if "type" not in node:
            kinds = (
                self._string(node, False),
                self._number(node, False, False),
                self._object(node, False),
                self._array(node, False),
            )
            return [k for k in kinds if k is not None]
        names = node["type"]
        names = [names] if isinstance(names, str) else names
        if not isinstance(names, list) or not all(n in TYPE_TESTS for n in names):
            raise Unsupported(f"unknown type {node['type']!r}")
        if len(set(names)) == 1:
            name = names[0]
            if name == "string":
                return [_always(self._string(node, True))]
            if name in ("number", "integer"):
                return [_always(self._number(node, True, name == "integer"))]
            if name == "object":
                return [_always(self._object(node, True))]
            if name == "array":
                return [_always(self._array(node, True))]
            return [TYPE_TESTS[name]]
        allowed = set(names)
        parts: list[Check | None] = [type_check(allowed)] if allowed else [_false]
        if "string" in allowed:
            parts.append(self._string(node, False))
        if "number" in allowed or "integer" in allowed:
            parts.append(self._number(node, False, False))
        if "object" in allowed:
            parts.append(self._object(node, False))
        if "array" in allowed:
            parts.append(self._array(node, False))
        return [p for p in parts if p is not None]

    def _string(self, node: dict, strict: bool) -> Check | None:
        lo = _num(node, "minLength", 0)
        hi = _num(node, "maxLength", _INF)
        rx = _regex(node["pattern"]) if "pattern" in node else None
        if rx is None and lo == 0 and hi == _INF:
            return str.__instancecheck__ if strict else None
        if rx is None:
            if strict:
                return lambda x: isinstance(x, str) and lo <= len(x) <= hi
            return lambda x: not isinstance(x, str) or lo <= len(x) <= hi
        search = rx.search
        if strict:
            return lambda x: isinstance(x, str) and lo <= len(x) <= hi and search(x) is not None
        return lambda x: not isinstance(x, str) or (lo <= len(x) <= hi and search(x) is not None)

    def _number(self, node: dict, strict: bool, integer: bool) -> Check | None:
        lo, hi = _num(node, "minimum"), _num(node, "maximum")
        xlo, xhi = _num(node, "exclusiveMinimum"), _num(node, "exclusiveMaximum")
        step = _num(node, "multipleOf")
        if step is not None and step == 0:
            raise Unsupported("multipleOf 0")
        if lo is hi is xlo is xhi is step is None:
            return (is_integer if integer else is_number) if strict else None
        has_bounds = not (lo is hi is xlo is xhi is None)
        is_kind = is_integer if integer else is_number

        def check(x: Any) -> bool:
            c = x.__class__
            if c is int or (c is float and not integer):
                pass
            elif not is_kind(x):
                return not strict and not is_number(x)
            if has_bounds:
                if lo is not None and x < lo:
                    return False
                if hi is not None and x > hi:
                    return False
                if xlo is not None and x <= xlo:
                    return False
                if xhi is not None and x >= xhi:
                    return False
            return step is None or _multiple(x, step)

        return check

    def _object(self, node: dict, strict: bool) -> Check | None:
        props = node.get("properties", {})
        if not isinstance(props, dict):
            raise Unsupported("properties must be an object")
        checks = tuple((k, f) for k, f in ((k, self.compile(s)) for k, s in props.items()) if f is not _true)
        required = frozenset(_strings(node.get("required", [])))
        patterns = node.get("patternProperties", {})
        if not isinstance(patterns, dict):
            raise Unsupported("patternProperties must be an object")
        steps: list[Callable[[dict], bool]] = []
        for pattern, sub in patterns.items():
            f = self.compile(sub)
            if f is not _true:
                steps.append(_pattern_step(_regex(pattern).search, f))
        closed = None
        extra = node.get("additionalProperties", True)
        if extra is not True:
            joined = "|".join(patterns)  # jsonschema matches extras against one joined regex
            skip = _regex(joined).search if joined else None
            if extra is False and skip is None:
                closed = frozenset(props)
            else:
                f = self.compile(extra)
                if f is not _true:
                    steps.append(_extra_step(props, skip, f))
        if "propertyNames" in node:
            names = self.compile(node["propertyNames"])
            if names is not _true:
                steps.append(lambda x: all(map(names, x)))
        lo, hi = _num(node, "minProperties", 0), _num(node, "maxProperties", _INF)
        if lo != 0 or hi != _INF:
            steps.append(lambda x: lo <= len(x) <= hi)
        steps.extend(self._dependents(node))
        if not (checks or required or closed is not None or steps):
            return dict.__instancecheck__ if strict else None
        rest = tuple(steps)

        def check(x: Any) -> bool:
            if not isinstance(x, dict):
                return not strict
            if required and not x.keys() >= required:
                return False
            if closed is not None and not x.keys() <= closed:
                return False
            for k, f in checks:
                if k in x and not f(x[k]):
                    return False
            for step in rest:
                if not step(x):
                    return False
            return True

        return check

    def _dependents(self, node: dict) -> list[Callable[[dict], bool]]:
        steps: list[Callable[[dict], bool]] = []
        needs = node.get("dependentRequired", {})
        if not isinstance(needs, dict):
            raise Unsupported("dependentRequired must be an object")
        pairs = tuple((k, frozenset(_strings(v))) for k, v in needs.items() if v)
        if pairs:
            steps.append(lambda x: all(k not in x or x.keys() >= v for k, v in pairs))
        schemas = node.get("dependentSchemas", {})
        if not isinstance(schemas, dict):
            raise Unsupported("dependentSchemas must be an object")
        subs = tuple((k, f) for k, f in ((k, self.compile(s)) for k, s in schemas.items()) if f is not _true)
        if subs:
            steps.append(lambda x: all(k not in x or f(x) for k, f in subs))
        return steps

    def _array(self, node: dict, strict: bool) -> Check | None:
        prefix = tuple(self._subschemas(node, "prefixItems")) if "prefixItems" in node else ()
        skip = len(prefix)
        if all(f is _true for f in prefix):
            prefix = ()
        items = self.compile(node["items"]) if "items" in node else _true
        lo, hi = _num(node, "minItems", 0), _num(node, "maxItems", _INF)
        unique = bool(node.get("uniqueItems", False))
        contains, least, most = None, 1, None
        if "contains" in node:
            contains = self.compile(node["contains"])
            least, most = _num(node, "minContains", 1), _num(node, "maxContains")
            if least <= 0 and most is None:
                contains = None
        if not prefix and items is _true and lo == 0 and hi == _INF and not unique and contains is None:
            return list.__instancecheck__ if strict else None

        def check(x: Any) -> bool:
            if not isinstance(x, list):
                return not strict
            if not lo <= len(x) <= hi:
                return False
            if prefix:
                for f, v in zip(prefix, x, strict=False):
                    if not f(v):
                        return False
            if items is not _true and not all(map(items, itertools.islice(x, skip, None) if skip else x)):
                return False
            if unique and not uniq(x):
                return False
            if contains is not None:
                limit = len(x) if most is None else most
                matches = 0
                for v in x:
                    if contains(v):
                        matches += 1
                        if matches > limit:
                            return False
                if matches < least:
                    return False
            return True

        return check

    def _resolve(self, ref: Any) -> Any:
        """The target of a local `$ref`, or Unsupported."""
        if not isinstance(ref, str) or not (ref == "#" or ref.startswith("#/")):
            raise Unsupported(f"$ref {ref!r} is not a local JSON pointer")
        try:
            return resolve_pointer(self.document, ref)
        except LookupError as err:
            raise Unsupported(str(err)) from err


def resolve_pointer(document: Any, ref: str) -> Any:
    """The target of `ref` ("#" or "#/json/pointer"), walked as the `referencing` library walks it.

    Raises LookupError when it points nowhere, Unsupported when the walk enters
    a nested resource (a `$id`), which would change what the refs there mean.
    """
    contents = document
    if ref == "#":
        return contents
    for segment in unquote(ref[2:]).split("/"):
        try:
            if isinstance(contents, Sequence):
                contents = contents[int(segment)]
            else:
                contents = contents[segment.replace("~1", "/").replace("~0", "~")]
        except (LookupError, TypeError, ValueError) as err:
            raise LookupError(f"$ref {ref!r} points nowhere") from err
        if isinstance(contents, dict) and "$id" in contents:
            raise Unsupported(f"$ref {ref!r} enters a nested resource")
    return contents


def _multiple(x: Any, step: int | float) -> bool:
    """multipleOf exactly as jsonschema computes it (float division, Fraction on overflow)."""
    if isinstance(step, float):
        quotient = x / step
        try:
            failed = int(quotient) != quotient
        except OverflowError:
            failed = (Fraction(x) / Fraction(step)).denominator != 1
    else:
        failed = x % step
    return not failed


def _any_of(options: tuple[Check, ...]) -> Check:
    def check(x: Any) -> bool:
        for f in options:
            if f(x):
                return True
        return False

    return check


def _one_of(options: tuple[Check, ...]) -> Check:
    def check(x: Any) -> bool:
        found = False
        for f in options:
            if f(x):
                if found:
                    return False
                found = True
        return found

    return check


def _pattern_step(search: Callable, f: Check) -> Callable[[dict], bool]:
    return lambda x: all(f(v) for k, v in x.items() if search(k))


def _extra_step(props: dict, skip: Callable | None, f: Check) -> Callable[[dict], bool]:
    if skip is None:
        return lambda x: all(f(v) for k, v in x.items() if k not in props)
    return lambda x: all(f(v) for k, v in x.items() if k not in props and not skip(k))
