"""One "did you mean" for every message: the nearest names to a misspelt one.

Every suggestion (template keys and ids, role ids at render, state keys, Jinja
filters and tests, condition paths) goes through `nearest`, and two cutoffs
decide what counts as close: `CUTOFF` for words (keys, filters), `ID_CUTOFF`
for template and role ids, which are longer and share segments ("triag" finds
"triage-short" at 0.59; "totally_new" must not find a filter at 0.5).
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable

CUTOFF = 0.6  # difflib's similarity ratio a word suggestion needs (difflib's own default)
ID_CUTOFF = 0.5  # the same for template and role ids


def nearest(word: str, choices: Iterable[str], n: int = 1, cutoff: float = CUTOFF) -> list[str]:
    """Up to `n` choices close to `word`, closest first."""
    return difflib.get_close_matches(word, list(choices), n=n, cutoff=cutoff)


def suggest(word: str, choices: Iterable[str]) -> str | None:
    """The closest choice to `word`, or None."""
    match = nearest(word, choices)
    return match[0] if match else None


def did_you_mean(names: Iterable[str]) -> str:
    """`did you mean 'a'?` or `did you mean 'a' or 'b'?`"""
    return "did you mean " + " or ".join(f"'{n}'" for n in names) + "?"


def edit_distance(a: str, b: str, limit: int) -> int:
    """The Damerau-Levenshtein distance of `a` and `b` (insert, delete, substitute, swap two neighbours),
    or `limit + 1` as soon as it is known to exceed `limit` (bounded work for long strings)."""
    if abs(len(a) - len(b)) > limit:
        return limit + 1
    before: list[int] | None = None
    row = list(range(len(b) + 1))
    for i in range(1, len(a) + 1):
        current = [i] + [0] * len(b)
        for j in range(1, len(b) + 1):
            cost = 0 if a[i - 1] == b[j - 1] else 1
            current[j] = min(row[j] + 1, current[j - 1] + 1, row[j - 1] + cost)
            if before is not None and i > 1 and j > 1 and a[i - 1] == b[j - 2] and a[i - 2] == b[j - 1]:
                current[j] = min(current[j], before[j - 2] + 1)
        if min(current) > limit:
            return limit + 1
        before, row = row, current
    return min(row[len(b)], limit + 1)
