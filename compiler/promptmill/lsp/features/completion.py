"""Completion of ids where a template expects one: the kind follows from the key being written."""

from __future__ import annotations

import re

from lsprotocol import types

from ...compose.index import Index

_KIND_OF_KEY = {"extends": "role", "role": "role", "output": "output", "fragment": "fragment", "constraints": "constraints"}
_CONTEXT_KEYS = ("system", "before", "after", "suppress")  # lists of fragment ids under `context:`
_VALUE_AFTER_KEY = re.compile(r"^\s*(?:-\s+)?\{?\s*(?:[\w]+:\s*[^,]*,\s*)*(\w+):\s*(?:\[[^\]]*)?$")
_LIST_ITEM = re.compile(r"^(\s*)-\s*$|^(\s*)-\s+[\w./-]*$")
_KEY_LINE = re.compile(r"^(\s*)(?:-\s+)?(\w+):\s*(?:#.*)?$")


def _key_above(lines: list[str], line: int, indent: int) -> tuple[str, int] | None:
    """The `key:` line a block list item at `indent` belongs to, and that line's number."""
    for n in range(line - 1, -1, -1):
        m = _KEY_LINE.match(lines[n])
        if m and len(m.group(1)) <= indent:
            return m.group(2), n
        if lines[n].strip() and len(lines[n]) - len(lines[n].lstrip()) < indent:
            return None
    return None


def expected_kind(text: str, position: types.Position) -> str | None:
    """The template kind whose id belongs at `position`, or None."""
    lines = text.splitlines()
    if position.line >= len(lines):
        return None
    before = re.sub(r"[\w./-]*$", "", lines[position.line][: position.character])  # the id being typed aside
    key, at = None, position.line
    m = _VALUE_AFTER_KEY.match(before)
    if m:
        key = m.group(1)
    else:
        item = _LIST_ITEM.match(before)
        if item:
            indent = len(item.group(1) if item.group(1) is not None else item.group(2))
            found = _key_above(lines, position.line, indent)
            if found:
                key, at = found
    if key in _KIND_OF_KEY:
        return _KIND_OF_KEY[key]
    if key in _CONTEXT_KEYS:
        indent = len(lines[at]) - len(lines[at].lstrip())
        parent = _key_above(lines, at, indent - 1) if indent else None
        return "fragment" if parent and parent[0] == "context" else None
    return None


def complete_ids(index: Index | None, text: str, position: types.Position) -> list[types.CompletionItem]:
    kind = expected_kind(text, position)
    if index is None or kind is None:
        return []
    items = []
    for tid in index.ids(kind):
        template = index.get(kind, tid)
        where = f"{template.layer.name} {template.pos('id')}" if template is not None else ""
        items.append(types.CompletionItem(label=tid, kind=types.CompletionItemKind.Reference, detail=f"{kind} · {where}"))
    return items


_KIND_LINE = re.compile(r"^kind:\s*[\"']?(\w+)", re.MULTILINE)


def kind_at(text: str, position: types.Position) -> str | None:
    """The template kind of the id at `position` by where it stands: the key it is the value of
    (`constraints: [...]` holds constraint sets, `extends:` a role, ...), or, on the top-level `id:`
    line, the file's own `kind:`; None when the place does not say."""
    lines = text.splitlines()
    if not 0 <= position.line < len(lines):
        return None
    if re.match(r"id:\s", lines[position.line]) and position.character >= 3:
        m = _KIND_LINE.search(text)
        return m.group(1) if m and m.group(1) in _KIND_OF_KEY.values() else None
    return expected_kind(text, position)
