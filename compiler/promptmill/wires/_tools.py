"""Tool declarations and structured-output fields in each wire's own shape (docs/providers.md)."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ..runtime.schemaforms import JSON_SCHEMA_STRICT, OPENAPI_SUBSET, gemini_schema, native_form

if TYPE_CHECKING:
    from ..runtime.bundle import Contract


# -- wire shapes -------------------------------------------------------------
def openai_tool(d: Mapping[str, Any]) -> dict:
    fn: dict[str, Any] = {"name": d["name"]}
    if d.get("description"):
        fn["description"] = d["description"]
    fn["parameters"] = d["parameters"]
    return {"type": "function", "function": fn}


def anthropic_tool(d: Mapping[str, Any]) -> dict:
    out: dict[str, Any] = {"name": d["name"]}
    if d.get("description"):
        out["description"] = d["description"]
    out["input_schema"] = d["parameters"]
    return out


def gemini_declaration(d: Mapping[str, Any]) -> dict:
    out: dict[str, Any] = {"name": d["name"]}
    if d.get("description"):
        out["description"] = d["description"]
    params = d["parameters"]
    if params.get("properties"):
        out["parameters"] = gemini_schema(dict(params))[0]
    return out


def compact(data: Any) -> str:
    return json.dumps(data, ensure_ascii=False, separators=(",", ":"))


# -- the OpenAI rendering ----------------------------------------------------------
def _ts_type(schema: Any, indent: str) -> str:
    if not isinstance(schema, Mapping):
        return "any"
    if "const" in schema:
        return json.dumps(schema["const"], ensure_ascii=False)
    if "enum" in schema:
        return " | ".join(json.dumps(v, ensure_ascii=False) for v in schema["enum"]) or "never"
    options = schema.get("anyOf") or schema.get("oneOf")
    if options:
        return " | ".join(_ts_type(o, indent) for o in options)
    kind = schema.get("type")
    if isinstance(kind, list):
        return " | ".join(_ts_type({**schema, "type": k}, indent) for k in kind)
    if kind == "array":
        inner = _ts_type(schema.get("items", {}), indent)
        return f"({inner})[]" if " | " in inner else f"{inner}[]"
    if kind == "object" or "properties" in schema:
        props = schema.get("properties") or {}
        if not props:
            return "object"
        return "{\n" + _ts_props(schema, indent + "  ") + indent + "}"
    return {"string": "string", "number": "number", "integer": "number", "boolean": "boolean", "null": "null"}.get(str(kind), "any")


def _ts_props(schema: Mapping[str, Any], indent: str) -> str:
    required = set(schema.get("required", ()))
    lines = []
    for name, sub in (schema.get("properties") or {}).items():
        if isinstance(sub, Mapping) and sub.get("description"):
            lines.append(f"{indent}// {sub['description']}\n")
        mark = "" if name in required else "?"
        lines.append(f"{indent}{name}{mark}: {_ts_type(sub, indent)},\n")
    return "".join(lines)


def openai_function_text(d: Mapping[str, Any]) -> str:
    """One function as OpenAI's models see it inside `namespace functions { ... }`."""
    head = f"// {d['description']}\n" if d.get("description") else ""
    params = d.get("parameters") or {}
    if params.get("properties"):
        return f"{head}type {d['name']} = (_: {{\n{_ts_props(params, '')}}}) => any;\n\n"
    return f"{head}type {d['name']} = () => any;\n\n"


def response_format(contract: Contract) -> dict:
    """OpenAI `response_format` of a native contract (strict when the schema allows it)."""
    strict = native_form(contract, JSON_SCHEMA_STRICT)
    schema = strict if strict is not None else contract.schema
    name = re.sub(r"[^A-Za-z0-9_-]", "_", contract.id)[:64]
    return {"type": "json_schema", "json_schema": {"name": name, "schema": schema, "strict": strict is not None}}


def response_schema(contract: Contract) -> dict:
    """Gemini `response_schema` of a native contract."""
    form = native_form(contract, OPENAPI_SUBSET)
    return form if form is not None else gemini_schema(contract.schema)[0]
