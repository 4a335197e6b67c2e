"""JSON Schemas of the compiled bundle and the build manifest (used by gen_schemas.py).

The contract they state is written out in docs/bundle-format.md; every description here says what a field
does, not only its type. The enums of section kinds, plan steps, filters, loop attributes, comparison and
condition operators are read from the runtime (`runtime/bundle.py`, `runtime/plans.py`,
`runtime/conditions.py`), so a new one reaches the schema when it is regenerated, and
tests/test_bundle_contract.py fails until docs/bundle-format.md names it too.
"""

from __future__ import annotations

from typing import Any

from promptmill.runtime import bundle as _bundle
from promptmill.runtime import conditions as _conditions
from promptmill.runtime import plans as _plans
from promptmill.runtime.registry import WIRE_NAMES

DRAFT = "https://json-schema.org/draft/2020-12/schema"
BASE = "https://promptmill.dev/schemas/"
DOC = "The contract this schema states, with what every field, plan step and condition does: docs/bundle-format.md."

# A plan's step kinds and expression kinds (runtime/plans.py `_check_steps`, `_check_expr`); the contract test
# checks these against the code.
PLAN_STEPS = ("t", "v", "f", "e", "for", "if")
PLAN_EXPRESSIONS = ("c", "p", "loop", "fl", "pf", "sf", "cat", "is", "not", "and", "or", "cmp")
IS_TESTS = ("defined", "undefined", "none")
_JSON_TYPE = {str: "string", int: "integer", float: "number", bool: "boolean", type(None): "null"}


def _s(type_: Any, description: str = "", **kw: Any) -> dict[str, Any]:
    out: dict[str, Any] = {"type": type_}
    if description:
        out["description"] = description
    out.update(kw)
    return out


def _tuple(description: str, *items: dict[str, Any]) -> dict[str, Any]:
    """A fixed-length JSON array (a Python tuple in the runtime): its items in order, nothing more."""
    return {
        "description": description,
        "type": "array",
        "prefixItems": list(items),
        "items": False,
        "minItems": len(items),
    }


def _const(value: str) -> dict[str, Any]:
    return {"const": value}


# ---------------------------------------------------------------- conditions

_COMPARISON_VALUE = [
    ({"const": "in"}, {"type": "array"}, "`in` compares against a list"),
    ({"enum": ["gt", "gte", "lt", "lte"]}, {"type": ["number", "string"]}, "orderings need a number or a string"),
    ({"const": "regex"}, {"type": "string"}, "`regex` takes a pattern"),
    ({"const": "exists"}, {"type": ["boolean", "null"]}, "`exists` takes true, false or nothing"),
]

CONDITION_DEFS: dict[str, Any] = {
    "condition": {
        "description": "A condition on the render context (docs/bundle-format.md, section 6): exactly one of a comparison "
        "`{path, op, value}`, `{any: [...]}`, `{all: [...]}` or `{not: {...}}`. Never raises on the state: a missing "
        "path or mismatched types make a comparison false (`ne` true).",
        "type": "object",
        "anyOf": [
            {"$ref": "#/$defs/comparison"},
            {"$ref": "#/$defs/condition_any"},
            {"$ref": "#/$defs/condition_all"},
            {"$ref": "#/$defs/condition_not"},
        ],
    },
    "comparison": {
        "description": "Compares the value at `path` with `value` by `op`. The reader does not refuse other keys here; "
        "the compiler writes none.",
        "type": "object",
        "required": ["path", "op"],
        "not": {"anyOf": [{"required": ["any"]}, {"required": ["all"]}, {"required": ["not"]}]},
        "properties": {
            "path": _s(
                "string",
                "Dotted path into the condition context: `state.<key>...` (digit segments index arrays), `role.id`, "
                "`role.category`, `model` (the model rendered for), `provider` (the wire's name), `event` "
                "(`start` or `continue`).",
                minLength=1,
            ),
            "op": _s(
                "string",
                "eq/ne: JSON equality (a boolean equals only a boolean); gt/gte/lt/lte: both numbers or both strings, "
                "else false; in: `value` is a list holding the path's value; contains: the path's string holds the "
                "string `value`, its list an equal element, or its object the key `value`; regex: the pattern "
                "`value` matches somewhere in the path's string (100 ms limit, PM821); exists: present and not null "
                "(`value` false negates).",
                enum=list(_conditions.OPERATORS),
            ),
            "value": {"description": "What the path's value is compared with; required for every op but `exists`."},
        },
        "allOf": [
            {"if": {"properties": {"op": {"not": {"const": "exists"}}}}, "then": {"required": ["value"]}},
            *(
                {"if": {"properties": {"op": op}, "required": ["op"]}, "then": {"properties": {"value": value}}, "$comment": why}
                for op, value, why in _COMPARISON_VALUE
            ),
        ],
    },
    "condition_any": _s(
        "object",
        "True when at least one member holds (evaluated in order, stopping at the first that holds).",
        additionalProperties=False,
        required=["any"],
        properties={"any": _s("array", "The members.", minItems=1, items={"$ref": "#/$defs/condition"})},
    ),
    "condition_all": _s(
        "object",
        "True when every member holds (evaluated in order, stopping at the first that does not).",
        additionalProperties=False,
        required=["all"],
        properties={"all": _s("array", "The members.", minItems=1, items={"$ref": "#/$defs/condition"})},
    ),
    "condition_not": _s(
        "object",
        "True when the member does not hold.",
        additionalProperties=False,
        required=["not"],
        properties={"not": {"$ref": "#/$defs/condition", "description": "The negated member."}},
    ),
}


def _condition_or_null(description: str) -> dict[str, Any]:
    return {"description": description, "anyOf": [{"type": "null"}, {"$ref": "#/$defs/condition"}]}


# ---------------------------------------------------------------- plans

_PATH = _s("array", "A lookup: a name, then keys of nested objects.", minItems=1, items=_s("string"))
_EXPR = {"$ref": "#/$defs/plan_expression"}
_STEPS = {"$ref": "#/$defs/plan"}
_EXPRS = _s("array", "Expressions, in order.", items=_EXPR)


def _tagged(description: str, alternatives: list[dict[str, Any]], at: int = 0) -> dict[str, Any]:
    """Arrays told apart by the constant at index `at` (then `at + 1` where several share it): one `if`/`then`
    per constant, so a validator checks only the alternative that applies (`anyOf` would try them all)."""
    groups: dict[str, list[dict[str, Any]]] = {}
    for alt in alternatives:
        groups.setdefault(alt["prefixItems"][at]["const"], []).append(alt)
    skip: list[Any] = [True] * at
    return {
        "description": description,
        "type": "array",
        "prefixItems": [*skip, {"enum": list(groups)}],
        "allOf": [
            {
                "if": {"prefixItems": [*skip, {"const": key}]},
                "then": alts[0] if len(alts) == 1 else _tagged(f"`{key}`, told apart by its next element.", alts, at + 1),
            }
            for key, alts in groups.items()
        ],
    }


def _filter_call(name: str, kinds: tuple[tuple[type, ...], ...]) -> dict[str, Any]:
    args: dict[str, Any] = {"type": "array", "maxItems": len(kinds)}
    if kinds:
        args.update(prefixItems=[{"type": [_JSON_TYPE[t] for t in allowed]} for allowed in kinds], items=False)
    return _tuple(
        f"The filter `{name}` applied to an expression, with at most {len(kinds)} constant argument(s).",
        _const("fl"),
        _const(name),
        _EXPR,
        args,
    )


PLAN_DEFS: dict[str, Any] = {
    "plan": _s(
        "array",
        "Plan steps (docs/bundle-format.md, section 8.1); the output is what each step emits, concatenated. Whitespace "
        "is already resolved and nothing is escaped.",
        items={"$ref": "#/$defs/plan_step"},
    ),
    "plan_step": _tagged(
        "One step of a plan, told apart by its first element.",
        [
            _tuple("`t`: emits the text as it is.", _const("t"), _s("string")),
            _tuple(
                "`v`: emits the value at the path, printed (string as is, null as '', numbers and booleans as Python "
                "prints them); any other value or a missing one defers.",
                _const("v"),
                _PATH,
            ),
            _tuple(
                "`f`: emits the value at the path through a filter without arguments, printed.",
                _const("f"),
                _PATH,
                {"enum": sorted(_plans.PURE_FILTERS)},
            ),
            _tuple("`e`: emits the expression's value, printed as for `v`.", _const("e"), _EXPR),
            _tuple(
                "`for`: runs the body once per element of the array the expression gives, with the name bound to the "
                "element and `loop` set; an empty array runs the else steps; anything but an array defers.",
                _const("for"),
                _s("string", "The loop variable."),
                _EXPR,
                _STEPS,
                _STEPS,
            ),
            _tuple(
                "`if`: runs the steps of the first branch whose test is truthy, else the else steps.",
                _const("if"),
                _s(
                    "array",
                    "Branches `[test, steps]`, in order (`if` then each `elif`).",
                    minItems=1,
                    items=_tuple("A branch: its test and its steps.", _EXPR, _STEPS),
                ),
                _STEPS,
            ),
        ],
    ),
    "plan_expression": _tagged(
        "An expression of a plan (docs/bundle-format.md, section 8.2), told apart by its first element.",
        [
            _tuple("`c`: a constant.", _const("c"), _s(["string", "number", "boolean", "null"])),
            _tuple(
                "`p`: a lookup: loop variables (innermost first), the item, then the template context; later segments are keys of objects.",
                _const("p"),
                _PATH,
            ),
            _tuple(
                "`loop`: an attribute of the innermost loop (index is 1-based; revindex = length - index0).",
                _const("loop"),
                {"enum": sorted(_plans.LOOP_ATTRS)},
            ),
            *(_filter_call(name, kinds) for name, kinds in sorted(_plans.FILTERS.items())),
            _tuple(
                "`pf`: printf formatting (`format % value`, or `% (values...)` with several), Python semantics.",
                _const("pf"),
                _s("string", "The format.", pattern=f"^{_plans._PRINTF.pattern}$"),
                _EXPRS,
            ),
            _tuple("`sf`: `format.format(*values)` (Python str.format).", _const("sf"), _s("string", "The format."), _EXPRS),
            _tuple("`cat`: the `~` operator: values as strings, concatenated.", _const("cat"), _EXPRS),
            _tuple(
                "`is`: whether the value is present (`defined`), missing (`undefined`) or null (`none`).",
                _const("is"),
                {"enum": list(IS_TESTS)},
                _EXPR,
            ),
            _tuple("`not`: the negation of the value's truthiness.", _const("not"), _EXPR),
            _tuple("`and`: the left value when it is falsy, else the right one.", _const("and"), _EXPR, _EXPR),
            _tuple("`or`: the left value when it is truthy, else the right one.", _const("or"), _EXPR, _EXPR),
            _tuple(
                "`cmp`: compares two scalar values (Python semantics); a missing or non-scalar value defers.",
                _const("cmp"),
                {"enum": sorted(_plans._COMPARE)},
                _EXPR,
                _EXPR,
            ),
        ],
    ),
}

# ---------------------------------------------------------------- sections

ORIGIN = _s(
    ["object", "null"],
    "Where the value was declared in the sources (for messages only).",
    additionalProperties=False,
    required=["file", "line", "col"],
    properties={
        "file": _s("string", "Source file (display name)."),
        "line": _s("integer", "1-based line."),
        "col": _s("integer", "1-based column."),
        "role": _s("string", "The role (or template) that declared it."),
    },
)

SECTION = _s(
    "object",
    "A compiled section (docs/bundle-format.md, section 5). Fields that do not apply to its kind hold their defaults.",
    additionalProperties=False,
    required=["id", "kind", "priority", "trim", "message", "stability"],
    properties={
        "id": _s("string", "Unique in the role; reports and history turns name it."),
        "kind": _s(
            "string",
            "How the runtime fills it: static (`text`), template (`template` once), each/tools/history (`template` "
            "per item of the list at `path`; tools: `declared` first), rules (the `rules` lines whose conditions hold).",
            enum=list(_bundle.SECTION_KINDS),
        ),
        "priority": _s("integer", "Order of offering to the budget among trimmable sections: higher first, ties in document order."),
        "trim": _s(
            "string",
            "never: placed whole, over budget is PM830; drop: placed whole or dropped; items: a list keeps the items "
            "that fit; truncate: a body that does not fit is cut to what is left, with `truncate_marker`.",
            enum=list(_bundle.TRIM_POLICIES),
        ),
        "message": _s("string", "The chat message the text goes to on chat wires.", enum=list(_bundle.MESSAGE_ROLES)),
        "stability": _s(
            "string",
            "How often the text changes: stable sections form the cacheable prefix (cache breakpoints); no effect on text.",
            enum=list(_bundle.STABILITIES),
        ),
        "title": _s(["string", "null"], "A heading line: a present section's text is title, newline, body."),
        "title_tokens": _s("integer", "Tokens of `title` plus a newline, counted at compile time with the bundle's tokenizer."),
        "text": _s(["string", "null"], "static: the body, without the title."),
        "tokens": _s("integer", "static: tokens of `text`, counted at compile time with the bundle's tokenizer."),
        "template": _s(
            ["string", "null"],
            "Jinja source rendered in promptmill's sandbox: the body (template) or one item's text (each, tools, "
            "history). The rendered text loses leading newlines and trailing whitespace.",
        ),
        "plan": {
            "description": "`template` as plan steps proven to give Jinja's bytes; null: the section needs Jinja (a "
            "fallback section, which a runtime without Jinja must refuse). A plan may defer to Jinja on a render.",
            "anyOf": [{"type": "null"}, {"$ref": "#/$defs/plan"}],
        },
        "path": _s(
            "array",
            "each/tools/history: the list's path from the state's top; missing or null: no items; not a list: PM810.",
            items=_s("string"),
        ),
        "item_name": _s("string", "The template variable an item is bound to."),
        "item_separator": _s("string", "Text between two kept items."),
        "order_by": _s(
            "array",
            "Key path inside each item whose number orders the offering (finite numbers only; items without it come last).",
            items=_s("string"),
        ),
        "order_desc": _s("boolean", "With `order_by`: highest first when true; equal values keep list order."),
        "keep": _s(
            "string",
            "Without `order_by`: offer items from the start (first) or the end (last) of the list.",
            enum=["first", "last"],
        ),
        "step": _s("integer", "history: a trimmed history starts on an item index that is a multiple of step.", minimum=1),
        "declared": _s(
            "array",
            "tools: static tool declarations, offered before the state's tools.",
            items=_s(
                "object",
                "A tool declaration.",
                required=["name", "parameters"],
                properties={
                    "name": _s("string", "The tool's name (unique among the role's tools)."),
                    "description": _s("string", "What the tool does."),
                    "parameters": _s("object", "JSON Schema of the tool's arguments."),
                },
            ),
        ),
        "rules": _s(
            "array",
            "rules: the lines. The body is, per group in ascending order, the group's title (only when one of its lines "
            "is kept) and its kept lines joined by newlines; groups joined by a blank line when the section has titles.",
            items=_s(
                "object",
                "One line of a constraint set.",
                additionalProperties=False,
                required=["text", "group"],
                properties={
                    "text": _s("string", "The line's text."),
                    "group": _s("integer", "The constraint set it belongs to."),
                    "is_title": _s("boolean", "The set's title: shown only above a kept line of its group."),
                    "when": _condition_or_null("The line is kept when this holds (null: always)."),
                    "rule_id": _s("string", "The rule's id, for reports."),
                },
            ),
        ),
        "truncate_keep": _s("string", "truncate: which end of the body survives the cut.", enum=["head", "tail"]),
        "truncate_marker": _s("string", "truncate: the line placed where the body was cut (after head, before tail)."),
        "when": _condition_or_null("The section is filled only when this holds; else it is skipped (null: always)."),
        "fragment": _s(["string", "null"], "The fragment an injected section came from (reports and events only)."),
        "context": _s(
            ["object", "null"],
            "Injected sections: {position, layer, by, yields_to}, copied into context_injected/context_skipped events.",
        ),
        "origin": ORIGIN,
        "item_reads": _s(
            "string",
            "List sections (each, tools, history): what one item's text reads, proven by the compiler: item (the item "
            "alone and pure globals: a runtime may reuse an item's checked, rendered text for an equal item), "
            "item-without-score (the item alone through fixed fields, never the field it is ordered by: an item whose "
            "score alone changed renders the same), more (anything else: render it every time). Absent: not proven "
            "(older compilers); a runtime then treats it as more or proves it itself.",
            enum=list(_bundle.ITEM_READS),
        ),
    },
)

OUTPUT = _s(
    ["object", "null"],
    "The output contract (docs/bundle-format.md, section 14); null: none. Adds no prompt text of its own.",
    additionalProperties=False,
    required=["id", "style", "schema", "instructions"],
    properties={
        "id": _s("string", "The contract's id."),
        "style": _s(
            "string",
            "How the model is told to answer: returns, return_call (call the return tool), json, native (the provider's "
            "structured-output field carries `schema`).",
            enum=["returns", "return_call", "json", "native"],
        ),
        "schema": _s("object", "JSON Schema of the reply."),
        "instructions": _s("string", "The compiled answer instructions (already in a static section where the style needs them)."),
        "return_tool": _s(["object", "null"], "The structured-return tool: {name, description}."),
        "checks": _s("array", "Reply checks beyond JSON Schema (unique, references, acyclic, preserve).", items=_s("object")),
        "native": _s(
            ["object", "null"],
            "Provider forms of `schema`: openai_strict (null when not expressible) and gemini.",
        ),
        "origin": ORIGIN,
    },
)

BUDGET = _s(
    "object",
    "The role's token budget (docs/bundle-format.md, section 10): limit = (max_tokens - reserve, lowered by a "
    "render-time budget) less ceil(that * margin), divided by ratio.",
    additionalProperties=False,
    required=["max_tokens", "reserve"],
    properties={
        "max_tokens": _s("integer", "Tokens the prompt and the reply share (the context the role may use).", minimum=1),
        "reserve": _s("integer", "Tokens kept for the reply.", minimum=0),
        "margin": _s(["number", "null"], "Fraction of the room held back because counts are estimates; null: the wire's default."),
        "context_window": _s(["integer", "null"], "The model's context window when compile knew it (informative)."),
        "ratio": _s(
            "number",
            "The role's model's tokens per counted token, where its provider publishes no tokenizer (from data/models.json); absent: 1.",
            exclusiveMinimum=0,
        ),
        "origins": _s("object", "Where each value came from (text for reports).", additionalProperties=_s("string")),
    },
)

_ROLE_PROPERTIES: dict[str, Any] = {
    "format": {"const": _bundle.FORMAT, "description": "Identifies a role bundle."},
    "format_version": {
        "enum": [_bundle.FORMAT_VERSION, _bundle.PARENTS_FORMAT_VERSION],
        "description": "2 when the bundle has `parents` (a parent chosen at render time), else 1. A runtime refuses "
        "any other version with PM801.",
    },
    "id": _s("string", "The role's id (the manifest's key)."),
    "description": _s("string", "What the role is for (documentation)."),
    "category": _s("string", "The role's category, readable by conditions as `role.category`."),
    "model": _s(
        ["string", "null"],
        "The model the role is written for: its row of the model table decides ratio, limits and cache breakpoints.",
    ),
    "provider": _s(
        "string",
        "The wire a render uses when the caller names none and no model decides it.",
        enum=list(WIRE_NAMES),
    ),
    "tokenizer": _s(
        "string",
        "What counts tokens: o200k_base or cl100k_base (exact tiktoken encodings), approx (characters / 4, rounded "
        "up), or hf:PATH (a Hugging Face tokenizer.json, relative to the build folder).",
    ),
    "budget": BUDGET,
    "separator": _s("string", "Text between two sections in one message (or the one text)."),
    "tool_mode": _s(
        "string",
        "native: on chat wires, kept tools travel as the provider's declarations instead of prompt text.",
        enum=["inline", "native"],
    ),
    "cache": _s("boolean", "Whether wires that mark prompt-cache breakpoints may mark them."),
    "inputs": _s(
        "object",
        "JSON Schema of the render state, checked before filling (lists at `lazy_paths` item by item when offered); "
        "properties' `default` fills an absent template variable.",
    ),
    "sections": _s("array", "The sections, in document order.", items=SECTION),
    "output": OUTPUT,
    "lazy_paths": _s(
        "array",
        "State paths of lists checked item by item when the fit offers an item, not up front.",
        items=_s("array", "A path from the state's top.", items=_s("string")),
    ),
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
                                properties={"enum": _s("array", "The texts the field may hold.", minItems=1, items=_s("string"))},
                            ),
                            _s(
                                "object",
                                additionalProperties=False,
                                minProperties=1,
                                properties={
                                    "minLength": _s("integer", "The fewest code points the text may have.", minimum=0),
                                    "maxLength": _s("integer", "The most code points the text may have.", minimum=0),
                                },
                            ),
                        ]
                    },
                ),
                "required": _s("array", "Properties every item must have.", items=_s("string")),
                "others": _s("boolean", "Whether properties not named in `fields` may appear (holding any JSON data)."),
            },
        ),
    ),
    "events": _s(
        "array",
        "Events recorded at compile time (e.g. context_suppressed), placed first in every render's events.",
        items=_s("object", "An event: `type` and its fields."),
    ),
    "sources": _s(
        "array",
        "The source files the role was compiled from.",
        items=_s(
            "object",
            "A source file and its content hash.",
            additionalProperties=False,
            required=["file", "sha256"],
            properties={"file": _s("string", "Display name of the file."), "sha256": _s("string", "Hex SHA-256 of its bytes.")},
        ),
    ),
    "source_hash": _s("string", "Hex SHA-256 over the role's sources."),
    "default_parent": _s(["string", "null"], "Format 2: the parent of the role's `extends`, rendered when no candidate's condition holds."),
    "parents": _s(
        "array",
        "Format 2: candidate parents chosen at render time; the first whose `when` holds renders its `bundle` instead of this one.",
        minItems=1,
        items=_s(
            "object",
            "One candidate parent.",
            additionalProperties=False,
            required=["parent", "when", "bundle"],
            properties={
                "parent": _s("string", "The candidate parent role's id."),
                "when": {"$ref": "#/$defs/condition", "description": "The condition that picks this candidate."},
                "bundle": {
                    "$ref": "#",
                    "description": "The role compiled with this parent: a format 1 bundle without parents, of the same id.",
                },
            },
        ),
    ),
}

BUNDLE = {
    "$schema": DRAFT,
    "$id": BASE + "bundle.schema.json",
    "$comment": DOC,
    "title": "promptmill compiled role bundle",
    "description": "One role, compiled: what the runtime reads from build/roles/. Every object the reader builds is closed.",
    "type": "object",
    "additionalProperties": False,
    "required": ["format", "format_version", "id", "tokenizer", "budget", "separator", "sections", "inputs"],
    "properties": _ROLE_PROPERTIES,
    "$defs": {**CONDITION_DEFS, **PLAN_DEFS},
}

MANIFEST = {
    "$schema": DRAFT,
    "$id": BASE + "manifest.schema.json",
    "$comment": DOC,
    "title": "promptmill build manifest",
    "description": "build/manifest.json: the roles of a build, their bundle files and content hashes. Written last, after every bundle.",
    "type": "object",
    "additionalProperties": False,
    "required": ["format", "format_version", "promptmill_version", "roles"],
    "properties": {
        "format": {"const": _bundle.MANIFEST_FORMAT, "description": "Identifies a build manifest; anything else is PM801."},
        "format_version": {
            "const": _bundle.FORMAT_VERSION,
            "description": "The build format; a runtime refuses any other version with PM801.",
        },
        "promptmill_version": _s("string", "The promptmill that wrote the build (named when its format is refused)."),
        "roles": _s(
            "object",
            "Role id -> its bundle file.",
            additionalProperties=_s(
                "object",
                "One role's bundle.",
                additionalProperties=False,
                required=["file", "sha256", "source_hash"],
                properties={
                    "file": _s("string", "The bundle's path, relative to the build folder."),
                    "sha256": _s("string", "Hex SHA-256 of the bundle file's bytes; a runtime refuses a bundle that differs (PM801)."),
                    "source_hash": _s("string", "The bundle's `source_hash`."),
                    "sources": _s("array", "The source files the role depends on.", items=_s("string")),
                },
            ),
        ),
        "inputs": _s(
            "object",
            "Every source file and its SHA-256 (tells the compiler whether the build is up to date; a runtime ignores it).",
            additionalProperties=_s("string"),
        ),
        "tokenizers": _s(
            "object",
            "hf:<sha256> -> the relative path of a Hugging Face tokenizer.json the build ships.",
            additionalProperties=_s("string"),
        ),
        "abstract": _s(
            "array",
            "Ids of abstract roles (extended, never built); rendering one is PM802.",
            items=_s("string"),
        ),
    },
}
