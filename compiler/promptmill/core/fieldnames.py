"""How `str.format` splits a replacement field's name, written here rather than taken
from CPython's private `_string` module (whose behaviour is not a promise)."""

from __future__ import annotations

import re

_STEP = re.compile(r"\.([^.\[]*)|\[([^\]]*)\]")


def split_field_name(name: str) -> tuple[str | int, list[tuple[bool, str | int]]]:
    """`a.b[0]` -> ("a", [(True, "b"), (False, 0)]), as str.format reads a field name;
    ValueError with str.format's words for a malformed one."""
    cut = min((i for i in (name.find("."), name.find("[")) if i >= 0), default=len(name))
    first: str | int = int(name[:cut]) if name[:cut].isdigit() else name[:cut]
    rest: list[tuple[bool, str | int]] = []
    at = cut
    while at < len(name):
        step = _STEP.match(name, at)
        if step is None:
            if name[at] == "[":
                raise ValueError("Missing ']' in format string")
            raise ValueError("Only '.' or '[' may follow ']' in format field specifier")
        attr, key = step.group(1), step.group(2)
        if attr is not None or not key:
            if not attr:
                raise ValueError("Empty attribute in format string")
            rest.append((True, attr))
        else:
            rest.append((False, int(key) if key.isdigit() else key))
        at = step.end()
    return first, rest
