"""metaschema.is_schema agrees with jsonschema's draft 2020-12 metaschema check."""

from __future__ import annotations

import jsonschema
import pytest
from hypothesis import given
from hypothesis import strategies as st

from promptmill.runtime.schema.metaschema import is_schema

META = jsonschema.Draft202012Validator(
    jsonschema.Draft202012Validator.META_SCHEMA, format_checker=jsonschema.FormatChecker(formats=("regex",))
)
KEYWORDS = [
    "type",
    "properties",
    "required",
    "items",
    "prefixItems",
    "additionalProperties",
    "patternProperties",
    "enum",
    "const",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "multipleOf",
    "minLength",
    "maxLength",
    "minItems",
    "maxItems",
    "uniqueItems",
    "pattern",
    "allOf",
    "anyOf",
    "oneOf",
    "not",
    "if",
    "then",
    "else",
    "$ref",
    "$defs",
    "definitions",
    "$id",
    "$anchor",
    "$dynamicAnchor",
    "$schema",
    "title",
    "description",
    "default",
    "examples",
    "format",
    "dependentRequired",
    "dependentSchemas",
    "dependencies",
    "propertyNames",
    "contains",
    "minContains",
    "maxContains",
    "minProperties",
    "maxProperties",
    "unevaluatedProperties",
    "unevaluatedItems",
    "$vocabulary",
    "$comment",
    "deprecated",
    "readOnly",
    "contentSchema",
    "contentMediaType",
    "$recursiveAnchor",
    "x-custom",
]
TYPES = ["array", "boolean", "integer", "null", "number", "object", "string", "strng"]
scalars = (
    st.none()
    | st.booleans()
    | st.integers(-3, 5)
    | st.sampled_from([0.0, 1.0, 2.5, -1.0, 3.0])
    | st.sampled_from(TYPES)
    | st.sampled_from(["^a+$", "(", "[a-", "x", "#frag", "a#", "_a.b", "1bad", ""])
)


def schemaish(children):
    return st.one_of(
        st.dictionaries(st.sampled_from(KEYWORDS), children, max_size=4),
        st.lists(children, max_size=3),
        st.lists(st.sampled_from(TYPES), max_size=3),
        st.dictionaries(st.sampled_from(["a", "b", "^x", "("]), children, max_size=3),
    )


values = st.recursive(scalars, schemaish, max_leaves=25)


@given(values)
def test_agrees_with_jsonschema(value):
    assert is_schema(value) == META.is_valid(value), value


@given(st.dictionaries(st.sampled_from(KEYWORDS), values, max_size=5))
def test_agrees_on_schema_shaped_objects(value):
    assert is_schema(value) == META.is_valid(value), value


@pytest.mark.parametrize(
    "schema, ok",
    [
        ({"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}, True),
        ({"type": "strng"}, False),
        ({"type": ["string", "string"]}, False),
        ({"type": []}, False),
        ({"required": ["a", "a"]}, False),
        ({"minLength": -1}, False),
        ({"minLength": 2.0}, True),
        ({"minLength": True}, False),
        ({"multipleOf": 0}, False),
        ({"pattern": "("}, False),
        ({"patternProperties": {"(": {}}}, False),
        ({"items": [{"type": "string"}]}, False),
        ({"$id": "a#b"}, False),
        ({"$anchor": "1bad"}, False),
        ({"dependencies": {"a": ["b"], "c": {"type": "string"}}}, True),
        ({"dependencies": {"a": "b"}}, False),
        ({"anyOf": []}, False),
        (True, True),
        ([], False),
        ({"x-vendor": object()}, True),
    ],
)
def test_edges(schema, ok):
    assert is_schema(schema) is ok
    if not isinstance(schema, dict) or not any(not isinstance(v, (dict, list, str, int, float, bool)) for v in schema.values()):
        assert META.is_valid(schema) is ok
