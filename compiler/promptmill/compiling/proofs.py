"""What the compiler proves about a role's state, written into its bundle for the runtime.

An item proof (`item_proof`) describes the item schema of a list checked lazily (a
`lazy_paths` entry) as a *record*: the fields it names, the one kind of value each may
hold, which fields are required, and whether other fields may appear. It is written
only when the item schema says nothing else, so an item that is a record of that
shape is valid against the item schema: the runtime (`runtime/itemproof.py`) checks
such an item in one pass (the inputs schema and the JSON-data rules of
`runtime/statelimits.py` together) instead of two generic walks, and takes today's
path (both checks, which name what is wrong) for any item the pass does not accept.

The proof only ever has to be sound one way (record-shaped => valid): an item it
does not accept costs the old checks, never another answer.
"""

from __future__ import annotations

from typing import Any

# Keywords that constrain nothing in draft 2020-12 validation (annotations).
_ANNOTATIONS = frozenset({"title", "description", "$comment", "examples", "default", "deprecated", "readOnly", "writeOnly"})
# `type` values a field's kind can be (integer: the runtime accepts Python ints only, a subset of JSON Schema's).
KINDS = ("string", "number", "integer", "boolean", "null", "object", "array")
_LENGTHS = ("minLength", "maxLength")


def item_proof(path: tuple[str, ...], item_schema: Any) -> dict[str, Any] | None:
    """The record proof of the items at `path`, or None when the item schema is not
    a plain record (a `$ref`, a pattern, a nested constraint, an enum of non-strings, ...)."""
    if not isinstance(item_schema, dict) or not set(item_schema) <= _ANNOTATIONS | {
        "type",
        "properties",
        "required",
        "additionalProperties",
    }:
        return None
    if item_schema.get("type", "object") != "object":
        return None
    required = item_schema.get("required", [])
    if not isinstance(required, list) or not all(isinstance(r, str) for r in required) or len(set(required)) != len(required):
        return None
    props = item_schema.get("properties", {})
    if not isinstance(props, dict):
        return None
    fields: dict[str, Any] = {}
    for name, sub in props.items():
        kind = _field_kind(sub)
        if kind is None:
            return None
        fields[name] = kind
    others = item_schema.get("additionalProperties", True)
    if others not in (True, False):
        return None
    if others is False and not set(required) <= set(fields):
        return None  # a required field that may not appear: no item is valid, nothing to prove
    return {"path": list(path), "fields": fields, "required": list(required), "others": others}


def _field_kind(schema: Any) -> Any:
    """A field's kind: one of KINDS, "any", {"enum": [texts]} or {"minLength": m, "maxLength": n}
    (a text of m to n characters, either bound optional); None when it is more than that."""
    if schema is True:
        return "any"
    if not isinstance(schema, dict) or not set(schema) <= _ANNOTATIONS | {"type", "enum", *_LENGTHS}:
        return None
    kind = schema.get("type")
    lengths = {k: schema[k] for k in _LENGTHS if k in schema}
    if lengths:
        if kind != "string" or "enum" in schema or not all(type(n) is int and n >= 0 for n in lengths.values()):
            return None  # a length bound on its own leaves other types free; 3.0 is a count jsonschema takes, not proven here
        return lengths
    if "enum" in schema:
        values = schema["enum"]
        if kind not in (None, "string") or not isinstance(values, list) or not values or not all(type(v) is str for v in values):
            return None
        return {"enum": sorted(set(values))}
    if kind is None:
        return "any"
    return kind if isinstance(kind, str) and kind in KINDS else None


def item_proofs(inputs: dict[str, Any] | None, lazy_paths: list[tuple[str, ...]]) -> tuple[dict[str, Any], ...]:
    """The record proof of each lazy path (once per path, in the order first met) that has one."""
    out = []
    for path in dict.fromkeys(lazy_paths):
        node: Any = inputs or {}
        for part in path:
            node = node.get("properties", {}).get(part) if isinstance(node, dict) else None
        proof = item_proof(path, node.get("items") if isinstance(node, dict) else None)
        if proof is not None:
            out.append(proof)
    return tuple(out)
