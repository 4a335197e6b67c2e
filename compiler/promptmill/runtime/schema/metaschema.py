"""Is this value a valid JSON Schema? A fast answer for the render hot path.

Tool declarations arrive in the render state with JSON Schema `parameters`;
checking them with jsonschema's draft 2020-12 metaschema costs milliseconds a
tool. `is_schema` walks the value once and applies the same rules the
metaschema states (its core, applicator, unevaluated, validation, meta-data,
format-annotation and content vocabularies, plus the deprecated keywords the
metaschema still defines), with the `regex` format asserted for `pattern` and
`patternProperties` names, as `jsonschema`'s `check_schema` does. Other
formats (uri, uri-reference) are not asserted. tests/test_metaschema.py checks
the equivalence against jsonschema on random schema-like values. When the
answer is no, callers ask jsonschema to explain.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

_SIMPLE_TYPES = frozenset({"array", "boolean", "integer", "null", "number", "object", "string"})
_ANCHOR = re.compile(r"^[A-Za-z_][-A-Za-z0-9._]*$")
_ID = re.compile(r"^[^#]*#?$")

_SUBSCHEMA = frozenset(
    {
        "items",
        "contains",
        "additionalProperties",
        "propertyNames",
        "if",
        "then",
        "else",
        "not",
        "unevaluatedItems",
        "unevaluatedProperties",
        "contentSchema",
    }
)
_SCHEMA_MAPS = frozenset({"$defs", "properties", "patternProperties", "dependentSchemas", "definitions"})
_SCHEMA_ARRAYS = frozenset({"prefixItems", "allOf", "anyOf", "oneOf"})
_NUMBERS = frozenset({"maximum", "exclusiveMaximum", "minimum", "exclusiveMinimum"})
_COUNTS = frozenset({"maxLength", "minLength", "maxItems", "minItems", "maxContains", "minContains", "maxProperties", "minProperties"})
_BOOLEANS = frozenset({"uniqueItems", "deprecated", "readOnly", "writeOnly"})
_STRINGS = frozenset(
    {"$schema", "$ref", "$dynamicRef", "$recursiveRef", "$comment", "title", "description", "format", "contentEncoding", "contentMediaType"}
)
_ANCHORS = frozenset({"$anchor", "$dynamicAnchor", "$recursiveAnchor"})


def _number(v: Any) -> bool:
    return type(v) is int or type(v) is float


def _count(v: Any) -> bool:
    """A non-negative integer as JSON Schema sees it (3.0 counts; True does not)."""
    return (type(v) is int and v >= 0) or (type(v) is float and v.is_integer() and v >= 0)


def _string_array(v: Any) -> bool:
    return type(v) is list and all(type(s) is str for s in v) and len(set(v)) == len(v)


REGEX_CACHE = 1024  # verdicts on `pattern` regexes kept (state-supplied tool schemas repeat them)
REGEX_KEY_MAX = 4096  # a longer pattern is checked every time, not cached


def _compiles(pattern: str) -> bool:
    try:
        re.compile(pattern)
    except re.error:
        return False
    return True


_cached_compiles = lru_cache(maxsize=REGEX_CACHE)(_compiles)


def _regex(pattern: str) -> bool:
    return _cached_compiles(pattern) if len(pattern) <= REGEX_KEY_MAX else _compiles(pattern)


def _keyword_ok(key: str, value: Any, stack: list[Any]) -> bool:
    """Check one keyword's value; subschemas go on `stack`."""
    if key in _SUBSCHEMA:
        stack.append(value)
    elif key in _SCHEMA_MAPS:
        if type(value) is not dict:
            return False
        if key == "patternProperties" and not all(_regex(k) for k in value):
            return False
        stack.extend(value.values())
    elif key in _SCHEMA_ARRAYS:
        if type(value) is not list or not value:
            return False
        stack.extend(value)
    elif key == "type":
        if type(value) is str:
            return value in _SIMPLE_TYPES
        return (
            type(value) is list
            and bool(value)
            and all(type(t) is str and t in _SIMPLE_TYPES for t in value)
            and len(set(value)) == len(value)
        )
    elif key in ("enum", "examples"):
        return type(value) is list
    elif key == "multipleOf":
        return _number(value) and value > 0
    elif key in _NUMBERS:
        return _number(value)
    elif key in _COUNTS:
        return _count(value)
    elif key == "pattern":
        return type(value) is str and _regex(value)
    elif key in _BOOLEANS:
        return type(value) is bool
    elif key == "required":
        return _string_array(value)
    elif key == "dependentRequired":
        return type(value) is dict and all(_string_array(v) for v in value.values())
    elif key == "dependencies":
        if type(value) is not dict:
            return False
        for v in value.values():
            if type(v) is list:
                if not _string_array(v):
                    return False
            else:
                stack.append(v)
    elif key == "$id":
        return type(value) is str and _ID.match(value) is not None
    elif key in _STRINGS:
        return type(value) is str
    elif key in _ANCHORS:
        return type(value) is str and _ANCHOR.match(value) is not None
    elif key == "$vocabulary":
        return type(value) is dict and all(type(v) is bool for v in value.values())
    return True  # const, default and unknown keywords accept anything


def scan(value: Any) -> tuple[bool, bool]:
    """(is a valid draft 2020-12 JSON Schema, holds a `$ref`) in one walk."""
    stack = [value]
    refs = False
    while stack:
        schema = stack.pop()
        if type(schema) is bool:
            continue
        if type(schema) is not dict:
            return False, refs
        if "$ref" in schema:
            refs = True
        for key, item in schema.items():
            if not _keyword_ok(key, item, stack):
                return False, refs
    return True, refs


def is_schema(value: Any) -> bool:
    """True when `value` is a valid draft 2020-12 JSON Schema (see module docstring)."""
    return scan(value)[0]
