"""The id-shaped word at a place in a buffer (ids hold letters, digits and `_ . / -`)."""

from __future__ import annotations

import re

_ID = re.compile(r"[A-Za-z0-9_./-]+")


def word_at(text: str, line: int, character: int) -> tuple[str, int, int] | None:
    """(word, start, end) on 0-based `line` around `character`, or None when there is none."""
    lines = text.splitlines()
    if not 0 <= line < len(lines):
        return None
    for m in _ID.finditer(lines[line]):
        if m.start() <= character <= m.end():
            return m.group(), m.start(), m.end()
    return None
