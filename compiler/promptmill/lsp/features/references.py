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
from pygls.exceptions import JsonRpcInvalidParams

from ...compose.index import Index
from ...core.choices import TEMPLATE_KINDS
from ...source.schemacheck import load_schema
from ..convert import file_path, uri_of
from .completion import kind_at
from .definition import kinds_at
from .words import word_at


def _pattern(tid: str) -> re.Pattern[str]:
    return re.compile(r"(?:[:\[,]\s*|^\s*-\s+)[\"']?(" + re.escape(tid) + r")[\"']?\s*(?=$|[,\]}#])")


def defined_id(index: Index | None, text: str, position: types.Position) -> tuple[str, str | None] | None:
    """The template id at `position`, when some template of a kind its place allows has it, and that
    kind (None when the place does not say and several kinds have the id)."""
    found = word_at(text, position.line, position.character)
    if index is None or found is None:
        return None
    kinds = [kind for kind in kinds_at(text, position) if index.get(kind, found[0]) is not None]
    if not kinds:
        return None
    return found[0], kinds[0] if len(kinds) == 1 else None


def project_files(index: Index) -> list[Path]:
    """The files of the project's own templates (the `project` layer), each once."""
    files = {file_path(t.pos("id").file) for t in index.templates.values() if t.layer.name == "project"}
    files |= {file_path(t.pos("id").file) for ts in index.shadowed.values() for t in ts if t.layer.name == "project"}
    return sorted(files)


def references(index: Index | None, text: str, position: types.Position, read: Callable[[Path], str | None]) -> list[types.Location]:
    """Every occurrence of the id at `position` in the project's templates, where it stands for the same
    kind; `read` gives a file's text (the open buffer's, else the disk's; None when unreadable)."""
    target = defined_id(index, text, position)
    if index is None or target is None:
        return []
    tid, kind = target
    pattern, places = _pattern(tid), []
    for path in project_files(index):
        body = read(path) or ""
        for n, line in enumerate(body.splitlines()):
            for m in pattern.finditer(line):
                there = kind_at(body, types.Position(n, m.start(1))) if kind is not None else None
                if there is None or there == kind:
                    span = types.Range(types.Position(n, m.start(1)), types.Position(n, m.end(1)))
                    places.append(types.Location(uri=uri_of(path), range=span))
    return places


def id_problem(new: str, kind: str | None) -> str | None:
    """Why `new` cannot be a template id (the rule of the templates' JSON Schema), or None."""
    rule = load_schema(kind or "role")["properties"]["id"]
    if not new:
        return "an id cannot be empty"
    if len(new) > rule.get("maxLength", 200):
        return f"an id is at most {rule.get('maxLength', 200)} characters"
    if re.fullmatch(rule["pattern"], new) is None:
        return (
            f"{new[:80]!r} is not a valid id: letters, digits and '_ . -', parts joined by '/', each part"
            " starting with a letter or digit (no spaces, no line breaks, no leading '.' or '/')"
        )
    return None


def rename(
    index: Index | None, text: str, position: types.Position, new: str, read: Callable[[Path], str | None]
) -> types.WorkspaceEdit | None:
    """Every reference replaced by `new`; None when the id is not the project's own (a library's id
    is overridden by defining it in prompts/, not renamed). A new name that is not a valid id, or that
    some template already has, is refused (InvalidParams with the reason)."""
    target = defined_id(index, text, position)
    if index is None or target is None:
        return None
    tid, kind = target
    if any(t.layer.name != "project" for k in TEMPLATE_KINDS if (t := index.get(k, tid)) is not None):
        return None
    problem = id_problem(new, kind)
    if problem is not None:
        raise JsonRpcInvalidParams(f"cannot rename '{tid}': {problem}")
    taken = [(k, t) for k in TEMPLATE_KINDS if (t := index.get(k, new)) is not None]
    if taken:
        k, t = taken[0]
        raise JsonRpcInvalidParams(f"cannot rename '{tid}' to '{new}': a {k} with that id already exists ({t.pos('id')})")
    changes: dict[str, list[types.TextEdit]] = {}
    for loc in references(index, text, position, read):
        changes.setdefault(loc.uri, []).append(types.TextEdit(range=loc.range, new_text=new))
    return types.WorkspaceEdit(changes=changes)
