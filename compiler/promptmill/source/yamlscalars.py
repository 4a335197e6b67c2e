"""YAML 1.2 core-schema scalars: what a plain or tagged scalar means as JSON-like data.

Plain scalars are null (`null`, `Null`, `NULL`, `~`, empty), booleans
(`true`/`false` in three spellings), integers (decimal, `0o`, `0x`) or floats
(decimal with optional exponent); anything else is a string. So `yes`, `on`,
`2001-12-14` and `1_000` stay strings, unlike PyYAML's YAML 1.1 defaults.
`.inf` and `.nan` are refused: JSON cannot represent them. Tags are allowed only
when they are the standard core ones (`!!str`, `!!int`, `!!float`, `!!bool`,
`!!null`, and `!!map`/`!!seq` on collections).
"""

from __future__ import annotations

import math
import re
from typing import Any

STD = "tag:yaml.org,2002:"
_INT = re.compile(r"[-+]?[0-9]+\Z")
_OCT = re.compile(r"0o[0-7]+\Z")
_HEX = re.compile(r"0x[0-9a-fA-F]+\Z")
_FLOAT = re.compile(r"[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?\Z")
_NONFINITE = re.compile(r"(?:[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))\Z")
_NULLS = frozenset(("", "~", "null", "Null", "NULL"))
_BOOLS = {"true": True, "True": True, "TRUE": True, "false": False, "False": False, "FALSE": False}
_NUM_START = frozenset("-+.0123456789")
_WORD_START = frozenset("~nNtTfF")
_MAX_INT_DIGITS = 4000  # Python refuses int(str) beyond 4300 digits by default


class ScalarProblem(Exception):
    """A scalar that cannot become data: (code, message, hint)."""

    def __init__(self, code: str, message: str, hint: str | None = None):
        super().__init__(message)
        self.code, self.message, self.hint = code, message, hint


def short_tag(tag: str) -> str:
    """`tag:yaml.org,2002:int` -> `!!int`; other tags unchanged."""
    return "!!" + tag[len(STD) :] if tag.startswith(STD) else tag


def resolve_plain(text: str) -> Any:
    """An untagged plain scalar's value under the YAML 1.2 core schema."""
    if not text:
        return None
    first = text[0]
    if first in _NUM_START:
        if _INT.match(text):
            return _int(text, 10)
        if _FLOAT.match(text):
            return _finite(float(text), text)
        if _OCT.match(text):
            return _int(text[2:], 8)
        if _HEX.match(text):
            return _int(text[2:], 16)
        if _NONFINITE.match(text):
            _finite(math.nan, text)
        return text
    if first in _WORD_START:
        if text in _NULLS:
            return None
        return _BOOLS.get(text, text)
    return text


def _int(digits: str, base: int) -> int:
    if len(digits) > _MAX_INT_DIGITS:
        raise ScalarProblem(
            "PM201",
            f"the integer has {len(digits)} digits; at most {_MAX_INT_DIGITS} are supported",
        )
    return int(digits, base)


def _finite(number: float, text: str) -> float:
    if not math.isfinite(number):
        raise ScalarProblem(
            "PM201",
            f"'{text}' is not a finite number and cannot be represented in JSON",
            "quote it if you mean the text, or use a large finite number",
        )
    return number


def resolve_tagged(tag: str, text: str) -> Any:
    """A scalar with an explicit tag: only the core-schema tags are allowed."""
    if tag == "!" or tag == STD + "str":
        return text
    kind = tag[len(STD) :] if tag.startswith(STD) else None
    if kind in ("int", "float", "bool", "null"):
        value = resolve_plain(text)
        ok = {
            "int": type(value) is int,
            "float": type(value) in (int, float),
            "bool": type(value) is bool,
            "null": value is None,
        }[kind]
        if not ok:
            raise ScalarProblem("PM109", f"'{text}' is not a valid {short_tag(tag)} value")
        return float(value) if kind == "float" else value
    raise ScalarProblem("PM109", *tag_problem(tag))


def tag_problem(tag: str) -> tuple[str, str]:
    """The message and hint for a tag safe loading does not allow."""
    hint = "remove the tag: templates and render states are plain data (strings, numbers, booleans, null, lists, mappings)"
    if "python/" in tag:
        return (
            f"the tag '{short_tag(tag)}' would create a Python object; promptmill loads plain data only",
            hint,
        )
    if tag == STD + "merge":
        return (
            "merge keys (<<) are not supported",
            "write the keys out, or share text with a fragment",
        )
    return f"the YAML tag '{short_tag(tag)}' is not allowed", hint
