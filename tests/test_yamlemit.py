"""The YAML emitter: exact round trips through PyYAML, deterministic and readable output."""

from __future__ import annotations

import math

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from promptmill.runtime.filters.yamlemit import to_yaml

# Strings that a careless emitter writes plain and a parser reads as something else,
# or that need escapes or a particular block header.
NASTY = [
    "",
    " ",
    "  lead",
    "trail ",
    "yes",
    "No",
    "ON",
    "off",
    "y",
    "N",
    "~",
    "null",
    "NULL",
    "true",
    "False",
    "0",
    "-1",
    "+1",
    "007",
    "0o17",
    "0x1F",
    "0b101",
    "1_000",
    "1:20",
    "1.5",
    ".5",
    "1e3",
    "1.0e+3",
    "-.inf",
    ".NaN",
    "2024-01-02",
    "2024-1-2 10:00",
    "<<",
    "=",
    "-",
    "- x",
    "? x",
    ": x",
    "a: b",
    "a #b",
    "#c",
    "&a",
    "*a",
    "!tag",
    "|",
    ">",
    "'q'",
    '"q"',
    "%YAML",
    "@x",
    "`x",
    "[a]",
    "{a}",
    "a,b",
    "...",
    "---",
    "tab\there",
    "\t",
    "line\nbreak",
    "\n",
    "\n\n",
    "a\n",
    "a\n\n",
    " a\nb",
    "\na",
    "a \nb ",
    "a\r\nb",
    "\r",
    "nul\0",
    "bell\a",
    "\x1b[0m",
    "\x85",
    "\u2028",
    "\u2029",
    "\xa0",
    "\ufeff",
    "\ufffe",
    "\U0001f600 emoji",
    "é",
    "\ud7ff",
    "\ue000",
    "a:",
    "a: ",
    "k\\",
    "back\\slash",
    'quote"in',
    "x" * 1200,
]


@pytest.mark.parametrize("text", NASTY, ids=repr)
def test_nasty_strings_round_trip(text: str) -> None:
    for value in (text, {"k": text}, [text], {text: [text, {"n": text}]}):
        out = to_yaml(value)
        assert yaml.safe_load(out) == value, out


@pytest.mark.parametrize("indent", [2, 3, 4, 8])
def test_indent_widths_round_trip(indent: int) -> None:
    value = {"a": [1, {"b": " x\ny\n", "c": [[], {}]}, ["p", ["q"]]], "d": {"e": "f\n\n"}, "z": 0}
    out = to_yaml(value, indent=indent)
    assert yaml.safe_load(out) == value, out


def test_readable_block_output() -> None:
    value = {"task": "Fix the bug", "steps": ["read", "edit\nthen test"], "meta": {}, "count": 3}
    assert to_yaml(value) == ("task: Fix the bug\nsteps:\n  - read\n  - |-\n    edit\n    then test\nmeta: {}\ncount: 3")


def test_scalars() -> None:
    assert to_yaml(None) == "null"
    assert to_yaml(True) == "true"
    assert to_yaml(1e20) == "1.0e+20"
    assert to_yaml(1.5e-07) == "1.5e-07"
    assert to_yaml([]) == "[]"
    assert to_yaml({}) == "{}"
    assert to_yaml("yes") == '"yes"'
    assert not to_yaml({"a": "b\n"}).endswith("\n")


def test_block_headers() -> None:
    assert to_yaml({"a": "x\ny"}).startswith("a: |-\n")
    assert to_yaml({"a": "x\ny\n", "b": 1}).startswith("a: |\n")
    assert to_yaml({"a": "x\n\n", "b": 1}).startswith("a: |+\n")
    assert to_yaml({"a": " x\ny", "b": 1}).startswith("a: |2-\n")


def test_deterministic_and_ordered() -> None:
    value = {"b": 1, "a": 2}
    assert to_yaml(value) == to_yaml(dict(value)) == "b: 1\na: 2"


@pytest.mark.parametrize(
    "bad",
    [float("nan"), float("inf"), {1: "x"}, {"a": {1, 2}}, object(), b"bytes"],
    ids=["nan", "inf", "int-key", "set", "object", "bytes"],
)
def test_non_json_values_raise_value_error(bad: object) -> None:
    with pytest.raises(ValueError):
        to_yaml(bad)


@pytest.mark.parametrize("indent", [0, 1, 9, True, "2"])
def test_bad_indent(indent: object) -> None:
    with pytest.raises(ValueError):
        to_yaml({"a": 1}, indent=indent)  # type: ignore[arg-type]


def test_too_deep() -> None:
    value: list = []
    for _ in range(300):
        value = [value]
    with pytest.raises(ValueError, match="deeper"):
        to_yaml(value)


_text = st.one_of(
    st.text(max_size=30),
    st.sampled_from(NASTY),
    st.lists(st.sampled_from(["a", " ", "\n", "\t", ":", "#", "-", "'", '"', "\\", "é", "\r"]), max_size=12).map("".join),
)
_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(10**30), max_value=10**30),
    st.floats(allow_nan=False, allow_infinity=False),
    _text,
)
_json = st.recursive(
    _scalars,
    lambda children: st.one_of(
        st.lists(children, max_size=5),
        st.dictionaries(_text, children, max_size=5),
    ),
    max_leaves=25,
)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(value=_json, indent=st.integers(min_value=2, max_value=5))
def test_round_trip_property(value: object, indent: int) -> None:
    out = to_yaml(value, indent=indent)
    assert not out.endswith("\n") or out.strip() == ""
    loaded = yaml.safe_load(out)
    assert _same(loaded, value), out


def _same(a: object, b: object) -> bool:
    """Equality that also tells -0.0 from 0.0 (YAML keeps the sign)."""
    if isinstance(a, float) and isinstance(b, float):
        return a == b and math.copysign(1, a) == math.copysign(1, b)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict) and isinstance(b, dict):
        return list(a) == list(b) and all(_same(a[k], b[k]) for k in a)
    return type(a) is type(b) and a == b
