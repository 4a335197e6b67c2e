"""Compile-time template checks: positions, messages, variables and paths, static templates."""

from __future__ import annotations

import pytest

from promptmill.core.diagnostics import Position
from promptmill.core.errors import RenderError
from promptmill.lints.templates import TemplateInfo, check_template, render_static


def locate(line: int, col: int) -> Position:
    """A fake loader mapping: the template starts at line 101, column 7 of p.yaml."""
    return Position("prompts/p.yaml", line + 100, col + 6)


def check(source: str) -> tuple[TemplateInfo | None, list]:
    return check_template(source, locate, what="section 'task'")


def test_syntax_error_position_maps_through_locate() -> None:
    info, diags = check("a\nb\n{{ x | }}")
    assert info is None
    (diag,) = diags
    assert (diag.code, diag.file, diag.line, diag.col) == ("PM401", "prompts/p.yaml", 103, 7)
    assert diag.message.startswith("section 'task': ")
    assert "expected token 'name'" in diag.message


def test_unclosed_for_names_the_opening_line() -> None:
    info, diags = check("intro\n{% set z = 1 %}\n{% for x in xs %}\n{{ x }}\n")
    assert info is None
    (diag,) = diags
    assert diag.code == "PM401"
    assert "unclosed {% for %} block opened on line 3: expected {% endfor %}" in diag.message


def test_unclosed_inner_block_is_the_one_reported() -> None:
    _, (diag,) = check("{% for x in xs %}\n{% if x %}\n{{ x }}\n{% endfor %}")
    assert "the {% if %} block opened on line 2 is still open; expected {% endif %}" in diag.message
    assert (diag.line, diag.col) == (104, 7)


def test_wrong_end_tag_points_at_it() -> None:
    _, (diag,) = check("line\n{% for x in xs %}\n  {% endif %}")
    assert "unexpected {% endif %}" in diag.message and "expected {% endfor %}" in diag.message
    assert (diag.line, diag.col) == (103, 3 + 6)


def test_block_set_counts_as_a_block_and_inline_set_does_not() -> None:
    _, (diag,) = check("{% set a = 1 %}{% set b %}\n{{ a }}")
    assert "unclosed {% set %} block opened on line 1" in diag.message


def test_unknown_tag() -> None:
    _, (diag,) = check("ok\n  {% frobnicate %}")
    assert diag.message.endswith("unknown tag {% frobnicate %}")
    assert (diag.line, diag.col) == (102, 3 + 6)


def test_errors_only_code_generation_finds() -> None:
    _, (diag,) = check("{% block a %}{% endblock %}\n{% block a %}{% endblock %}")
    assert diag.code == "PM401" and "defined twice" in diag.message


def test_unknown_filter_with_suggestion_and_column() -> None:
    info, diags = check("Hi\n{{ name|uper }}")
    (diag,) = diags
    assert diag.code == "PM402"
    assert "unknown filter 'uper'; did you mean 'upper'?" in diag.message
    assert (diag.line, diag.col) == (102, 8 + 6)
    assert info is not None and info.filters == {"uper"}


def test_unknown_filter_in_filter_block_and_unknown_test() -> None:
    _, diags = check("{% filter uppr %}x{% endfilter %}{% if n is od %}{% endif %}{{ n|totally_new }}")
    messages = sorted(d.message for d in diags)
    assert {d.code for d in diags} == {"PM402"}
    assert any("unknown filter 'uppr'; did you mean 'upper'?" in m for m in messages)
    assert any("unknown test 'od'; did you mean 'odd'?" in m for m in messages)
    assert any(m.endswith("unknown filter 'totally_new'") for m in messages)


def test_promptmill_filters_are_known() -> None:
    _, diags = check("{{ a|to_json }}{{ a|to_yaml }}{{ a|xml_escape }}{{ a|bullets }}{{ a|tojson }}")
    assert diags == []


@pytest.mark.parametrize(
    ("source", "variables", "paths"),
    [
        ("Hello {{ name }}", {"name"}, {("name",)}),
        ("{{ subtask.id }} {{ subtask['title'] }}", {"subtask"}, {("subtask", "id"), ("subtask", "title")}),
        (
            "{% for t in subtask.tests %}{{ t.name }} {{ loop.index }}{% endfor %}",
            {"subtask"},
            {("subtask", "tests")},
        ),
        ("{% set n = 3 %}{{ n }} {{ range(n)|list }} {{ dict(a=1) }}", set(), set()),
        ("{% macro m(a) %}{{ a.x }}{{ b }}{% endmacro %}{{ m(c) }}", {"b", "c"}, {("b",), ("c",)}),
        ("{{ x.items[0].name }} {{ y[k].z }}", {"x", "y", "k"}, {("x", "items"), ("y",), ("k",)}),
        ("{% for k, v in cfg.items() %}{{ k }}{% endfor %}", {"cfg"}, {("cfg",)}),
        ("{% set s %}{{ a.b.c }}{% endset %}{{ s }}", {"a"}, {("a", "b", "c")}),
        ("{{ x if flag else 'no' }}{{ items|selectattr('ok')|list }}", {"x", "flag", "items"}, {("x",), ("flag",), ("items",)}),
        ("{% with q = p.r %}{{ q.s }}{% endwith %}", {"p"}, {("p", "r")}),
    ],
)
def test_variables_and_paths(source: str, variables: set[str], paths: set[tuple[str, ...]]) -> None:
    info, diags = check(source)
    assert diags == []
    assert info is not None
    assert info.variables == variables
    assert info.paths == paths
    assert info.static is (not variables)


def test_filters_and_tests_are_reported() -> None:
    info, _ = check("{{ a|upper|trim }}{% if a is defined and b is not none %}{% endif %}")
    assert info is not None
    assert info.filters == {"upper", "trim"}
    assert info.tests == {"defined", "none"}


def test_static_templates_render_at_compile_time() -> None:
    info, diags = check("Rules:\n{% for r in ['a', 'b'] %}\n- {{ r|upper }}\n{% endfor %}")
    assert diags == [] and info is not None and info.static
    assert render_static("Rules:\n{% for r in ['a', 'b'] %}\n- {{ r|upper }}\n{% endfor %}") == "Rules:\n- A\n- B\n"


def test_render_static_failures_are_render_errors() -> None:
    with pytest.raises(RenderError) as info:
        render_static("ok\n{{ 1 / 0 }}")
    assert info.value.code == "PM820" and "line 2" in info.value.message
    with pytest.raises(RenderError, match="line 1"):
        render_static("{% for %}")


@pytest.mark.parametrize(
    ("source", "fragment", "col"),
    [
        ("{{ x._y }}", "attribute '_y'", 5),
        ("{{ x['__class__'] }}", "key '__class__'", 5),
        ("{{ x|attr('\\x5f_dict__') }}", "'__dict__'", 5),
        ("{{ xs|map(attribute='a._b')|list }}", "'a._b'", 6),
        ("{{ xs|map('attr', '_b')|list }}", "'_b'", 6),
        ("{{ xs|sort(attribute='_k') }}", "'_k'", 6),
        ("{{ '{0._x}'.format(v) }}", "{0._x}", 1),
        ("{{ '{a[_k]}'.format_map(v) }}", "{a[_k]}", 1),
        ("  {% include 'x.j2' %}", "{% include %}", 3),
        ("{% import 'x' as y %}", "{% import %}", 1),
        ("{% from 'x' import y %}", "{% from ... import %}", 1),
        ("{% extends 'base' %}", "{% extends %}", 1),
        ("{{ self }}", "'self'", 4),
        ("{{ cycler(1, 2) }}", "'cycler'", 4),
        ("{{ joiner() }}", "'joiner'", 4),
        ("{% set ns = namespace() %}", "'namespace'", 13),
        ("{{ lipsum() }}", "'lipsum'", 4),
        ("{{ config.items() }}", "'config'", 4),
    ],
)
def test_unsafe_constructs_are_pm405(source: str, fragment: str, col: int) -> None:
    info, diags = check(source)
    unsafe = [d for d in diags if d.code == "PM405"]
    assert len(unsafe) == 1, diags
    assert fragment in unsafe[0].message
    assert (unsafe[0].line, unsafe[0].col) == (101, col + 6)
    assert info is not None


def test_include_hint_points_to_fragments() -> None:
    _, (diag,) = check("{% include 'x' %}")
    assert diag.hint is not None and "fragment" in diag.hint


def test_forbidden_names_are_not_reported_as_variables() -> None:
    info, _ = check("{{ cycler }}{{ config }}{{ user }}")
    assert info is not None and info.variables == {"user"}


def test_plain_underscore_free_access_is_fine() -> None:
    info, diags = check("{{ x.a_b }}{{ x['k_'] }}{{ '{0.name}'.format(x) }}{{ x|attr('real') }}")
    assert diags == []
    assert info is not None and info.variables == {"x"}


@pytest.mark.parametrize(
    ("source", "variables"),
    [
        ("{% if s %}{% set m = s | upper %}{{ m }}{% endif %}", {"s"}),  # issue 15's example
        ("{% for x in xs %}{% set m = x %}{{ m }}{% endfor %}", {"xs"}),
        ("{% if s %}{% set m %}{{ s }}!{% endset %}{{ m }}{% endif %}", {"s"}),
        ("{% if s %}{% if t %}{% set m = t %}{{ m }}{% endif %}{% endif %}", {"s", "t"}),
        # read where the set may not have run: an input after all
        ("{% if s %}{% set m = 1 %}{% endif %}{{ m }}", {"s", "m"}),
        ("{% for x in xs %}{{ m }}{% set m = x %}{% endfor %}", {"xs", "m"}),
        ("{% if s %}{% set m = 1 %}{{ m }}{% else %}{{ m }}{% endif %}", {"s", "m"}),
    ],
)
def test_a_name_set_inside_a_block_and_read_after_is_a_local(source: str, variables: set[str]) -> None:
    info, diags = check(source)
    assert diags == []
    assert info is not None and set(info.variables) == variables


@pytest.mark.parametrize("method", ["append", "extend", "update", "pop", "setdefault", "add", "sort", "clear"])
def test_calls_of_mutating_methods_are_pm405_where_the_sandbox_would_refuse_them(method: str) -> None:
    source = f"intro\n{{% for k, v in d.items() %}}{{{{ fields.{method}((k, v)) or '' }}}}{{% endfor %}}"
    _, (diag,) = check(source)
    assert (diag.code, diag.line, diag.col) == ("PM405", 102, 6 + source.splitlines()[1].index(f".{method}(") + 1)
    assert f"calls .{method}(), which changes its object" in diag.message
    from promptmill.runtime.jinja import sandbox

    with pytest.raises(RenderError):  # and the sandbox does refuse it: lint and render agree
        sandbox.render(
            sandbox.compile_template(source),
            {
                "d": {"a": 1},
                "fields": [],
            },
        )


def test_mutating_method_names_cover_the_sandboxs_list() -> None:
    import jinja2.sandbox

    from promptmill.lints.templates import MUTATING_METHODS

    refused = set().union(*(names for _, names in jinja2.sandbox._mutable_spec))
    assert refused <= MUTATING_METHODS
    assert not any(hasattr(value, m) for value in ("s", 1, 1.5, True, None) for m in MUTATING_METHODS)
