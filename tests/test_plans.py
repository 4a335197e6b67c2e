"""Fast plans give exactly what the sandboxed Jinja render gives, or defer to it."""

from __future__ import annotations

import pytest
from hypothesis import example, given
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
    # wider plans (issue 28): formatting, filters with constant arguments, loops, conditions
    "- [{{ e.type }}] ({{ '%.3f' % e.score }}) {{ e.summary }}",
    "{{ '%s: %5.1f%%' % (e.name, e.score) }} {{ '%d' % e.score }}",
    "{{ '%.2f' | format(e.score) }} {{ '{:>8.3f}|{}'.format(e.score, e.name) }} {{ '{0}-{0}'.format(e.type) }}",
    "tags: {{ e.tags | join(', ') }}; {{ e.tags | length }}",
    "{{ e.summary | default('none') }} {{ e.missing | default('x') }} {{ e.type | default('empty', true) }}",
    "{{ e.score | round(3) }} {{ e.score | round }} {{ e.score | round(1, 'floor') }}",
    "{{ e.name | title }} {{ e.name | capitalize }} {{ e.name ~ '/' ~ e.type }} {{ e.type | string }}",
    "{% for t in e.tags %}{{ loop.index }}. {{ t }}{% if not loop.last %}, {% endif %}{% endfor %}",
    "{% for t in e.tags %}\n- {{ t }} ({{ loop.index0 }}/{{ loop.length }}){% else %}no tags{% endfor %}",
    "{% for s in e.steps %}\n{{ loop.index }}. {{ s.name }}: {{ s.description }}"
    "{% if s.score is defined %} [{{ '%.1f' % s.score }}]{% endif %}{% endfor %}",
    "{% if e.type == 'fact' %}F{% elif e.type %}{{ e.type }}{% else %}-{% endif %}",
    "{% if e.summary is defined and e.summary %}{{ e.summary }}{% endif %}{% if e.type is none %}(none){% endif %}",
    "{% if e.score > 0.5 or e.type == 'x' %}high{% endif %}",
    "{% for t in e.tags %}{% for u in e.tags %}{{ loop.index }}{{ t }}{{ u }}{% endfor %}{{ loop.revindex }}{% endfor %}",
    """{% if e.name is defined %}
  name: {{ e.name }}
{% endif %}
{%- for t in e.tags %}
    - {{ t }}
{% endfor %}""",
]


def test_plans_exist_for_pure_substitutions():
    for source in TEMPLATES:
        assert build_plan(source) is not None, source


def test_the_benchmark_templates_plan():
    """The templates bench/bench_peers.py renders (and the richer ones of issue 28) fill without Jinja."""
    import sys
    from pathlib import Path

    import yaml

    from promptmill.compiling.bundler import DEFAULT_TEMPLATES

    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))
    import workload

    sections = yaml.safe_load(workload.ROLE)["sections"]
    templates = [s["template"] for s in sections if "template" in s]
    assert len(templates) == 3
    for source in [*templates, DEFAULT_TEMPLATES["tools"], DEFAULT_TEMPLATES["history"]]:
        assert build_plan(source) is not None, source
    for source in (
        "- [{{ m.type }}] ({{ '%.3f' % m.score }}) {{ m.summary }} tags: {{ m.tags | join(', ') }}",
        "- {{ t.name }}: {{ t.description }}\n  parameters: {{ t.parameters | to_json }}",
    ):
        assert build_plan(source) is not None, source


@pytest.mark.parametrize(
    "source",
    [
        "{{ e.items }}",  # a dict method: Jinja returns the method, not the key
        "{{ e.summary | truncate(10) }}",
        "{{ e.a + e.b }}",
        "{{ e._private }}",
        "{{ range }}",
        "{{ '%*d' % (5, e.n) }}",  # a width from the arguments
        "{{ '%(a)s' % e }}",  # a mapping key
        "{{ '%99999d' % e.n }}",  # a width of more than 3 digits
        "{{ '{0.x}'.format(e) }}",  # an attribute in a field
        "{{ '{!r}'.format(e.n) }}",
        "{{ e.tags | join(e.sep) }}",  # an argument that is not a constant
        "{{ e.n | round(3, 'up') }}",
        "{% for k, v in e.pairs %}{{ k }}{% endfor %}",
        "{% for t in e.tags if t %}{{ t }}{% endfor %}",
        "{% for t in e.tags %}{% else %}{{ loop.index }}{% endfor %}",
        "{% for loop in e.tags %}{{ loop }}{% endfor %}",
        "{% for t in e.tags %}{{ loop.cycle('a', 'b') }}{% endfor %}",
        "{% set x = 1 %}{{ x }}",
        "{% if e.tags is sequence %}x{% endif %}",
        "{{ e.a if e.b else e.c }}",
    ],
)
def test_no_plan_where_jinja_semantics_differ(source):
    assert build_plan(source) is None


SCALAR = st.none() | st.booleans() | st.integers(-(10**6), 10**6) | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=12)
KEYS = ["type", "summary", "name", "description", "parameters", "nested", "items", "score", "tags", "steps", "missing"]
ENTRIES = st.dictionaries(
    st.sampled_from(KEYS),
    json_values
    | st.lists(SCALAR, max_size=4)
    | st.lists(st.dictionaries(st.sampled_from(["name", "description", "score"]), SCALAR), max_size=3),
    max_size=8,
)
# entries every template's lookups find, with values a plan prints itself (no lists or mappings)
PLAIN = st.none() | st.booleans() | st.integers(-(10**6), 10**6) | st.text(max_size=20)
NUMBER = st.integers(-(10**6), 10**6) | st.floats(-1e9, 1e9, allow_nan=False)
TEXT = st.text(max_size=20)
FULL_ENTRIES = st.fixed_dictionaries(
    {
        "type": TEXT,
        "summary": PLAIN,
        "name": TEXT,
        "description": PLAIN,
        "parameters": json_values,
        "nested": st.fixed_dictionaries({"deep": PLAIN}),
        "score": NUMBER,
        "tags": st.lists(st.none() | st.booleans() | st.integers(-(10**17), 10**17) | st.text(max_size=8), max_size=5),
        "steps": st.lists(st.fixed_dictionaries({"name": TEXT, "description": PLAIN}, optional={"score": NUMBER}), max_size=4),
    }
)


def test_plan_output_equals_jinja():
    """On random entries a plan gives Jinja's text or defers; it must also actually run on
    some of them (a run_plan that always deferred would otherwise pass)."""
    filled = []

    @given(entry=ENTRIES, index=st.integers(0, len(TEMPLATES) - 1))
    @example(entry={"type": "note", "summary": "tide tables"}, index=0)  # always one entry a plan fills
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


ROLE = """\
kind: role
id: r
budget: {max_tokens: 4000, reserve: 0}
inputs:
  type: object
  properties:
    memory:
      type: array
      items:
        type: object
        required: [type, summary, score]
        properties:
          type: {type: string}
          summary: {type: string}
          score: {type: number}
          tags: {type: array, items: {type: string}}
sections:
  - id: memory
    title: "MEMORY:"
    each: memory
    as: m
    template: >-
      - [{{ m.type }}] ({{ '%.3f' % m.score }}) {{ m.summary }}{% if m.tags is defined %} tags: {{ m.tags | join(', ') }}{% endif %}
    order_by: score
"""


def test_a_wide_plan_survives_the_bundle_and_renders_as_the_sandbox_does(make_project):
    """Compiled to disk and loaded back, the plan is kept and a render with it equals a render
    of the same bundle with its plans taken away (every item through the sandbox)."""
    import dataclasses

    import promptmill
    from promptmill.runtime.engine import Runtime

    root = make_project({"prompts/r.yaml": ROLE})
    promptmill.compile(root)
    rt = promptmill.load(root / "build")
    section = next(s for s in rt.bundle("r").sections if s.id == "memory")
    assert section.plan is not None and section.plan == build_plan(section.template)
    state = {
        "memory": [
            {"type": "fact", "summary": f"entry {i}", "score": i / 7, **({"tags": ["a", f"t{i}"]} if i % 2 else {})} for i in range(30)
        ]
    }
    bare = Runtime(
        {
            name: dataclasses.replace(b, sections=tuple(dataclasses.replace(s, plan=None) for s in b.sections))
            for name, b in ((n, rt.bundle(n)) for n in rt.roles)
        }
    )
    assert bare.bundle("r").sections[0].plan is None
    assert rt.render("r", state).text == bare.render("r", state).text
    assert "(0.143) entry 1 tags: a, t1" in rt.render("r", state).text
