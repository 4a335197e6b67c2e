"""Composition cases as data: small projects under tests/cases/composition/.

Positive cases are folders with a `case.yaml`: the lint diagnostics expected
(`CODE file:line:col`), renders (role, state, event, budget) with the exact
text in `expected/<name>`, the present sections in order, the events, and the
budget with its origins, and `which` outputs. Negative cases are folders under
`negative/`; every `# expect: CODE LINE:COL text` line at the top of one of
their files is a diagnostic lint must report in that file (with `text` in its
message or hint), and lint must report no other error or warning.

Set PROMPTMILL_REGEN=1 to rewrite the expected text files from the current
output (then read the diff before committing it).
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
import yaml

import promptmill
from promptmill.compiling.api import build_in_memory
from promptmill.compiling.which import format_which, which
from promptmill.source.project import library_dir

CASES = Path(__file__).parent / "cases" / "composition"
POSITIVE = sorted(p for p in CASES.iterdir() if (p / "case.yaml").is_file())
NEGATIVE = sorted(p for p in (CASES / "negative").iterdir() if p.is_dir())
EXPECT = re.compile(r"^# expect: (PM\d{3}) (\d+):(\d+)(?: (.*))?$")


def _enter(case: Path, monkeypatch) -> dict:
    spec = yaml.safe_load((case / "case.yaml").read_text(encoding="utf-8")) if (case / "case.yaml").exists() else {}
    monkeypatch.chdir(case)
    if spec.get("user_dir"):
        monkeypatch.setenv("PROMPTMILL_USER_DIR", str(case / spec["user_dir"]))
    return spec


@pytest.mark.parametrize("case", POSITIVE, ids=lambda p: p.name)
def test_lint_reports_exactly_the_expected_diagnostics(case, monkeypatch):
    spec = _enter(case, monkeypatch)
    result = promptmill.lint(".")
    got = sorted(f"{d.code} {d.file}:{d.line}:{d.col}" for d in result.diagnostics)
    assert got == sorted(spec.get("diagnostics", [])), "\n".join(d.format() for d in result.diagnostics)


@pytest.mark.parametrize("case", POSITIVE, ids=lambda p: p.name)
def test_renders_match_expected_output(case, monkeypatch):
    spec = _enter(case, monkeypatch)
    runtime, _ = build_in_memory(".")
    for r in spec.get("renders", []):
        req = runtime.render(
            r["role"],
            r.get("state") or {},
            event=r.get("event", "start"),
            budget=r.get("render_budget"),
            provider=r.get("provider"),
        )
        where = f"{case.name}: {r['role']} ({r.get('event', 'start')})"
        if "expect" in r:
            path = case / "expected" / r["expect"]
            if os.environ.get("PROMPTMILL_REGEN"):
                path.parent.mkdir(exist_ok=True)
                path.write_text(req.text + "\n", encoding="utf-8")
            assert req.text + "\n" == path.read_text(encoding="utf-8"), where
        if "sections" in r:
            assert [s.id for s in req.sections if s.present] == r["sections"], where
        if "events" in r:
            assert [dict(e) for e in req.events] == r["events"], where
        for key in ("max_tokens", "reserve", "budget"):
            if key in r:
                assert getattr(req, key) == r[key], f"{where}: {key}"
        for key, origin in (r.get("origins") or {}).items():
            assert req.budget_origins[key] == origin, f"{where}: origin of {key}"


@pytest.mark.parametrize("case", [c for c in POSITIVE if "which:" in (c / "case.yaml").read_text()], ids=lambda p: p.name)
def test_which_output(case, monkeypatch):
    spec = _enter(case, monkeypatch)
    library = library_dir().resolve().as_posix()
    for w in spec["which"]:
        assert format_which(which(w["id"], ".")) + "\n" == w["expect"].replace("{library}", library)


def _expected(case: Path) -> list[tuple[str, str, int, int, str]]:
    out = []
    for path in sorted(case.rglob("*.yaml")):
        rel = path.relative_to(case).as_posix()
        for line in path.read_text(encoding="utf-8").splitlines():
            m = EXPECT.match(line)
            if not m:
                break
            out.append((m[1], rel, int(m[2]), int(m[3]), m[4] or ""))
    return out


@pytest.mark.parametrize("case", NEGATIVE, ids=lambda p: p.name)
def test_negative_case_reports_its_diagnostics(case, monkeypatch):
    expected = _expected(case)
    assert expected, f"{case.name}: no '# expect:' line"
    monkeypatch.chdir(case)
    diags = [d for d in promptmill.lint(".").diagnostics if d.severity in ("error", "warning")]
    shown = "\n".join(d.format() for d in diags)
    got = sorted((d.code, d.file, d.line, d.col) for d in diags)
    assert got == sorted(e[:4] for e in expected), shown
    for code, file, line, col, text in expected:
        d = next(d for d in diags if (d.code, d.file, d.line, d.col) == (code, file, line, col))
        assert text in d.message + " " + (d.hint or ""), shown


@pytest.mark.parametrize("case", NEGATIVE, ids=lambda p: p.name)
def test_negative_case_fails_compile_only_on_errors(case, monkeypatch, tmp_path):
    """Errors stop a compile with CompileError (never another exception); warnings do not."""
    monkeypatch.chdir(case)
    has_error = any(d.severity == "error" for d in promptmill.lint(".").diagnostics)
    if has_error:
        with pytest.raises(promptmill.CompileError):
            promptmill.compile(".", output=tmp_path / "build")
    else:
        result = promptmill.compile(".", output=tmp_path / "build")
        assert result.compiled
