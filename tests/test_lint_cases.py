"""Lint over small projects: one fixture file per lint code, and the older folder corpus.

`tests/cases/lint/PMnnn.yaml` holds every case of one code, as sqlfluff keeps
a rule's cases: named `pass` and `fail` cases, each with its files inline
(`files: {path: text}`, written as a project). A fail case lists each finding
of its code and each error lint must report, `CODE file:line:col text` (`text`
is looked for in the message or hint); a pass case must lint with no finding
of its code and no error. Warnings of other codes are free.
A new case of a code goes into its file (see tests/cases/README.md).

`tests/cases/lint/negative/<case>/` holds a prompts folder in miniature. Each
file announces the errors expected in it with `# expect: CODE LINE:COL`
comments; the test requires exactly those errors (warnings are free). Positive
cases must lint with no errors and no warnings.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

import promptmill
from promptmill.cli.main import main

CASES = Path(__file__).parent / "cases" / "lint"
EXPECT = re.compile(r"#\s*expect:\s*(PM\d{3})\s+(\d+):(\d+)")
CODE_FILES = sorted(CASES.glob("PM[0-9][0-9][0-9].yaml"))
FINDING = re.compile(r"(PM\d{3}) (\S+):(\d+):(\d+)(?: (.*))?")


def _code_file(path: Path) -> dict:
    return yaml.safe_load(path.read_text(encoding="utf-8"))


def code_cases() -> list:
    return [
        pytest.param(spec["code"], case, id=f"{path.stem}-{case['name']}")
        for path in CODE_FILES
        for spec in [_code_file(path)]
        for case in spec["cases"]
    ]


@pytest.mark.parametrize(("code", "case"), code_cases())
def test_code_case(code, case, monkeypatch, make_project):
    monkeypatch.chdir(make_project(case["files"]))
    found = [d for d in promptmill.lint(".").diagnostics if d.code == code or d.severity == "error"]
    shown = "\n".join(d.format() for d in found)
    expected = [FINDING.fullmatch(line) for line in case.get("fail", [])]
    assert None not in expected, case["fail"]
    assert sorted((d.code, d.file, d.line, d.col) for d in found) == sorted((m[1], m[2], int(m[3]), int(m[4])) for m in expected), shown
    for m in expected:
        d = next(d for d in found if (d.code, d.file, d.line, d.col) == (m[1], m[2], int(m[3]), int(m[4])))
        assert (m[5] or "") in f"{d.message} {d.hint or ''}", shown


def test_every_code_file_is_well_formed_and_every_case_runs():
    """Each PMnnn.yaml names its own code, has pass and fail cases with unique names, and
    holds as many cases as its text has `- name:` entries (a repeated key would drop some)."""
    assert CODE_FILES, f"no PMnnn.yaml under {CASES}"
    for path in CODE_FILES:
        spec = _code_file(path)
        assert spec["code"] == path.stem, path.name
        cases = spec["cases"]
        names = [c["name"] for c in cases]
        assert len(names) == len(set(names)), f"{path.name}: a case name is repeated"
        assert len(re.findall(r"(?m)^  - name: ", path.read_text(encoding="utf-8"))) == len(cases), path.name
        for c in cases:
            assert ("pass" in c) != ("fail" in c), f"{path.name} {c['name']}: say pass: true or fail: [...]"
            assert c.get("pass", True) is True, f"{path.name} {c['name']}: pass is true or absent"
            assert c["files"], f"{path.name} {c['name']}: no files"
            if "fail" in c:
                assert any(line.startswith(spec["code"] + " ") for line in c["fail"]), f"{path.name} {c['name']}"
        kinds = {"fail" if "fail" in c else "pass" for c in cases}
        assert kinds == {"pass", "fail"}, f"{path.name} needs a pass case and a fail case"


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
