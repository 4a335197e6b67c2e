"""Find references and rename: where an id stands as a YAML value in the project's own templates.

An occurrence is the whole id after `:`, `[`, `,` or a list's `- ` and before `,`, `]`, `}`, a comment or
the end of the line (its `id:` line, `extends:`, `extends_when` roles, context and constraint lists), so
the same word inside prose is not one. Templates from the library and other search-path layers are read,
never renamed.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

from lsprotocol import types

from ...compose.index import Index
from ...core.choices import TEMPLATE_KINDS
from ..convert import file_path, uri_of
from .words import word_at


def _pattern(tid: str) -> re.Pattern[str]:
    return re.compile(r"(?:[:\[,]\s*|^\s*-\s+)[\"']?(" + re.escape(tid) + r")[\"']?\s*(?=$|[,\]}#])")


def defined_id(index: Index | None, text: str, position: types.Position) -> str | None:
    """The template id at `position`, when some template has it."""
    found = word_at(text, position.line, position.character)
    if index is None or found is None:
        return None
    return found[0] if any(index.get(kind, found[0]) is not None for kind in TEMPLATE_KINDS) else None


def project_files(index: Index) -> list[Path]:
    """The files of the project's own templates (the `project` layer), each once."""
    files = {file_path(t.pos("id").file) for t in index.templates.values() if t.layer.name == "project"}
    files |= {file_path(t.pos("id").file) for ts in index.shadowed.values() for t in ts if t.layer.name == "project"}
    return sorted(files)


def references(index: Index | None, text: str, position: types.Position, read: Callable[[Path], str | None]) -> list[types.Location]:
    """Every occurrence of the id at `position` in the project's templates; `read` gives a file's
    text (the open buffer's, else the disk's; None when unreadable)."""
    tid = defined_id(index, text, position)
    if index is None or tid is None:
        return []
    pattern, places = _pattern(tid), []
    for path in project_files(index):
        body = read(path)
        for n, line in enumerate((body or "").splitlines()):
            for m in pattern.finditer(line):
                span = types.Range(types.Position(n, m.start(1)), types.Position(n, m.end(1)))
                places.append(types.Location(uri=uri_of(path), range=span))
    return places


def rename(
    index: Index | None, text: str, position: types.Position, new: str, read: Callable[[Path], str | None]
) -> types.WorkspaceEdit | None:
    """Every reference replaced by `new`; None when the id is not the project's own (a library's id
    is overridden by defining it in prompts/, not renamed)."""
    tid = defined_id(index, text, position)
    if index is None or tid is None or any(t.layer.name != "project" for k in TEMPLATE_KINDS if (t := index.get(k, tid)) is not None):
        return None
    changes: dict[str, list[types.TextEdit]] = {}
    for loc in references(index, text, position, read):
        changes.setdefault(loc.uri, []).append(types.TextEdit(range=loc.range, new_text=new))
    return types.WorkspaceEdit(changes=changes)
