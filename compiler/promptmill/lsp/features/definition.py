"""Go to definition: the id under the cursor -> the template that defines it, for every kind that has it."""

from __future__ import annotations

from lsprotocol import types

from ...compose.index import Index
from ...core.choices import TEMPLATE_KINDS
from ..convert import file_path, lsp_range, uri_of
from .words import word_at


def definition(index: Index | None, text: str, position: types.Position) -> list[types.Location]:
    """Where the id at `position` resolves along the search path (the winner, as `promptmill which` says)."""
    found = word_at(text, position.line, position.character)
    if index is None or found is None:
        return []
    word = found[0]
    places = []
    for kind in TEMPLATE_KINDS:
        template = index.get(kind, word)
        if template is not None:
            pos = template.pos("id")
            places.append(types.Location(uri=uri_of(file_path(pos.file)), range=lsp_range(pos.line, pos.col)))
    return places
