"""PM613: a condition's regex that can take exponential time on hostile state.

Conditions (`when: {path: ..., op: regex, value: ...}`) run the author's
pattern on state, and state may come from users or tools. Python's `re`
backtracks, so a pattern with a quantifier nested inside another unbounded
quantifier, such as `(a+)+$` or `(\\w+\\s?)*x`, can take exponential time on a
short crafted string, and `re` has no timeout. This check reads the parsed
pattern and warns where an unbounded repeat holds another unbounded repeat
(a possessive quantifier or an atomic group never gives back what it matched,
so a repeat around one is fine; what it holds is still checked on its own).
It is a heuristic: it can warn on a nested repeat that a literal keeps
unambiguous (`(a+b)*`), which costs one rewrite, and it does not look for
overlapping alternatives (`(a|aa)+`).
"""

from __future__ import annotations

from typing import Any

try:  # the parser behind `re` (public as sre_parse before 3.11)
    from re import _constants as _c  # type: ignore[attr-defined]
    from re import _parser  # type: ignore[attr-defined]
except ImportError:  # pragma: no cover - another Python: no check
    _parser = None

__all__ = ["nested_quantifier"]

# an upper bound this large behaves like no bound for backtracking
_UNBOUNDED_FROM = 32


def nested_quantifier(pattern: str) -> bool:
    """True when an unbounded repeat in `pattern` holds another unbounded repeat."""
    if _parser is None:
        return False
    try:
        parsed = _parser.parse(pattern)
    except Exception:  # an invalid pattern is PM606, reported elsewhere
        return False
    return _find(list(parsed), inside=False)


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
