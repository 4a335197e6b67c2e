"""Compile output contracts: the reply schema and how the prompt describes it.

Styles:
- `returns`: a `<returns>` block, one `<output name="...">description</output>`
  per field, self-closing when a field has no description;
- `return_call`: an instruction to call the structured-return tool with the
  fields as arguments, each placeholder giving description, type and
  `[required]`, or the field name when there is no description;
- `json`: "respond with only a JSON object" (or "array", when the schema's top
  level is one) and an example built from the schema (or the contract's own
  `example`);
- `native`: no prose; renderers put the schema in the provider's
  structured-output field.
"""

from __future__ import annotations

import json
import re
from typing import Any

from ..core.diagnostics import Diagnostic
from ..replies.parse import json_shape
from ..runtime.bundle import Contract, Origin, Section
from ..runtime.counting import Counter
from .model import OutputContract, valid_schema

DEFAULT_TOOL = "return_result"


def _xml(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def derived_schema(contract: OutputContract) -> dict:
    """The reply schema: the contract's own, or one built from its outputs."""
    if "schema" in contract.data:
        return contract.data["schema"]
    props = {}
    for f in contract.fields:
        prop: dict[str, Any] = {"type": f["type"]}
        if f["description"]:
            prop["description"] = f["description"]
        props[f["name"]] = prop
    schema: dict[str, Any] = {"type": "object", "properties": props, "additionalProperties": False}
    required = [f["name"] for f in contract.fields if f["required"]]
    if required:
        schema["required"] = required
    return schema


def _fields(contract: OutputContract, schema: dict) -> list[dict]:
    if contract.fields:
        return list(contract.fields)
    required = set(schema.get("required", ()))
    out = []
    for name, prop in (schema.get("properties") or {}).items():
        prop = prop if isinstance(prop, dict) else {}
        kind = prop.get("type", "string")
        out.append(
            {
                "name": name,
                "description": prop.get("description", ""),
                "type": kind if isinstance(kind, str) else "/".join(kind),
                "required": name in required,
            }
        )
    return out


def example_value(schema: Any, name: str = "value", depth: int = 0) -> Any:
    """A readable example instance of `schema` (placeholders for free text)."""
    if not isinstance(schema, dict) or depth > 8:
        return f"<{name}>"
    for key in ("const",):
        if key in schema:
            return schema[key]
    if schema.get("examples"):
        return schema["examples"][0]
    if "default" in schema:
        return schema["default"]
    if schema.get("enum"):
        return schema["enum"][0] if len(schema["enum"]) == 1 else "|".join(str(v) for v in schema["enum"])
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "string")
    if kind == "object" or "properties" in schema:
        return {k: example_value(v, k, depth + 1) for k, v in (schema.get("properties") or {}).items()}
    if kind == "array":
        return [example_value(schema.get("items", {}), name, depth + 1)]
    if kind == "integer":
        return int(schema.get("minimum", 1))
    if kind == "number":
        return schema.get("minimum", 0)
    if kind == "boolean":
        return True
    if kind == "null":
        return None
    return f"<{schema.get('description', name)}>"


CALL_DEFAULTS = {
    "lead": "When you have finished, return your results by calling the `{tool}` tool with these arguments:",
    "call": "{tool}({arguments})",
    "placeholder": "<{text}{type_label}{required}>",
    "required_mark": " [required]",
}
# the names each wording may use; other braces are literal text
_PLACEHOLDER_NAMES = ("tool", "name", "description", "type", "text", "type_label", "required")
CALL_NAMES = {
    "lead": ("tool",),
    "call": ("tool", "arguments"),
    "placeholder": _PLACEHOLDER_NAMES,
    "placeholder_bare": _PLACEHOLDER_NAMES,
    "required_mark": (),
}
_NAME = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")


def _fill(text: str, values: dict[str, str]) -> str:
    return _NAME.sub(lambda m: values.get(m.group(1), m.group(0)), text)


def call_problems(call: dict) -> list[tuple[str, str]]:
    """(key, problem) for each `{name}` a call wording uses that it has no value for."""
    out = []
    for key, text in call.items():
        allowed = CALL_NAMES.get(key, ())
        unknown = sorted({m.group(1) for m in _NAME.finditer(text)} - set(allowed))
        if unknown:
            names = ", ".join("{" + n + "}" for n in unknown)
            can = ", ".join("{" + n + "}" for n in allowed) or "no names"
            out.append((key, f"call.{key} uses {names}, which it has no value for (it may use {can}; write other braces as they are)"))
    return out


def call_text(call: dict, fields: list[dict], tool_name: str) -> str:
    """The `return_call` instruction: the lead sentence, then the call in backticks with
    one placeholder per field, worded by the contract's `call` (defaults: CALL_DEFAULTS)."""
    wording = {**CALL_DEFAULTS, **call}
    args = []
    for f in fields:
        typed = f.get("typed", True)
        values = {
            "tool": tool_name,
            "name": f["name"],
            "description": f["description"],
            "type": f["type"] if typed else "",
            "text": f["description"] or f["name"],
            "type_label": f" ({f['type']})" if typed else "",
            "required": wording["required_mark"] if f["required"] else "",
        }
        shape = wording["placeholder"] if f["description"] else wording.get("placeholder_bare", wording["placeholder"])
        args.append(f"{json.dumps(f['name'])}: {json.dumps(_fill(shape, values), ensure_ascii=False)}")
    arguments = "{" + ", ".join(args) + "}"
    lead = _fill(wording["lead"], {"tool": tool_name})
    line = "`" + _fill(wording["call"], {"tool": tool_name, "arguments": arguments}) + "`"
    return f"{lead}\n{line}" if lead else line


def instructions(contract: OutputContract, style: str, schema: dict, tool_name: str) -> str:
    """The prose a role's `output: true` section renders."""
    intro = (contract.get("instructions") or "").strip()
    parts = [intro] if intro else []
    fmt = format_text(contract, style, schema, tool_name)
    if fmt:
        parts.append(fmt)
    return "\n\n".join(parts)


def format_text(contract: OutputContract, style: str, schema: dict, tool_name: str) -> str:
    """The part of the instructions that describes the reply's format ("" for native)."""
    parts: list[str] = []
    fields = _fields(contract, schema)
    if style == "returns":
        lines = ["<returns>"]
        for f in fields:
            name = _xml(f["name"]).replace('"', "&quot;")
            if f["description"]:
                lines.append(f'  <output name="{name}">{_xml(f["description"])}</output>')
            else:
                lines.append(f'  <output name="{name}" />')
        lines.append("</returns>")
        parts.append("\n".join(lines))
    elif style == "return_call":
        parts.append(call_text(contract.get("call") or {}, fields, tool_name))
    elif style == "json":
        example = contract.get("example")
        if example is None:
            example = example_value(schema, "reply")
        parts.append(
            f"Respond with only {json_shape(schema)}, no prose and no code fence, shaped like this example:\n"
            + json.dumps(example, ensure_ascii=False, indent=2)
        )
    return "\n\n".join(parts)


def _node_at(schema: Any, path: str) -> Any:
    """The schema of the values at reply path `path` (`[]` for each item), or None."""
    node = schema
    for part in path.replace("[]", ".[]").split("."):
        if not part:
            continue
        if not isinstance(node, dict):
            return None
        if part == "[]":
            node = node.get("items", {} if node.get("type") == "array" else None)  # no `items`: any item
        else:
            node = (node.get("properties") or {}).get(part)
        if node is None:
            return None
    return node


def _compared_path_problem(kind: str, path: str, node: Any) -> str | None:
    """Why a `unique`/`references` path compares nothing useful: it names the list, not its items."""
    is_list = isinstance(node, dict) and node.get("type") == "array"
    if kind == "unique" and "[]" not in path:
        if is_list:
            return (
                f"check 'unique': reply path '{path}' is the list itself, one value, so nothing can repeat; write '{path}[]' for its items"
            )
        return (
            f"check 'unique': reply path '{path}' names one value, so nothing can repeat; put '[]' after the list whose items must differ"
        )
    if kind == "references" and is_list:
        return f"check 'references': reply path '{path}' is a list, compared whole with single values; write '{path}[]' for its items"
    return None


def _outputs_vs_schema(contract: OutputContract, schema: dict) -> list[Diagnostic]:
    """PM706: with both `outputs` (what the prompt asks for) and `schema` (what the reply
    is checked against), every output must be a schema property and every required
    property an output, or a reply that follows the prompt fails its check."""
    declared = schema.get("properties")
    props = declared if isinstance(declared, dict) else {}
    named = [f["name"] for f in contract.fields]
    unknown = [n for n in named if n not in props]
    unasked = [n for n in schema.get("required") or () if isinstance(n, str) and n not in named]
    problems = ([f"outputs {', '.join(repr(n) for n in unknown)} are not properties of its schema"] if unknown else []) + (
        [f"its schema requires {', '.join(repr(n) for n in unasked)}, which the outputs never ask for"] if unasked else []
    )
    if not problems:
        return []
    return [
        Diagnostic.at(
            contract.pos("outputs"),
            "PM706",
            f"output contract '{contract.id}': the prompt describes `outputs`, the reply is checked against `schema`, "
            f"and they disagree: {'; '.join(problems)}",
            hint="give only one of them (the schema is derived from outputs), or make them name the same fields",
        )
    ]


def compile_contract(contract: OutputContract) -> tuple[Contract, list[Diagnostic]]:
    """A bundle `Contract` with pre-rendered instructions."""
    diags: list[Diagnostic] = []
    schema = derived_schema(contract)
    if not valid_schema(schema):  # PM701, reported where the contract is loaded; go on with a stand-in
        schema = {"type": "object"}
    style = contract.get("style") or ("json" if "schema" in contract.data else "returns")
    tool = dict(contract.get("return_tool") or {})
    tool.setdefault("name", DEFAULT_TOOL)
    tool.setdefault("description", contract.get("description") or "Return the final result.")
    checks = list(contract.get("checks", ()))
    for i, check in enumerate(checks):
        for key in ("path", "target", "nodes", "into"):
            value = check.get(key)
            if value is None:
                continue
            node = _node_at(schema, value)
            problem = f"check '{check['check']}': reply path '{value}' is not in the reply schema" if node is None else None
            if problem is None and check["check"] in ("unique", "references") and key in ("path", "target"):
                problem = _compared_path_problem(check["check"], value, node)
            if problem is not None:
                diags.append(Diagnostic.at(contract.pos("checks", i, key), "PM703", problem))
        needed = {
            "unique": ("path",),
            "references": ("path", "target"),
            "acyclic": ("nodes", "key", "edges"),
            "preserve": ("from", "into", "key"),
        }[check["check"]]
        missing = [k for k in needed if k not in check]
        if missing:
            diags.append(
                Diagnostic.at(
                    contract.pos("checks", i),
                    "PM703",
                    f"check '{check['check']}' needs: {', '.join(missing)}",
                )
            )
    for key, problem in call_problems(contract.get("call") or {}):
        diags.append(
            Diagnostic.at(
                contract.pos("call", key),
                "PM707",
                f"output contract '{contract.id}': {problem}",
                hint="names are {tool}, {arguments} (call), and in placeholders "
                + ", ".join("{" + n + "}" for n in _PLACEHOLDER_NAMES if n != "tool"),
            )
        )
    if "schema" in contract.data and contract.fields and isinstance(schema, dict):
        diags.extend(_outputs_vs_schema(contract, schema))
    native = None
    if style in ("native", "return_call") and not (isinstance(schema, dict) and schema.get("type") == "object"):
        diags.append(
            Diagnostic.at(
                contract.pos("schema") if "schema" in contract.data else contract.pos("id"),
                "PM704",
                f"output contract '{contract.id}' has style {style}: its reply schema must be a JSON object "
                "(type: object at the top), because tool arguments and structured outputs are objects",
                hint="wrap the reply in an object, e.g. {type: object, properties: {items: <your schema>}}, or use style json",
            )
        )
    elif style == "native":
        native, lossy = _native_forms(schema)
        for provider, path, problem in lossy:
            diags.append(
                Diagnostic.at(
                    contract.pos("schema") if "schema" in contract.data else contract.pos("id"),
                    "PM705",
                    f"output contract '{contract.id}', {provider}: {path}: {problem}",
                    hint=_LOSSY_HINTS[provider],
                )
            )
    p = contract.pos("id")
    bundle = Contract(
        id=contract.id,
        style=style,
        schema=schema,
        instructions=instructions(contract, style, schema, tool["name"]),
        return_tool=tool,
        checks=tuple(checks),
        native=native,
        origin=Origin(contract.source_file, p.line, p.col, contract.id),
    )
    return bundle, diags


_LOSSY_HINTS = {
    "openai": "OpenAI requests send this schema with strict: false (replies are still checked by parse_reply)",
    "gemini": "the keyword is left out of Gemini's response_schema (replies are still checked by parse_reply)",
}


def _native_forms(schema: dict) -> tuple[dict, list[tuple[str, str, str]]]:
    from ..runtime.schemaforms import BUNDLE_KEYS, JSON_SCHEMA_STRICT, OPENAPI_SUBSET, gemini_schema, openai_strict

    strict, strict_problems = openai_strict(schema)
    gemini, gemini_problems = gemini_schema(schema)
    lossy = [("openai", p, m) for p, m in strict_problems] + [("gemini", p, m) for p, m in gemini_problems]
    return {BUNDLE_KEYS[JSON_SCHEMA_STRICT]: None if strict_problems else strict, BUNDLE_KEYS[OPENAPI_SUBSET]: gemini}, lossy


def lost_by_wire(schema: Any) -> dict[str, list[tuple[str, str, Any, str]]]:
    """For each wire that carries a native contract and loses some of `schema`'s constraints:
    `(path, keyword, value, fate)` of each (runtime/schemaprofiles.py), in registry order."""
    from ..runtime.registry import WIRE_NAMES
    from ..runtime.schemaprofiles import carries_contract, lost_keywords, profile_for
    from ..runtime.wire import get_wire

    out = {}
    for name in WIRE_NAMES:
        wire = get_wire(name)
        profile = profile_for(wire) if carries_contract(wire) else None
        lost = lost_keywords(schema, profile) if profile is not None else []
        if lost:
            out[name] = lost
    return out


_LIMIT_WORDS = {
    "minLength": "at least {} characters",
    "maxLength": "at most {} characters",
    "pattern": "matches the regular expression `{}`",
    "minimum": "at least {}",
    "maximum": "at most {}",
    "exclusiveMinimum": "more than {}",
    "exclusiveMaximum": "less than {}",
    "multipleOf": "a multiple of {}",
    "minItems": "at least {} items",
    "maxItems": "at most {} items",
    "uniqueItems": "no item repeated",
    "minProperties": "at least {} keys",
    "maxProperties": "at most {} keys",
}


def limits_text(lost: list[tuple[str, str, Any, str]]) -> str:
    """The prompt's plain statement of constraints a wire does not enforce: one line per reply path."""
    by_path: dict[str, list[str]] = {}
    for path, keyword, value, _ in lost:
        shown = value if isinstance(value, str) else json.dumps(value)
        by_path.setdefault(path, []).append(_LIMIT_WORDS[keyword].format(shown))
    lines = []
    for path, words in by_path.items():
        label = "the reply" if path == "reply" else f"`{path.removeprefix('reply.')}`"
        lines.append(f"- {label}: {'; '.join(words)}.")
    return "The reply must also keep to these limits:\n" + "\n".join(lines)


def limit_sections(contract: Contract, counter: Counter, origin: Origin, section_id: str, when: dict | None) -> list[Section]:
    """For a native contract: the constraints a wire cannot enforce, stated in the prompt on that wire.
    One static section per distinct statement, shown on the wires that lose exactly those
    (`provider in [...]`), right after the role's output section; counted like any section."""
    groups: dict[str, list[str]] = {}
    for wire, lost in lost_by_wire(contract.schema).items():
        groups.setdefault(limits_text(lost), []).append(wire)
    return [
        _wire_note(f"{section_id}.limits" + (f".{n}" if len(groups) > 1 else ""), text, wires, when, counter, origin)
        for n, (text, wires) in enumerate(groups.items(), 1)
    ]


def _wire_note(section_id: str, text: str, wires: list[str], when: dict | None, counter: Counter, origin: Origin) -> Section:
    """A never-trimmed user note placed after the output section, shown only on `wires` (and under `when`)."""
    cond: dict = {"path": "provider", "op": "in", "value": wires}
    if when is not None:
        cond = {"all": [when, cond]}
    return Section(
        id=section_id,
        kind="static",
        priority=50,
        trim="never",
        message="user",
        stability="stable",
        text=text,
        tokens=counter.count(text),
        when=cond,
        origin=origin,
    )


def native_fallback(
    model: OutputContract, contract: Contract, counter: Counter, origin: Origin, section_id: str, when: dict | None
) -> Section:
    """For a native contract: the JSON format description, shown only on text and live wires
    (they have no structured-output field). Placed right after the role's output section."""
    text = format_text(model, "json", contract.schema, (contract.return_tool or {}).get("name", DEFAULT_TOOL))
    return _wire_note(f"{section_id}.json", text, ["text", "live"], when, counter, origin)
