"""A real editor: Neovim, headless, with promptmill's server configured (tests/lsp/init.lua), opens a broken
role and the test reads the diagnostics Neovim received; on a good role it asks for a section's hover
(textDocument/hover, as `K` does) and the test reads the text Neovim got back. Skips when nvim is missing (apt-get install neovim),
fails instead with PROMPTMILL_REQUIRE_BROWSER=1 (.ci/run installs it), as the browser tests do."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from tests.conftest import _no_browser

INIT = Path(__file__).parent / "lsp" / "init.lua"
ROLE = "kind: role\nid: r\ncontext:\n  system: [greet]\nsections:\n  - id: a\n    text: Answer.\n"
FRAGMENT = "kind: fragment\nid: greeting\ntext: Hello there.\n"


# A role shaped like the shipped ones: a budget, an inputs schema, context, a static and a templated section,
# and an example state next to it (the hover renders the role with it).
REVIEWER = """kind: role
id: reviewer
budget: {max_tokens: 1200, reserve: 200}
inputs:
  type: object
  properties:
    task_state:
      type: object
      properties: {goal: {type: string}}
context:
  system: [greeting]
sections:
  - id: identity
    text: You review a change for bugs and missing tests.
  - id: task
    priority: 80
    template: "Goal: {{ task_state.goal }}"
"""
STATE = "task_state:\n  goal: add retries to the HTTP client\n"


def _nvim(root: Path, out: Path, role: str, **env: str) -> list[str]:
    """Run headless Neovim with tests/lsp/init.lua on `role`; the lines it wrote to `out`."""
    nvim = shutil.which("nvim")
    if nvim is None:
        _no_browser("no nvim on PATH (apt-get install neovim)")
    pytest.importorskip("pygls", reason="the language server needs the [lsp] extra")
    env = {**os.environ, "PM_LSP_CMD": f"{sys.executable} -m promptmill.cli lsp --stdio", "HOME": str(out.parent), **env}
    done = subprocess.run(
        [nvim, "--headless", "-n", "-i", "NONE", "-u", str(INIT), role],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, (done.returncode, done.stdout, done.stderr)
    return out.read_text(encoding="utf-8").splitlines()


def test_neovim_shows_promptmill_diagnostics(make_project, tmp_path_factory):
    root = make_project({"promptmill.yaml": "prompts: prompts\n", "prompts/roles/r.yaml": ROLE, "prompts/f.yaml": FRAGMENT})
    out = tmp_path_factory.mktemp("nvim") / "diagnostics.txt"
    lines = _nvim(root, out, "prompts/roles/r.yaml", PM_DIAG_OUT=str(out))
    assert lines == ["prompts/roles/r.yaml:4:12: error[PM302] unknown fragment 'greet' | hint: did you mean 'greeting'?"], lines


def test_neovim_shows_a_sections_hover(make_project, tmp_path_factory):
    files = {"promptmill.yaml": "prompts: prompts\n", "prompts/roles/reviewer.yaml": REVIEWER, "prompts/f.yaml": FRAGMENT}
    root = make_project({**files, "examples/reviewer.state.yaml": STATE})
    out = tmp_path_factory.mktemp("nvim") / "hover.txt"
    line = REVIEWER.splitlines().index("  - id: identity")
    lines = _nvim(root, out, "prompts/roles/reviewer.yaml", PM_HOVER_OUT=str(out), PM_HOVER_AT=f"{line}:10")
    assert lines[0].startswith("section `identity` (static, priority "), lines
    static = re.fullmatch(r"static: (\d+) tokens", lines[2])
    kept = re.fullmatch(r"with `examples/reviewer.state.yaml`: kept, (\d+) of 1000 tokens \((\d+\.\d)%\)", lines[4])
    assert static is not None and kept is not None and int(kept[1]) > 0 and kept[2] == f"{100 * int(kept[1]) / 1000:.1f}", lines
    assert lines[6:] == ["```text", "You review a change for bugs and missing tests.", "```"], lines
    # the tutorial's editor step (docs/tutorial.md) shows this capture: it must be what Neovim received, line for line.
    readme = (Path(__file__).parents[1] / "docs" / "tutorial.md").read_text(encoding="utf-8")
    shown = readme.split("$ nvim --headless -u tests/lsp/init.lua prompts/roles/reviewer.yaml", 1)[1].split("\n````\n", 1)[0]
    assert shown.splitlines()[1:] == lines, shown
    assert f"PM_HOVER_AT={line}:10" in shown.splitlines()[0]
