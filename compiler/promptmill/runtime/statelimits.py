"""Is the render state JSON data of a sane size? Checked on every render.

`check_state_data` walks the state (lists that list sections consume are
skipped: their items are checked one at a time, with the same function, when
they are offered to the budget). It has a fast path for the common case,
plain dicts, lists, strings, numbers, booleans and None, and fall back to the
exact walk, which names the offending state path, only when the fast path
sees anything else.

Limits: MAX_STATE_NODES values, MAX_STATE_CHARS characters of text,
MAX_STATE_DEPTH levels of nesting. Refusals are StateError PM811 (not JSON
data: an object, NaN, a non-string key, text with a lone surrogate, which no
provider accepts) or PM812 (too large or too deep).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from ..core.errors import StateError

MAX_STATE_NODES = 1_000_000
MAX_STATE_CHARS = 8_000_000
MAX_STATE_DEPTH = 128


def bad_text(s: str) -> bool:
    """True when `s` holds a lone surrogate (not valid Unicode: it cannot be sent as UTF-8)."""
    if s.isascii():
        return False
    try:
        s.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def _path(path: tuple) -> str:
    out = "state"
    for p in path:
        out += f"[{p}]" if isinstance(p, int) else f".{p}"
    return out


def _exact(state: Any, skip: tuple[tuple[str, ...], ...], at: tuple) -> None:
    """The walk that names what is wrong (raises StateError), or returns when all is well."""
    nodes = chars = 0
    stack: list[tuple[Any, tuple]] = [(state, at)]
    while stack:
        value, path = stack.pop()
        nodes += 1
        if nodes > MAX_STATE_NODES:
            raise StateError("", [("state", f"has more than {MAX_STATE_NODES} values")], code="PM812")
        if isinstance(value, str):
            chars += len(value)
            if chars > MAX_STATE_CHARS:
                raise StateError("", [("state", f"holds more than {MAX_STATE_CHARS} characters of text")], code="PM812")
            if bad_text(value):
                raise StateError("", [(_path(path), "holds a lone surrogate, which is not valid Unicode text")], code="PM811")
        elif len(path) >= MAX_STATE_DEPTH and isinstance(value, (Mapping, list, tuple)):
            raise StateError("", [(_path(path), f"is nested more than {MAX_STATE_DEPTH} levels deep")], code="PM812")
        elif isinstance(value, Mapping):
            for k, v in value.items():
                if not isinstance(k, str) or bad_text(k):
                    raise StateError("", [(_path(path), f"has a key that is not valid text: {k!r}")], code="PM811")
                if path + (k,) in skip and isinstance(v, list):
                    continue
                stack.append((v, path + (k,)))
        elif isinstance(value, (list, tuple)):
            stack.extend((v, path + (i,)) for i, v in enumerate(value))
        elif value is None or isinstance(value, (bool, int)):
            continue
        elif isinstance(value, float):
            if not math.isfinite(value):
                raise StateError("", [(_path(path), "is not a finite number")], code="PM811")
        else:
            raise StateError("", [(_path(path), f"is a {type(value).__name__}, not JSON data")], code="PM811")


def _skipped(state: Any, skip: tuple[tuple[str, ...], ...]) -> set[tuple[int, str]]:
    """(id of the parent dict, key) of every list at a `skip` path."""
    out = set()
    for path in skip:
        parent: Any = state
        for key in path[:-1]:
            parent = parent.get(key) if type(parent) is dict else None
        if type(parent) is dict and type(parent.get(path[-1])) is list:
            out.add((id(parent), path[-1]))
    return out


def _fast(state: Any, skip_at: set[tuple[int, str]], depth: int) -> bool:
    """True when the state is plainly fine; False means 'ask the exact walk'."""
    return data_sizes(state, depth, skip_at) is not None


def data_sizes(state: Any, depth: int, skip_at: set[tuple[int, str]] | None = None) -> tuple[int, int] | None:
    """(values below `state`, characters of its text values) when `state`, `depth` levels down
    in the whole state, is plainly fine JSON data within the limits; None means 'ask the exact
    walk'. A caller that adds the sizes of several values checks the limits on the sums.

    The dict and list branches repeat the leaf checks on purpose: one shared
    loop (keys checked apart, values walked together) measured 15-20% slower,
    and this walk runs on every render."""
    nodes = chars = 0
    stack: list[tuple[Any, int]] = [(state, depth)]
    while stack:
        value, d = stack.pop()
        if d >= MAX_STATE_DEPTH:
            return None
        if type(value) is dict:
            items = value.items()
            nodes += len(value)
            for k, v in items:
                if type(k) is not str or (not k.isascii() and bad_text(k)):
                    return None
                t = type(v)
                if t is str:
                    chars += len(v)
                    if not v.isascii() and bad_text(v):
                        return None
                elif t is dict or t is list:
                    if not skip_at or (id(value), k) not in skip_at:
                        stack.append((v, d + 1))
                elif t is float:
                    if not math.isfinite(v):
                        return None
                elif not (t is int or t is bool or v is None):
                    return None
        elif type(value) is list:
            nodes += len(value)
            for v in value:
                t = type(v)
                if t is str:
                    chars += len(v)
                    if not v.isascii() and bad_text(v):
                        return None
                elif t is dict or t is list:
                    stack.append((v, d + 1))
                elif t is float:
                    if not math.isfinite(v):
                        return None
                elif not (t is int or t is bool or v is None):
                    return None
        else:
            return None
        if nodes > MAX_STATE_NODES or chars > MAX_STATE_CHARS:
            return None
    return nodes, chars


def check_state_data(state: Any, skip: tuple[tuple[str, ...], ...] = (), *, at: tuple = ()) -> None:
    """Refuse state that is not JSON data, is too large or too deep (lists at `skip` paths aside).

    `at` is where `state` sits in the whole state (for one list item checked lazily).
    """
    if type(state) in (dict, list) and _fast(state, _skipped(state, skip) if skip else set(), len(at)):
        return
    if isinstance(state, str) and len(state) <= MAX_STATE_CHARS and not bad_text(state):
        return
    if state is None or type(state) in (bool, int) or (type(state) is float and math.isfinite(state)):
        return
    _exact(state, skip, at)
