"""Provider forms of JSON Schemas: OpenAI strict mode and Gemini's Schema subset."""

from __future__ import annotations

import jsonschema

from promptmill.runtime.schemaforms import gemini_schema, openai_strict

PLAN = {
    "type": "object",
    "additionalProperties": False,
    "required": ["subtasks"],
    "properties": {
        "subtasks": {
            "type": "array",
            "minItems": 1,
            "items": {
                "type": "object",
                "required": ["id"],
                "properties": {
                    "id": {"type": "string", "maxLength": 40},
                    "status": {"enum": ["todo", "done"]},
                    "depends_on": {"type": "array", "items": {"$ref": "#/$defs/ref"}},
                },
            },
        },
        "note": {"type": ["string", "null"]},
    },
    "$defs": {"ref": {"type": "string", "description": "a subtask id"}},
}


def test_openai_strict_requires_everything_and_makes_optional_fields_nullable():
    strict, problems = openai_strict(PLAN)
    assert problems == []
    item = strict["properties"]["subtasks"]["items"]
    assert item["required"] == ["id", "status", "depends_on"]
    assert item["additionalProperties"] is False
    assert item["properties"]["status"] == {"type": ["string", "null"], "enum": ["todo", "done", None]}
    assert item["properties"]["depends_on"]["type"] == ["array", "null"]
    assert "maxLength" not in item["properties"]["id"]
    assert strict["properties"]["note"]["type"] == ["string", "null"]
    assert strict["$defs"]["ref"] == {"type": "string", "description": "a subtask id"}
    jsonschema.Draft202012Validator.check_schema(strict)
    # a reply valid for the original schema, with the nulls strict mode adds, is valid for the strict one
    reply = {"subtasks": [{"id": "a", "status": None, "depends_on": None}], "note": None}
    jsonschema.validate(reply, strict)


def test_openai_strict_reports_what_it_cannot_express():
    cases = {
        "free-form": {"type": "object", "properties": {"meta": {"type": "object"}}},
        "map": {"type": "object", "properties": {"scores": {"type": "object", "additionalProperties": {"type": "number"}}}},
        "allOf": {"type": "object", "properties": {"a": {"allOf": [{"type": "string"}]}}},
        "root": {"type": "array", "items": {"type": "string"}},
    }
    for name, schema in cases.items():
        _, problems = openai_strict(schema)
        assert problems, name
    assert openai_strict(cases["map"])[1] == [("reply.scores", "an object with free-form keys (additionalProperties) cannot be strict")]


def _gemini_valid(gem: dict) -> None:
    """google-genai's own Schema accepts `gem` (imported here, not at the top: each pytest-xdist process
    collects this file, and google-genai with pydantic costs 0.4 s to import)."""
    from google.genai import types as genai

    genai.Schema.model_validate(gem)


def test_gemini_schema_subset():
    gem, problems = gemini_schema(PLAN)
    assert problems == []
    assert gem["type"] == "OBJECT" and gem["property_ordering"] == ["subtasks", "note"]
    sub = gem["properties"]["subtasks"]
    assert sub["min_items"] == 1 and sub["items"]["properties"]["id"]["max_length"] == 40
    assert sub["items"]["properties"]["status"] == {"enum": ["todo", "done"], "type": "STRING"}
    assert sub["items"]["properties"]["depends_on"]["items"] == {"type": "STRING", "description": "a subtask id"}
    assert gem["properties"]["note"] == {"nullable": True, "type": "STRING"}
    assert "additionalProperties" not in str(gem)
    _gemini_valid(gem)


def test_gemini_schema_reports_losses():
    gem, problems = gemini_schema({"type": "object", "properties": {"n": {"enum": [1, 2]}, "x": {"not": {"type": "string"}}}})
    assert [p for p, _ in problems] == ["reply.n", "reply.x"]
    _gemini_valid(gem)
    recursive = {
        "$defs": {"node": {"type": "object", "properties": {"kids": {"type": "array", "items": {"$ref": "#/$defs/node"}}}}},
        "$ref": "#/$defs/node",
    }
    gem, problems = gemini_schema(recursive)
    assert any("recursive reference" in m for _, m in problems)
    _gemini_valid(gem)


def test_gemini_multiple_types_become_any_of():
    gem, _ = gemini_schema({"type": ["string", "integer", "null"]})
    assert gem["nullable"] is True and [o["type"] for o in gem["any_of"]] == ["STRING", "INTEGER"]
    _gemini_valid(gem)
