"""A real editor: Neovim, headless, with promptmill's server configured (tests/lsp/init.lua), opens a broken
role; the test reads the diagnostics Neovim received. Skips when nvim is missing (apt-get install neovim),
fails instead with PROMPTMILL_REQUIRE_BROWSER=1 (.ci/run installs it), as the browser tests do."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from tests.conftest import _no_browser

INIT = Path(__file__).parent / "lsp" / "init.lua"
ROLE = "kind: role\nid: r\ncontext:\n  system: [greet]\nsections:\n  - id: a\n    text: Answer.\n"
FRAGMENT = "kind: fragment\nid: greeting\ntext: Hello there.\n"


def test_neovim_shows_promptmill_diagnostics(make_project, tmp_path_factory):
    nvim = shutil.which("nvim")
    if nvim is None:
        _no_browser("no nvim on PATH (apt-get install neovim)")
    pytest.importorskip("pygls", reason="the language server needs the [lsp] extra")
    root = make_project({"promptmill.yaml": "prompts: prompts\n", "prompts/roles/r.yaml": ROLE, "prompts/f.yaml": FRAGMENT})
    out = tmp_path_factory.mktemp("nvim") / "diagnostics.txt"
    env = {**os.environ, "PM_LSP_CMD": f"{sys.executable} -m promptmill.cli lsp --stdio", "PM_DIAG_OUT": str(out), "HOME": str(out.parent)}
    done = subprocess.run(
        [nvim, "--headless", "-n", "-i", "NONE", "-u", str(INIT), "prompts/roles/r.yaml"],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, (done.returncode, done.stdout, done.stderr)
    lines = out.read_text(encoding="utf-8").splitlines()
    assert lines == ["prompts/roles/r.yaml:4:12: error[PM302] unknown fragment 'greet' | hint: did you mean 'greeting'?"], lines
