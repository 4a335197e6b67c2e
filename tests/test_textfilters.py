"""The filters a plan applies without Jinja (runtime/filters/plain.py) give exactly what Jinja's give.

Plans render most templates without loading Jinja; a filter they apply must agree with the one the
sandbox applies, byte for byte, on every value a plan may pass it (JSON scalars, and for promptmill's
own filters JSON data). The Jinja side is the real thing: jinja2.filters and the sandbox's filters.
"""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from jinja2 import filters as jinja_filters

from promptmill.runtime.filters import plain as textfilters
from promptmill.runtime.jinja import filters as sandbox_filters

TEXT = st.text(st.characters(codec="utf-8"), max_size=60) | st.sampled_from(
    ["", " a-b (c [d <e {f", "ǅungla ßtraße", "İstanbul", "o'neil mc-DONALD", "\t x \n", "ﬁle ǆ ǈ"]
)
SCALARS = TEXT | st.integers(-(10**12), 10**12) | st.floats(allow_nan=False, allow_infinity=False) | st.booleans() | st.none()
JSON = st.recursive(SCALARS, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(TEXT, inner, max_size=4), max_leaves=12)

BUILTINS = {
    "upper": jinja_filters.do_upper,
    "lower": jinja_filters.do_lower,
    "trim": jinja_filters.do_trim,
    "capitalize": jinja_filters.do_capitalize,
    "title": jinja_filters.do_title,
    "string": jinja_filters.soft_str,
}


def test_every_filter_a_plan_may_name_is_here():
    from promptmill.runtime.plans import FILTERS

    own = set(textfilters.plan_filters())
    handled_in_plans = {"default", "join", "length", "count"}  # applied by plans.py itself
    assert set(FILTERS) - handled_in_plans <= own, sorted(set(FILTERS) - handled_in_plans - own)


@settings(max_examples=300, deadline=None)
@given(value=SCALARS, name=st.sampled_from(sorted(BUILTINS)))
def test_the_builtins_equal_jinjas(value, name):
    assert textfilters.plan_filters()[name](value) == BUILTINS[name](value)


@settings(max_examples=200, deadline=None)
@given(value=TEXT, chars=st.none() | st.text(max_size=3))
def test_trim_with_characters_equals_jinjas(value, chars):
    assert textfilters.trim(value, chars) == jinja_filters.do_trim(value, chars)


@settings(max_examples=300, deadline=None)
@given(
    value=st.integers(-(10**9), 10**9) | st.floats(-1e12, 1e12, allow_nan=False),
    precision=st.integers(0, 4),
    method=st.sampled_from(["common", "ceil", "floor"]),
)
def test_round_equals_jinjas(value, precision, method):
    mine, theirs = textfilters.round_(value, precision, method), jinja_filters.do_round(value, precision, method)
    assert mine == theirs and type(mine) is type(theirs)
    assert math.copysign(1, mine) == math.copysign(1, theirs)


def test_round_refuses_an_unknown_method_as_jinja_does():
    with pytest.raises(ValueError, match="common, ceil or floor"):
        textfilters.round_(1.5, 0, "up")
    with pytest.raises(Exception, match="common, ceil or floor"):
        jinja_filters.do_round(1.5, 0, "up")


@settings(max_examples=200, deadline=None)
@given(value=JSON, indent=st.none() | st.integers(0, 4))
def test_promptmills_own_filters_are_the_sandboxs(value, indent):
    assert textfilters.to_json(value, indent) == sandbox_filters.to_json(value, indent)
    assert textfilters.to_yaml(value) == sandbox_filters.to_yaml(value)
    assert textfilters.xml_escape(value) == sandbox_filters.xml_escape(value)
    assert textfilters.xml_text(value) == sandbox_filters.xml_text(value)
    if isinstance(value, list):
        assert textfilters.bullets(value) == sandbox_filters.bullets(value)


def test_plans_apply_them_without_loading_jinja():
    """A fresh interpreter runs a plan with every filter it may name and never imports jinja2."""
    import subprocess
    import sys

    code = (
        "import sys\n"
        "from promptmill.runtime.plans import run_plan\n"
        "names = ['upper', 'lower', 'trim', 'title', 'capitalize', 'string', 'xml_escape', 'xml_text', 'to_json', 'to_yaml']\n"
        "steps = tuple(('e', ('fl', n, ('p', ('x',)), ())) for n in names) + (('e', ('fl', 'round', ('p', ('n',)), (1,))),)\n"
        "print(repr(run_plan(steps, {'x': 'héllo <wörld> (a-b)', 'n': 2.675})))\n"
        "print(sorted(m for m in sys.modules if m.startswith('jinja2')))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.splitlines()
    assert out[-1] == "[]", out
    assert out[0].startswith("'HÉLLO <WÖRLD> (A-B)héllo <wörld> (a-b)") and out[0].endswith("2.7'"), out[0]  # not deferred
