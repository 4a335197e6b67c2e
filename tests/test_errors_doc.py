"""The error catalog (docs/errors.md) matches the code base, and its examples are real.

- every code in `promptmill.core.codes.CODES` has an entry with its name and severity,
  and the page has no other entries;
- every `"PMnnn"` literal in the package is in the catalog, and every catalogued
  code is used somewhere in the package;
- every example reports its code exactly as the page shows (tools/errors_doc.py).
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

from click.testing import CliRunner

from promptmill.core.codes import CODES

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))
import errors_doc  # noqa: E402

PACKAGE = ROOT / "compiler" / "promptmill"
TEXT = errors_doc.DOC.read_text(encoding="utf-8")
ENTRIES = errors_doc.entries(TEXT)


def test_every_code_has_one_entry_with_its_name_and_severity():
    assert [e.code for e in ENTRIES] == sorted(CODES)
    for entry in ENTRIES:
        code = CODES[entry.code]
        assert entry.name == code.name, entry.code
        assert entry.body.lstrip().startswith(f"**{code.severity}** · "), entry.code
        assert "**Fix:**" in entry.body, entry.code


def test_codes_in_the_package_and_the_catalog_agree():
    literal = re.compile(r"""["'](PM\d{3})["']""")
    used: dict[str, set[str]] = {}
    for path in PACKAGE.rglob("*.py"):
        if path.name != "codes.py":
            for code in literal.findall(path.read_text(encoding="utf-8")):
                used.setdefault(code, set()).add(path.name)
    assert sorted(set(used) - set(CODES)) == [], "codes used but not catalogued"
    assert sorted(set(CODES) - set(used)) == [], "codes catalogued but never used"


def test_every_example_reports_its_code_as_shown():
    without = [e.code for e in ENTRIES if not e.files and e.python is None]
    assert without == ["PM000"]  # a bug has no example
    _, stale = errors_doc.update(TEXT)
    assert stale == [], f"run: python tools/errors_doc.py --update ({stale})"


def test_an_internal_error_is_pm000_without_a_traceback(monkeypatch, tmp_path):
    from promptmill.cli.main import main
    from promptmill.compiling import api

    def broken(*args, **kwargs):
        raise RuntimeError("simulated bug")

    monkeypatch.setattr(api, "lint", broken)
    out = CliRunner().invoke(main, ["lint", str(tmp_path)])
    assert out.exit_code == 3
    assert "error[PM000]: internal error: RuntimeError('simulated bug')" in out.output
    assert "Traceback" not in out.output
