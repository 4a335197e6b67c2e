"""The fast state check never accepts what the exact walk refuses."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from promptmill.core.errors import StateError
from promptmill.runtime.statelimits import MAX_STATE_DEPTH, _exact, _fast, check_state_data

leaves = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats()
    | st.text(max_size=5)
    | st.sampled_from([object(), b"bytes", (1, 2), math.inf, float("nan"), {1, 2}, "\ud800", "é\udfff", "ok é"])
)
values = st.recursive(
    leaves,
    lambda c: st.lists(c, max_size=4) | st.dictionaries(st.text(max_size=3) | st.integers(0, 3) | st.just("k\ud800"), c, max_size=4),
    max_leaves=30,
)


@given(values)
def test_fast_accepts_only_what_the_exact_walk_accepts(value):
    fast = type(value) in (dict, list) and _fast(value, set(), 0)
    try:
        _exact(value, (), ())
        exact_ok = True
    except StateError:
        exact_ok = False
    if fast:
        assert exact_ok
    # and the public function agrees with the exact walk
    try:
        check_state_data(value)
        public_ok = True
    except StateError:
        public_ok = False
    assert public_ok == exact_ok


def test_depth_limit_applies_on_both_paths():
    deep: dict = {}
    node = deep
    for _ in range(MAX_STATE_DEPTH + 1):
        node["x"] = {}
        node = node["x"]
    with pytest.raises(StateError) as err:
        check_state_data(deep)
    assert err.value.code == "PM812"


def test_skipped_lists_are_not_walked():
    state = {"memory": [object()], "task": {"id": "a"}}
    check_state_data(state, (("memory",),))  # the list is checked item by item later
    with pytest.raises(StateError) as err:
        check_state_data(state)
    assert err.value.errors[0][0] == "state.memory[0]"


@pytest.mark.parametrize(
    ("state", "where"),
    [
        ({"a": ["fine", "caf\u00e9", "x\ud800"]}, "state.a[2]"),
        ({"b": {"k\udc00": 1}}, "state.b"),
        ("\ud800", "state"),
    ],
)
def test_lone_surrogates_are_refused_with_their_path(state, where):
    with pytest.raises(StateError, match=r"lone surrogate|not valid text") as err:
        check_state_data(state)
    assert err.value.code == "PM811"
    assert err.value.errors[0][0] == where
    check_state_data({"a": ["caf\u00e9 \U0001f600 \u05d0"]})  # real non-ASCII text is fine
