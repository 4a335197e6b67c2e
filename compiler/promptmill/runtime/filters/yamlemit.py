"""A small, deterministic YAML emitter for JSON-like data (the `to_yaml` filter).

Runtime side: no PyYAML. The output is block-style YAML that YAML 1.1 and 1.2
parsers (PyYAML among them) read back as the same value:

- mappings as `key: value`, lists as `- item`, empty ones as `{}` and `[]`;
- strings plain when no parser could misread them, otherwise double-quoted with
  escapes; multi-line strings as literal blocks (`|`, `|-`, `|+`, with an
  indentation indicator when the text starts with a space or a blank line);
- `null`, `true`, `false`, integers, and floats that always carry a `.`.

Keys keep their insertion order; nothing is sorted. The output never ends with a
newline (the template decides what follows). Anything that is not JSON data
(non-string keys, NaN or infinite floats, sets, objects) raises `ValueError`.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from typing import Any

__all__ = ["to_yaml"]

_MAX_DEPTH = 200

# Plain scalars that a YAML 1.1 or 1.2 parser would resolve to something other
# than a string (booleans including y/n/on/off, nulls, ints in every base,
# sexagesimals, floats, infinities, NaN, timestamps, merge and value keys).
_RESOLVES = re.compile(
    r"""^(?:
      y|Y|yes|Yes|YES|n|N|no|No|NO|true|True|TRUE|false|False|FALSE|on|On|ON|off|Off|OFF
    | ~|null|Null|NULL
    | [-+]?0b[0-1_]+ | [-+]?0o?[0-7_]+ | [-+]?0x[0-9a-fA-F_]+
    | [-+]?(?:0|[1-9][0-9_]*) | [-+]?[1-9][0-9_]*(?::[0-5]?[0-9])+
    | [-+]?(?:[0-9][0-9_]*)?\.[0-9_]*(?:[eE][-+]?[0-9]+)?
    | [-+]?[0-9][0-9_]*(?:[eE][-+]?[0-9]+)
    | [-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+\.[0-9_]*
    | [-+]?\.(?:inf|Inf|INF) | \.(?:nan|NaN|NAN)
    | [0-9]{4}-[0-9]{1,2}-[0-9]{1,2}(?:(?:[Tt]|[ \t]+).*)?
    | <<|=
    )$""",
    re.VERBOSE,
)

_INDICATORS = frozenset("-?:,[]{}#&*!|>'\"%@`")

_ESCAPES = {
    "\0": "\\0",
    "\a": "\\a",
    "\b": "\\b",
    "\t": "\\t",
    "\n": "\\n",
    "\v": "\\v",
    "\f": "\\f",
    "\r": "\\r",
    "\x1b": "\\e",
    '"': '\\"',
    "\\": "\\\\",
    "\x85": "\\N",
    "\xa0": "\\_",
    "\u2028": "\\L",
    "\u2029": "\\P",
}

# Implicit (unquestioned) keys must fit on one line within 1024 characters.
_MAX_IMPLICIT_KEY = 1000


def to_yaml(value: Any, *, indent: int = 2) -> str:
    """Render JSON-like `value` as deterministic block-style YAML (no trailing newline).

    `indent` (2 to 8) is the number of spaces per nesting level. Raises
    `ValueError` for values that are not JSON data.
    """
    if isinstance(indent, bool) or not isinstance(indent, int) or not 2 <= indent <= 8:
        raise ValueError(f"to_yaml indent must be an integer from 2 to 8, not {indent!r}")
    lines: list[str] = []
    emitter = _Emitter(indent, lines)
    emitter.node(value, "", 0, 0)
    tail = emitter.open_tail
    if tail is not None and tail[1] == len(lines):
        # A block that keeps its final line break needs a newline after it, and the
        # output has none: write that last string double-quoted instead.
        start, _, head, text = tail
        lines[start:] = [f"{head}{_quoted(text)}"]
    return "\n".join(lines)


class _Emitter:
    """Writes lines. `level` is the column where a node's block content starts."""

    def __init__(self, indent: int, lines: list[str]):
        self.indent = indent
        self.lines = lines
        self.open_tail: tuple[int, int, str, str] | None = None

    def node(self, value: Any, head: str, level: int, depth: int) -> None:
        """Emit `value` after `head`: `"  key:"` (a mapping value), a dash, or `""` (top)."""
        if depth > _MAX_DEPTH:
            raise ValueError(f"to_yaml: data nested deeper than {_MAX_DEPTH} levels")
        is_value = head.endswith(":")
        sep = " " if is_value else ""
        if isinstance(value, Mapping) or isinstance(value, (list, tuple)):
            if not value:
                self.lines.append(f"{head}{sep}{{}}" if isinstance(value, Mapping) else f"{head}{sep}[]")
                return
            if is_value:
                self.lines.append(head)
                head = ""
            if isinstance(value, Mapping):
                self.mapping(value, head, level, depth)
            else:
                self.sequence(value, head, level, depth)
        elif isinstance(value, str) and _block_ok(value):
            self.block(value, head + sep, max(level, self.indent))
        else:
            self.lines.append(f"{head}{sep}{_scalar(value)}")

    def mapping(self, value: Mapping[Any, Any], head: str, level: int, depth: int) -> None:
        pad = " " * level
        for i, (key, item) in enumerate(value.items()):
            if not isinstance(key, str):
                raise ValueError(f"to_yaml: mapping keys must be strings, not {type(key).__name__}")
            prefix = head if i == 0 and head else pad
            text = _string(key)
            if len(text) > _MAX_IMPLICIT_KEY:
                self.lines.append(f"{prefix}? {_quoted(key)}")
                prefix, text = pad, ""
            self.node(item, f"{prefix}{text}:", level + self.indent, depth + 1)

    def sequence(self, value: Any, head: str, level: int, depth: int) -> None:
        pad = " " * level
        dash = "-" + " " * (self.indent - 1)
        for i, item in enumerate(value):
            prefix = head if i == 0 and head else pad
            self.node(item, prefix + dash, level + self.indent, depth + 1)

    def block(self, text: str, head: str, content: int) -> None:
        # The indentation indicator is relative to the parent node's indentation,
        # which is always `indent` columns left of the content.
        hint = str(self.indent) if text[0] in " \n" else ""
        if not text.endswith("\n"):
            chomp = "-"
        elif len(text) == 1 or text[-2] == "\n":
            chomp = "+"
        else:
            chomp = ""
        start = len(self.lines)
        self.lines.append(f"{head}|{hint}{chomp}")
        body = text[:-1] if text.endswith("\n") else text
        pad = " " * content
        self.lines.extend(pad + line if line else "" for line in body.split("\n"))
        if chomp != "-":
            self.open_tail = (start, len(self.lines), head, text)


def _block_ok(text: str) -> bool:
    """A multi-line string a literal block represents exactly."""
    if "\n" not in text:
        return False
    return all(ch == "\n" or ch == "\t" or ch.isprintable() for ch in text) and "\ufeff" not in text


def _scalar(value: Any) -> str:
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, int):
        return str(int(value))
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError(f"to_yaml: {value!r} is not JSON data")
        text = repr(float(value))
        mantissa, e, exponent = text.partition("e")
        if "." not in mantissa:
            mantissa += ".0"
        if e and exponent[0] not in "+-":
            exponent = "+" + exponent
        return mantissa + (f"e{exponent}" if e else "")
    if isinstance(value, str):
        return _string(value)
    raise ValueError(f"to_yaml: a {type(value).__name__} value is not JSON data")


def _string(text: str) -> str:
    return text if _plain_ok(text) else _quoted(text)


def _plain_ok(text: str) -> bool:
    """True when `text` can be written unquoted and read back as the same string."""
    if not text or text[0] in _INDICATORS or text[0] == " " or text[-1] in " :":
        return False
    if text.startswith("...") or ": " in text or " #" in text or _RESOLVES.match(text):
        return False
    return all(ch.isprintable() and ch != "\ufeff" for ch in text)


def _quoted(text: str) -> str:
    out = ['"']
    for ch in text:
        esc = _ESCAPES.get(ch)
        if esc is not None:
            out.append(esc)
        elif ch.isprintable() and ch != "\ufeff":
            out.append(ch)
        else:
            code = ord(ch)
            if code <= 0xFF:
                out.append(f"\\x{code:02X}")
            elif code <= 0xFFFF:
                out.append(f"\\u{code:04X}")
            else:
                out.append(f"\\U{code:08X}")
    out.append('"')
    return "".join(out)
