"""The language server's diagnostics in process: what `lsp/features/diagnostics.py` publishes is what
`promptmill lint` reports (every lint code's cases), moved to 0-based ranges, with hints and related places."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("pygls", reason="the language server needs the [lsp] extra")

from tests.test_lint_cases import code_cases

import promptmill
from promptmill.lsp.documents import Overlay
from promptmill.lsp.features.diagnostics import Checker

ROLE = "kind: role\nid: r\ncontext:\n  system: [greet]\nsections:\n  - id: a\n    text: Answer.\n"
FRAGMENT = "kind: fragment\nid: greet\ntext: Hello there.\n"


def _flat(published: dict) -> list[tuple]:
    return sorted(
        (Path(uri.removeprefix("file://")).resolve(), d.code, d.range.start.line + 1, d.range.start.character + 1)
        for uri, diags in published.items()
        for d in diags
    )


@pytest.mark.parametrize(("code", "case"), code_cases())
def test_every_lint_case_is_published_as_lint_reports_it(code, case, monkeypatch, make_project):
    root = make_project(case["files"])
    monkeypatch.chdir(root)
    expected = sorted((Path(d.file).resolve(), d.code, max(d.line, 1), max(d.col, 1)) for d in promptmill.lint(".").diagnostics)
    assert _flat(Checker(root).lint({})) == expected


def test_unsaved_text_counts_and_a_fix_clears_the_file(monkeypatch, make_project):
    root = make_project({"promptmill.yaml": "prompts: prompts\n", "prompts/r.yaml": ROLE, "prompts/f.yaml": FRAGMENT})
    monkeypatch.chdir(root)
    checker, overlay = Checker(root), Overlay()
    frag = (root / "prompts/f.yaml").resolve()
    overlay.put(frag.as_uri(), FRAGMENT.replace("id: greet", "id: greeting"))  # unsaved: the disk still says greet
    sent = checker.to_publish(checker.lint(overlay.snapshot()))
    [(uri, [diag])] = sent.items()
    assert Path(uri.removeprefix("file://")).resolve() == (root / "prompts/r.yaml").resolve()  # the role that uses it
    assert (diag.code, diag.range.start.line, diag.range.start.character) == ("PM302", 3, 11)
    assert diag.data == {"hint": "did you mean 'greeting'?"} and "hint: did you mean 'greeting'?" in diag.message
    overlay.drop(frag.as_uri())
    assert checker.to_publish(checker.lint(overlay.snapshot())) == {uri: []}  # cleared, not left stale
    assert checker.to_publish(checker.lint(overlay.snapshot())) == {}  # and not sent again


def test_a_duplicate_id_names_the_other_file_as_related(monkeypatch, make_project):
    root = make_project(
        {"promptmill.yaml": "prompts: prompts\n", "prompts/r.yaml": ROLE, "prompts/r2.yaml": ROLE, "prompts/f.yaml": FRAGMENT}
    )
    monkeypatch.chdir(root)
    [diag] = [d for diags in Checker(root).lint({}).values() for d in diags if d.code == "PM301"]
    [related] = diag.related_information
    assert Path(related.location.uri.removeprefix("file://")).resolve() == (root / "prompts/r.yaml").resolve()
    assert (related.location.range.start.line, related.location.range.start.character) == (1, 4)
