"""Code actions: a diagnostic's "did you mean 'x'?" hint as a quick fix replacing the word it points at."""

from __future__ import annotations

import re

from lsprotocol import types

from .words import word_at

_SUGGESTION = re.compile(r"'([^']+)'")


def quick_fixes(uri: str, text: str, diagnostics: list[types.Diagnostic]) -> list[types.CodeAction]:
    actions = []
    for diag in diagnostics:
        hint = diag.data.get("hint") if isinstance(diag.data, dict) else None
        if diag.source != "promptmill" or not isinstance(hint, str) or not hint.startswith("did you mean"):
            continue
        found = word_at(text, diag.range.start.line, diag.range.start.character)
        if found is None:
            continue
        _, start, end = found
        where = types.Range(types.Position(diag.range.start.line, start), types.Position(diag.range.start.line, end))
        for suggestion in _SUGGESTION.findall(hint):
            actions.append(
                types.CodeAction(
                    title=f"Replace with '{suggestion}'",
                    kind=types.CodeActionKind.QuickFix,
                    diagnostics=[diag],
                    edit=types.WorkspaceEdit(changes={uri: [types.TextEdit(range=where, new_text=suggestion)]}),
                )
            )
    return actions
