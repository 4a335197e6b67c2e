"""PROMPTMILL_NO_SKIPS=1 (set by .ci/run) turns a skipped test, or a module skipped at import, into a
failure: in CI every extra is installed, so a skip there is a missing install step."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

CONFTEST = Path(__file__).with_name("conftest.py")
SKIPS = {
    "test_one.py": "import pytest\n\ndef test_a():\n    pytest.skip('an optional part is missing')\n",
    "test_two.py": "import pytest\n\npytest.importorskip('a_module_nobody_installed')\n\ndef test_b():\n    pass\n",
}


@pytest.mark.parametrize("strict", [False, True])
def test_a_skip_fails_only_with_promptmill_no_skips(tmp_path, strict):
    """Both kinds of skip in one run of pytest (a run costs seconds: conftest.py loads the suite's plugins)."""
    shutil.copy(CONFTEST, tmp_path / "conftest.py")
    shutil.copy(CONFTEST.with_name("bundle_contract.py"), tmp_path)  # conftest.py's build check imports it
    for name, text in SKIPS.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if k != "PROMPTMILL_NO_SKIPS"}
    if strict:
        env["PROMPTMILL_NO_SKIPS"] = "1"
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "-rfEs", "--continue-on-collection-errors", *sorted(SKIPS)],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    if strict:  # each file fails: the skipped test, and the module skipped at import
        assert run.returncode != 0 and run.stdout.count("skipped with PROMPTMILL_NO_SKIPS=1") >= 2, run.stdout
        for name in SKIPS:
            assert name in run.stdout.split("short test summary info")[-1], run.stdout
    else:
        assert run.returncode == 0 and "2 skipped" in run.stdout, run.stdout
