"""Tool declarations: checked, shaped for each provider, and counted as sent.

A declaration is `{name, description, parameters}` where `parameters` is a JSON
Schema of an object. Declarations come from a `tools:` section (the state list
at its path, after the static ones the section `declare:`s) and, for some
output contracts, from the structured-return tool.

With `tool_mode: native` on a chat wire the declarations leave the prompt text
and travel in the provider's own field; they still cost tokens, counted here
(see docs/providers.md, "Counting model"):

- openai: the model sees functions as a TypeScript-like `namespace functions`
  block inside the system message. We render that block ourselves
  (`openai_function_text`), count it with the role's tokenizer, add
  `OPENAI_TOOLS_OVERHEAD` and round the sum up by `OPENAI_TOOLS_PAD` (20%), a
  safety margin for a format OpenAI does not publish: OpenAI's cookbook model
  of the same cost comes out up to 15% higher than the unpadded count on flat
  tools (bench/bench_tool_estimates.py).
- anthropic: the JSON of each `{name, description, input_schema}` plus the
  tool-use system prompt Anthropic documents (346 tokens, 313 when a tool is
  forced); counts are estimates covered by the wire's 10% margin.
- gemini: the JSON of each function declaration plus `GEMINI_TOOLS_OVERHEAD`;
  an estimate covered by the wire's 10% margin.

Structured output (native contracts) is counted the same way: the JSON of the
schema the provider receives (OpenAI padded by 20%).
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from .bundle import Contract
from .schema.validate import check_schema  # fast for valid schemas; jsonschema explains failures

if TYPE_CHECKING:
    from .counting import Counter


def no_parameters() -> dict:
    """The `parameters` of a tool that takes no arguments (a new dict: payloads may be edited by callers)."""
    return {"type": "object", "properties": {}}


NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
OPENAI_TOOLS_HEAD = "namespace functions {\n\n"
OPENAI_TOOLS_TAIL = "} // namespace functions"
OPENAI_TOOLS_OVERHEAD = 9
OPENAI_TOOLS_PAD = 1.2
ANTHROPIC_TOOLS_OVERHEAD = 346
ANTHROPIC_FORCED_OVERHEAD = 313
GEMINI_TOOLS_OVERHEAD = 10


def problems(tool: Any) -> list[tuple[str, str]]:
    """What is wrong with a declaration, as `(sub-path, message)` pairs ("" is the tool itself)."""
    if type(tool) is not dict and not isinstance(tool, Mapping):
        return [("", f"a tool declaration must be a mapping, got {type(tool).__name__}")]
    out = []
    name = tool.get("name")
    if not isinstance(name, str) or not NAME.match(name):
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


def extra_tools(contract: Contract | None, wire: str, tool_mode: str) -> list[dict]:
    """Declarations a payload carries beyond the role's tools: the structured-return tool when
    the contract is `return_call` with native tools, or `native` on Anthropic (a forced tool)."""
    if contract is None or wire in ("text", "live"):
        return []
    if contract.style == "return_call" and tool_mode == "native":
        return [return_tool(contract)]
    if contract.style == "native" and wire == "anthropic":
        return [return_tool(contract)]
    return []


def forced_tool(contract: Contract | None, wire: str) -> str | None:
    """Name of the tool Anthropic is forced to call (native contracts)."""
    if contract is not None and contract.style == "native" and wire == "anthropic":
        return return_tool(contract)["name"]
    return None


# -- provider shapes -------------------------------------------------------------
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
    from .schemaconv import gemini_schema

    out: dict[str, Any] = {"name": d["name"]}
    if d.get("description"):
        out["description"] = d["description"]
    params = d["parameters"]
    if params.get("properties"):
        out["parameters"] = gemini_schema(dict(params))[0]
    return out


def _compact(data: Any) -> str:
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


# -- counting ----------------------------------------------------------------------
def counted_text(wire: str, d: Mapping[str, Any]) -> str:
    """The text whose tokens a declaration costs on `wire`."""
    if wire == "openai":
        return openai_function_text(d)
    if wire == "anthropic":
        return _compact(anthropic_tool(d))
    return _compact(gemini_declaration(d))


def item_cost(counter: Counter, wire: str, text: str) -> int:
    """Cost of one more declaration whose `counted_text` is `text` (an estimate while filling;
    `tools_tokens` gives the total the request reports)."""
    n = counter.count(text)
    return math.ceil(n * OPENAI_TOOLS_PAD) if wire == "openai" else n


def frame_cost(counter: Counter, wire: str, forced: bool = False) -> int:
    """Cost of declaring any tools at all (the block around them, the tool-use prompt)."""
    if wire == "openai":
        return math.ceil((counter.count_parts([OPENAI_TOOLS_HEAD, OPENAI_TOOLS_TAIL]) + OPENAI_TOOLS_OVERHEAD) * OPENAI_TOOLS_PAD)
    if wire == "anthropic":
        return ANTHROPIC_FORCED_OVERHEAD if forced else ANTHROPIC_TOOLS_OVERHEAD
    return GEMINI_TOOLS_OVERHEAD


def tools_tokens(counter: Counter, wire: str, decls: Sequence[Mapping[str, Any]], forced: bool = False) -> int:
    """Tokens the declarations cost on `wire`, by the documented counting model."""
    if not decls:
        return 0
    if wire == "openai":
        parts = [OPENAI_TOOLS_HEAD, *(openai_function_text(d) for d in decls), OPENAI_TOOLS_TAIL]
        return math.ceil((counter.count_parts(parts) + OPENAI_TOOLS_OVERHEAD) * OPENAI_TOOLS_PAD)
    texts = [counted_text(wire, d) for d in decls]
    return sum(counter.count(t) for t in texts) + frame_cost(counter, wire, forced)


def response_format(contract: Contract) -> dict:
    """OpenAI `response_format` of a native contract (strict when the schema allows it)."""
    native = contract.native or {}
    strict = native.get("openai_strict")
    schema = strict if strict is not None else contract.schema
    name = re.sub(r"[^A-Za-z0-9_-]", "_", contract.id)[:64]
    return {"type": "json_schema", "json_schema": {"name": name, "schema": schema, "strict": strict is not None}}


def response_schema(contract: Contract) -> dict:
    """Gemini `response_schema` of a native contract."""
    native = contract.native or {}
    if native.get("gemini") is not None:
        return native["gemini"]
    from .schemaconv import gemini_schema

    return gemini_schema(contract.schema)[0]


def output_tokens(counter: Counter, wire: str, contract: Contract | None) -> int:
    """Tokens a native contract's structured-output field costs on `wire`."""
    if contract is None or contract.style != "native":
        return 0
    if wire == "openai":
        return math.ceil(counter.count(_compact(response_format(contract)["json_schema"])) * OPENAI_TOOLS_PAD)
    if wire == "gemini":
        return counter.count(_compact(response_schema(contract)))
    return 0
