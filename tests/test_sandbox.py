"""The sandboxed Jinja environment: escapes fail, state stays data, bombs end quickly."""

from __future__ import annotations

import copy
import re
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import jinja2
import pytest
import yaml

from promptmill.core.diagnostics import Position
from promptmill.core.errors import RenderError
from promptmill.lints.templates import check_template
from promptmill.runtime.jinja.sandbox import (
    FILTERS,
    TESTS,
    TemplateLimits,
    TemplateRenderError,
    compile_template,
    environment,
    render,
)

CASES = Path(__file__).parent / "cases" / "sandbox"


def _cases(name: str) -> list[dict[str, Any]]:
    return yaml.safe_load((CASES / name).read_text(encoding="utf-8"))


def _state() -> dict[str, Any]:
    return {"x": "text", "items": [3, 1, 2], "d": {"k": "v"}, "fmt": "{0.__class__}"}


def _render(source: str, limits: TemplateLimits | None = None, **context: Any) -> str:
    template = compile_template(source)
    return render(template, context) if limits is None else render(template, context, limits=limits)


def _locate(line: int, col: int) -> Position:
    return Position("t.yaml", line, col)


@pytest.mark.parametrize("case", _cases("escapes.yaml"), ids=lambda c: c["name"])
def test_escape_routes_fail(case: dict[str, Any]) -> None:
    state = {**_state(), **case.get("context", {})}
    before = copy.deepcopy(state)
    with pytest.raises(RenderError) as info:
        _render(case["template"], **state)
    assert info.value.code == "PM820"
    assert case["mentions"] in info.value.message
    assert state == before, "the template changed the state"
    if "check" in case:
        _, diags = check_template(case["template"], _locate)
        assert case["check"] in {d.code for d in diags}, diags


@pytest.mark.timeout(60)
@pytest.mark.parametrize("case", _cases("dos.yaml"), ids=lambda c: c["name"])
def test_work_and_memory_bombs_end_with_render_error(case: dict[str, Any]) -> None:
    with pytest.raises(RenderError) as info:
        _render(case["template"], **case.get("context", {}))
    assert info.value.code == "PM820"
    assert re.search(case["mentions"], info.value.message), info.value.message


@pytest.mark.parametrize(
    "value",
    ["{{ 7*7 }}", "{% for %}", "{% include '/etc/passwd' %}", "{# c", "{{ ''.__class__ }}", "}}{{"],
)
def test_state_is_inserted_as_text_never_evaluated(value: str) -> None:
    assert _render("{{ x }}", x=value) == value
    assert _render("<t>{{ x }}</t>", x=value) == f"<t>{value}</t>"
    assert _render("{{ items|join(',') }}", items=[value, value]) == f"{value},{value}"


def test_undefined_attribute_names_the_key_and_type() -> None:
    with pytest.raises(TemplateRenderError) as info:
        _render("Task:\n{{ subtask.idd }}", subtask={"id": 7, "title": "t"})
    message = info.value.message
    assert "'idd'" in message and "dict" in message and "did you mean 'id'?" in message
    assert info.value.line == 2


def test_undefined_variable_is_named() -> None:
    with pytest.raises(TemplateRenderError, match="variable 'task' is undefined"):
        _render("{{ task }}")


def test_undefined_index_and_attribute_of_other_types() -> None:
    with pytest.raises(RenderError, match="list of length 3 has no item 5"):
        _render("{{ items[5] }}", items=[1, 2, 3])
    with pytest.raises(RenderError, match="str value has no attribute 'nope'"):
        _render("{{ x.nope }}", x="s")


@pytest.mark.parametrize(
    ("source", "context", "line", "pattern"),
    [
        ("a\nb\n{{ 1 / n }}", {"n": 0}, 3, "ZeroDivisionError"),
        ("a\n{{ 'x' + n }}", {"n": 1}, 2, "TypeError"),
        ("{% for i in xs %}\n{{ i.k }}\n{% endfor %}", {"xs": [{}]}, 2, "'k'"),
        ("{% macro m(v) %}\n\n{{ v.missing }}\n{% endmacro %}\n{{ m({}) }}", {}, 3, "'missing'"),
    ],
)
def test_errors_carry_the_template_line(source: str, context: dict[str, Any], line: int, pattern: str) -> None:
    with pytest.raises(TemplateRenderError, match=pattern) as info:
        _render(source, **context)
    assert info.value.line == line
    assert info.value.message.startswith(f"line {line}: ")


def test_environment_configuration() -> None:
    env = environment()
    assert env is environment()
    assert isinstance(env, jinja2.sandbox.ImmutableSandboxedEnvironment)
    assert set(env.globals) == {"range", "dict"}
    assert env.loader is None
    assert _render("{{ '<b>&' }}") == "<b>&"  # no autoescape
    assert _render("a\n{% if true %}\n  b\n  {% endif %}\nc\n") == "a\n  b\nc"  # trim/lstrip, no final newline
    assert _render("{{ dict(a=1)['a'] }} {{ range(3)|list }}") == "1 [0, 1, 2]"
    assert {"to_json", "to_yaml", "xml_escape", "bullets", "upper", "join"} <= FILTERS
    assert not any(":" in name for name in FILTERS)
    assert {"defined", "odd", "in"} <= TESTS


def test_everyday_templates_render() -> None:
    source = (
        "# {{ task.title }}\n"
        "{% for step in task.steps %}\n"
        "{{ loop.index }}. {{ step|trim }}{{ ',' if not loop.last else '' }}\n"
        "{% endfor %}\n"
        "{% set tags = task.tags|map('upper')|select('ne', 'X')|list %}\n"
        "{{ tags|join(' ') }} {{ '%s/%d'|format('a', 2) }} {{ '{}-{}'.format(1, 2) }} {{ 'a' ~ 1 }}"
    )
    task = {"title": "Fix", "steps": [" read ", "edit"], "tags": ["a", "x", "b"]}
    assert _render(source, task=task) == "# Fix\n1. read,\n2. edit\nA B a/2 1-2 a1"


def test_to_json_filter() -> None:
    value = {"b": [1, "é"], "a": None}
    assert _render("{{ v|to_json }}", v=value) == '{"b": [1, "é"], "a": null}'
    assert _render("{{ v|to_json(indent=2) }}", v={"a": 1}) == '{\n  "a": 1\n}'
    with pytest.raises(RenderError, match="not JSON"):
        _render("{{ v|to_json }}", v=float("nan"))
    with pytest.raises(RenderError, match="range value is not JSON data"):
        _render("{{ range(2)|to_json }}")
    with pytest.raises(RenderError, match="variable 'missing' is undefined"):
        _render("{{ [missing]|to_json }}")


def test_to_yaml_xml_escape_and_bullets_filters() -> None:
    assert _render("{{ v|to_yaml }}", v={"a": [1, "yes"], "b": "x\ny"}) == 'a:\n  - 1\n  - "yes"\nb: |-\n  x\n  y'
    assert _render("{{ v|to_yaml(indent=4) }}", v={"a": [1]}) == "a:\n    -   1"
    with pytest.raises(RenderError, match="not JSON data"):
        _render("{{ v|to_yaml }}", v=float("inf"))
    assert _render("{{ s|xml_escape }}", s="<a href=\"x\">'&'</a>") == ("&lt;a href=&quot;x&quot;&gt;&apos;&amp;&apos;&lt;/a&gt;")
    assert _render("{{ s|xml_text }}", s="<a href=\"x\">'&'</a>") == "&lt;a href=\"x\">'&amp;'&lt;/a>"
    assert _render("{{ xs|bullets }}", xs=["one", "two\nlines"]) == "- one\n- two\n  lines"
    assert _render("{{ xs|bullets }}", xs=[]) == ""
    with pytest.raises(RenderError, match="bullets expects a list"):
        _render("{{ 'abc'|bullets }}")


def test_limits_are_per_call() -> None:
    tight = TemplateLimits(max_iterations=50)
    source = "{% for i in range(40) %}{% for j in range(2) %}.{% endfor %}{% endfor %}"
    with pytest.raises(RenderError, match="max_iterations"):
        _render(source, tight)
    assert len(_render(source)) == 80  # the next render starts with a fresh budget
    with pytest.raises(RenderError, match="max_output_chars"):
        _render("{{ x }}", TemplateLimits(max_output_chars=3), x="four")
    with pytest.raises(RenderError, match="max_range"):
        _render("{{ range(11)|list }}", TemplateLimits(max_range=10))


@pytest.mark.timeout(60)
def test_deadline_stops_work_the_step_budget_cannot_see() -> None:
    # Each iteration is one step but scans megabytes in C: only the clock catches it.
    source = "{% set s = 'x' * 3000000 %}{% for i in range(100000) %}{% if 'zz' in s %}!{% endif %}{% endfor %}"
    with pytest.raises(RenderError, match="max_seconds"):
        _render(source, TemplateLimits(max_seconds=0.2))


def test_limits_do_not_leak_between_threads() -> None:
    source = "{% for i in range(300) %}{{ i % 10 }}{% endfor %}"
    template = compile_template(source)
    results: dict[int, str] = {}

    def work(n: int) -> None:
        limits = TemplateLimits(max_iterations=100) if n % 2 else TemplateLimits()
        for _ in range(30):
            try:
                results[n] = render(template, {}, limits=limits)
            except RenderError as exc:
                results[n] = exc.code

    threads = [threading.Thread(target=work, args=(n,)) for n in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    expected = "0123456789" * 30
    assert results == {n: ("PM820" if n % 2 else expected) for n in range(8)}


def test_template_render_method_goes_through_the_sandbox() -> None:
    template = compile_template("{{ 'x' * n }}")
    assert template.render(n=3) == "xxx"
    with pytest.raises(RenderError, match="max_output_chars"):
        template.render(n=10**9)


def test_syntax_errors_raise_at_compile() -> None:
    with pytest.raises(jinja2.TemplateSyntaxError):
        compile_template("{% for x in %}")


def test_runtime_modules_do_not_import_compile_time_packages() -> None:
    code = (
        "import sys, promptmill.runtime.jinja.sandbox, promptmill.runtime.filters.yamlemit\n"
        "t = promptmill.runtime.jinja.sandbox.compile_template('{{ x|to_yaml }}')\n"
        "promptmill.runtime.jinja.sandbox.render(t, {'x': {'a': 1}})\n"
        "bad = {'yaml', 'jsonschema', 'click', 'watchdog'} & set(sys.modules)\n"
        "assert not bad, bad\n"
    )
    env_path = str(Path(__file__).parents[1] / "compiler")
    subprocess.run([sys.executable, "-c", code], check=True, env={"PYTHONPATH": env_path})


def test_a_str_subclass_prints_as_its_text():
    """A state built with Python enums (`class Kind(str, Enum)`) validates as strings; it
    must print as the string too, not as `Kind.DECISION` (str() of a str-mixin enum)."""
    import enum

    class Kind(str, enum.Enum):  # noqa: UP042 (a StrEnum already prints its value; the mixin does not)
        DECISION = "decision"

    assert render(compile_template("- [{{ k }}] {{ k | upper }}"), {"k": Kind.DECISION}) == "- [decision] DECISION"
    assert render(compile_template("{% for k in ks %}{{ k }};{% endfor %}"), {"ks": [Kind.DECISION]}) == "decision;"
