"""Go to definition: the id under the cursor -> the template that defines it, of the kind its place asks for
(an id inside `constraints: [...]` is a constraint set, never the role of the same name)."""

from __future__ import annotations

from lsprotocol import types

from ...compose.index import Index
from ...core.choices import TEMPLATE_KINDS
from ..convert import file_path, lsp_range, uri_of
from .completion import kind_at
from .words import word_at


def kinds_at(text: str, position: types.Position) -> tuple[str, ...]:
    """The kinds an id at `position` may be: the one its place says, else every kind."""
    kind = kind_at(text, position)
    return (kind,) if kind is not None else TEMPLATE_KINDS


def definition(index: Index | None, text: str, position: types.Position) -> list[types.Location]:
    """Where the id at `position` resolves along the search path (the winner, as `promptmill which` says)."""
    found = word_at(text, position.line, position.character)
    if index is None or found is None:
        return []
    word = found[0]
    places = []
    for kind in kinds_at(text, position):
        template = index.get(kind, word)
        if template is not None:
            pos = template.pos("id")
            places.append(types.Location(uri=uri_of(file_path(pos.file)), range=lsp_range(pos.line, pos.col)))
    return places
