"""Lone surrogates: text that no UTF-8 file, payload or module can hold.

A file promptmill reads is UTF-8, so its characters are never surrogates; but a
double-quoted YAML scalar may write one as an escape (`"\\udc80"`). PyYAML turns
each `\\uD800`-`\\uDFFF` escape into a lone surrogate, and every later step that
encodes the text (the bundle, the types module, a payload, a snapshot) fails.

`pair_up` joins escapes that form a surrogate pair (`"\\ud83d\\ude00"`, as JSON
writes characters beyond U+FFFF) into the one character they mean; a half left
alone is a PM102 error at the escape that wrote it (`escape_position`), and the
value carries U+FFFD in its place so that no later step meets it.
"""

from __future__ import annotations

import bisect
import re

Pos = tuple[int, int]

SURROGATE = re.compile("[\ud800-\udfff]")
REPLACEMENT = "\ufffd"
_ESCAPE = re.compile(r"\\(?:u([0-9a-fA-F]{4})|U([0-9a-fA-F]{8})|.)", re.S)
_BREAK = re.compile("\r\n|[\r\n\x85\u2028\u2029]")  # line breaks as the YAML parsers count them


def pair_up(text: str) -> tuple[str, int | None]:
    """`text` with surrogate pairs joined and lone surrogates replaced by U+FFFD, and the
    code point of the first lone one (None when there is none)."""
    if text.isascii() or SURROGATE.search(text) is None:
        return text, None
    joined = text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "surrogatepass")
    lone = SURROGATE.search(joined)
    if lone is None:
        return joined, None
    return SURROGATE.sub(REPLACEMENT, joined), ord(lone.group())


def escape_position(source: str, start: Pos, end: Pos, code: int) -> Pos:
    """The 1-based (line, col) of the escape in `source` between `start` and `end` (the
    scalar's marks, 1-based) that writes the lone surrogate `code`; `start` when none is found."""
    starts = [0] + [m.end() for m in _BREAK.finditer(source)]

    def offset(pos: Pos) -> int:
        line = min(max(pos[0], 1), len(starts))
        return starts[line - 1] + pos[1] - 1

    span_start, span_end = offset(start), max(offset(end), offset(start))
    escapes = [(m.start(), m.end(), _value(m)) for m in _ESCAPE.finditer(source, span_start, span_end)]
    i = 0
    while i < len(escapes):
        at, stop, value = escapes[i]
        following = escapes[i + 1] if i + 1 < len(escapes) else None
        if 0xD800 <= value <= 0xDBFF and following is not None and following[0] == stop and 0xDC00 <= following[2] <= 0xDFFF:
            i += 2  # a pair: one character
            continue
        if value == code:
            line = bisect.bisect_right(starts, at)
            return line, at - starts[line - 1] + 1
        i += 1
    return start


def _value(match: re.Match[str]) -> int:
    digits = match.group(1) or match.group(2)
    return int(digits, 16) if digits else -1


def message(code: int) -> tuple[str, str]:
    """The PM102 message and hint for a lone surrogate."""
    return (
        f"the text holds a lone surrogate U+{code:04X} (written \\u{code:04x}), which is no character and cannot be encoded as UTF-8",
        "write the character itself, or both halves of a surrogate pair (\\ud83d\\ude00); a half alone is not text",
    )
