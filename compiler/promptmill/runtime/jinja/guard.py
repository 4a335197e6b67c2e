"""Per-render work and size limits for sandboxed templates (runtime side).

A template from an untrusted author must not hang or exhaust memory, so every
place where template code can do unbounded work or build an unbounded value is
routed through one of the guards here:

- a *step budget* per render: loop iterations (all loops, all ranges, items a
  filter walks through) and calls (macros, methods, recursive loops);
- a wall-clock deadline, checked at those steps: a backstop for work the step
  budget cannot see, such as C-speed string searches over large values;
- a cap on every string a template builds (`+`, `*`, `~`, `%`, `str.format`,
  growing `str` methods and filters) at `max_output_chars`;
- a cap on all text produced by `{{ ... }}` and template data, set blocks and
  macro bodies included (`max_produced_chars`);
- a cap on integer sizes for `**` and `*`.

The budget of the render in progress lives in a `ContextVar`, so renders in
different threads never share counters. Guards raise `LimitError`; the sandbox
turns it into a `RenderError` (PM820) with the template line.
"""

from __future__ import annotations

import functools
import math
import operator
import re
import time
from collections.abc import ItemsView, Iterator, KeysView, Mapping, ValuesView
from contextvars import ContextVar
from typing import Any

from jinja2.runtime import Undefined

__all__ = [
    "StepBudget",
    "LimitError",
    "activate",
    "active",
    "binop",
    "bounded_range",
    "check_call",
    "check_printf",
    "check_text",
    "concat",
    "deactivate",
    "iterate",
    "produce",
    "weigh",
]

MAX_INT_BITS = 20_000  # about 6,000 decimal digits; Python prints at most 4,300


class LimitError(Exception):
    """A template went over one of its render limits."""


class StepBudget:
    """The mutable counters of one render."""

    __slots__ = (
        "max_steps",
        "steps_left",
        "max_chars",
        "max_range",
        "max_produced",
        "produced_left",
        "max_seconds",
        "deadline",
    )

    def __init__(
        self,
        max_steps: int,
        max_chars: int,
        max_range: int,
        max_produced: int,
        max_seconds: float | None = None,
    ):
        self.max_steps = self.steps_left = max_steps
        self.max_chars = max_chars
        self.max_range = max_range
        self.max_produced = self.produced_left = max_produced
        self.max_seconds = max_seconds
        self.deadline = math.inf if max_seconds is None else time.monotonic() + max_seconds

    def charge(self, steps: int) -> None:
        """Spend `steps`; also the checkpoint for the wall-clock deadline."""
        self.steps_left -= steps
        self.check()

    def check(self) -> None:
        if self.steps_left < 0:
            raise LimitError(
                f"the template ran more than {self.max_steps:,} loop iterations and calls"
                " (TemplateLimits.max_iterations); loops over large ranges or nested loops?"
            )
        if time.monotonic() > self.deadline:
            raise LimitError(f"the template ran longer than {self.max_seconds} seconds (TemplateLimits.max_seconds)")


_ACTIVE: ContextVar[StepBudget | None] = ContextVar("promptmill_template_budget", default=None)


def activate(budget: StepBudget) -> Any:
    """Make `budget` the current one; returns a token for `deactivate`."""
    return _ACTIVE.set(budget)


def deactivate(token: Any) -> None:
    _ACTIVE.reset(token)


def active() -> StepBudget:
    """The budget of the render in progress (guards refuse to run outside one)."""
    budget = _ACTIVE.get()
    if budget is None:
        raise LimitError("template code ran outside promptmill.runtime.jinja.sandbox.render()")
    return budget


def check_text(length: int, what: str = "a string") -> None:
    """Refuse to build a string longer than the output cap."""
    cap = active().max_chars
    if length > cap:
        raise LimitError(
            f"the template tried to build {what} of about {length:,} characters; the limit is {cap:,} (TemplateLimits.max_output_chars)"
        )


def weigh(value: Any, limit: int | None = None) -> int:
    """Estimate `len(str(value))` without building it; raise once it passes `limit`.

    Containers can share references (`[s, s, s]` nested a few times), so a small
    value can print as gigabytes: this walk stops as soon as the estimate passes
    `limit` (default: the output cap), so it never costs more than that many steps.
    """
    if limit is None:
        limit = active().max_chars
    total = 0
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            total += len(item) + 2
        elif isinstance(item, bool) or item is None or isinstance(item, float):
            total += 8
        elif isinstance(item, int):
            total += item.bit_length() // 3 + 2
        elif isinstance(item, (bytes, bytearray)):
            total += 4 * len(item) + 3
        elif isinstance(item, (Mapping, ItemsView)):
            pairs = item if isinstance(item, ItemsView) else item.items()
            total += 2 + 4 * len(pairs)
            if total <= limit:
                for key, val in pairs:
                    stack.append(key)
                    stack.append(val)
        elif isinstance(item, (list, tuple, set, frozenset, KeysView, ValuesView)):
            total += 2 + 2 * len(item)
            if total <= limit:
                stack.extend(item)
        elif isinstance(item, Undefined):  # strict even inside lists: [missing] fails
            item._fail_with_undefined_error()
        else:
            total += 64
        if total > limit:
            raise LimitError(f"a value would print as more than {limit:,} characters (TemplateLimits.max_output_chars)")
    return total


def produce(value: Any) -> Any:
    """The environment's `finalize`: count every `{{ }}` result and template chunk.
    `None` (JSON null, an absent optional input) prints as nothing, never as the word None."""
    if value is None:
        return ""
    budget = _ACTIVE.get()
    if budget is None:  # constant folding at compile time: nothing to count
        return value
    if isinstance(value, str):
        # a str subclass (a `class Kind(str, Enum)` member) prints as its text, not as Kind.X
        text = value if type(value) is str else str.__str__(value)
    else:
        weigh(value)
        text = str(value)
    budget.produced_left -= len(text)
    if budget.produced_left < 0:
        raise LimitError(
            f"the template produced more than {budget.max_produced:,} characters of text,"
            " set blocks and macro bodies included (TemplateLimits.max_produced_chars)"
        )
    return text


def bounded_range(*args: int) -> range:
    """The template's `range`: at most `max_range` items (charged when iterated)."""
    rng = range(*args)
    budget = active()
    if len(rng) > budget.max_range:
        raise LimitError(f"range() of {len(rng):,} items is larger than {budget.max_range:,} (TemplateLimits.max_range)")
    return rng


def iterate(iterable: Any) -> Iterator[Any]:
    """A loop's iterable, charging one step per item (and checking the clock)."""
    budget = active()
    if hasattr(iterable, "__len__"):
        budget.charge(0)
        len(iterable)  # a strict undefined fails here, before the loop starts
    return _counted(iter(iterable), budget)


def _counted(items: Iterator[Any], budget: StepBudget) -> Iterator[Any]:
    for item in items:
        budget.steps_left -= 1
        if budget.steps_left < 0 or not budget.steps_left & 63:
            budget.check()
        yield item


_BINOPS = {
    "+": operator.add,
    "-": operator.sub,
    "*": operator.mul,
    "/": operator.truediv,
    "//": operator.floordiv,
    "**": operator.pow,
    "%": operator.mod,
}
_SEQUENCES = (str, bytes, list, tuple)


def binop(op: str, left: Any, right: Any) -> Any:
    """An intercepted binary operator (`+`, `*`, `**`, `%`) with size checks first."""
    if op == "*":
        _check_repeat(left, right)
        _check_repeat(right, left)
        if _is_int(left) and _is_int(right) and left.bit_length() + right.bit_length() > MAX_INT_BITS:
            raise LimitError(f"an integer product is too large (over {MAX_INT_BITS:,} bits)")
    elif op == "+":
        if isinstance(left, (str, bytes)) and isinstance(right, (str, bytes)):
            check_text(len(left) + len(right))
        elif isinstance(left, (list, tuple)) and isinstance(right, (list, tuple)):
            active().charge(len(left) + len(right))
    elif op == "**":
        if _is_int(left) and _is_int(right) and right > 0 and abs(left) > 1:
            bits = left.bit_length() * right
            if bits > MAX_INT_BITS:
                raise LimitError(f"an integer power is too large (about {bits:,} bits; the limit is {MAX_INT_BITS:,})")
    elif op == "%" and isinstance(left, (str, bytes)):
        check_printf(left, right)
    return _BINOPS[op](left, right)


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _check_repeat(seq: Any, count: Any) -> None:
    if isinstance(seq, _SEQUENCES) and _is_int(count) and count > 0:
        if isinstance(seq, (str, bytes)):
            check_text(len(seq) * count)
        else:
            active().charge(len(seq) * count)


def concat(parts: tuple[Any, ...]) -> str:
    """The `~` operator: join the parts as text, refusing results over the cap."""
    cap = active().max_chars
    texts = []
    for part in parts:
        if not isinstance(part, str):
            weigh(part, cap)
            part = str(part)
        texts.append(part)
    check_text(sum(map(len, texts)))
    return "".join(texts)


_PRINTF = re.compile(
    r"%(?:\((?P<key>[^)]*)\))?[-#0 +]*(?P<width>\*|\d+)?(?:\.(?P<prec>\*|\d+))?[hlL]?(?P<conv>.)",
    re.S,
)


def check_printf(fmt: str | bytes, args: Any) -> None:
    """Bound the length of `fmt % args` (also the `format` filter) before building it."""
    text = fmt.decode("latin-1") if isinstance(fmt, bytes) else fmt
    specs = _printf_specs(text) if len(text) <= 256 else _parse_printf(text)
    if not specs:
        return
    positional = list(args) if isinstance(args, tuple) else [args]
    mapping = args if isinstance(args, Mapping) else None
    estimate = len(text)
    index = 0
    for key, sizes in specs:
        for size in sizes:
            if size == -1:  # `*`: the width comes from the arguments
                star = positional[index] if index < len(positional) else 0
                index += 1
                estimate += star if _is_int(star) and star > 0 else 0
            else:
                estimate += size
        if key is not None and mapping is not None:
            value = mapping.get(key, "")
        elif index < len(positional):
            value = positional[index]
            index += 1
        else:
            value = ""
        if isinstance(value, str):
            estimate += len(value)
        elif not isinstance(value, float):
            estimate += weigh(value)
        estimate += 330  # room for any number's digits
        check_text(estimate, "a %-formatted string")


def _parse_printf(text: str) -> tuple[tuple[str | None, tuple[int, ...]], ...]:
    specs = []
    for match in _PRINTF.finditer(text):
        if match["conv"] == "%":
            continue
        sizes = tuple(-1 if size == "*" else int(size) if len(size) < 12 else 10**12 for size in (match["width"], match["prec"]) if size)
        specs.append((match["key"], sizes))
    return tuple(specs)


_printf_specs = functools.lru_cache(maxsize=512)(_parse_printf)


_WIDTH_METHODS = frozenset({"center", "ljust", "rjust", "zfill"})


def check_call(func: Any, args: tuple[Any, ...]) -> tuple[Any, ...]:
    """Size checks for `str` (and `bytes`) methods that can grow text; may rewrite args."""
    owner = getattr(func, "__self__", None)
    if not isinstance(owner, (str, bytes)):
        return args
    text: Any = owner  # str or bytes: the methods checked here are the same on both
    name = getattr(func, "__name__", "")
    if name in _WIDTH_METHODS and args and _is_int(args[0]):
        check_text(args[0])
    elif name == "expandtabs":
        size = args[0] if args and _is_int(args[0]) else 8
        check_text(len(text) + text.count("\t" if isinstance(text, str) else b"\t") * max(size, 0))
    elif name == "replace" and len(args) >= 2:
        old, new = args[0], args[1]
        if isinstance(old, type(owner)) and isinstance(new, type(owner)) and len(new) > len(old):
            hits = text.count(old) + 1 if old else len(text) + 1
            if len(args) > 2 and _is_int(args[2]) and args[2] >= 0:
                hits = min(hits, args[2])
            check_text(len(owner) + hits * (len(new) - len(old)))
    elif name == "join" and args:
        items = list(iterate(args[0]))
        size = sum(len(i) if isinstance(i, (str, bytes)) else 0 for i in items)
        check_text(size + len(owner) * max(len(items) - 1, 0))
        return (items, *args[1:])
    elif name == "translate" and args and isinstance(args[0], Mapping):
        longest = max((len(v) for v in args[0].values() if isinstance(v, (str, bytes))), default=1)
        check_text(len(owner) * max(longest, 1))
    return args
