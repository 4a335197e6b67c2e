"""Tool declarations, wire-neutral: checked, with defaults, and a contract's structured-return tool.

A declaration is `{name, description, parameters}` where `parameters` is a JSON Schema of an
object. How each wire shapes and counts them is in `runtime/wire.py` and `promptmill/wires/` (docs/providers.md, "Counting model").
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from .bundle import Contract
from .schema.validate import check_schema  # fast for valid schemas; jsonschema explains failures


def no_parameters() -> dict:
    """The `parameters` of a tool that takes no arguments (a new dict: payloads may be edited by callers)."""
    return {"type": "object", "properties": {}}


NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")


def problems(tool: Any) -> list[tuple[str, str]]:
    """What is wrong with a declaration, as `(sub-path, message)` pairs ("" is the tool itself)."""
    if type(tool) is not dict and not isinstance(tool, Mapping):
        return [("", f"a tool declaration must be a mapping, got {type(tool).__name__}")]
    out = []
    name = tool.get("name")
    if "name" not in tool:
        out.append((".name", "is required"))
    elif not isinstance(name, str) or not NAME.match(name):
        out.append((".name", "must be 1-64 letters, digits, '_' or '-'"))
    if "description" in tool and not isinstance(tool["description"], str):
        out.append((".description", "must be a string"))
    params = tool["parameters"] if "parameters" in tool else no_parameters()
    if type(params) is not dict and not isinstance(params, Mapping):
        out.append((".parameters", "must be a JSON Schema object"))
        return out
    if params.get("type") != "object":
        out.append((".parameters", "must be a JSON Schema with type: object at the top"))
    for where, message in check_schema(params if type(params) is dict else dict(params)):
        sub = "" if where in ("", "(root)") else where.replace("/", ".")  # a JSON pointer: /properties/a
        out.append((f".parameters{sub}", f"is not a valid JSON Schema: {message}"))
    return out


def normalize(tool: Mapping[str, Any]) -> dict:
    """`{name, description, parameters}` of a checked declaration (other keys dropped)."""
    full = with_defaults(tool)
    return {"name": full["name"], "description": full["description"], "parameters": full["parameters"]}


def with_defaults(tool: Mapping[str, Any]) -> Mapping[str, Any]:
    """`tool` with the optional `description` and `parameters` filled in (other keys kept)."""
    if "description" in tool and "parameters" in tool:
        return tool
    return {
        **tool,
        "description": tool.get("description", ""),
        "parameters": tool["parameters"] if "parameters" in tool else no_parameters(),
    }


def return_tool(contract: Contract) -> dict:
    tool = contract.return_tool or {}
    return {"name": tool.get("name", "return_result"), "description": tool.get("description", ""), "parameters": contract.schema}
