"""One way of naming JSON types in messages.

`json_type(value)` is JSON Schema's word for a value's type ("boolean",
"array", "object"); render-state messages use it, since they answer the inputs
schema in its own words (`state.topic: expected string, got integer`).
Template diagnostics speak to YAML authors and use `phrase`: "a boolean",
"a list", "a mapping".
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

PHRASES = {
    "object": "a mapping",
    "array": "a list",
    "string": "a string",
    "integer": "an integer",
    "number": "a number",
    "boolean": "a boolean",
    "null": "null",
}


def json_type(value: Any) -> str:
    """JSON Schema's type name of a value; the Python type's name for what is not JSON."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, (list, tuple)):
        return "array"
    if isinstance(value, Mapping):
        return "object"
    return type(value).__name__


def phrase(value: Any) -> str:
    """'a mapping', 'a list', 'a boolean'... for a value, as template diagnostics name it."""
    return phrase_of(json_type(value))


def phrase_of(kind: str) -> str:
    """The phrase of a JSON Schema type name: `phrase_of("array")` is 'a list'."""
    return PHRASES.get(kind, kind)
