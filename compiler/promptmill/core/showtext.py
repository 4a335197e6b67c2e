"""Text as a reviewer must see it: invisible and reordering characters as escapes.

A prompt is reviewed in a terminal (`render --format pretty`, `lint`), and some
characters change what the reviewer sees without changing what the model
reads: control characters, bidirectional controls (U+202E turns a line
around), zero-width characters, the soft hyphen, the byte order mark and the
tag characters U+E0000-U+E007F (an invisible copy of ASCII that models read).
`visible(text)` shows each as an escape (`\\u202e`, `\\U000e0041`); tabs and
newlines stay, and so does a zero-width joiner inside an emoji sequence, where
it is part of the picture. `INVISIBLE` finds the characters lint warns about
in a template file (PM113).
"""

from __future__ import annotations

import re
import unicodedata

__all__ = ["INVISIBLE", "describe", "one_line", "visible"]

# Format characters that hide or reorder text, whatever the script (lint's PM113 looks for these)
INVISIBLE = re.compile(
    "[\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180b-\u180f\u200b\u200e\u200f\u202a-\u202e"
    "\u2060-\u206f\u3164\ufeff\uffa0\ufff9-\ufffb\U000e0000-\U000e007f]"
)
_SELECTOR = re.compile("[\ufe00-\ufe0f\U000e0100-\U000e01ef]")

_ZWJ = "\u200d"
_NAMES = {
    0x00AD: "SOFT HYPHEN",
    0x061C: "ARABIC LETTER MARK",
    0x200B: "ZERO WIDTH SPACE",
    0x200E: "LEFT-TO-RIGHT MARK",
    0x200F: "RIGHT-TO-LEFT MARK",
    0x202A: "LEFT-TO-RIGHT EMBEDDING",
    0x202B: "RIGHT-TO-LEFT EMBEDDING",
    0x202C: "POP DIRECTIONAL FORMATTING",
    0x202D: "LEFT-TO-RIGHT OVERRIDE",
    0x202E: "RIGHT-TO-LEFT OVERRIDE",
    0x2060: "WORD JOINER",
    0x2066: "LEFT-TO-RIGHT ISOLATE",
    0x2067: "RIGHT-TO-LEFT ISOLATE",
    0x2068: "FIRST STRONG ISOLATE",
    0x2069: "POP DIRECTIONAL ISOLATE",
    0xFEFF: "BYTE ORDER MARK",
}


def describe(char: str) -> str:
    """`U+202E RIGHT-TO-LEFT OVERRIDE`, `U+E0041 TAG`, ..."""
    code = ord(char)
    name = _NAMES.get(code) or ("TAG" if 0xE0000 <= code <= 0xE007F else "invisible format character")
    return f"U+{code:04X} {name}"


def _escape(char: str) -> str:
    code = ord(char)
    if code < 0x100:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


def _keep(text: str, i: int) -> bool:
    char = text[i]
    if char in "\t\n":
        return True
    if char == _ZWJ:  # part of an emoji sequence (a family, a flag with a sign), not hidden text
        return (
            0 < i < len(text) - 1
            and ord(text[i - 1]) >= 0x2000
            and ord(text[i + 1]) >= 0x2000
            and not (INVISIBLE.match(text[i - 1]) or INVISIBLE.match(text[i + 1]))
        )
    if _SELECTOR.match(char):  # one selector picks how the character before looks; a run carries data
        return i > 0 and text[i - 1].isprintable() and not _SELECTOR.match(text[i - 1])
    return (char.isprintable() or unicodedata.category(char) == "Zs") and not INVISIBLE.match(char)


def visible(text: str) -> str:
    """`text` with every invisible or reordering character shown as an escape."""
    if text.isprintable() and not INVISIBLE.search(text) and not _SELECTOR.search(text):
        return text
    return "".join(ch if _keep(text, i) else _escape(ch) for i, ch in enumerate(text))


def one_line(name: str) -> str:
    """A name (a file's, a path's) as `visible` shows it, with its newlines and tabs as escapes too: a name is
    one line of output, which a terminal, a diff header or a CI problem matcher reads as one."""
    return visible(name).replace("\n", "\\n").replace("\t", "\\t")
