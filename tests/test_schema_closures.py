"""The compiled closures against real jsonschema, on random schemas and instances."""

from __future__ import annotations

import random

import jsonschema
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from promptmill.runtime.schema.closures import Compiler
from promptmill.runtime.schema.json_values import equal, uniq
from promptmill.runtime.schema.validate import Validator
from schema_strategies import derive, documents, json_values


def _oracle(schema, instance):
    """jsonschema's answer, or the type of what it raised (both sides must raise alike)."""
    checker = schema if isinstance(schema, jsonschema.Draft202012Validator) else jsonschema.Draft202012Validator(schema)
    try:
        return checker.is_valid(instance)
    except (RecursionError, OverflowError) as err:
        return type(err)


def _ours(validator, instance):
    """Our answer (from a Validator or a bare check), or the type of what it raised."""
    try:
        return validator.is_valid(instance) if isinstance(validator, Validator) else validator(instance)
    except (RecursionError, OverflowError) as err:
        return type(err)


_ONE = ("additionalProperties", "propertyNames", "items", "contains", "not", "if", "then", "else")
_MANY = ("allOf", "anyOf", "oneOf", "prefixItems")
_NAMED = ("properties", "patternProperties", "dependentSchemas", "$defs", "definitions")


def _subschemas(node):
    """Every schema inside `node` (itself included), found through the keywords that hold schemas."""
    yield node
    if not isinstance(node, dict):
        return
    for key in _ONE:
        if key in node:
            yield from _subschemas(node[key])
    for key in _MANY:
        for sub in node.get(key, []):
            yield from _subschemas(sub)
    for key in _NAMED:
        for sub in node.get(key, {}).values():
            yield from _subschemas(sub)


# the profile's count (tests/conftest.py: 150 in the suite, 5,000 with HYPOTHESIS_PROFILE=long); each example
# checks ~10 instances against the document and ~6 against each schema inside it. CI runs this file three
# times (the suite, the compiled build, the lowest versions), each with fresh random documents.
@settings(deadline=None, suppress_health_check=list(HealthCheck))
@given(documents(), st.lists(json_values, max_size=4), st.randoms(use_true_random=False))
def test_is_valid_agrees_with_jsonschema(schema, values, rng):
    """The whole document, and each schema in it (refs resolving against the document)."""
    validator = Validator(schema)
    assert validator.fast
    oracle = jsonschema.Draft202012Validator(schema)
    for instance in values + [derive(schema, rng, schema) for _ in range(10)]:
        assert _ours(validator, instance) == _oracle(oracle, instance), (schema, instance)
    compiler = Compiler(schema)
    for sub in _subschemas(schema):
        check, sub_oracle = compiler.compile(sub), oracle.evolve(schema=sub)
        for instance in values + [derive(sub, rng, schema) for _ in range(6)]:
            assert _ours(check, instance) == _oracle(sub_oracle, instance), (schema, sub, instance)


def test_grammar_yields_valid_and_invalid_instances():
    """The property test is only worth something if both answers occur often."""
    rng = random.Random(7)
    answers = []

    @settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck), database=None, derandomize=True)
    @given(documents())
    def collect(schema):
        answers.extend(_oracle(schema, derive(schema, rng, schema)) for _ in range(4))

    collect()
    share = answers.count(True) / len(answers)
    assert 0.1 < share < 0.9, share


@settings(max_examples=300, deadline=None)
@given(st.lists(json_values, max_size=5))
def test_uniq_matches_jsonschema(values):
    from jsonschema._utils import uniq as js_uniq

    assert uniq(values) == js_uniq(values)


@settings(max_examples=300, deadline=None)
@given(json_values, json_values)
def test_equal_matches_jsonschema(a, b):
    from jsonschema._utils import equal as js_equal

    assert equal(a, b) == js_equal(a, b)


EDGES = [
    ({"type": "integer"}, [3, 3.0, 3.5, True, False, "3", None, 10**30, -0.0]),
    ({"type": "number"}, [1, 1.5, True, "1", None]),
    ({"type": ["integer", "null"]}, [1, 1.0, None, True, 1.5, "x"]),
    ({"type": ["number", "string"], "minimum": 2, "minLength": 2}, [1, 2, "a", "ab", True, None]),
    ({"enum": [1, "a", None]}, [1, 1.0, True, "a", None, False, [1]]),
    ({"enum": [True]}, [1, True, 1.0]),
    ({"enum": [0]}, [False, 0, 0.0, -0.0]),
    ({"const": [1, {"a": 1}]}, [[1.0, {"a": 1.0}], [True, {"a": 1}], [1, {"a": True}], [1, {"a": 1, "b": 2}]]),
    ({"const": {"a": [1, 2]}}, [{"a": [1.0, 2.0]}, {"a": [1, 2, 3]}, {"a": (1, 2)}]),
    (
        {"uniqueItems": True},
        [
            [1, True],
            [1, 1.0],
            [{"a": 1}, {"a": 1.0}],
            [0, False],
            [[1], [True]],
            [[True], [1], [True]],
            ["a", "a"],
            [1, "1"],
            [None, None],
            [[], {}],
        ],
    ),
    ({"maxLength": 2}, ["😀😀", "😀😀😀", "éé", "e\u0301e"]),
    ({"minLength": 2}, ["😀", "é"]),
    ({"pattern": "b"}, ["abc", "a", 1]),
    ({"pattern": "^\\d+$"}, ["123", "12a", "١٢"]),
    ({"multipleOf": 0.1}, [0.3, 0.2, 1, 1e308, 10**400, 7]),
    ({"multipleOf": 0.01}, [0.07, 19.99, 1.1]),
    ({"multipleOf": 3}, [9, 9.0, 10, 4.5, True]),
    ({"minimum": 1}, [True, 0, 1, "0"]),
    ({"items": False, "prefixItems": [{}]}, [[], [1], [1, 2]]),
    ({"contains": {"type": "string"}, "minContains": 2, "maxContains": 3}, [["a"], ["a", "b"], ["a"] * 4, [1, 2]]),
    ({"contains": {"type": "string"}, "minContains": 0}, [[], [1]]),
    ({"additionalProperties": False, "patternProperties": {"": {}}}, [{"x": 1}, {}]),
    ({"additionalProperties": False, "patternProperties": {"^a": {}, "b": {}}}, [{"ax": 1}, {"xb": 1}, {"c": 1}]),
    ({"propertyNames": {"maxLength": 1}}, [{"a": 1}, {"ab": 1}]),
    (
        {"dependentRequired": {"a": ["b"]}, "dependentSchemas": {"b": {"required": ["c"]}}},
        [{"a": 1}, {"a": 1, "b": 1}, {"a": 1, "b": 1, "c": 1}, {"c": 1}],
    ),
    ({"if": {"type": "string"}, "then": {"minLength": 2}, "else": {"type": "null"}}, ["a", "ab", None, 1]),
    ({"oneOf": [{"type": "integer"}, {"minimum": 2}]}, [1, 3, 2.5, "x"]),
    ({"not": {"type": "string"}, "anyOf": []}, ["x", 1]),
    ({"$ref": "#/$defs/s", "maxLength": 3, "$defs": {"s": {"type": "string"}}}, ["ab", "abcd", 1]),
    ({"$defs": {"a/b~c": {"type": "string"}}, "$ref": "#/$defs/a~1b~0c"}, ["x", 1]),
    ({"$defs": {"a b": {"type": "null"}}, "$ref": "#/$defs/a%20b"}, [None, 1]),
    ({"definitions": {"x": {"type": "null"}}, "items": {"$ref": "#/definitions/x"}}, [[None], [1]]),
    ({"prefixItems": [{"type": "null"}, {"type": "string"}], "items": {"$ref": "#/prefixItems/1"}}, [[None, "a", "b"], [None, "a", 1]]),
    (
        {"type": "object", "properties": {"next": {"$ref": "#"}}, "additionalProperties": False},
        [{"next": {"next": {}}}, {"next": {"next": {"x": 1}}}],
    ),
    ({"$id": "https://example.com/root.json", "items": {"$ref": "#/$defs/n"}, "$defs": {"n": {"type": "null"}}}, [[None], [1]]),
    ({"type": "object", "format": "email", "deprecated": True, "$comment": "c", "title": 3}, [{}, 1]),
    ({"format": "ipv4"}, ["not an ip"]),
    (True, [1, None]),
    (False, [1, None]),
    ({"properties": {"a": False, "b": True}}, [{"a": 1}, {"b": 1}, {}]),
    ({"minProperties": 1, "maxProperties": 1}, [{}, {"a": 1}, {"a": 1, "b": 2}, []]),
    ({"type": []}, [1, None]),
    ({"type": "string", "minLength": 1, "maxLength": 2}, ["", "a", "ab", "abc", "😀😀", 1]),
    ({"type": "string", "pattern": "^a", "maxLength": 2}, ["a", "ab", "abc", "ba", None]),
    ({"type": "integer", "minimum": 1, "exclusiveMaximum": 3}, [0, 1, 2, 2.0, 2.5, 3, True]),
    ({"type": "number", "exclusiveMinimum": 0, "maximum": 1}, [0, 0.0, 1e-9, 1, 1.0000001, False]),
    ({"type": ["integer", "string"], "maximum": 2, "maxLength": 1}, [2, 2.0, 2.5, 3, "a", "ab", None]),
    ({"type": "object", "additionalProperties": {"type": "string"}, "patternProperties": {"^a": {}}}, [{"ab": 1}, {"b": 1}, {"b": "x"}]),
    ({"type": "array", "prefixItems": [{"type": "integer"}], "items": {"type": "string"}}, [[1, "a"], ["a"], [1, 2]]),
    (
        {
            "$schema": "http://json-schema.org/draft-07/schema#",
            "$ref": "#/definitions/s",
            "minLength": 2,
            "definitions": {"s": {"type": "string"}},
        },
        ["a", "ab", 1],
    ),
]


@pytest.mark.parametrize(("schema", "instances"), EDGES)
def test_edges_agree_with_jsonschema(schema, instances):
    validator = Validator(schema)
    assert validator.fast
    for instance in instances:
        assert _ours(validator, instance) == _oracle(schema, instance), instance


FALLBACKS = [
    ({"unevaluatedProperties": False, "properties": {"a": {}}}, [{"a": 1}, {"b": 1}]),
    ({"items": {"unevaluatedItems": False, "prefixItems": [{}]}}, [[[1]], [[1, 2]]]),
    ({"$dynamicRef": "#/$defs/x", "$defs": {"x": {"type": "null"}}}, [None, 1]),
    ({"$defs": {"x": {"$anchor": "n", "type": "null"}}, "$ref": "#n"}, [None, 1]),
    ({"properties": {"a": {"$id": "https://e.com/a", "$defs": {"s": {"type": "string"}}, "$ref": "#/$defs/s"}}}, [{"a": "x"}, {"a": 1}]),
    ({"minLength": "3"}, [1]),
    ({"pattern": "\\p{L}"}, [1]),
    ({"additionalProperties": False, "patternProperties": {"a": {}, "(?i)b": {}}}, [{}]),
    ({"$recursiveRef": "#"}, [1]),
]


@pytest.mark.parametrize(("schema", "instances"), FALLBACKS)
def test_unsupported_schemas_fall_back_to_jsonschema(schema, instances):
    validator = Validator(schema)
    assert not validator.fast
    for instance in instances:
        assert validator.is_valid(instance) == _oracle(schema, instance), instance


def test_recursive_ref_terminates():
    tree = {
        "$defs": {"node": {"type": "object", "properties": {"kids": {"type": "array", "items": {"$ref": "#/$defs/node"}}}}},
        "$ref": "#/$defs/node",
    }
    validator = Validator(tree)
    deep: dict = {}
    for _ in range(50):
        deep = {"kids": [deep, {}]}
    assert validator.is_valid(deep)
    assert not validator.is_valid({"kids": [{"kids": [1]}]})
