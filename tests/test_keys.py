"""PM409: keys a template reads, checked against the inputs schema (keys.py).

Unit cases call `undeclared_keys` on a template with bindings built from a
schema; the last tests run the whole lint on a project, where the compiler
builds the bindings from a role's `inputs`, `each:` and the template itself.
"""

from __future__ import annotations

from pathlib import Path

import pytest

import promptmill
from promptmill.core.diagnostics import Position
from promptmill.lints.keys import Binding, item_binding, undeclared_keys

CUSTOMER = {
    "type": "object",
    "required": ["name", "vip"],
    "properties": {
        "name": {"type": "string"},
        "address": {
            "type": "object",
            "additionalProperties": False,
            "properties": {"city": {"type": "string"}, "zip": {"type": "string"}},
        },
        "orders": {
            "type": "array",
            "items": {"type": "object", "properties": {"id": {"type": "string"}, "total": {"type": "number"}}},
        },
        "items": {"type": "array", "items": {"type": "object", "properties": {"sku": {"type": "string"}}}},
    },
}
INPUTS = {"customer": CUSTOMER, "orders": CUSTOMER["properties"]["orders"], "note": {"type": "string"}}


def locate(line: int, col: int) -> Position:
    """The template starts at line 11, column 5 of r.yaml."""
    return Position("r.yaml", line + 10, col + 4)


def keys(source: str, bindings: dict | None = None) -> list:
    if bindings is None:
        bindings = {name: Binding(schema, name) for name, schema in INPUTS.items()}
    return undeclared_keys(source, locate, bindings, what="section 'a'")


def found(source: str) -> list[tuple[str, str, str | None]]:
    """(severity, 'line:col', hint) of each diagnostic."""
    return [(d.severity, f"{d.line}:{d.col}", d.hint) for d in keys(source)]


def test_a_misspelled_key_is_a_warning_with_a_close_match_at_the_key() -> None:
    (diag,) = keys("Dear {{ customer.nme }},")
    assert (diag.code, diag.severity, diag.file, diag.line, diag.col) == ("PM409", "warning", "r.yaml", 11, 22)
    assert diag.message == "section 'a' reads 'customer.nme', but the inputs schema of 'customer' declares no key 'nme'"
    assert diag.hint == "did you mean 'name'?"


def test_a_key_a_closed_object_cannot_have_is_an_error() -> None:
    (diag,) = keys("{{ customer.address.cty }}")
    assert diag.severity == "error"
    assert "declares no key 'cty' and sets additionalProperties: false, so it is never there" in diag.message
    assert diag.hint == "did you mean 'city'?"
    (far,) = keys("{{ customer.address.country_code }}")
    assert far.hint == "its keys: 'city', 'zip'"


def test_without_a_close_match_the_hint_says_where_to_declare_it() -> None:
    (diag,) = keys("{{ customer.loyalty_points }}")
    assert diag.hint == "declare 'loyalty_points' among the properties of 'customer' in the role's inputs"


def test_subscripts_and_indexes_are_followed() -> None:
    assert found('{{ customer["nmae"] }}') == [("warning", "11:17", "did you mean 'name'?")]
    assert "reads 'customer[\"nmae\"]'" in keys("{{ customer['nmae'] }}")[0].message
    (diag,) = keys("{{ customer.orders[0].totl }} {{ orders[n].idd }}")[:1]
    assert "reads 'customer.orders[0].totl'" in diag.message
    assert diag.hint == "did you mean 'total'?"
    assert len(keys("{{ customer.orders[0].totl }} {{ orders[n].idd }}")) == 2


def test_declared_and_required_keys_pass() -> None:
    assert keys("{{ customer.name }} {{ customer['name'] }} {{ customer.vip }} {{ customer.address.zip }}") == []


def test_dict_methods_are_not_keys() -> None:
    source = (
        "{% for k, v in customer.items() %}{{ k }}{% endfor %}{{ customer.keys() | list }}"
        "{{ customer.get('nickname') }}{{ customer.values }}{{ customer['copy'] }}"
    )
    assert keys(source) == []


def test_a_declared_key_named_like_a_dict_method_is_followed_by_subscript_only() -> None:
    # customer.items is the dict method; customer["items"] is the key
    assert keys("{{ customer.items.skuu }}") == []
    assert found("{{ customer['items'][0].skuu }}") == [("warning", "11:29", "did you mean 'sku'?")]


def test_filters_tests_and_method_calls_are_not_keys() -> None:
    assert keys("{{ customer.name | upper }}{{ customer.address is mapping }}{{ customer.name.upper() }}") == []
    assert keys("{{ customer.name.nme }}") == []  # a string: not an object, nothing certain


def test_loop_variables_resolve_through_items() -> None:
    (diag,) = keys("{% for o in customer.orders | sort(attribute='total') | reverse %}{{ o.totl }}{% endfor %}")
    assert diag.message.endswith("('o' is an item of 'customer.orders')")
    assert diag.hint == "did you mean 'total'?"
    assert keys("{% for o in orders if o.idd %}{% endfor %}") != []  # the loop's filter sees the variable
    assert keys("{% for o in orders %}{{ o.id }}{% else %}{{ o }}{% endfor %}") == []


def test_a_loop_variable_shadows_an_input_of_the_same_name() -> None:
    (diag,) = keys("{{ customer.name }}{% for customer in orders %}{{ customer.name }}{% endfor %}")
    assert "'customer' is an item of 'orders'" in diag.message
    assert keys("{% for customer in something_else %}{{ customer.nme }}{% endfor %}") == []


def test_names_the_template_binds_itself_are_skipped() -> None:
    assert keys("{% set customer = {'nme': 1} %}{{ customer.nme }}") == []
    assert keys("{% set o = 1 %}{% for o in orders %}{{ o.totl }}{% endfor %}") == []
    assert keys("{% macro m(customer) %}{{ customer.nme }}{% endmacro %}{{ m(customer) }}") == []
    assert keys("{% for o in orders recursive %}{{ o.totl }}{% endfor %}") == []
    assert keys("{% for o, p in orders %}{{ o.totl }}{% endfor %}") == []


@pytest.mark.parametrize(
    "schema",
    [
        {"$ref": "#/$defs/customer"},
        {"type": "object", "properties": {"name": {}}, "allOf": [{"properties": {"nme": {}}}]},
        {"type": "object", "properties": {"name": {}}, "anyOf": [{"required": ["name"]}]},
        {"oneOf": [{"type": "object", "properties": {"name": {}}}, {"type": "string"}]},
        {"type": "object", "properties": {"name": {}}, "patternProperties": {"^n": {}}},
        {"type": "object", "properties": {"name": {}}, "additionalProperties": {"type": "string"}},
        {"type": "object", "properties": {"name": {}}, "additionalProperties": {}},
        {"type": "object", "properties": {"name": {}}, "unevaluatedProperties": True},
        {"type": "object", "properties": {"name": {}}, "if": {"required": ["a"]}, "then": {"properties": {"nme": {}}}},
        {"type": "object"},
        {"type": "object", "additionalProperties": True},
        {"type": "object", "required": ["name"]},
        {"type": "object", "properties": {}},
        {"type": ["object", "string"], "properties": {"name": {}}},
        {"type": "string", "properties": {"name": {}}},
        True,
        {},
    ],
    ids=lambda s: "-".join(sorted(s)) if isinstance(s, dict) else str(s),
)
def test_open_schemas_are_never_reported(schema) -> None:
    assert keys("{{ customer.nme.deeper }}", {"customer": Binding(schema, "customer")}) == []


def test_a_nullable_object_is_still_checked() -> None:
    schema = {"type": ["object", "null"], "properties": {"name": {}}}
    assert len(keys("{{ customer.nme }}", {"customer": Binding(schema, "customer")})) == 1


def test_explicit_additional_properties_true_welcomes_undeclared_keys() -> None:
    schema = {"type": "object", "properties": {"name": {}}, "additionalProperties": True}
    assert keys("{{ customer.nme }}", {"customer": Binding(schema, "customer")}) == []
    implicit = {"type": "object", "properties": {"name": {}}}
    assert len(keys("{{ customer.nme }}", {"customer": Binding(implicit, "customer")})) == 1


def test_an_empty_closed_object_has_no_keys() -> None:
    schema = {"type": "object", "additionalProperties": False}
    (diag,) = keys("{{ customer.anything }}", {"customer": Binding(schema, "customer")})
    assert (diag.severity, diag.hint) == ("error", "it has no keys")


def test_each_key_is_reported_once_at_its_first_use() -> None:
    assert found("{{ customer.nme }}\n{{ customer.nme }} {{ customer.nme }}") == [("warning", "11:17", "did you mean 'name'?")]


def test_positions_follow_the_written_chain_across_lines() -> None:
    source = "{{ other.nme }} {{ customer.nme }}\n{{ customer\n   .address\n   .cty }}"
    bindings = {"customer": Binding(CUSTOMER, "customer")}
    assert [(d.line, d.col) for d in keys(source, bindings)] == [(11, 33), (14, 9)]


def test_a_template_that_does_not_parse_reports_nothing_here() -> None:
    assert keys("{{ customer.nme ") == []


def test_item_binding_follows_the_each_path() -> None:
    nested = {"shop": {"type": "object", "properties": {"orders": CUSTOMER["properties"]["orders"]}}}
    binding = item_binding(nested, "shop.orders")
    assert binding is not None and binding.label == "shop.orders[]"
    assert "id" in binding.schema["properties"]
    assert item_binding(nested, "shop.missing") is None
    assert item_binding({"xs": {"type": "array", "items": [{"type": "string"}]}}, "xs") is None
    assert item_binding({"xs": {"type": "array"}}, "xs") is None


ROLE = """\
kind: role
id: r
inputs:
  type: object
  properties:
    customer: {type: object, properties: {name: {type: string}}}
    notes:
      type: array
      items: {type: object, additionalProperties: false, properties: {text: {type: string}}}
sections:
  - id: greeting
    template: |
      Dear {{ customer.nme }},
  - id: notes
    each: notes
    as: note
    template: "- {{ note.txt }}"
"""


def test_lint_reports_keys_through_inputs_and_each_items(tmp_path: Path) -> None:
    (tmp_path / "prompts").mkdir()
    (tmp_path / "prompts" / "r.yaml").write_text(ROLE, encoding="utf-8")
    result = promptmill.lint(tmp_path)
    assert [(d.code, d.severity, d.line, d.col, d.hint) for d in result.diagnostics] == [
        ("PM409", "warning", 13, 24, "did you mean 'name'?"),
        ("PM409", "error", 17, 26, "did you mean 'text'?"),
    ]
    assert "('note' is an item of 'notes')" in result.diagnostics[1].message
    assert not result.ok()


def test_a_warning_alone_leaves_the_role_compilable(tmp_path: Path) -> None:
    (tmp_path / "prompts").mkdir()
    (tmp_path / "prompts" / "r.yaml").write_text(ROLE.replace("note.txt", "note.text"), encoding="utf-8")
    result = promptmill.lint(tmp_path)
    assert [d.code for d in result.diagnostics] == ["PM409"]
    assert result.ok() and not result.ok(strict=True)


ORDERED = """\
kind: role
id: r
inputs:
  type: object
  properties:
    memory:
      type: array
      items: {type: object, properties: {fact: {type: string}, relevance: {type: number}}}
    docs:
      type: array
      items: {type: object, additionalProperties: false, properties: {body: {type: string}, score: {type: number}}}
    loose: {type: array, items: {type: object}}
sections:
  - id: memory
    each: memory
    template: "- {{ item.fact }}"
    order_by: relevnce
  - id: docs
    each: docs
    template: "{{ item.body }}"
    order_by: {key: scor, order: asc}
  - id: loose
    each: loose
    template: "{{ item }}"
    order_by: anything
  - id: fine
    each: memory
    template: "{{ item.fact }}"
    order_by: relevance
"""


def test_an_order_by_key_the_items_do_not_declare_is_reported(tmp_path: Path) -> None:
    (tmp_path / "prompts").mkdir()
    (tmp_path / "prompts" / "r.yaml").write_text(ORDERED, encoding="utf-8")
    result = promptmill.lint(tmp_path)
    assert [(d.code, d.severity, d.line, d.col, d.hint) for d in result.diagnostics] == [
        ("PM409", "warning", 17, 15, "did you mean 'relevance'?"),
        ("PM409", "error", 21, 21, "did you mean 'score'?"),
    ]
    assert "orders items by 'relevnce'" in result.diagnostics[0].message
    assert "so the list keeps its own order" in result.diagnostics[0].message
