"""Where an id resolves along the search path, and what it shadows.

    for r in promptmill.compiling.which.which("agent/core/identity", "."):
        print(r.kind, r.winner.layer, r.winner.file, [s.layer for s in r.shadows])

Ids resolve through the layers in order - the project's prompts folder, each
`search_path` folder, the user folder (`PROMPTMILL_USER_DIR`, by default under
the user's config dir), then the library shipped in the package - and the
first match wins. `which` reports, for every kind that has the id, the file
that wins and every file it hides. `promptmill which ID` prints it.

For a role whose parent is chosen at render time (`extends_when`), `parents`
lists the candidates in the order the runtime tries them, each with its
condition, then the `extends` parent taken when none holds (condition None).
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from ..compose.model import Template
from ..core.choices import TEMPLATE_KINDS
from ..core.errors import PromptmillError
from ..core.jsontypes import JSON
from ..runtime import conditions


@dataclass(frozen=True)
class Location:
    """One definition of an id: its layer, source id and position."""

    layer: str  # project, search:N, user, library
    source: str  # stable source id, e.g. prompts/fragments/identity.yaml or promptmill:fragments/identity.yaml
    file: str  # as shown in diagnostics
    line: int
    col: int

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.col}"


@dataclass(frozen=True)
class Resolution:
    """How one (kind, id) resolves: the winner and what it hides, in search order."""

    kind: str
    id: str
    winner: Location
    shadows: tuple[Location, ...] = ()
    parents: tuple[tuple[str | None, JSON | None], ...] = ()  # (parent id, condition) of extends_when, then (extends, None)


def _location(t: Template) -> Location:
    p = t.pos("id")
    return Location(t.layer.name, t.source_file, p.file, p.line, p.col)


def which(template_id: str, path: str | os.PathLike[str] = ".", *, kind: str | None = None) -> list[Resolution]:
    """Resolutions of `template_id` for every kind that has it (or only `kind`).

    Raises `PromptmillError` (PM302) when no layer defines the id, with the
    nearest ids as a hint; templates that fail their schema check are not indexed.
    """
    from ..compose.context import nearest_ids
    from .api import load_project

    if kind is not None and kind not in TEMPLATE_KINDS:
        raise PromptmillError(f"unknown kind '{kind}'; expected one of: {', '.join(TEMPLATE_KINDS)}", code="PM010")
    index = load_project(path).index
    kinds = (kind,) if kind else TEMPLATE_KINDS
    found = []
    for k in kinds:
        t = index.get(k, template_id)
        if t is not None:
            hidden = tuple(_location(s) for s in index.shadowed.get((k, template_id), ()))
            parents: tuple[tuple[str | None, JSON | None], ...] = ()
            if k == "role" and t.get("extends_when"):
                parents = (*((c["role"], c["when"]) for c in t.get("extends_when")), (t.get("extends"), None))
            found.append(Resolution(k, template_id, _location(t), hidden, parents))
    if not found:
        ids = sorted({tid for (k, tid) in index.templates if k in kinds})
        close = nearest_ids(template_id, ids)
        what = f"{kind} " if kind else ""
        raise PromptmillError(
            f"no {what}template has the id '{template_id}' in the project, search path, user folder or library",
            code="PM302",
            hint="did you mean " + " or ".join(f"'{c}'" for c in close) + "?" if close else None,
        )
    return found


def format_which(results: list[Resolution]) -> str:
    """The text `promptmill which` prints."""
    lines = []
    for r in results:
        lines.append(f"{r.kind} {r.id}")
        lines.append(f"  resolves to  {r.winner.layer:<9} {r.winner}")
        for s in r.shadows:
            lines.append(f"  shadows      {s.layer:<9} {s}")
        if not r.shadows:
            lines.append("  shadows      nothing")
        for parent, when in r.parents:
            shown = parent if parent is not None else "(none)"
            lines.append(f"  parent       {shown:<9} " + (f"when {conditions.describe(when)}" if when is not None else "otherwise"))
    return "\n".join(lines)
