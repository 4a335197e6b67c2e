"""PM613: a condition's regex that can take exponential time on hostile state.

Conditions (`when: {path: ..., op: regex, value: ...}`) run the author's
pattern on state, and state may come from users or tools. Python's `re`
backtracks, so a pattern with a quantifier nested inside another unbounded
quantifier, such as `(a+)+$` or `(\\w+\\s?)*x`, can take exponential time on a
short crafted string, and `re` has no timeout. This check reads the parsed
pattern and warns where an unbounded repeat holds another unbounded repeat
(a possessive quantifier or an atomic group never gives back what it matched,
so a repeat around one is fine; what it holds is still checked on its own).
It also warns where an unbounded repeat holds alternatives that overlap (one
can match empty, or two start alike: `(a|a?)+`, `(a|aa)+`), and where repeats
of the same thing stand side by side (`\\d*\\d*\\d*x`, polynomial time). It is a
heuristic: it can warn on a pattern that a literal keeps unambiguous
(`(a+b)*`), which costs one rewrite. Whatever slips past is stopped at render
time by the condition regex deadline (PM821, `conditions.REGEX_TIMEOUT`).
"""

from __future__ import annotations

from typing import Any

try:  # the parser behind `re` (public as sre_parse before 3.11)
    from re import _constants as _c  # type: ignore[attr-defined]
    from re import _parser  # type: ignore[attr-defined]
except ImportError:  # pragma: no cover - another Python: no check
    _parser = None

__all__ = ["nested_quantifier", "slow_regex"]

# an upper bound this large behaves like no bound for backtracking
_UNBOUNDED_FROM = 32


def _parse(pattern: str) -> list | None:
    if _parser is None:
        return None
    try:
        return list(_parser.parse(pattern))
    except Exception:  # an invalid pattern is PM606, reported elsewhere
        return None


def nested_quantifier(pattern: str) -> bool:
    """True when an unbounded repeat in `pattern` holds another unbounded repeat."""
    parsed = _parse(pattern)
    return parsed is not None and _find(parsed, inside=False)


def slow_regex(pattern: str) -> str | None:
    """Why `pattern` can backtrack for a long time on a crafted value, or None."""
    parsed = _parse(pattern)
    if parsed is None:
        return None
    if _find(parsed, inside=False):
        return "nests a repeat inside a repeat"
    if _overlap(parsed, inside=False):
        return "repeats alternatives that overlap"
    if _side_by_side(parsed):
        return "puts repeats of the same thing side by side"
    return None


def _first(items: list) -> tuple[str, Any] | None:
    """A key for what `items` starts with ("empty" when it can match nothing)."""
    for op, av in items:
        if op in (_c.MAX_REPEAT, _c.MIN_REPEAT, _c.POSSESSIVE_REPEAT):
            if av[0] == 0:
                return ("empty", None)
            return _first(list(av[2]))
        if op is _c.SUBPATTERN:
            return _first(list(av[-1]))
        if op in (_c.AT, _c.ASSERT, _c.ASSERT_NOT):
            continue
        if op is _c.ANY:
            return ("any", None)
        return (str(op), repr(av))
    return ("empty", None)


def _children(op: Any, av: Any) -> list[list]:
    if op in (_c.MAX_REPEAT, _c.MIN_REPEAT, _c.POSSESSIVE_REPEAT):
        return [list(av[2])]
    if op is _c.SUBPATTERN:
        return [list(av[-1])]
    if op is _c.BRANCH:
        return [list(b) for b in av[1]]
    if op in (_c.ASSERT, _c.ASSERT_NOT):
        return [list(av[1])]
    if op is _c.ATOMIC_GROUP:
        return [list(av)]
    return []


def _overlap(items: list, inside: bool) -> bool:
    """Alternatives under an unbounded repeat that can match the same start (or nothing)."""
    for op, av in items:
        if op is _c.BRANCH and inside:
            starts = [_first(list(b)) for b in av[1]]
            if ("empty", None) in starts or ("any", None) in starts or len(set(starts)) < len(starts):
                return True
        unbounded = op in (_c.MAX_REPEAT, _c.MIN_REPEAT) and _unbounded(av[1])
        if any(_overlap(child, inside or unbounded) for child in _children(op, av)):
            return True
    return False


def _side_by_side(items: list) -> bool:
    """Two unbounded repeats of the same thing next to each other (`\\d*\\d*`, `.*.*`)."""
    previous = None
    for op, av in items:
        key = None
        if op in (_c.MAX_REPEAT, _c.MIN_REPEAT) and _unbounded(av[1]):
            key = repr(list(av[2]))
            if previous is not None and (previous == key or "ANY" in key and "ANY" in previous):
                return True
        previous = key
        if any(_side_by_side(child) for child in _children(op, av)):
            return True
    return False


def _unbounded(hi: Any) -> bool:
    return hi is _c.MAXREPEAT or hi >= _UNBOUNDED_FROM


def _find(items: list, inside: bool) -> bool:
    """Whether `items` (parsed pattern) holds an unbounded repeat, inside another one when `inside`."""
    for op, av in items:
        if op in (_c.MAX_REPEAT, _c.MIN_REPEAT):
            _, hi, sub = av
            if _unbounded(hi) and inside:
                return True
            if _find(list(sub), inside or _unbounded(hi)):
                return True
        elif op is _c.SUBPATTERN and _find(list(av[-1]), inside):
            return True
        elif op is _c.BRANCH and any(_find(list(branch), inside) for branch in av[1]):
            return True
        elif op in (_c.ASSERT, _c.ASSERT_NOT) and _find(list(av[1]), inside):
            return True
        elif op is _c.POSSESSIVE_REPEAT and _find(list(av[2]), inside=False):
            return True  # never re-entered by backtracking from outside, but its body may nest on its own
        elif op is _c.ATOMIC_GROUP and _find(list(av), inside=False):
            return True
    return False
