"""Bad templates for tools, output contracts and caching: one file per case.

Each file in tests/cases/providers/negative/ starts with
`# expect: CODE LINE:COL` and optionally `# with: FILE` naming a helper
template from ../support/ that the case needs (e.g. a role using its contract).
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

import promptmill

CASES = Path(__file__).resolve().parent / "cases" / "providers"
NEGATIVE = sorted((CASES / "negative").glob("*.yaml"))


def _header(path: Path) -> tuple[str, int, int, list[str]]:
    lines = path.read_text(encoding="utf-8").splitlines()
    code, where = lines[0].removeprefix("# expect:").split()
    line, col = map(int, where.split(":"))
    extra = [ln.removeprefix("# with:").strip() for ln in lines[1:3] if ln.startswith("# with:")]
    return code, line, col, extra


@pytest.mark.parametrize("case", NEGATIVE, ids=[p.stem for p in NEGATIVE])
def test_negative_case(case, tmp_path):
    code, line, col, extra = _header(case)
    prompts = tmp_path / "prompts"
    prompts.mkdir()
    (tmp_path / "promptmill.yaml").write_text("prompts: prompts\nlibrary: false\n")
    shutil.copy(case, prompts / case.name)
    for name in extra:
        shutil.copy(CASES / "support" / name, prompts / name)
    result = promptmill.lint(tmp_path)
    found = [(d.code, d.line, d.col) for d in result.diagnostics if d.file.endswith(case.name)]
    assert (code, line, col) in found, [d.format() for d in result.diagnostics]


def test_shipped_prompts_lint_clean():
    root = Path(__file__).resolve().parent.parent
    result = promptmill.lint(root)
    # the one note: companion-beat's reason limit is lost on most wires, and stated in its prompt there (PM708, info)
    assert [(d.code, d.severity, d.file) for d in result.diagnostics] == [("PM708", "info", "prompts/modes/beat.yaml")]
    assert result.roles >= 6  # executor, the abstract companion base and its four modes
