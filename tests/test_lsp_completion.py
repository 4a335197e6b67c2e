"""Which kind of id belongs where the cursor is (lsp/features/completion.py), for every place a template names one."""

from __future__ import annotations

import pytest

pytest.importorskip("pygls", reason="the language server needs the [lsp] extra")

from lsprotocol import types

from promptmill.lsp.features.completion import expected_kind

CASES = [
    ("extends: |", "role"),
    ("extends: ag|", "role"),
    ("extends_when:\n  - role: |", "role"),
    ("output: x|", "output"),
    ("context:\n  system: [|", "fragment"),
    ("context:\n  before: [a, |", "fragment"),
    ("context:\n  system:\n    - |", "fragment"),
    ("context:\n  suppress:\n    - agent/co|", "fragment"),
    ("sections:\n  - id: a\n    fragment: |", "fragment"),
    ("  - {id: x, fragment: |", "fragment"),
    ("sections:\n  - id: c\n    constraints: [|", "constraints"),
    ("description: |", None),
    ("sections:\n  - id: a\n    text: |", None),
    ("sections:\n  - id: a\n    items:\n      - |", None),
    ("system: [|", None),  # not under context:
]


@pytest.mark.parametrize(("text", "kind"), CASES)
def test_expected_kind(text, kind):
    before, _ = text.split("|")
    lines = before.split("\n")
    assert expected_kind(text.replace("|", ""), types.Position(line=len(lines) - 1, character=len(lines[-1]))) == kind
