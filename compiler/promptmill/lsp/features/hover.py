"""Hover on an id: where it resolves along the search path and what it shadows (as `promptmill which` prints)."""

from __future__ import annotations

from lsprotocol import types

from ...compose.index import Index
from .definition import kinds_at
from .words import word_at


def hover(index: Index | None, text: str, position: types.Position) -> types.Hover | None:
    found = word_at(text, position.line, position.character)
    if index is None or found is None:
        return None
    word, start, end = found
    lines = []
    for kind in kinds_at(text, position):
        template = index.get(kind, word)
        if template is None:
            continue
        lines.append(f"{kind} `{word}` resolves to {template.layer.name} `{template.pos('id')}`")
        lines.extend(f"- shadows {t.layer.name} `{t.pos('id')}`" for t in index.shadowed.get((kind, word), ()))
    if not lines:
        return None
    span = types.Range(types.Position(position.line, start), types.Position(position.line, end))
    return types.Hover(contents=types.MarkupContent(kind=types.MarkupKind.Markdown, value="\n".join(lines)), range=span)
