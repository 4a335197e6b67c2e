"""Hostile input, round 2 (issue 13): each attack ends in one clear PM error, exit 1,
nothing deleted, nothing hung and never PM000.

Each test runs the real CLI (or the public API) on real files in a temporary project.
"""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

import promptmill
from promptmill.cli import main

ROLE = """\
kind: role
id: r
sections:
  - id: a
    text: hi
"""


def _project(tmp_path: Path, config: str = "", role: str = ROLE) -> Path:
    (tmp_path / "prompts" / "roles").mkdir(parents=True)
    (tmp_path / "prompts" / "roles" / "r.yaml").write_text(role)
    if config:
        (tmp_path / "promptmill.yaml").write_text(config)
    return tmp_path


def _run(*args: str):
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


def _tree(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


# 1. compile never deletes a file it did not write


def test_a_build_folder_that_is_the_prompts_folder_is_refused_and_nothing_is_deleted(tmp_path):
    root = _project(tmp_path, "build: prompts\n")
    before = _tree(root)
    result = _run("compile", str(root))
    assert result.exit_code == 1
    assert "promptmill.yaml:1:8: error[PM010] the build folder prompts is the prompts folder" in result.output
    assert _tree(root) == before


def test_compile_into_a_folder_that_holds_the_prompts_folder_is_refused(tmp_path):
    root = _project(tmp_path)
    before = _tree(root)
    result = _run("compile", str(root), "-o", str(root))
    assert result.exit_code == 1
    assert "error[PM010]" in result.output and "holds the prompts folder" in result.output
    assert _tree(root) == before


def test_compile_into_an_existing_folder_keeps_files_it_did_not_write(tmp_path):
    root = _project(tmp_path / "p")
    out = tmp_path / "out"
    (out / "roles" / "sub").mkdir(parents=True)
    (out / "roles" / "my-notes.json").write_text("{}")
    (out / "roles" / "sub" / "keep.yaml").write_text("x: 1\n")
    (out / "tokenizers").mkdir()
    (out / "tokenizers" / "mine.json").write_text("{}")
    for _ in range(2):  # the second compile rewrites nothing, and still deletes nothing
        result = _run("compile", str(root), "-o", str(out), "--force")
        assert result.exit_code == 0, result.output
        assert "removed 0 stale files" in result.output
    assert (out / "roles" / "my-notes.json").read_text() == "{}"
    assert (out / "roles" / "sub" / "keep.yaml").read_text() == "x: 1\n"
    assert (out / "tokenizers" / "mine.json").read_text() == "{}"
    check = promptmill.compile(root, output=out, check=True)
    assert check.stale == ()


def test_a_role_that_is_renamed_loses_its_old_bundle_and_nothing_else(tmp_path):
    root = _project(tmp_path)
    _run("compile", str(root))
    (root / "build" / "roles" / "notes.txt").write_text("mine")
    (root / "prompts" / "roles" / "r.yaml").write_text(ROLE.replace("id: r", "id: s"))
    result = _run("compile", str(root))
    assert result.exit_code == 0 and "removed 1 stale file" in result.output
    names = sorted(p.name for p in (root / "build" / "roles").iterdir())
    assert names[0] == "notes.txt" and names[1].startswith("s.") and len(names) == 2
