"""JSON Schemas of the compiled bundle and the build manifest (used by gen_schemas.py)."""

from __future__ import annotations

from promptmill.runtime.wires import WIRE_NAMES

DRAFT = "https://json-schema.org/draft/2020-12/schema"
BASE = "https://promptmill.dev/schemas/"


def _s(type_, description="", **kw):
    out = {"type": type_}
    if description:
        out["description"] = description
    out.update(kw)
    return out


ORIGIN = _s(
    ["object", "null"],
    "Where the value was declared.",
    additionalProperties=False,
    required=["file", "line", "col"],
    properties={"file": _s("string"), "line": _s("integer"), "col": _s("integer"), "role": _s("string")},
)
CONDITION = {"description": "A condition (see role.schema.json#/$defs/condition).", "type": ["object", "null"]}

SECTION = _s(
    "object",
    "A compiled section.",
    additionalProperties=False,
    required=["id", "kind", "priority", "trim", "message", "stability"],
    properties={
        "id": _s("string"),
        "kind": _s("string", "How the runtime fills it.", enum=["static", "template", "each", "rules", "history", "tools"]),
        "priority": _s("integer"),
        "trim": _s("string", enum=["never", "drop", "items", "truncate"]),
        "message": _s("string", enum=["system", "user", "assistant"]),
        "stability": _s("string", enum=["stable", "semi", "dynamic"]),
        "title": _s(["string", "null"]),
        "title_tokens": _s("integer", "Tokens of the title line (title plus newline)."),
        "text": _s(["string", "null"], "Static sections: the rendered text, title included."),
        "tokens": _s("integer", "Static sections: tokens of text, counted at compile time."),
        "template": _s(["string", "null"], "Jinja source (per item for each/tools/history)."),
        "plan": {"type": ["array", "null"], "description": "Fast substitution plan equivalent to the template."},
        "path": _s("array", "State path of the list (each/tools/history).", items=_s("string")),
        "item_name": _s("string"),
        "item_separator": _s("string"),
        "order_by": _s("array", items=_s("string")),
        "order_desc": _s("boolean"),
        "keep": _s("string", enum=["first", "last"]),
        "step": _s("integer", minimum=1),
        "declared": _s(
            "array",
            "Tools sections: static tool declarations (sent before the state's).",
            items=_s(
                "object",
                required=["name", "parameters"],
                properties={"name": _s("string"), "description": _s("string"), "parameters": _s("object")},
            ),
        ),
        "rules": _s(
            "array",
            items=_s(
                "object",
                additionalProperties=False,
                required=["text", "group"],
                properties={
                    "text": _s("string"),
                    "group": _s("integer"),
                    "is_title": _s("boolean"),
                    "when": CONDITION,
                    "rule_id": _s("string"),
                },
            ),
        ),
        "truncate_keep": _s("string", enum=["head", "tail"]),
        "truncate_marker": _s("string"),
        "when": CONDITION,
        "fragment": _s(["string", "null"]),
        "context": {"type": ["object", "null"]},
        "origin": ORIGIN,
    },
)

BUNDLE = {
    "$schema": DRAFT,
    "$id": BASE + "bundle.schema.json",
    "title": "promptmill compiled role bundle",
    "description": "One role, compiled: what the runtime reads from build/roles/.",
    "type": "object",
    "additionalProperties": False,
    "required": ["format", "format_version", "id", "tokenizer", "budget", "separator", "sections", "inputs"],
    "properties": {
        "format": {"const": "promptmill-bundle"},
        "format_version": {"enum": [1, 2], "description": "2 when the bundle has `parents` (a parent chosen at render time), else 1."},
        "id": _s("string"),
        "description": _s("string"),
        "category": _s("string"),
        "model": _s(["string", "null"]),
        "provider": _s("string", enum=list(WIRE_NAMES)),
        "tokenizer": _s("string"),
        "budget": _s(
            "object",
            additionalProperties=False,
            required=["max_tokens", "reserve"],
            properties={
                "max_tokens": _s("integer", minimum=1),
                "reserve": _s("integer", minimum=0),
                "margin": _s(["number", "null"]),
                "context_window": _s(["integer", "null"]),
                "ratio": _s("number", exclusiveMinimum=0),
                "origins": _s("object", additionalProperties=_s("string")),
            },
        ),
        "separator": _s("string"),
        "tool_mode": _s("string", enum=["inline", "native"]),
        "cache": _s("boolean"),
        "inputs": _s("object", "JSON Schema of the render state."),
        "sections": _s("array", items=SECTION),
        "output": {
            "type": ["object", "null"],
            "description": "The output contract: id, style, schema, instructions, return_tool, checks, "
            "native (provider forms of the schema), origin.",
        },
        "lazy_paths": _s("array", items=_s("array", items=_s("string"))),
        "item_proofs": _s(
            "array",
            "What the compiler proved about the items of lists checked lazily (docs/bundle-proofs.md); absent when "
            "it proved nothing. Each entry says the item schema of the list at `path` (one of `lazy_paths`) is a "
            "plain record: `fields` names each property's one kind of value, `required` the properties an item must "
            "have, `others` whether other properties may appear (then holding any JSON data). An item that is a "
            "record of this shape and JSON data within the state limits is valid against the item schema, so a "
            "runtime may accept it in one pass; any other item gets the generic checks (the inputs schema and the "
            "JSON-data rules), which name what is wrong. A runtime may ignore this field: it changes how fast an "
            "item is accepted, never what a render gives. Older runtimes refuse a bundle holding it (unknown field).",
            items=_s(
                "object",
                additionalProperties=False,
                required=["path", "fields", "required", "others"],
                properties={
                    "path": _s("array", "The state path of the list (property names from the root).", minItems=1, items=_s("string")),
                    "fields": _s(
                        "object",
                        "Property name -> its kind: `string` (text), `number` (a finite integer or float; not a "
                        "boolean), `integer` (an integer), `boolean`, `null`, `object` (any JSON object), `array` "
                        '(any JSON array), `any` (any JSON value), {"enum": [texts]} (one of these texts) or '
                        '{"minLength": m, "maxLength": n} (a text of m to n characters, counted as code '
                        "points; either bound optional).",
                        additionalProperties={
                            "oneOf": [
                                _s("string", enum=["string", "number", "integer", "boolean", "null", "object", "array", "any"]),
                                _s(
                                    "object",
                                    additionalProperties=False,
                                    required=["enum"],
                                    properties={"enum": _s("array", minItems=1, items=_s("string"))},
                                ),
                                _s(
                                    "object",
                                    additionalProperties=False,
                                    minProperties=1,
                                    properties={"minLength": _s("integer", minimum=0), "maxLength": _s("integer", minimum=0)},
                                ),
                            ]
                        },
                    ),
                    "required": _s("array", "Properties every item must have.", items=_s("string")),
                    "others": _s("boolean", "Whether properties not named in `fields` may appear (holding any JSON data)."),
                },
            ),
        ),
        "events": _s("array", items=_s("object")),
        "sources": _s(
            "array",
            items=_s(
                "object", additionalProperties=False, required=["file", "sha256"], properties={"file": _s("string"), "sha256": _s("string")}
            ),
        ),
        "source_hash": _s("string"),
        "default_parent": _s(
            ["string", "null"], "The parent of the role's `extends` (format 2): used when no candidate's condition holds."
        ),
        "parents": _s(
            "array",
            "Format 2: candidate parents chosen at render time, first whose condition holds; "
            "each `bundle` is the role compiled with that parent (a format 1 bundle).",
            minItems=1,
            items=_s(
                "object",
                additionalProperties=False,
                required=["parent", "when", "bundle"],
                properties={"parent": _s("string"), "when": _s("object"), "bundle": {"$ref": "#"}},
            ),
        ),
    },
}

MANIFEST = {
    "$schema": DRAFT,
    "$id": BASE + "manifest.schema.json",
    "title": "promptmill build manifest",
    "description": "build/manifest.json: the roles of a build, their bundle files and content hashes.",
    "type": "object",
    "additionalProperties": False,
    "required": ["format", "format_version", "promptmill_version", "roles"],
    "properties": {
        "format": {"const": "promptmill-build"},
        "format_version": {"const": 1},
        "promptmill_version": _s("string"),
        "roles": _s(
            "object",
            additionalProperties=_s(
                "object",
                additionalProperties=False,
                required=["file", "sha256", "source_hash"],
                properties={
                    "file": _s("string"),
                    "sha256": _s("string"),
                    "source_hash": _s("string"),
                    "sources": _s("array", items=_s("string")),
                },
            ),
        ),
        "inputs": _s("object", "Every source file and its SHA-256.", additionalProperties=_s("string")),
        "tokenizers": _s("object", additionalProperties=_s("string")),
    },
}
