"""jsonschema's rules for JSON values, for the compiled schema closures.

Type tests (`integer` accepts 3.0 and rejects True; booleans are not numbers),
equality (`equal`: 1 == 1.0 but 1 != True, recursively), uniqueness (`uniq`,
quirks included) and fast `enum`/`const` membership that answers exactly as
`equal` would. `equal` and `uniq` are copied from jsonschema._utils (MIT) so
that the answers match it without importing it.
"""

from __future__ import annotations

import itertools
import operator
from collections.abc import Callable, Mapping, Sequence
from functools import partial
from numbers import Number
from typing import Any

Check = Callable[[Any], bool]


def is_number(x: Any) -> bool:
    c = x.__class__
    if c is int or c is float:
        return True
    return not isinstance(x, bool) and isinstance(x, Number)


def is_integer(x: Any) -> bool:
    c = x.__class__
    if c is int:
        return True
    if c is float:
        return x.is_integer()
    if isinstance(x, bool):
        return False
    return isinstance(x, int) or (isinstance(x, float) and x.is_integer())


TYPE_TESTS: dict[str, Check] = {
    "string": str.__instancecheck__,
    "object": dict.__instancecheck__,
    "array": list.__instancecheck__,
    "boolean": bool.__instancecheck__,
    "null": partial(operator.is_, None),
    "number": is_number,
    "integer": is_integer,
}


def type_check(names: set[str]) -> Check:
    """A check for `type` with several names; exact classes answer from a table."""
    tests = tuple(TYPE_TESTS[n] for n in sorted(names))
    table: dict[type, bool | None] = {
        str: "string" in names,
        dict: "object" in names,
        list: "array" in names,
        bool: "boolean" in names,
        type(None): "null" in names,
        int: "integer" in names or "number" in names,
        float: True if "number" in names else (None if "integer" in names else False),
    }

    def check(x: Any) -> bool:
        known = table.get(x.__class__)
        if known is None:
            return any(t(x) for t in tests)
        return known

    return check


def _unbool(element: Any, true: object = object(), false: object = object()) -> Any:
    if element is True:
        return true
    if element is False:
        return false
    return element


def equal(one: Any, two: Any) -> bool:
    """JSON Schema equality exactly as jsonschema computes it: 1 == 1.0, 1 != True."""
    if one is two:
        return True
    if isinstance(one, str) or isinstance(two, str):
        return one == two
    if isinstance(one, Sequence) and isinstance(two, Sequence):
        return len(one) == len(two) and all(equal(i, j) for i, j in zip(one, two, strict=False))
    if isinstance(one, Mapping) and isinstance(two, Mapping):
        return len(one) == len(two) and all(key in two and equal(value, two[key]) for key, value in one.items())
    return _unbool(one) == _unbool(two)


def uniq(container: list) -> bool:
    """jsonschema's `uniq`, quirks included; plain lists of str or of int take a set."""
    classes = set(map(type, container))
    if classes == {str} or classes == {int}:
        return len(set(container)) == len(container)
    try:
        sort = sorted(_unbool(i) for i in container)
        for i, j in zip(sort, itertools.islice(sort, 1, None), strict=False):
            if equal(i, j):
                return False
    except (NotImplementedError, TypeError):
        seen: list = []
        for e in container:
            e = _unbool(e)
            for i in seen:
                if equal(i, e):
                    return False
            seen.append(e)
    return True


def _canon(v: Any) -> Any:
    """A hashable key with canon(a) == canon(b) iff equal(a, b), for plain JSON data; else None."""
    c = v.__class__
    if c is str:
        return ("s", v)
    if c is int or c is float:
        return ("n", v)
    if c is bool:
        return ("b", v)
    if v is None:
        return ("z",)
    if c is list:
        items = tuple(map(_canon, v))
        return None if None in items else ("l", items)
    if c is dict:
        pairs = [(k, _canon(x)) for k, x in v.items()]
        return None if any(p[1] is None for p in pairs) else ("d", frozenset(pairs))
    return None


def enum_check(values: list) -> Check:
    """`enum` (and `const` as a one-value enum) with set lookups on plain JSON data."""
    strs: set = set()
    nums: set = set()
    nested: set = set()
    flags = {True: False, False: False, None: False}
    for v in values:
        c = v.__class__
        if c is str:
            strs.add(v)
        elif c is int or c is float:
            nums.add(v)
        elif c is bool or v is None:
            flags[v] = True
        else:
            key = _canon(v)
            if key is None:
                return lambda x: any(equal(each, x) for each in values)
            nested.add(key)
    has_true, has_false, has_null = flags[True], flags[False], flags[None]

    if not (nums or nested or has_true or has_false or has_null):
        return lambda x: isinstance(x, str) and x in strs

    def check(x: Any) -> bool:
        c = x.__class__
        if c is str:
            return x in strs
        if c is int or c is float:
            return x in nums
        if c is bool:
            return has_true if x else has_false
        if x is None:
            return has_null
        if c is list or c is dict:
            key = _canon(x)
            if key is not None:
                return key in nested
        return any(equal(each, x) for each in values)

    return check
