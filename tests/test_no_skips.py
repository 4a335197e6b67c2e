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


@pytest.mark.parametrize("name", sorted(SKIPS))
@pytest.mark.parametrize("strict", [False, True])
def test_a_skip_fails_only_with_promptmill_no_skips(tmp_path, name, strict):
    shutil.copy(CONFTEST, tmp_path / "conftest.py")
    shutil.copy(CONFTEST.with_name("bundle_contract.py"), tmp_path)  # conftest.py's build check imports it
    (tmp_path / name).write_text(SKIPS[name], encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if k != "PROMPTMILL_NO_SKIPS"}
    if strict:
        env["PROMPTMILL_NO_SKIPS"] = "1"
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", name],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    if strict:
        assert run.returncode != 0 and "skipped with PROMPTMILL_NO_SKIPS=1" in run.stdout, run.stdout
    else:
        # 5: no test ran (the module was skipped at import), which pytest does not count as a failure
        assert run.returncode in (0, 5) and "1 skipped" in run.stdout, run.stdout
