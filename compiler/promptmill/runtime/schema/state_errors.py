"""Turn jsonschema validation errors into short `(state path, message)` pairs.

`explain(errors, "state", ())` gives pairs like `("state.subtask.id", "is required")`
or `("state.memory[3]", "unexpected key 'summry' (did you mean 'summary'?)")`,
sorted by path (indexes numerically), then message, without duplicates. It reads
only the attributes of the errors it is given and imports nothing from jsonschema.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from typing import Any

from ...core.suggest import suggest
from ...core.typenames import json_type

_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")


def explain(errors: Iterable[Any], root: str, prefix: tuple) -> list[tuple[str, str]]:
    """Short messages for jsonschema `ValidationError`s; paths start `root` + `prefix`."""
    found: set[tuple[tuple, str]] = set()
    for error in errors:
        base = (*prefix, *error.absolute_path)
        for extra, message in _messages(error):
            found.add(((*base, *extra), message))
    ordered = sorted(found, key=lambda pair: (tuple(map(_part_key, pair[0])), pair[1]))
    return [(format_path(root, parts), message) for parts, message in ordered]


_ONE = (
    "additionalProperties",
    "propertyNames",
    "items",
    "contains",
    "not",
    "if",
    "then",
    "else",
    "unevaluatedItems",
    "unevaluatedProperties",
)
_MANY = ("allOf", "anyOf", "oneOf", "prefixItems")
_NAMED = ("properties", "patternProperties", "dependentSchemas", "$defs", "definitions")
_DESCENDING = ("prefixItems", "properties", "patternProperties")  # `items: false` reports itself


def explainable(schema: Any) -> Any:
    """A copy of `schema`, equally strict, whose failures all carry their instance path.

    jsonschema reports a `false` subschema under `properties`, `items`, ... without
    the key or index it applied to; `{"not": {}}` rejects the same instances and
    is reported with its path. Other values are shared, not copied.
    """

    def walk(node: Any, descends: bool) -> Any:
        if node is False and descends:
            return {"not": {}}
        if not isinstance(node, dict):
            return node
        out = dict(node)
        for key in _ONE:
            if key in out:
                out[key] = walk(out[key], key in _DESCENDING)
        for key in _MANY:
            if isinstance(out.get(key), list):
                out[key] = [walk(sub, key in _DESCENDING) for sub in out[key]]
        for key in _NAMED:
            if isinstance(out.get(key), dict):
                out[key] = {name: walk(sub, key in _DESCENDING) for name, sub in out[key].items()}
        return out

    return walk(schema, False)


def format_path(root: str, parts: Iterable[Any]) -> str:
    """`state`, `state.memory[3].summary`, `state["odd key"]`."""
    text = root
    for part in parts:
        if isinstance(part, int):
            text += f"[{part}]"
        elif _IDENTIFIER.match(part):
            text += f".{part}"
        else:
            text += f"[{json.dumps(part, ensure_ascii=False)}]"
    return text


def _part_key(part: Any) -> tuple:
    return (0, part, "") if isinstance(part, int) else (1, 0, str(part))


def show(value: Any) -> str:
    """A value as a message shows it: strings quoted 'like this', the rest as JSON."""
    if isinstance(value, str):
        return repr(value)
    try:
        return json.dumps(value, ensure_ascii=False, sort_keys=True)
    except (TypeError, ValueError):
        return repr(value)


def _either(words: list[str]) -> str:
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " or " + words[-1]


def _plural(n: Any, word: str) -> str:
    return f"{show(n)} {word}" + ("" if n == 1 else "s")


_BOUNDS = {
    "minLength": lambda v: f"must be at least {_plural(v, 'character')}",
    "maxLength": lambda v: f"must be at most {_plural(v, 'character')}",
    "minItems": lambda v: f"must have at least {_plural(v, 'item')}",
    "maxItems": lambda v: f"must have at most {_plural(v, 'item')}",
    "minProperties": lambda v: f"must have at least {_plural(v, 'key')}",
    "maxProperties": lambda v: f"must have at most {_plural(v, 'key')}",
    "minimum": lambda v: f"must be >= {show(v)}",
    "maximum": lambda v: f"must be <= {show(v)}",
    "exclusiveMinimum": lambda v: f"must be > {show(v)}",
    "exclusiveMaximum": lambda v: f"must be < {show(v)}",
    "multipleOf": lambda v: f"must be a multiple of {show(v)}",
    "pattern": lambda v: f"must match pattern {show(v)}",
    "minContains": lambda v: f"must contain at least {_plural(v, 'matching item')}",
    "maxContains": lambda v: f"must contain at most {_plural(v, 'matching item')}",
}


def _messages(error: Any) -> list[tuple[tuple, str]]:
    """`(extra path parts, message)` for one error; most errors have one."""
    keyword, value, instance = error.validator, error.validator_value, error.instance
    # Which names are missing is read off the instance, not jsonschema's wording,
    # so a reworded message in a new jsonschema release changes nothing here.
    if keyword == "required":
        return [((name,), "is required") for name in value if isinstance(instance, dict) and name not in instance]
    if keyword == "dependentRequired":
        return [
            ((need,), f"is required when {show(key)} is present")
            for key, needs in value.items()
            if isinstance(instance, dict) and key in instance
            for need in needs
            if need not in instance
        ]
    if keyword == "additionalProperties" and not isinstance(value, dict):
        return [((), _unexpected(key, error.schema)) for key in _extras(instance, error.schema)]
    message = _message(keyword, value, instance, error)
    if "propertyNames" in error.relative_schema_path:
        message = f"key {show(instance)} {message}"
    return [((), message)]


def _message(keyword: str | None, value: Any, instance: Any, error: Any) -> str:
    if keyword in _BOUNDS:
        return _BOUNDS[keyword](value)
    if keyword == "type":
        wanted = [value] if isinstance(value, str) else list(value)
        return f"expected {_either(wanted) if wanted else 'nothing'}, got {json_type(instance)}"
    if keyword == "enum":
        return "must be one of: " + ", ".join(show(v) for v in value)
    if keyword == "const":
        return f"must be {show(value)}"
    if keyword == "uniqueItems":
        return "must not contain duplicate items"
    if keyword == "contains":
        least = error.schema.get("minContains", 1)
        return f"must contain at least {_plural(least, 'matching item')}"
    if keyword == "items" and value is False:
        return f"must have at most {_plural(len(error.schema.get('prefixItems', [])), 'item')}"
    if keyword == "anyOf":
        return "must match at least one of the allowed schemas"
    if keyword == "oneOf":
        # jsonschema attaches the failures of every branch when none matches, none when several do
        matched = "none" if error.context else "several"
        return f"must match exactly one of the allowed schemas (matches {matched})"
    if keyword == "not":
        return "is not allowed" if value == {} else "must not match the excluded schema"
    if keyword is None:
        return "is not allowed"
    return error.message


def _extras(instance: dict, schema: dict) -> list[str]:
    """The keys additionalProperties rejects, found as jsonschema finds them."""
    props = schema.get("properties", {})
    patterns = "|".join(schema.get("patternProperties", {}))
    return sorted(
        (k for k in instance if k not in props and not (patterns and re.search(patterns, k))),
        key=str,
    )


def _unexpected(key: str, schema: dict) -> str:
    known = [k for k in schema.get("properties", {}) if isinstance(k, str)]
    close = suggest(str(key), known)
    hint = f" (did you mean {show(close)}?)" if close else ""
    return f"unexpected key {show(key)}{hint}"
