"""What each wire's structured output does with each JSON Schema constraint keyword, as data.

A profile sorts the value-constraint keywords a contract may use (`CONSTRAINTS`) into
- `enforced`: the provider's constrained decoding keeps the reply inside it;
- `dropped`: accepted in the request and silently not enforced (promptmill leaves it in);
- `rejected`: the request fails with a 400, so promptmill removes it before sending.
A keyword a wire drops or rejects is *lost* on that wire: the prompt states it instead
(compose/contracts.py, `limit_sections`), lint lists it (PM708), and `parse_reply` still
checks every reply against the full original schema. Structural keywords (`allOf`, `not`,
`if`, `patternProperties`, free-form objects) are the schema forms' business (PM705).

Profiles are keyed by wire name (`WIRE_PROFILES`); a wire not listed falls back by its
`schema_form` and `provider` (`profile_for`). Sources are in each profile and in
docs/providers.md ("Output contracts").
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any, Protocol

from .schemaforms import JSON_SCHEMA_STRICT, OPENAPI_SUBSET


class WireTraits(Protocol):
    """What a profile is chosen by: the attributes of a `Wire` (runtime/wire.py) read here."""

    @property
    def name(self) -> str: ...
    @property
    def provider(self) -> str: ...
    @property
    def single(self) -> bool: ...
    @property
    def schema_form(self) -> str | None: ...
    @property
    def contract_as_tool(self) -> bool: ...


# the value constraints a profile sorts (`format` is left out: parse_reply does not assert formats)
CONSTRAINTS = (
    "minLength",
    "maxLength",
    "pattern",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "multipleOf",
    "minItems",
    "maxItems",
    "uniqueItems",
    "minProperties",
    "maxProperties",
)


@dataclass(frozen=True)
class Profile:
    """One structured-output dialect: what it does with each keyword of `CONSTRAINTS`."""

    name: str
    enforced: frozenset[str]
    dropped: frozenset[str]
    rejected: frozenset[str]
    sources: tuple[str, ...]
    # keyword -> the largest value the dialect enforces; a larger one is rejected (Anthropic: minItems 0 or 1)
    rejected_above: tuple[tuple[str, int], ...] = ()

    def fate(self, keyword: str, value: Any = None) -> str:
        """What the dialect does with one keyword (and its value): "enforced", "dropped" or "rejected"."""
        for key, limit in self.rejected_above:
            if key == keyword and isinstance(value, (int, float)) and not isinstance(value, bool) and value > limit:
                return "rejected"
        if keyword in self.rejected:
            return "rejected"
        if keyword in self.dropped:
            return "dropped"
        return "enforced"


def _profile(name: str, *, dropped: tuple[str, ...] = (), rejected: tuple[str, ...] = (), sources: tuple[str, ...], **kw: Any) -> Profile:
    lost = set(dropped) | set(rejected)
    return Profile(name, frozenset(k for k in CONSTRAINTS if k not in lost), frozenset(dropped), frozenset(rejected), sources, **kw)


OPENAI_STRICT = _profile(
    "openai-strict",
    # strict mode refuses these ("not permitted"); schemaforms.openai_strict leaves them out
    rejected=("minLength", "maxLength", "uniqueItems", "minProperties", "maxProperties"),
    sources=(
        "https://platform.openai.com/docs/guides/structured-outputs#supported-schemas",
        "https://github.com/mastra-ai/mastra/issues/23321",
    ),
)
ANTHROPIC_STRICT = _profile(
    "anthropic-strict",
    # structured outputs (output_config.format) and strict tools answer 400 to these; minItems only 0 or 1
    rejected=(
        "minLength",
        "maxLength",
        "pattern",
        "minimum",
        "maximum",
        "exclusiveMinimum",
        "exclusiveMaximum",
        "multipleOf",
        "maxItems",
        "uniqueItems",
        "minProperties",
        "maxProperties",
    ),
    rejected_above=(("minItems", 1),),
    sources=(
        "https://docs.claude.com/en/docs/build-with-claude/structured-outputs#json-schema-limitations",
        "https://github.com/vercel/ai/issues/14342",
        "https://github.com/vercel/ai/pull/14372",
        "https://github.com/laravel/ai/issues/715",
    ),
)
GEMINI = _profile(
    "gemini",
    # Schema has fields for these, but response_schema does not constrain decoding with them
    dropped=("pattern", "minLength", "maxLength", "minProperties", "maxProperties"),
    # no field in Gemini's Schema object (an unknown field is a 400); schemaforms.gemini_schema leaves them out
    rejected=("exclusiveMinimum", "exclusiveMaximum", "multipleOf", "uniqueItems"),
    sources=(
        "https://ai.google.dev/api/caching#Schema",
        "https://ai.google.dev/gemini-api/docs/structured-output#json-schemas",
        "https://github.com/vercel/ai/pull/18325",
    ),
)
BEDROCK_CONVERSE = _profile(
    "bedrock-converse",
    # Converse structured outputs and strict tools take the Anthropic subset; uniqueItems, maxItems, minimum seen as 400s
    rejected=tuple(sorted(ANTHROPIC_STRICT.rejected)),
    rejected_above=(("minItems", 1),),
    sources=(
        "https://docs.aws.amazon.com/bedrock/latest/userguide/structured-output.html",
        "https://github.com/mastra-ai/mastra/issues/23321",
        "https://github.com/vercel/ai/pull/17558",
        "https://github.com/MattJColes/lgtmaybe/issues/531",
    ),
)
PROFILES = {p.name: p for p in (OPENAI_STRICT, ANTHROPIC_STRICT, GEMINI, BEDROCK_CONVERSE)}

# wire name -> profile name
WIRE_PROFILES = {
    "openai": OPENAI_STRICT.name,
    "openai-responses": OPENAI_STRICT.name,
    "anthropic": ANTHROPIC_STRICT.name,
    "anthropic-bedrock": ANTHROPIC_STRICT.name,
    "anthropic-vertex": ANTHROPIC_STRICT.name,
    "gemini": GEMINI.name,
    "gemini-vertex": GEMINI.name,
    "bedrock": BEDROCK_CONVERSE.name,
}
_BY_FORM = {JSON_SCHEMA_STRICT: OPENAI_STRICT.name, OPENAPI_SUBSET: GEMINI.name}
_BY_PROVIDER = {"anthropic": ANTHROPIC_STRICT.name, "aws": BEDROCK_CONVERSE.name, "bedrock": BEDROCK_CONVERSE.name}


def carries_contract(wire: WireTraits) -> bool:
    """Whether the wire sends a native contract natively (a structured-output field or a forced tool)."""
    return not wire.single and (wire.schema_form is not None or wire.contract_as_tool)


def profile_for(wire: WireTraits) -> Profile | None:
    """The wire's profile: by its name, else by its schema form, else by its provider (None: none fits)."""
    name = WIRE_PROFILES.get(wire.name)
    if name is None and wire.schema_form is not None:
        name = _BY_FORM.get(wire.schema_form)
    if name is None and wire.contract_as_tool:
        name = _BY_PROVIDER.get(wire.provider)
    return PROFILES.get(name) if name is not None else None


# -- walking a schema ----------------------------------------------------------
_SUBSCHEMA_MAPS = ("properties", "$defs", "definitions", "patternProperties", "dependentSchemas")
_SUBSCHEMA_LISTS = ("anyOf", "oneOf", "allOf", "prefixItems")
_SUBSCHEMA_ONE = ("items", "additionalProperties", "not", "if", "then", "else", "contains", "propertyNames")


def _children(schema: dict, path: str) -> list[tuple[Any, str]]:
    """The subschemas of `schema` with the reply path each describes (`[]`: each item, `.*`: any other key)."""
    out: list[tuple[Any, str]] = []
    for key in _SUBSCHEMA_MAPS:
        sub = schema.get(key)
        if isinstance(sub, dict):
            out += [(v, f"{path}.{k}" if key == "properties" else f"{path}.{key}.{k}") for k, v in sub.items()]
    for key in _SUBSCHEMA_LISTS:
        sub = schema.get(key)
        if isinstance(sub, list):
            out += [(v, f"{path}[{i}]" if key == "prefixItems" else path) for i, v in enumerate(sub)]
    for key in _SUBSCHEMA_ONE:
        sub = schema.get(key)
        if isinstance(sub, dict):
            out.append((sub, {"items": f"{path}[]", "additionalProperties": f"{path}.*"}.get(key, f"{path}.{key}")))
    return out


def lost_keywords(schema: Any, profile: Profile, path: str = "reply") -> list[tuple[str, str, Any, str]]:
    """`(path, keyword, value, fate)` for each constraint the profile drops or rejects, in schema order."""
    if not isinstance(schema, dict):
        return []
    out = []
    for key in CONSTRAINTS:
        if key in schema:
            fate = profile.fate(key, schema[key])
            if fate != "enforced" and not (key == "uniqueItems" and schema[key] is not True):
                out.append((path, key, schema[key], fate))
    for sub, where in _children(schema, path):
        out += lost_keywords(sub, profile, where)
    return out


def without_rejected(schema: Any, profile: Profile) -> Any:
    """`schema` with every keyword the profile rejects removed (a new object; dropped ones are left in)."""
    if not isinstance(schema, dict):
        return copy.deepcopy(schema)
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if key in CONSTRAINTS and profile.fate(key, value) == "rejected":
            continue
        if key in _SUBSCHEMA_MAPS and isinstance(value, dict):
            out[key] = {k: without_rejected(v, profile) for k, v in value.items()}
        elif key in _SUBSCHEMA_LISTS and isinstance(value, list):
            out[key] = [without_rejected(v, profile) for v in value]
        elif key in _SUBSCHEMA_ONE and isinstance(value, dict):
            out[key] = without_rejected(value, profile)
        else:
            out[key] = copy.deepcopy(value)
    return out
