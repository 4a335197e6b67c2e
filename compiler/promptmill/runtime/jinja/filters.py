"""Template filters: promptmill's own (`to_json`, `to_yaml`, `xml_escape`, `xml_text`, `bullets`)
and Jinja's built-ins wrapped with size and work guards (runtime side).

Every filter a template can name runs inside `guarded()`: values a filter turns
into text are weighed first (see `guard.weigh`), filters that walk a list
charge its length to the render's step budget, a few filters whose output can
outgrow their input (`center`, `indent`, `replace`, `wordwrap`, `format`,
`batch`, `slice`, `tojson`) check their arguments, and no filter may return a
string longer than the output cap.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from jinja2.filters import make_attrgetter
from jinja2.runtime import Undefined
from jinja2.utils import pass_eval_context

from ..filters import plain as text_filters
from ..filters.plain import indent_arg, not_json, xml_escape, xml_text
from . import guard

__all__ = ["guarded", "promptmill_filters"]


# Filters that turn their input into text: weigh a non-string input first.
_STRINGIFY = frozenset(
    "capitalize center e escape forceescape format indent lower pprint replace safe"
    " string striptags title tojson trim truncate upper urlencode urlize wordcount"
    " wordwrap xmlattr to_json to_yaml xml_escape xml_text bullets".split()
)
# Filters that walk every item of their input: charge its length as steps.
_WALK = frozenset(
    "batch dictsort groupby items list map max min reject rejectattr reverse select selectattr slice sort sum unique bullets".split()
)


# Filters whose arguments `_check_args` inspects.
_CHECKED = frozenset("center indent replace wordwrap format batch slice tojson".split())


def _fail_not_json(value: Any) -> Any:
    if isinstance(value, Undefined):
        value._fail_with_undefined_error()
    return not_json(value)


def to_json(value: Any, indent: int | None = None) -> str:
    """JSON text of `value` (runtime/filters/plain.py); an undefined value inside is named as such."""
    return text_filters.to_json(value, indent, default=_fail_not_json)


def to_yaml(value: Any, indent: int = 2) -> str:
    """Block-style YAML of JSON data (runtime/filters/plain.py); no trailing newline."""
    if isinstance(value, Undefined):
        value._fail_with_undefined_error()
    return text_filters.to_yaml(value, indent)


def bullets(value: Any) -> str:
    """A list as `- item` lines (runtime/filters/plain.py)."""
    if isinstance(value, Undefined):
        value._fail_with_undefined_error()
    return text_filters.bullets(value)


def promptmill_filters() -> dict[str, Callable[..., Any]]:
    """promptmill's own filters, unguarded (the environment wraps them)."""
    return {"to_json": to_json, "to_yaml": to_yaml, "xml_escape": xml_escape, "xml_text": xml_text, "bullets": bullets}


def _value_index(func: Callable[..., Any]) -> int:
    return 1 if getattr(func, "jinja_pass_arg", None) is not None else 0


def _check_args(name: str, value: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
    """Argument checks for the filters whose output can outgrow their input."""

    def arg(pos: int, key: str, default: Any) -> Any:
        return args[pos] if len(args) > pos else kwargs.get(key, default)

    if name == "center":
        width = arg(0, "width", 80)
        if isinstance(width, int):
            guard.check_text(width)
    elif name == "indent":
        width = arg(0, "width", 4)
        step = len(width) if isinstance(width, str) else width if isinstance(width, int) else 0
        text = str(value)
        guard.check_text(len(text) + max(step, 0) * (text.count("\n") + 1))
    elif name == "replace":
        count = arg(2, "count", None)
        extra = () if count is None else (count,)
        guard.check_call(str(value).replace, (arg(0, "old", ""), arg(1, "new", ""), *extra))
    elif name == "wordwrap":
        text = str(value)
        width = arg(0, "width", 79)
        wrap = arg(2, "wrapstring", None) or "\n"
        lines = len(text) // max(width, 1) + text.count("\n") + 1 if isinstance(width, int) else len(text)
        guard.check_text(len(text) + lines * len(str(wrap)))
    elif name == "format":
        guard.check_printf(str(value), kwargs if kwargs else args)
    elif name == "batch":
        count = arg(0, "linecount", 0)
        if isinstance(count, int):
            guard.active().charge(max(count, 0))
    elif name == "slice":
        count = arg(0, "slices", 0)
        if isinstance(count, int):
            guard.active().charge(max(count, 0))
    elif name == "tojson":
        indent_arg(arg(0, "indent", None), "tojson")


def guarded(name: str, func: Callable[..., Any]) -> Callable[..., Any]:
    """Wrap a filter with the work and size guards (keeps Jinja's pass_* marker)."""
    at = _value_index(func)
    stringify = name in _STRINGIFY
    walk = name in _WALK
    checked = name in _CHECKED

    @functools.wraps(func)
    def run(*args: Any, **kwargs: Any) -> Any:
        budget = guard.active()
        value: Any = args[at] if len(args) > at else None
        if stringify and not isinstance(value, (str, int, float, Undefined)):
            guard.weigh(value)
        if walk and hasattr(value, "__len__") and not isinstance(value, Undefined):
            budget.charge(len(value))
        if checked:
            _check_args(name, value, args[at + 1 :], kwargs)
        result = func(*args, **kwargs)
        if isinstance(result, str) and len(result) > budget.max_chars:
            guard.check_text(len(result), f"a |{name} result")
        return result

    return run


@pass_eval_context
def safe_join(eval_ctx: Any, value: Any, d: str = "", attribute: str | int | None = None) -> str:
    """Jinja's `join`, with the total length checked before the text is built."""
    items = list(guard.iterate(value))
    if attribute is not None:
        getter = make_attrgetter(eval_ctx.environment, attribute)
        items = [getter(i) for i in items]
    texts = []
    for item in items:
        if not isinstance(item, str):
            guard.weigh(item)
            item = str(item)
        texts.append(item)
    sep = str(d)
    guard.check_text(sum(map(len, texts)) + len(sep) * max(len(texts) - 1, 0), "a |join result")
    return sep.join(texts)
