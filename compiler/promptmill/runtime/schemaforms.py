"""Schema forms a wire sends: JSON Schema in OpenAI's strict mode, and the OpenAPI subset Gemini takes.

Both conversions are pure functions of a draft 2020-12 schema returning the converted schema and
`(path, problem)` pairs for what could not be expressed; replies are still checked against the
original schema. The rules are in docs/providers.md ("Output contracts").
"""

from __future__ import annotations

import copy
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .bundle import Contract

Problems = list[tuple[str, str]]

JSON_SCHEMA_STRICT = "json-schema-strict"  # OpenAI strict mode: every property required, no extra keys
OPENAPI_SUBSET = "openapi-subset"  # Gemini's Schema object: upper-case types, nullable, any_of
# where a compiled bundle keeps each form in `Contract.native` (bundle format 1 names them by provider)
BUNDLE_KEYS = {JSON_SCHEMA_STRICT: "openai_strict", OPENAPI_SUBSET: "gemini"}


def native_form(contract: Contract, form: str) -> Any:
    """The contract's schema in `form` as compiled into the bundle, or None (not expressible, or absent)."""
    return (contract.native or {}).get(BUNDLE_KEYS[form])


_OPENAI_DROP = (
    "minLength",
    "maxLength",
    "minProperties",
    "maxProperties",
    "uniqueItems",
    "contains",
    "default",
    "examples",
    "$schema",
    "$id",
    "$comment",
    "deprecated",
    "readOnly",
    "writeOnly",
)
_OPENAI_IMPOSSIBLE = (
    "allOf",
    "not",
    "if",
    "then",
    "else",
    "patternProperties",
    "dependentSchemas",
    "dependentRequired",
    "unevaluatedProperties",
    "propertyNames",
    "unevaluatedItems",
)
_GEMINI_KEEP = {
    "description": "description",
    "title": "title",
    "format": "format",
    "pattern": "pattern",
    "minItems": "min_items",
    "maxItems": "max_items",
    "minimum": "minimum",
    "maximum": "maximum",
    "minLength": "min_length",
    "maxLength": "max_length",
    "minProperties": "min_properties",
    "maxProperties": "max_properties",
    "default": "default",
}
_GEMINI_REPORT = ("allOf", "not", "if", "patternProperties", "dependentSchemas", "prefixItems")
_GEMINI_TYPES = {
    "string": "STRING",
    "number": "NUMBER",
    "integer": "INTEGER",
    "boolean": "BOOLEAN",
    "array": "ARRAY",
    "object": "OBJECT",
    "null": "NULL",
}
MAX_REF_DEPTH = 8


def _is_object(schema: dict) -> bool:
    kind = schema.get("type")
    return kind == "object" or (isinstance(kind, list) and "object" in kind) or "properties" in schema


def _nullable(schema: dict) -> dict:
    """`schema` that also accepts null."""
    out = dict(schema)
    kind = out.get("type")
    if isinstance(kind, str):
        if kind != "null":
            out["type"] = [kind, "null"]
    elif isinstance(kind, list):
        if "null" not in kind:
            out["type"] = [*kind, "null"]
    else:
        return {"anyOf": [out, {"type": "null"}]}
    if "enum" in out and None not in out["enum"]:
        out["enum"] = [*out["enum"], None]
    return out


def openai_strict(schema: dict) -> tuple[dict, Problems]:
    """The schema in the form OpenAI strict structured outputs require."""
    problems: Problems = []
    if not isinstance(schema, dict) or not _is_object(schema):
        return copy.deepcopy(schema), [("reply", "the root must be an object with properties")]
    out = _strict(schema, "reply", problems)
    if "$defs" in schema:
        out["$defs"] = {k: _strict(v, f"$defs.{k}", problems) for k, v in schema["$defs"].items() if isinstance(v, dict)}
    return out, problems


def _strict(schema: Any, path: str, problems: Problems) -> Any:
    if not isinstance(schema, dict):
        return schema
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if key in _OPENAI_IMPOSSIBLE:
            problems.append((path, f"'{key}' is not supported in strict mode"))
        elif key in _OPENAI_DROP or key == "$defs":
            continue
        elif key == "properties":
            props = value if isinstance(value, dict) else {}
            required = set(schema.get("required", ()))
            out["properties"] = {}
            for name, sub in props.items():
                conv = _strict(sub, f"{path}.{name}", problems)
                out["properties"][name] = conv if name in required or not isinstance(conv, dict) else _nullable(conv)
        elif key == "required":
            continue
        elif key == "items":
            out["items"] = _strict(value, f"{path}[]", problems)
        elif key in ("anyOf", "oneOf"):
            out["anyOf"] = [_strict(v, path, problems) for v in value]
        elif key == "additionalProperties":
            if value is not False:
                problems.append((path, "an object with free-form keys (additionalProperties) cannot be strict"))
        else:
            out[key] = copy.deepcopy(value)
    if "enum" in out and "type" not in out and out["enum"] and all(isinstance(v, str) for v in out["enum"]):
        out = {"type": "string", **out}
    if _is_object(schema):
        if "properties" not in schema and "additionalProperties" not in schema:
            problems.append((path, "an object without declared properties cannot be strict"))
        out["required"] = list((schema.get("properties") or {}).keys())
        out["additionalProperties"] = False
    return out


def gemini_schema(schema: dict) -> tuple[dict, Problems]:
    """The schema as Gemini's Schema object (snake_case field names)."""
    problems: Problems = []
    defs = schema.get("$defs", {}) if isinstance(schema, dict) else {}
    return _gem(schema, "reply", defs, 0, problems), problems


def _resolve(ref: str, defs: dict) -> dict | None:
    prefix = "#/$defs/"
    if isinstance(ref, str) and ref.startswith(prefix):
        found = defs.get(ref[len(prefix) :])
        return found if isinstance(found, dict) else None
    return None


def _gem(schema: Any, path: str, defs: dict, depth: int, problems: Problems) -> dict:
    if not isinstance(schema, dict):
        return {}
    if "$ref" in schema:
        target = _resolve(schema["$ref"], defs)
        if target is None:
            problems.append((path, f"reference {schema['$ref']!r} cannot be inlined"))
            return {"type": "OBJECT"}
        if depth >= MAX_REF_DEPTH:
            problems.append((path, f"recursive reference {schema['$ref']!r} is cut at depth {MAX_REF_DEPTH}"))
            return {"type": "OBJECT"}
        merged = {**target, **{k: v for k, v in schema.items() if k != "$ref"}}
        return _gem(merged, path, defs, depth + 1, problems)
    out: dict[str, Any] = {}
    for key in _GEMINI_REPORT:
        if key in schema:
            problems.append((path, f"'{key}' has no Gemini equivalent and is left out"))
    kind = schema.get("type")
    variants = None
    if isinstance(kind, list):
        rest = [k for k in kind if k != "null"]
        if len(rest) < len(kind):
            out["nullable"] = True
        if len(rest) == 1:
            kind = rest[0]
        else:
            variants = [{**schema, "type": k} for k in rest]
            kind = None
    if isinstance(kind, str) and kind in _GEMINI_TYPES:
        out["type"] = _GEMINI_TYPES[kind]
    elif "properties" in schema:
        out["type"] = "OBJECT"
    for key, name in _GEMINI_KEEP.items():
        if key in schema:
            out[name] = copy.deepcopy(schema[key])
    values = [schema["const"]] if "const" in schema else schema.get("enum")
    if values is not None:
        if all(isinstance(v, str) for v in values):
            out["enum"] = list(values)
            out.setdefault("type", "STRING")
        elif None in values and all(isinstance(v, str) or v is None for v in values):
            out["enum"] = [v for v in values if v is not None]
            out["nullable"] = True
            out.setdefault("type", "STRING")
        else:
            problems.append((path, "a non-string enum or const is left out (Gemini enums are strings)"))
    if schema.get("examples"):
        out["example"] = copy.deepcopy(schema["examples"][0])
    if isinstance(schema.get("properties"), dict):
        props = schema["properties"]
        out["properties"] = {k: _gem(v, f"{path}.{k}", defs, depth, problems) for k, v in props.items()}
        out["property_ordering"] = list(props)
        if schema.get("required"):
            out["required"] = list(schema["required"])
    if isinstance(schema.get("items"), dict):
        out["items"] = _gem(schema["items"], f"{path}[]", defs, depth, problems)
    alternatives = schema.get("anyOf") or schema.get("oneOf")
    if variants is not None:
        alternatives = variants
    if alternatives:
        options = [_gem(v, path, defs, depth, problems) for v in alternatives if isinstance(v, dict)]
        nulls = [o for o in options if o.get("type") == "NULL"]
        options = [o for o in options if o.get("type") != "NULL"]
        if nulls:
            out["nullable"] = True
        if len(options) == 1:
            out.update({k: v for k, v in options[0].items() if k not in out})
        elif options:
            out["any_of"] = options
            out.pop("type", None)
    return out
