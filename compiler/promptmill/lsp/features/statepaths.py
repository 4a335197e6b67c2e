"""Completion of state paths inside Jinja expressions (`{{ task_state.goal }}`) from the role's inputs schema."""

from __future__ import annotations

import re
from typing import Any

from lsprotocol import types

_OPEN = re.compile(r"(\{\{|\{%)(?!.*(\}\}|%\}))")  # an expression opened and not yet closed before the cursor
_PATH = re.compile(r"([A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*\.)?([A-Za-z_]\w*)?$")


def _properties(schema: Any, path: list[str]) -> dict[str, Any]:
    """The properties of the object at `path` in a JSON Schema (none when it is not an object there)."""
    node = schema
    for name in path:
        props = node.get("properties") if isinstance(node, dict) else None
        if not isinstance(props, dict) or name not in props:
            return {}
        node = props[name]
    props = node.get("properties") if isinstance(node, dict) else None
    return props if isinstance(props, dict) else {}


def complete_state_paths(inputs: dict[str, Any] | None, text: str, position: types.Position) -> list[types.CompletionItem]:
    """The next names of the state path being typed, when the cursor is inside `{{ }}` or `{% %}`."""
    lines = text.splitlines()
    if inputs is None or position.line >= len(lines):
        return []
    before = lines[position.line][: position.character]
    if not _OPEN.search(before):
        return []
    m = _PATH.search(before)
    parents = m.group(1).rstrip(".").split(".") if m and m.group(1) else []
    items = []
    for name, schema in sorted(_properties(inputs, parents).items()):
        kind = schema.get("type") if isinstance(schema, dict) else None
        detail = " · ".join(str(x) for x in (kind, schema.get("description") if isinstance(schema, dict) else None) if x)
        items.append(types.CompletionItem(label=name, kind=types.CompletionItemKind.Field, detail=detail or None))
    return items
