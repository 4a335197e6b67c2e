"""The Validator API: lazy paths, error messages and paths, check_schema, light imports."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest

from promptmill.runtime.schema.validate import Validator, check_schema

MEMORY_ITEM = {
    "type": "object",
    "required": ["type", "summary"],
    "additionalProperties": False,
    "properties": {
        "type": {"enum": ["note", "error"]},
        "summary": {"type": "string", "maxLength": 10},
        "relevance": {"type": "number", "minimum": 0, "maximum": 1},
        "tags": {"type": "array", "items": {"type": "string"}},
    },
}
STATE_SCHEMA = {
    "type": "object",
    "required": ["subtask", "memory"],
    "properties": {
        "subtask": {
            "type": "object",
            "required": ["id", "description"],
            "properties": {"id": {"type": "string"}, "description": {"type": "string"}},
        },
        "memory": {"type": "array", "maxItems": 3, "items": MEMORY_ITEM},
        "task": {"type": "object", "properties": {"items": {"type": "array", "items": {"type": "integer"}}}},
        "archive": {"$ref": "#/properties/memory"},
        "steps": {"type": "array", "minItems": 3, "items": {"type": "array", "items": {"type": "string"}}},
    },
}
GOOD = {"subtask": {"id": "s1", "description": "d"}, "memory": [{"type": "note", "summary": "ok"}]}


def test_valid_state_has_no_errors():
    validator = Validator(STATE_SCHEMA)
    assert validator.fast and validator.is_valid(GOOD)
    assert validator.errors(GOOD) == []


def test_errors_messages_and_paths():
    state = {
        "subtask": {"description": 3},
        "memory": [{"type": "note", "summary": "ok"}] * 3 + [{"type": "bad", "summry": "x" * 11, "relevance": True}],
        "steps": [["a"], ["b", 1]],
        "extra": 1,
    }
    validator = Validator(STATE_SCHEMA)
    assert not validator.is_valid(state)
    assert validator.errors(state) == [
        ("state.memory", "must have at most 3 items"),
        ("state.memory[3]", "unexpected key 'summry' (did you mean 'summary'?)"),
        ("state.memory[3].relevance", "expected number, got boolean"),
        ("state.memory[3].summary", "is required"),
        ("state.memory[3].type", "must be one of: 'note', 'error'"),
        ("state.steps", "must have at least 3 items"),
        ("state.steps[1][1]", "expected string, got integer"),
        ("state.subtask.description", "expected string, got integer"),
        ("state.subtask.id", "is required"),
    ]


def test_errors_sort_indexes_numerically_and_use_root_name():
    schema = {"type": "array", "items": {"type": "string", "maxLength": 1}}
    errors = Validator(schema).errors(["ab"] * 12, root="reply")
    assert [path for path, _ in errors] == [f"reply[{i}]" for i in range(12)]
    assert errors[0][1] == "must be at most 1 character"


@pytest.mark.parametrize(
    ("schema", "instance", "expected"),
    [
        ({"type": ["string", "null"]}, 1.5, "expected string or null, got number"),
        ({"const": "x"}, "y", "must be 'x'"),
        ({"enum": [1, None, True]}, 2, "must be one of: 1, null, true"),
        ({"minLength": 3}, "ab", "must be at least 3 characters"),
        ({"pattern": "^[a-z_]+$"}, "A", "must match pattern '^[a-z_]+$'"),
        ({"minimum": 0}, -1, "must be >= 0"),
        ({"exclusiveMaximum": 1}, 1, "must be < 1"),
        ({"multipleOf": 0.5}, 0.3, "must be a multiple of 0.5"),
        ({"uniqueItems": True}, [1, 1.0], "must not contain duplicate items"),
        ({"contains": {"type": "string"}, "minContains": 2}, ["a"], "must contain at least 2 matching items"),
        ({"contains": {"type": "string"}}, [1], "must contain at least 1 matching item"),
        ({"maxProperties": 1}, {"a": 1, "b": 2}, "must have at most 1 key"),
        ({"prefixItems": [{}], "items": False}, [1, 2], "must have at most 1 item"),
        ({"anyOf": [{"type": "string"}, {"type": "null"}]}, 1, "must match at least one of the allowed schemas"),
        ({"oneOf": [{"type": "integer"}, {"minimum": 0}]}, 1, "must match exactly one of the allowed schemas (matches several)"),
        ({"not": {"type": "integer"}}, 1, "must not match the excluded schema"),
        (False, 1, "is not allowed"),
    ],
)
def test_error_messages(schema, instance, expected):
    assert Validator(schema).errors(instance) == [("state", expected)]


def test_errors_for_keys():
    schema = {
        "properties": {"a": False},
        "additionalProperties": False,
        "patternProperties": {"^x": {}},
        "propertyNames": {"maxLength": 3},
        "dependentRequired": {"xa": ["b"]},
    }
    assert Validator(schema).errors({"a": 1, "xa": 1, "long key": 1}) == [
        ("state", "key 'long key' must be at most 3 characters"),
        ("state", "unexpected key 'long key'"),
        ("state.a", "is not allowed"),
        ("state.b", "is required when 'xa' is present"),
    ]
    odd = Validator({"properties": {"a b": {"type": "string"}}}).errors({"a b": 1})
    assert odd == [('state["a b"]', "expected string, got integer")]


def test_false_subschemas_are_reported_at_their_path():
    """jsonschema drops the key or index of a `false` subschema's error; we do not."""
    schema = {"prefixItems": [False, {"properties": {"x": False}}], "patternProperties": {"^p": False}}
    assert Validator(schema).errors([1, {"x": 2}]) == [("state[0]", "is not allowed"), ("state[1].x", "is not allowed")]
    assert Validator(schema).errors({"pa": 1}) == [("state.pa", "is not allowed")]


def test_lazy_items_are_skipped_but_the_array_is_checked():
    validator = Validator(STATE_SCHEMA, lazy_paths=[("memory",), ("task", "items")])
    bad_item = {"type": "bad", "summary": 1}
    state = {**GOOD, "memory": [bad_item], "task": {"items": ["not an integer"]}}
    assert validator.is_valid(state)
    assert validator.errors(state) == []
    too_many = {**GOOD, "memory": [bad_item] * 4}
    assert not validator.is_valid(too_many)
    assert validator.errors(too_many) == [("state.memory", "must have at most 3 items")]
    assert not validator.item_valid(("memory",), bad_item)
    assert validator.item_valid(("memory",), {"type": "note", "summary": "ok"})
    assert validator.item_errors(("memory",), 7, bad_item) == [
        ("state.memory[7].summary", "expected string, got integer"),
        ("state.memory[7].type", "must be one of: 'note', 'error'"),
    ]
    assert not validator.item_valid(("task", "items"), "x")
    assert validator.item_errors(("task", "items"), 0, "x", root="s") == [("s.task.items[0]", "expected integer, got string")]


def test_lazy_path_leaves_other_uses_of_the_same_schema_alone():
    """`archive` refers to the memory array schema; its items are still checked at the root."""
    validator = Validator(STATE_SCHEMA, lazy_paths=[("memory",)])
    state = {**GOOD, "archive": [{"type": "bad", "summary": "x"}]}
    assert not validator.is_valid(state)
    assert validator.errors(state) == [("state.archive[0].type", "must be one of: 'note', 'error'")]


@pytest.mark.parametrize(
    "path",
    [("nope",), ("subtask",), ("subtask", "id"), ("archive",), ("memory", "items"), ("steps", "0")],
)
def test_bad_lazy_paths(path):
    with pytest.raises(ValueError, match="lazy path"):
        Validator(STATE_SCHEMA, lazy_paths=[path])


def test_lazy_path_rejects_prefix_items_and_unknown_paths():
    with pytest.raises(ValueError, match="prefixItems"):
        Validator({"properties": {"a": {"type": "array", "prefixItems": [{}]}}}, lazy_paths=[("a",)])
    validator = Validator(STATE_SCHEMA, lazy_paths=[("memory",)])
    with pytest.raises(ValueError, match="not one of"):
        validator.item_valid(("steps",), [])
    with pytest.raises(ValueError, match="not one of"):
        validator.item_errors(("steps",), 0, [])


def test_lazy_paths_with_fallback_schema():
    schema = {
        "properties": {"memory": {"type": "array", "items": {"properties": {"a": {}}, "unevaluatedProperties": False}}},
    }
    validator = Validator(schema, lazy_paths=[("memory",)])
    assert not validator.fast
    assert validator.is_valid({"memory": [{"b": 1}]})
    assert not validator.item_valid(("memory",), {"b": 1})
    assert validator.item_valid(("memory",), {"a": 1})
    [(path, message)] = validator.item_errors(("memory",), 2, {"b": 1})
    assert path == "state.memory[2]" and "'b'" in message


def test_root_is_jsonschema_with_lazy_items_removed():
    """is_valid with lazy paths equals jsonschema on the schema whose lazy items are `true`."""
    validator = Validator(STATE_SCHEMA, lazy_paths=[("memory",)])
    trimmed = json.loads(json.dumps(STATE_SCHEMA))
    trimmed["properties"]["memory"]["items"] = True
    trimmed["properties"]["archive"] = {"$ref": "#/$defs/mem"}
    trimmed["$defs"] = {"mem": STATE_SCHEMA["properties"]["memory"]}
    oracle = jsonschema.Draft202012Validator(trimmed)
    for state in (GOOD, {**GOOD, "memory": [1, 2]}, {**GOOD, "archive": [1]}, {**GOOD, "memory": [1] * 4}, {}):
        assert validator.is_valid(state) == oracle.is_valid(state)


def test_check_schema():
    assert check_schema(STATE_SCHEMA) == []
    problems = check_schema(
        {
            "properties": {"a": {"type": "strng"}, "b": {"$ref": "#/$defs/missing"}},
            "pattern": "(",
            "minLength": -1,
        }
    )
    assert [path for path, _ in problems] == ["/minLength", "/pattern", "/properties/a/type", "/properties/b/$ref"]
    assert problems[-1][1] == "$ref '#/$defs/missing' points nowhere"
    assert problems[2][1].startswith("'strng' is not one of ['array', 'boolean'")


def test_valid_path_imports_neither_jsonschema_nor_yaml():
    code = f"""
import sys
from promptmill.runtime.schema.validate import Validator
schema = {STATE_SCHEMA!r}
state = {GOOD!r}
v = Validator(schema, lazy_paths=[("memory",)])
assert v.fast and v.is_valid(state) and v.item_valid(("memory",), state["memory"][0])
assert Validator({{"items": {{"$ref": "#"}}}}).is_valid([[1]])
print(sorted(m for m in ("jsonschema", "yaml", "referencing") if m in sys.modules))
v.errors(state)
print("jsonschema" in sys.modules)
"""
    src = str(Path(__file__).resolve().parents[1] / "compiler")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, env={"PYTHONPATH": src}).stdout.split(
        "\n"
    )
    assert out[:2] == ["[]", "True"]
