"""The filters a plan applies itself, without Jinja: promptmill's own (`to_json`, `to_yaml`,
`xml_escape`, `xml_text`, `bullets`) and the Jinja built-ins plans may name, each giving exactly
what Jinja's gives for the values a plan passes it (JSON data: never a `Markup` string).

The sandbox (runtime/jinja/filters.py) registers promptmill's own from here, wrapped with its guards
and its treatment of undefined values, so a template renders the same through a plan or through Jinja;
tests/test_plans.py holds the built-ins to Jinja's on generated values.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Mapping
from typing import Any

from .yamlemit import to_yaml as _emit_yaml

MAX_INDENT = 16


def not_json(value: Any) -> Any:
    """`json`'s hook for a value it cannot write: refuse it, naming its type."""
    raise TypeError(f"a {type(value).__name__} value is not JSON data")


def indent_arg(indent: Any, name: str) -> None:
    if indent is not None and (isinstance(indent, bool) or not isinstance(indent, int) or not 0 <= indent <= MAX_INDENT):
        raise ValueError(f"{name}: indent must be an integer from 0 to {MAX_INDENT}, not {indent!r}")


_JSON = json.JSONEncoder(ensure_ascii=False, allow_nan=False, default=not_json)  # stateless: shareable
_ENCODERS: dict[Callable[[Any], Any], json.JSONEncoder] = {not_json: _JSON}  # one per `default` hook (the sandbox has one)


def to_json(value: Any, indent: int | None = None, *, default: Callable[[Any], Any] = not_json) -> str:
    """JSON text of `value` (keys in their order, non-ASCII kept); `indent=` pretty-prints.
    `default` is called for a value JSON cannot hold (the sandbox's names an undefined one)."""
    indent_arg(indent, "to_json")
    try:
        if indent is None:
            encoder = _ENCODERS.get(default)
            if encoder is None:
                encoder = _ENCODERS[default] = json.JSONEncoder(ensure_ascii=False, allow_nan=False, default=default)
            return encoder.encode(value)
        return json.dumps(value, ensure_ascii=False, indent=indent, sort_keys=False, allow_nan=False, default=default)
    except ValueError as exc:  # NaN or infinity
        raise ValueError(f"to_json: {exc}") from None


def to_yaml(value: Any, indent: int = 2) -> str:
    """Block-style YAML of JSON data (see `promptmill.runtime.filters.yamlemit`); no trailing newline."""
    return _emit_yaml(value, indent=indent)


_XML = str.maketrans({"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&apos;"})
_XML_TEXT = str.maketrans({"&": "&amp;", "<": "&lt;"})


def xml_escape(value: Any) -> str:
    """Escape `& < > " '` so the text is safe inside XML tags and attributes."""
    return str(value).translate(_XML)


def xml_text(value: Any) -> str:
    """Escape `&` and `<` only: enough between tags (not inside attributes); `->` and quotes stay readable."""
    return str(value).translate(_XML_TEXT)


def bullets(value: Any) -> str:
    """A list as `- item` lines; lines inside an item are indented under it."""
    if isinstance(value, (str, bytes, Mapping)) or not hasattr(value, "__iter__"):
        raise TypeError(f"bullets expects a list, not {type(value).__name__}")
    return "\n".join("- " + str(item).replace("\n", "\n  ") for item in value)


# -- Jinja's built-ins, for plain values ---------------------------------------------------------
def _text(value: Any) -> str:
    return value if isinstance(value, str) else str(value)


def upper(value: Any) -> str:
    return _text(value).upper()


def lower(value: Any) -> str:
    return _text(value).lower()


def trim(value: Any, chars: str | None = None) -> str:
    return _text(value).strip(chars)


def capitalize(value: Any) -> str:
    return _text(value).capitalize()


_WORD_STARTS = re.compile(r"([-\s({\[<]+)")  # what Jinja's `title` starts a word after


def title(value: Any) -> str:
    """Each word's first character upper case, the rest lower case; a word starts after a run of
    spaces, dashes or opening brackets (Jinja's rule, not `str.title`'s)."""
    return "".join(part[0].upper() + part[1:].lower() for part in _WORD_STARTS.split(_text(value)) if part)


def round_(value: Any, precision: int = 0, method: str = "common") -> Any:
    """Jinja's `round`: Python's `round` for "common", else `math.ceil`/`math.floor` at `precision` places."""
    if method == "common":
        return round(value, precision)
    if method not in ("ceil", "floor"):
        raise ValueError("method must be common, ceil or floor")
    scale = 10**precision
    return (math.ceil if method == "ceil" else math.floor)(value * scale) / scale


def plan_filters() -> dict[str, Callable[..., Any]]:
    """Filter name -> the function a plan applies (runtime/plans.py `FILTERS` names which and their arguments)."""
    return {
        "to_json": to_json,
        "to_yaml": to_yaml,
        "xml_escape": xml_escape,
        "xml_text": xml_text,
        "bullets": bullets,
        "upper": upper,
        "lower": lower,
        "trim": trim,
        "capitalize": capitalize,
        "title": title,
        "string": _text,
        "round": round_,
    }
