"""PM410: Jinja syntax in text that is sent as written (a section's `title` or `text`).

A section's `title` and its `text` are literal: `title: "Diff ({{ diff.lines }} lines):"`
reaches the model with its braces, and nothing fails. This check warns where such a
value holds `{{ ... }}` or `{% ... %}`. It is a warning, not an error: a prompt may
show Jinja to the model on purpose.
"""

from __future__ import annotations

import re

from ..compose.model import SectionDef
from ..compose.resolve import ComposedRole
from ..core.diagnostics import Diagnostic
from .context import LintContext

__all__ = ["literal_jinja"]

_JINJA = re.compile(r"\{\{.*?\}\}|\{%.*?%\}", re.S)
_SHOWN = 40
_HINTS = {
    "title": "print the value in the section's `template` instead",
    "text": "use `template:` to fill it from the state (keep `text:` if the braces are meant for the model)",
}


def literal_jinja(role: ComposedRole, ctx: LintContext) -> list[Diagnostic]:
    """PM410 warnings for Jinja syntax in the `title` and `text` of the role's sections."""
    return [d for s in role.sections for d in _in_section(s)]


def _in_section(s: SectionDef) -> list[Diagnostic]:
    out = []
    for key in ("title", "text"):
        value = s.data.get(key)
        if not isinstance(value, str):
            continue
        match = _JINJA.search(value)
        if match is None:
            continue
        before = value[: match.start()]
        line = before.count("\n") + 1
        col = match.start() - (before.rfind("\n") + 1) + 1
        shown = match.group()
        if len(shown) > _SHOWN:
            shown = shown[: _SHOWN - 3] + "..."
        out.append(
            Diagnostic.at(
                s.doc.text_pos(s.path + (key,), line, col),
                "PM410",
                f"section '{s.id}': its `{key}` holds Jinja syntax '{shown}', but `{key}:` is sent as written, never filled from the state",
                hint=_HINTS[key],
            )
        )
    return out
