"""Fast plans give exactly what the sandboxed Jinja render gives, or defer to it."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from promptmill.runtime.jinja.sandbox import compile_template, render
from promptmill.runtime.plans import build_plan, run_plan

json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(10**6), 10**6) | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=20),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=6), children, max_size=4),
    max_leaves=12,
)

TEMPLATES = [
    "- [{{ e.type }}] {{ e.summary }}",
    "{{ e.summary }}\n",
    "{{ e['summary'] }} and {{ e.type }}",
    "- {{ e.name }}: {{ e.description }}\n  parameters: {{ e.parameters | to_json }}",
    "{{ e.type | upper }} {{ e.summary | trim }}",
    "{{ e.nested.deep }}",
    "literal only",
]


def test_plans_exist_for_pure_substitutions():
    for source in TEMPLATES:
        assert build_plan(source) is not None, source


@pytest.mark.parametrize(
    "source",
    [
        "{% if e.type %}x{% endif %}",
        "{{ e.items }}",  # a dict method: Jinja returns the method, not the key
        "{{ e.summary | truncate(10) }}",
        "{{ e.a + e.b }}",
        "{{ e._private }}",
        "{{ range }}",
    ],
)
def test_no_plan_where_jinja_semantics_differ(source):
    assert build_plan(source) is None


ENTRIES = st.dictionaries(
    st.sampled_from(["type", "summary", "name", "description", "parameters", "nested", "items"]),
    json_values,
    max_size=6,
)
# entries every template's lookups find, with values a plan prints itself (no lists or mappings)
PLAIN = st.none() | st.booleans() | st.integers(-(10**6), 10**6) | st.text(max_size=20)
FULL_ENTRIES = st.fixed_dictionaries(
    {
        "type": PLAIN,
        "summary": PLAIN,
        "name": PLAIN,
        "description": PLAIN,
        "parameters": json_values,
        "nested": st.fixed_dictionaries({"deep": PLAIN}),
    }
)


def test_plan_output_equals_jinja():
    """On random entries a plan gives Jinja's text or defers; it must also actually run on
    some of them (a run_plan that always deferred would otherwise pass)."""
    filled = []

    @given(entry=ENTRIES, index=st.integers(0, len(TEMPLATES) - 1))
    def check(entry, index):
        source = TEMPLATES[index]
        got = run_plan(build_plan(source), {"e": entry})
        try:
            expected = render(compile_template(source), {"e": entry})
        except Exception:
            assert got is None  # where Jinja fails, the plan defers (and Jinja then raises)
            return
        if got is not None:
            assert got == expected
            if "{{" in source:
                filled.append(source)

    check()
    assert filled, "run_plan deferred on every entry: the comparison with Jinja never happened"


@given(entry=FULL_ENTRIES, index=st.integers(0, len(TEMPLATES) - 1))
def test_plan_runs_where_every_lookup_finds_a_plain_value(entry, index):
    """Where every key a template reads is present, a plan fills it itself, as Jinja would."""
    source = TEMPLATES[index]
    got = run_plan(build_plan(source), {"e": entry})
    assert got is not None, f"the plan deferred on {entry!r}"
    assert got == render(compile_template(source), {"e": entry})


def test_an_integer_python_will_not_print_defers_to_jinja():
    """str() refuses ints of more than 4300 digits (sys.int_info.default_max_str_digits);
    the plan defers, and the render fails with PM820 instead of a ValueError."""
    from promptmill.core.errors import PromptmillError
    from providers_support import runtime, state

    big = 10**5000
    assert run_plan(build_plan("{{ e.n }} minutes"), {"e": {"n": big}}) is None
    beat = dict(state("companion-beat.state.yaml"), idle_minutes=big)
    with pytest.raises(PromptmillError) as err:
        runtime().render("companion-beat", beat)
    assert err.value.code == "PM820"
    assert run_plan(build_plan("{{ e.n }}"), {"e": {"n": 10**4000}}) == str(10**4000)
