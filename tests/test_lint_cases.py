"""Lint over a corpus of small projects: one folder per case.

`tests/cases/lint/negative/<case>/` holds a prompts folder in miniature. Each
file announces the errors expected in it with `# expect: CODE LINE:COL`
comments; the test requires exactly those errors (warnings are free). Positive
cases must lint with no errors and no warnings. A new case is a new folder.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

import promptmill
from promptmill.cli.main import main

CASES = Path(__file__).parent / "cases" / "lint"
EXPECT = re.compile(r"#\s*expect:\s*(PM\d{3})\s+(\d+):(\d+)")


def cases(kind: str) -> list[Path]:
    return sorted(p for p in (CASES / kind).iterdir() if p.is_dir())


def as_project(case: Path, tmp_path: Path) -> Path:
    shutil.copytree(case, tmp_path / "prompts")
    return tmp_path


def expected_errors(case: Path) -> set[tuple[str, str, int, int]]:
    out = set()
    for f in sorted(case.rglob("*.y*ml")):
        head = f.read_bytes()[:2000].decode("utf-8", "replace")
        for m in EXPECT.finditer(head):
            out.add((f.relative_to(case).as_posix(), m[1], int(m[2]), int(m[3])))
    return out


def actual_errors(result, root: Path) -> set[tuple[str, str, int, int]]:
    prompts = (root / "prompts").resolve()
    out = set()
    for d in result.diagnostics:
        if d.severity != "error":
            continue
        rel = Path(d.file).resolve().relative_to(prompts).as_posix()
        out.add((rel, d.code, d.line, d.col))
    return out


@pytest.mark.parametrize("case", cases("negative"), ids=lambda p: p.name)
def test_negative_case(case, tmp_path):
    root = as_project(case, tmp_path)
    expected = expected_errors(case)
    assert expected, f"{case.name} declares no '# expect:' comment"
    result = promptmill.lint(root)
    assert actual_errors(result, root) == expected
    assert not result.ok()


@pytest.mark.parametrize("case", cases("positive"), ids=lambda p: p.name)
def test_positive_case(case, tmp_path):
    root = as_project(case, tmp_path)
    result = promptmill.lint(root)
    assert [d.format() for d in result.diagnostics] == []


def test_cli_lint_exit_codes_and_format(tmp_path):
    root = as_project(CASES / "negative" / "misspelled_key", tmp_path)
    runner = CliRunner()
    out = runner.invoke(main, ["lint", str(root)])
    assert out.exit_code == 1
    assert re.search(r"prompts/role\.yaml:7:5: error\[PM202\] unknown key 'priorty'", out.output)
    assert "did you mean 'priority'?" in out.output
    clean = as_project(CASES / "positive" / cases("positive")[0].name, tmp_path / "clean")
    assert runner.invoke(main, ["lint", str(clean)]).exit_code == 0
    assert runner.invoke(main, ["lint", str(root), "--format", "nope"]).exit_code == 2
