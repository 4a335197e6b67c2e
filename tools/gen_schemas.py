"""Generate the JSON Schemas in compiler/promptmill/schemas/ (draft 2020-12).

The schemas are the definition of promptmill's template language: the compiler
validates every YAML file against them, editors use them for completion and
hover help, and docs/reference.md is generated from them. Edit this script,
then run `python tools/gen_schemas.py`; tests/test_schemas.py fails when the
committed JSON differs from what this script writes.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from promptmill.runtime.registry import WIRE_NAMES  # the wires a render takes: every `provider:` enum lists them

OUT = Path(__file__).resolve().parent.parent / "compiler" / "promptmill" / "schemas"
BASE = "https://promptmill.dev/schemas/"
DRAFT = "https://json-schema.org/draft/2020-12/schema"

ID_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9_.-]*(/[A-Za-z0-9][A-Za-z0-9_.-]*)*$"
SECTION_ID_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9_.-]*$"
PATH_PATTERN = r"^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z0-9_]+)*$"


def s(type_: str | list[str] | None = None, title: str = "", description: str = "", **kw):
    out: dict = {}
    if title:
        out["title"] = title
    if description:
        out["description"] = description
    if type_ is not None:
        out["type"] = type_
    out.update(kw)
    return out


def id_ref(title: str, description: str) -> dict:
    return s("string", title, description, pattern=ID_PATTERN, minLength=1, maxLength=200)


CONDITION = s(
    "object",
    "Condition",
    "A test on the render context. Either a comparison `{path, op, value}` or a combination "
    "`{any: [...]}`, `{all: [...]}`, `{not: {...}}`. Paths start with `state.` (the render "
    "state), `role.` (`role.id`, `role.category`), or are one of `model`, `provider`, `event`.",
    additionalProperties=False,
    minProperties=1,
    properties={
        "path": s(
            "string",
            "Path",
            "Dotted path into the render context, e.g. `state.subtask.id`, `role.category`, `model`, `event`.",
            minLength=1,
        ),
        "op": s(
            "string",
            "Operator",
            "Comparison: eq, ne, gt, gte, lt, lte, in (value is a list that holds the path's "
            "value), contains (the path's string or list holds the value), regex (the path's "
            "string matches the value, Python `re.search`), exists (the path is present and not "
            "null; value true/false, default true).",
            enum=["eq", "ne", "gt", "gte", "lt", "lte", "in", "contains", "regex", "exists"],
        ),
        "value": {"title": "Value", "description": "The value to compare against."},
        "any": s("array", "Any", "True when at least one condition holds.", items={"$ref": "#/$defs/condition"}, minItems=1),
        "all": s("array", "All", "True when every condition holds.", items={"$ref": "#/$defs/condition"}, minItems=1),
        "not": {"$ref": "#/$defs/condition", "title": "Not", "description": "True when the condition does not hold."},
    },
)

BUDGET = s(
    "object",
    "Budget",
    "Token budget. The prompt may use `max_tokens - reserve` tokens, counted with the "
    "tokenizer on exactly what is sent. A role can lower, never raise, what its parent, the "
    "project defaults and the model's context window allow.",
    additionalProperties=False,
    properties={
        "max_tokens": s("integer", "Max tokens", "Total tokens for prompt plus reply.", minimum=1, maximum=100_000_000),
        "reserve": s("integer", "Reserve", "Tokens kept free for the model's reply.", minimum=0, maximum=100_000_000),
        "tokenizer": s(
            "string",
            "Tokenizer",
            "How tokens are counted: `o200k_base` (default), `cl100k_base`, `approx` (about four "
            "characters a token, marked approximate in every report), or `hf:PATH` for a Hugging "
            "Face tokenizer.json (needs the `hf` extra).",
            minLength=1,
        ),
        "margin": s(
            "number",
            "Safety margin",
            "Fraction of the budget held back for providers whose own tokenizer differs from the "
            "counting tokenizer (Anthropic, Gemini). Default 0 for text/OpenAI, 0.1 for others.",
            minimum=0,
            maximum=0.5,
        ),
    },
)

FRAGMENT_REF = {
    "title": "Fragment reference",
    "description": "A fragment id, or `{id, wrap}` to choose XML wrapping for this use.",
    "anyOf": [
        id_ref("Fragment id", "Id of a `kind: fragment` template."),
        s(
            "object",
            additionalProperties=False,
            required=["id"],
            properties={
                "id": id_ref("Fragment id", "Id of a `kind: fragment` template."),
                "wrap": s("boolean", "Wrap", "Wrap in a PascalCase XML tag (default: the fragment's own `wrap`)."),
            },
        ),
    ],
}

CONTEXT = s(
    "object",
    "Context",
    "Fragments injected around the role's sections. Along an extends chain, context composes "
    "root-first and a fragment appears once (first occurrence wins).",
    additionalProperties=False,
    properties={
        "system": s("array", "System", "Fragments appended to the system message.", items=FRAGMENT_REF),
        "before": s("array", "Before", "Fragments placed before the role's first section.", items=FRAGMENT_REF),
        "after": s("array", "After", "Fragments placed after the role's last section.", items=FRAGMENT_REF),
        "suppress": s(
            "array",
            "Suppress",
            "Fragment ids (exact, no basename matching) to drop from what the extends chain and injection rules would add.",
            items=id_ref("Fragment id", "Exact id of a fragment to drop."),
        ),
    },
)

INJECT_RULE = s(
    "object",
    "Injection rule",
    "Injects a fragment when its event and condition match. Rules run by layer (0 user, 1 role, "
    "2 built-in, 3 project, 4 infrastructure; lower first), then in definition order.",
    additionalProperties=False,
    required=["fragment"],
    properties={
        "id": s("string", "Rule id", "A name for reports.", minLength=1),
        "event": s(
            "string",
            "Event",
            "`start` (a fresh conversation), `continue` (a continuation), or `any`.",
            enum=["start", "continue", "any"],
            default="any",
        ),
        "layer": s("integer", "Layer", "0 user, 1 role, 2 built-in, 3 project, 4 infrastructure.", minimum=0, maximum=4),
        "when": {"$ref": "#/$defs/condition", "title": "Condition", "description": "Inject only when this holds."},
        "fragment": id_ref("Fragment", "Id of the fragment to inject."),
        "position": s("string", "Position", "Where the fragment goes.", enum=["system", "before", "after"], default="before"),
        "wrap": s("boolean", "Wrap", "Wrap in a PascalCase XML tag (default: the fragment's own `wrap`)."),
    },
)

SECTION = s(
    "object",
    "Section",
    "One block of the prompt. Give exactly one source: `text`, `template`, `each` (with "
    "`template` per item), `constraints`, `output`, `fragment`, `history` or `tools` (and/or "
    "`declare`).",
    additionalProperties=False,
    required=["id"],
    properties={
        "id": s(
            "string", "Section id", "Unique within the role; children override or anchor on it.", pattern=SECTION_ID_PATTERN, maxLength=100
        ),
        "title": s(
            "string",
            "Title",
            "A header line printed above the content; it disappears with the section when the section is empty or dropped.",
        ),
        "description": s("string", "Description", "Documentation for authors; never sent to the model."),
        "text": s("string", "Static text", "Literal text, sent as is (no Jinja). Counted at compile time."),
        "template": s(
            "string",
            "Jinja template",
            "Jinja source filled from the render state. With `each`, `tools` or `history` it is "
            "the per-item template. A template that uses no state is rendered at compile time.",
        ),
        "each": s(
            "string",
            "Each",
            "Dotted path of a list in the render state; `template` is rendered once per item (the item is bound to `as`, default `item`).",
            pattern=PATH_PATTERN,
        ),
        "as": s(
            "string", "Item name", "Variable name of the current item in `template` (default `item`).", pattern=r"^[A-Za-z_][A-Za-z0-9_]*$"
        ),
        "item_separator": s("string", "Item separator", "Text placed between items (default a newline)."),
        "order_by": {
            "title": "Order by",
            "description": "Item key that ranks items for trimming: the lowest score is dropped "
            "first; kept items stay in their original order. A string (descending: higher is "
            "more important) or `{key, order}`.",
            "anyOf": [
                s("string", pattern=r"^[A-Za-z0-9_]+(\.[A-Za-z0-9_]+)*$"),
                s(
                    "object",
                    additionalProperties=False,
                    required=["key"],
                    properties={
                        "key": s("string", "Key", "Item key holding a number.", pattern=r"^[A-Za-z0-9_]+(\.[A-Za-z0-9_]+)*$"),
                        "order": s(
                            "string",
                            "Order",
                            "`desc`: higher scores are kept first (default); `asc`: lower scores are kept first.",
                            enum=["asc", "desc"],
                        ),
                    },
                ),
            ],
        },
        "keep": s(
            "string",
            "Keep",
            "Without `order_by`, which end of the list survives trimming: `first` (default) or `last` (default for `history`).",
            enum=["first", "last"],
        ),
        "step": s(
            "integer",
            "Trim step",
            "For `history`: drop old turns in blocks of this many so the kept prefix stays the "
            "same across consecutive turns and provider prompt caches keep hitting (default 1).",
            minimum=1,
            maximum=1000,
        ),
        "constraints": s(
            "array",
            "Constraint sets",
            "Ids of `kind: constraints` sets, rendered as lists under each set's title. A rule id "
            "that two sets share is rendered once (first wins).",
            items=id_ref("Constraint set id", "Id of a constraint set."),
            minItems=1,
        ),
        "output": s("boolean", "Output instructions", "Render the role's output contract instructions here.", const=True),
        "fragment": id_ref("Fragment", "Id of a fragment to inline here."),
        "wrap": s("boolean", "Wrap", "For `fragment`: wrap in a PascalCase XML tag (default: the fragment's own `wrap`)."),
        "history": s(
            "string",
            "History",
            "Dotted path of the conversation in the render state: a list of `{role: user|assistant, "
            "content}`. The newest turns that fit are kept.",
            pattern=PATH_PATTERN,
        ),
        "tools": s(
            "string",
            "Tools",
            "Dotted path of tool declarations in the render state: a list of `{name, description, "
            "parameters}` where parameters is a JSON Schema. Inlined as text or sent natively "
            "(see the role's `tool_mode`).",
            pattern=PATH_PATTERN,
        ),
        "declare": s(
            "array",
            "Declared tools",
            "Static tool declarations of a tools section, sent before the state's tools (a section "
            "may have `declare`, `tools` or both). Each parameters schema is checked at compile time.",
            minItems=1,
            items=s(
                "object",
                "Tool declaration",
                "One tool: name, description and a JSON Schema (type object) of its arguments.",
                additionalProperties=False,
                required=["name", "parameters"],
                properties={
                    "name": s("string", "Name", "1-64 letters, digits, `_` or `-`.", pattern=r"^[A-Za-z0-9_-]{1,64}$"),
                    "description": s("string", "Description", "What the tool does (sent to the model)."),
                    "parameters": s("object", "Parameters", "JSON Schema (draft 2020-12) of the arguments; `type: object` at the top."),
                },
            ),
        ),
        "priority": s(
            "integer",
            "Priority",
            "Higher survives longer: when over budget, the lowest priority is trimmed first "
            "(default 50; ties trim the later section first).",
            minimum=-1000000,
            maximum=1000000,
        ),
        "trim": s(
            "string",
            "Trim policy",
            "`never` (never touched; rendering fails if these alone exceed the budget), `drop` "
            "(removed whole), `items` (loses items, lowest score first), `truncate` (cut at a "
            "token boundary with a visible marker). Default: `never` for static sections, "
            "`items` for lists, `drop` otherwise.",
            enum=["never", "drop", "items", "truncate"],
        ),
        "truncate": s(
            "object",
            "Truncation",
            "How a `trim: truncate` section is cut.",
            additionalProperties=False,
            properties={
                "keep": s("string", "Keep", "`head` keeps the beginning (default), `tail` the end.", enum=["head", "tail"]),
                "marker": s("string", "Marker", "Visible text put where content was cut (default `[…truncated]`)."),
            },
        ),
        "when": {"$ref": "#/$defs/condition", "title": "When", "description": "Include the section only when this condition holds."},
        "message": s(
            "string",
            "Message role",
            "Chat message this section goes into. Default: `system` for the stable prefix (every "
            "section up to the first one that depends on state), `user` after it.",
            enum=["system", "user", "assistant"],
        ),
        "stability": s(
            "string",
            "Stability",
            "`stable` (no state: cacheable), `semi` (changes rarely: memory, summaries), `dynamic`. "
            "Inferred when omitted; a section that uses state cannot be declared stable.",
            enum=["stable", "semi", "dynamic"],
        ),
        "before": s(
            "string",
            "Insert before",
            "In a child role: insert this new section before the inherited section with this id.",
            pattern=SECTION_ID_PATTERN,
        ),
        "after": s(
            "string",
            "Insert after",
            "In a child role: insert this new section after the inherited section with this id.",
            pattern=SECTION_ID_PATTERN,
        ),
        "remove": s("boolean", "Remove", "In a child role: remove the inherited section with this id.", const=True),
    },
)

COMMON_DEFS = {"condition": CONDITION}


def doc(kind: str, title: str, description: str, properties: dict, required: list[str], defs: dict | None = None) -> dict:
    props = {
        "$schema": s("string", "Schema", "Optional URI of this schema (editors use it)."),
        "kind": s("string", "Kind", f"Always `{kind}` for this template kind.", const=kind),
    }
    props.update(properties)
    out = {
        "$schema": DRAFT,
        "$id": BASE + f"{kind}.schema.json",
        "title": title,
        "description": description,
        "type": "object",
        "additionalProperties": False,
        "required": ["kind", *required],
        "properties": props,
    }
    if defs:
        out["$defs"] = defs
    return out


ROLE = doc(
    "role",
    "promptmill role",
    "One prompt: ordered sections filled from a render state and trimmed to a token budget.",
    {
        "id": id_ref("Role id", "Unique id, used by `promptmill render ID` and `Runtime.render(ID, ...)`."),
        "description": s("string", "Description", "What the role is for (shown by `promptmill stats`; never sent)."),
        "category": s("string", "Category", "A free label conditions can test as `role.category`."),
        "abstract": s("boolean", "Abstract", "A base role meant only to be extended: checked, but not written to the build."),
        "extends": id_ref("Extends", "Id of a parent role: sections, inputs, budget, context and output are inherited root-first."),
        "extends_when": s(
            "array",
            "Parent chosen at render time",
            "Candidate parents, each with a condition on the render state (`state.*`, `model`, `provider`, `event`, `role.*`): "
            "the runtime extends the first whose condition holds, else `extends` (or no parent). Every candidate chain is "
            "compiled and checked ahead of time.",
            minItems=1,
            items=s(
                "object",
                "Candidate parent",
                additionalProperties=False,
                required=["role", "when"],
                properties={
                    "role": id_ref("Parent", "Id of the candidate parent role."),
                    "when": {"$ref": "#/$defs/condition", "title": "Condition", "description": "Extend this parent when it holds."},
                },
            ),
        ),
        "model": s(
            "string",
            "Model",
            "Model name (e.g. `gpt-4o`, `claude-sonnet-4`): sets the tokenizer, the wire when no `provider` is given,"
            " and caps the budget at the model's context window.",
            minLength=1,
        ),
        "provider": s(
            "string",
            "Default provider",
            "Wire format `render` fits the budget for when none is given; without it, the role's `model` decides (its provider's wire).",
            enum=list(WIRE_NAMES),
        ),
        "budget": BUDGET,
        "separator": s("string", "Separator", "Text placed between sections (default a blank line)."),
        "inputs": s(
            "object",
            "Inputs schema",
            "A JSON Schema (draft 2020-12) of the render state. Templates may use only the top-level properties declared here.",
        ),
        "context": CONTEXT,
        "output": id_ref("Output contract", "Id of a `kind: output` contract: instructs the model and checks its reply."),
        "tool_mode": s(
            "string",
            "Tool mode",
            "`inline`: tool declarations are written into the prompt as text; `native`: sent as the "
            "provider's tool declarations (counted in the budget all the same). Default `inline`.",
            enum=["inline", "native"],
        ),
        "cache": s(
            "boolean",
            "Prompt caching",
            "Mark the end of the stable prefix as a cache breakpoint (Anthropic `cache_control`). Default true.",
        ),
        "inject": s("array", "Injection rules", "Conditional fragment injections for this role (layer 1 by default).", items=INJECT_RULE),
        "examples": s(
            "array",
            "Example states",
            "Render-state files (`.yaml`, `.yml` or `.json`), relative to this role file, that `promptmill snapshot`, `test` "
            "and `diff` render this role with, besides the `ROLE.state.*` files named after it. Not inherited by child roles; "
            "a file that does not exist, or lies outside the project, is PM011.",
            items=s("string", minLength=1),
            uniqueItems=True,
        ),
        "sections": s("array", "Sections", "The prompt's sections, in order.", items=SECTION),
    },
    ["id"],
    {"condition": CONDITION, "section": SECTION},
)
# sections use $defs/section for readability
ROLE["properties"]["sections"]["items"] = {"$ref": "#/$defs/section"}

CONSTRAINTS = doc(
    "constraints",
    "promptmill constraint set",
    "A named, reusable list of rules that roles include by id.",
    {
        "id": id_ref("Set id", "Unique id roles use in a section's `constraints:` list."),
        "title": s("string", "Title", "Heading printed above the rules (omit for none)."),
        "description": s("string", "Description", "What the set covers (never sent)."),
        "rules": s(
            "array",
            "Rules",
            "The rules, in order.",
            minItems=1,
            items=s(
                "object",
                "Rule",
                "One rule: rendered as a list item.",
                additionalProperties=False,
                required=["id", "text"],
                properties={
                    "id": s(
                        "string", "Rule id", "Unique in the set; a rule id seen in an earlier set is skipped.", pattern=SECTION_ID_PATTERN
                    ),
                    "text": s("string", "Text", "The rule as the model reads it.", minLength=1),
                    "when": {"$ref": "#/$defs/condition", "title": "When", "description": "Include the rule only when this holds."},
                },
            ),
        ),
    },
    ["id", "rules"],
    COMMON_DEFS,
)

OUTPUT_FIELD = s(
    "object",
    "Output field",
    "One declared output.",
    additionalProperties=False,
    required=["name"],
    properties={
        "name": s("string", "Name", "Field name in the reply.", pattern=r"^[A-Za-z_][A-Za-z0-9_]*$"),
        "description": s("string", "Description", "What the field holds (shown to the model)."),
        "type": s(
            "string", "Type", "JSON type of the field (default string).", enum=["string", "number", "integer", "boolean", "object", "array"]
        ),
        "required": s("boolean", "Required", "The reply must contain the field (default false)."),
    },
)

CHECK = s(
    "object",
    "Reply check",
    "A check beyond JSON Schema. `unique`: values at `path` are distinct. `references`: every "
    "value at `path` occurs among the values at `target`. `acyclic`: the graph of `nodes` "
    "(list path) with `key` and `edges` has no cycle. `preserve`: items of the render state "
    "list `from` that match `where` reappear unchanged in the reply list `into`, matched by "
    "`key`. Paths use dots and `[]` for every element, e.g. `subtasks[].id`.",
    additionalProperties=False,
    required=["check"],
    properties={
        "check": s("string", "Check", "Which check.", enum=["unique", "references", "acyclic", "preserve"]),
        "path": s("string", "Path", "Reply path of the values (unique, references)."),
        "target": s("string", "Target", "Reply path of the allowed values (references)."),
        "nodes": s("string", "Nodes", "Reply path of the list of nodes (acyclic)."),
        "key": s("string", "Key", "Item key that identifies a node or item (acyclic, preserve)."),
        "edges": s("string", "Edges", "Item key holding the list of keys a node depends on (acyclic)."),
        "from": s("string", "From", "Render-state path of the list to preserve, e.g. `state.plan.subtasks` (preserve)."),
        "into": s("string", "Into", "Reply path of the list that must contain them (preserve)."),
        "where": {
            "$ref": "#/$defs/condition",
            "title": "Where",
            "description": "Which state items must be preserved; paths are relative to the item (preserve).",
        },
        "message": s("string", "Message", "Custom message when the check fails."),
    },
)

OUTPUT = doc(
    "output",
    "promptmill output contract",
    "The shape of the model's reply: how the prompt describes it and how `parse_reply` checks it.",
    {
        "id": id_ref("Contract id", "Unique id roles name in `output:`."),
        "description": s("string", "Description", "What the reply is (never sent unless used in `instructions`)."),
        "style": s(
            "string",
            "Prompt style",
            "`returns`: a `<returns>` block listing the outputs; `return_call`: an instruction to "
            "call a structured-return tool with the outputs as parameters; `json`: respond with "
            "only a JSON object, with an example; `native`: no prose, the provider's "
            "structured-output field carries the schema.",
            enum=["returns", "return_call", "json", "native"],
        ),
        "schema": s("object", "Reply schema", "JSON Schema (draft 2020-12) of the reply. Derived from `outputs` when omitted."),
        "outputs": {
            "title": "Outputs",
            "description": "The reply's fields: a list of `{name, description, type, required}` or a mapping name -> description.",
            "anyOf": [
                s("array", items=OUTPUT_FIELD, minItems=1),
                s(
                    "object",
                    additionalProperties={
                        "anyOf": [
                            s("string"),
                            s(
                                "object",
                                "Output",
                                "A description with a type: the placeholder's type label is shown only when a type is given.",
                                additionalProperties=False,
                                properties={k: v for k, v in OUTPUT_FIELD["properties"].items() if k != "name"},
                            ),
                        ]
                    },
                    minProperties=1,
                ),
            ],
        },
        "instructions": s("string", "Instructions", "Prose placed before the generated format description."),
        "example": {"title": "Example", "description": "Example reply for the `json` style (generated from the schema when omitted)."},
        "return_tool": s(
            "object",
            "Return tool",
            "Name and description of the structured-return tool (`return_call` style, and forced tool output on Anthropic).",
            additionalProperties=False,
            properties={
                "name": s("string", "Name", "Tool name (default `return_result`).", pattern=r"^[A-Za-z_][A-Za-z0-9_-]{0,63}$"),
                "description": s("string", "Description", "Tool description."),
            },
        ),
        "checks": s("array", "Checks", "Checks beyond JSON Schema, run by `parse_reply`.", items=CHECK),
        "call": s(
            "object",
            "Call wording",
            "How the `return_call` instruction words the call. `lead`, `call` and the placeholders may use `{tool}`; "
            "`call` uses `{arguments}` (the object of placeholders); `placeholder` and `placeholder_bare` "
            "use `{name}`, `{description}`, `{type}`, `{text}` (description, or the name without one), "
            "`{type_label}` (` (type)`, empty when no type was given) and `{required}` (` [required]` or empty). "
            "Other braces are literal.",
            additionalProperties=False,
            properties={
                "lead": s(
                    "string",
                    "Lead sentence",
                    "The line before the call (default: When you have finished, "
                    "return your results by calling the `{tool}` tool with these arguments:).",
                ),
                "call": s(
                    "string",
                    "Call",
                    'The call around the arguments, e.g. `rye_execute(item_id="x", parameters={arguments})` '
                    "(default `{tool}({arguments})`). It is written between backticks.",
                    minLength=1,
                ),
                "placeholder": s(
                    "string", "Placeholder", "One field's placeholder value (default `<{text}{type_label}{required}>`).", minLength=1
                ),
                "placeholder_bare": s(
                    "string",
                    "Placeholder without description",
                    "A field's placeholder when it has no description (default: `placeholder`).",
                    minLength=1,
                ),
                "required_mark": s("string", "Required mark", "What `{required}` stands for on a required field (default ` [required]`)."),
            },
        ),
    },
    ["id"],
    COMMON_DEFS,
)

FRAGMENT = doc(
    "fragment",
    "promptmill fragment",
    "A reusable block of text (a knowledge item) injected through a role's `context` or a section's `fragment`.",
    {
        "id": id_ref("Fragment id", "Unique id, e.g. `agent/core/identity`."),
        "name": s(
            "string",
            "Name",
            "Name of the XML tag the fragment is wrapped in (PascalCase of this, or of the id's last segment when omitted).",
            minLength=1,
        ),
        "description": s("string", "Description", "What the fragment holds (never sent)."),
        "type": s("string", "Type", "Value of the wrapper's `type` attribute (default `fragment`).", pattern=r"^[A-Za-z][A-Za-z0-9_-]*$"),
        "wrap": s("boolean", "Wrap", "Wrap in `<Name id=... type=...>` tags by default (default true)."),
        "text": s("string", "Text", "The fragment's content, sent as is.", minLength=1),
    },
    ["id", "text"],
)

MODEL_ROW = s(
    "object",
    "Model row",
    "One model family: which ids it matches, who serves it, how its tokens are counted, its limits and where the figures come "
    "from. See `promptmill models` and docs/providers.md, 'Models'.",
    additionalProperties=False,
    required=["pattern", "provider", "context_window"],
    properties={
        "pattern": s(
            "string",
            "Pattern",
            "A model id, or a prefix ending in `*` (`claude-opus-4-7*`). The most specific pattern matching a model wins; "
            "a row with a shipped row's pattern replaces it.",
            pattern=r"^[^*\s]+\*?$",
        ),
        "provider": s(
            "string",
            "Provider",
            "Who serves the model: the wire a render for it fits for unless one is given.",
            enum=["openai", "anthropic", "gemini"],
        ),
        "counting": s(
            "object",
            "Counting",
            "How its tokens are counted: `encoding` (default `o200k_base`), times `ratio` where the provider publishes no tokenizer.",
            additionalProperties=False,
            properties={
                "encoding": s("string", "Encoding", "The shipped encoding that counts.", enum=["o200k_base", "cl100k_base"]),
                "ratio": s(
                    "number",
                    "Ratio",
                    "The provider's tokens per counted token, measured (absent: 1, exact for OpenAI).",
                    exclusiveMinimum=0,
                    maximum=10,
                ),
            },
        ),
        "context_window": s("integer", "Context window", "Tokens of prompt plus reply the model takes.", minimum=1, maximum=100000000),
        "max_output_tokens": s("integer", "Max output tokens", "The longest reply the model writes.", minimum=1, maximum=100000000),
        "cache": s(
            "object",
            "Prompt cache",
            "The provider's prompt-cache rules for the model.",
            additionalProperties=False,
            properties={
                "min_tokens": s("integer", "Minimum cacheable tokens", "The shortest prefix the provider caches.", minimum=0),
                "breakpoints": s("integer", "Breakpoints", "Explicit cache points a request may carry (0: automatic).", minimum=0),
            },
        ),
        "structured_output": s("boolean", "Native structured output", "Whether the model takes a JSON Schema for its reply."),
        "source": s("string", "Source", "Where the figures come from: a documentation page, or the measurement behind a ratio."),
    },
)

PROJECT = {
    "$schema": DRAFT,
    "$id": BASE + "project.schema.json",
    "title": "promptmill project (promptmill.yaml)",
    "description": "Project settings: where templates and the build live, defaults for every role, and the search path.",
    "type": "object",
    "additionalProperties": False,
    "properties": {
        "$schema": s("string", "Schema", "Optional URI of this schema."),
        "prompts": s("string", "Prompts folder", "Folder of the project's templates (default `prompts`).", minLength=1),
        "build": s("string", "Build folder", "Where `promptmill compile` writes bundles (default `build`).", minLength=1),
        "snapshots": s(
            "string",
            "Snapshots folder",
            "Where `promptmill snapshot` writes the rendered examples `promptmill test` compares (default `snapshots`).",
            minLength=1,
        ),
        "tokenizer": s("string", "Default tokenizer", "Tokenizer for roles that name none (default `o200k_base`).", minLength=1),
        "model": s("string", "Default model", "Model for roles that name none.", minLength=1),
        "provider": s(
            "string",
            "Default provider",
            "Wire format render fits for by default, where it can serve the role's model; a role whose model it cannot"
            " serve renders for the model's own wire (no model, or none set: `text`).",
            enum=list(WIRE_NAMES),
        ),
        "models": s("array", "Models", "Rows added to promptmill's model table, or replacing its rows (same pattern).", items=MODEL_ROW),
        "budget": BUDGET,
        "runtimes": s(
            "array",
            "Runtimes",
            "The runtimes that render this project's builds. With `typescript` listed, a template that needs Jinja (one the"
            " compiler cannot turn into a plan) is an error, PM411, instead of a role only Python can render. Default: [python].",
            items={"enum": ["python", "typescript"]},
            minItems=1,
            uniqueItems=True,
        ),
        "search_path": s(
            "array",
            "Search path",
            "More template folders searched after the prompts folder and before the user folder and the shipped library; first match wins.",
            items=s("string", minLength=1),
        ),
        "library": s("boolean", "Shipped library", "Search the library shipped with promptmill last (default true)."),
        "user_dir": s(
            "boolean", "User folder", "Search the user folder (PROMPTMILL_USER_DIR, default under the user's config dir) (default true)."
        ),
        "inject": s("array", "Injection rules", "Project-wide conditional fragment injections (layer 3 by default).", items=INJECT_RULE),
        "exclude": s(
            "array",
            "Exclude",
            "Glob patterns (relative to the prompts folder) of YAML files that are not templates, e.g. example states.",
            items=s("string", minLength=1),
        ),
        "types": s(
            "object",
            "Types module",
            "The typed module `promptmill types` writes for application code; `promptmill compile --check` fails when it is stale.",
            additionalProperties=False,
            required=["path"],
            properties={
                "path": s(
                    "string", "Path", "Where the module is, relative to this file (e.g. `app/promptmill_types.py`).", pattern=r"\.py$"
                ),
            },
        ),
    },
    "$defs": COMMON_DEFS,
}


def main(check: bool = False) -> int:
    from promptmill_bundle_schema import BUNDLE, MANIFEST

    files = {
        "role.schema.json": ROLE,
        "constraints.schema.json": CONSTRAINTS,
        "output.schema.json": OUTPUT,
        "fragment.schema.json": FRAGMENT,
        "project.schema.json": PROJECT,
        "bundle.schema.json": BUNDLE,
        "manifest.schema.json": MANIFEST,
    }
    stale = []
    for name, schema in files.items():
        text = json.dumps(schema, indent=2, ensure_ascii=False) + "\n"
        path = OUT / name
        if check:
            if not path.exists() or path.read_text(encoding="utf-8") != text:
                stale.append(name)
        else:
            path.write_text(text, encoding="utf-8")
    if stale:
        print("stale schemas: " + ", ".join(stale), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    raise SystemExit(main(check="--check" in sys.argv))
