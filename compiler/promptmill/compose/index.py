"""The id index along the search path.

`Index` maps (kind, id) to the template found first along the layers (project,
search path, user folder, shipped library); a project overrides a shipped
fragment simply by defining the same id, and `shadowed` keeps what lost. Two
files of one layer defining the same id is an error (PM301); an id that hides
one further down the search path is noted (PM306, info).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..core.diagnostics import Diagnostic
from .model import Template

__all__ = ["Index", "build_index"]


@dataclass
class Index:
    """First match wins along the layers; `shadowed` keeps what lost, in layer order."""

    templates: dict[tuple[str, str], Template] = field(default_factory=dict)
    shadowed: dict[tuple[str, str], list[Template]] = field(default_factory=dict)

    def get(self, kind: str, tid: str) -> Template | None:
        return self.templates.get((kind, tid))

    def ids(self, kind: str) -> list[str]:
        return sorted(t for k, t in self.templates if k == kind)


def build_index(templates: list[Template]) -> tuple[Index, list[Diagnostic]]:
    """Index templates given in layer order (project first)."""
    index = Index()
    diags: list[Diagnostic] = []
    for t in templates:
        key = (t.kind, t.id)
        first = index.templates.get(key)
        if first is None:
            index.templates[key] = t
        elif first.layer.name == t.layer.name:
            where = first.pos("id")
            diags.append(
                Diagnostic.at(
                    t.pos("id"),
                    "PM301",
                    f"{t.kind} id '{t.id}' is already defined in {where.file}:{where.line}:{where.col}",
                    hint="ids must be unique within a folder; rename one of them",
                )
            )
        else:
            if key not in index.shadowed:
                hidden = t.pos("id")
                diags.append(
                    Diagnostic.at(
                        first.pos("id"),
                        "PM306",
                        f"{t.kind} '{t.id}' ({first.layer.name}) shadows the one in the {t.layer.name} layer ({hidden.file}:{hidden.line})",
                        hint=f"`promptmill which {t.id}` shows the whole cascade",
                    )
                )
            index.shadowed.setdefault(key, []).append(t)
    return index, diags
