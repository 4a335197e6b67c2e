"""PM613: condition regexes that nest unbounded repeats (exponential backtracking on crafted state)."""

from __future__ import annotations

import re
import time

import pytest

import promptmill
from promptmill.compose.slowregex import nested_quantifier, slow_regex


@pytest.mark.parametrize(
    "pattern",
    [
        r"(a+)+$",
        r"^(\w+\s?)*$",
        r"(x*)*y",
        r"((ab)*c)*",
        r"(?=(a+)+)b",
        r"(x+){40}",
        r"(?:a|(b+))+",
        r"(a+?)+?c",
        r"(?>(a+)+)b",
        r"((a+)+)++",
    ],
)
def test_nested_unbounded_repeats_are_found(pattern):
    assert nested_quantifier(pattern)


@pytest.mark.parametrize(
    "pattern",
    [r"^(a|b)*$", r"urgent|asap", r"(?:ab){2,5}", r"(a{1,3}){1,3}", r"(?>a+)+", r"(a++)+", r"a{0,100}(b+)", r"^release/[0-9]+$", "(quiet"],
)
def test_single_bounded_possessive_and_atomic_repeats_pass(pattern):
    assert not nested_quantifier(pattern)


def test_the_flagged_pattern_really_backtracks_and_the_fix_does_not():
    # why the warning matters: 24 characters already take measurable time, each one more doubles it
    hostile = "a" * 24 + "!"
    t = time.perf_counter()
    assert re.search(r"^(a+)+$", hostile) is None
    slow = time.perf_counter() - t
    t = time.perf_counter()
    assert re.search(r"^a+$", hostile) is None
    fast = time.perf_counter() - t
    assert slow > 100 * fast


def test_lint_warns_at_the_pattern(tmp_path):
    (tmp_path / "prompts").mkdir()
    (tmp_path / "prompts" / "r.yaml").write_text(
        "kind: role\nid: r\ninputs: {type: object, properties: {w: {type: string}}}\nsections:\n"
        '  - id: a\n    text: A.\n    when: {path: state.w, op: regex, value: "^(a+)+$"}\n'
        "  - id: b\n    text: B.\n"
        '    when: {any: [{path: state.w, op: regex, value: "^a+$"}, {not: {path: state.w, op: regex, value: "(x*)*"}}]}\n'
    )
    found = [(d.code, d.severity, d.line, d.col) for d in promptmill.lint(tmp_path).diagnostics]
    assert found == [("PM613", "warning", 7, 45), ("PM613", "warning", 10, 101)], found
    promptmill.compile(tmp_path)  # a warning: the build is written
    rt = promptmill.load(tmp_path / "build")
    assert rt.render("r", {"w": "aaa"}).text == "A.\n\nB."


@pytest.mark.parametrize(
    ("pattern", "why"),
    [
        (r"^(a|a?)+$", "repeats alternatives that overlap"),
        (r"(a|aa)+$", "repeats alternatives that overlap"),
        (r"\d*\d*\d*\d*x", "puts repeats of the same thing side by side"),
        (r".*.*=", "puts repeats of the same thing side by side"),
        (r"(a+)+$", "nests a repeat inside a repeat"),
    ],
)
def test_overlapping_alternatives_and_side_by_side_repeats_are_found(pattern, why):
    assert slow_regex(pattern) == why


@pytest.mark.parametrize("pattern", [r"^(code|test)\b", r"^(a|b)*$", r"\d+\.\d+", r".*foo.*", r"\s*\w+", r"(?:ab|cd)+"])
def test_unambiguous_patterns_pass_the_wider_check(pattern):
    assert slow_regex(pattern) is None
