"""docs/reviewing.md: its `promptmill test` and `promptmill diff --format markdown`
outputs are what the commands print on a real two-commit change of the shipped prompts, run here
in a temporary git repository holding a copy of promptmill.yaml, prompts/ and snapshots/."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from git_support import git
from promptmill.cli.main import main

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "docs" / "reviewing.md").read_text(encoding="utf-8")
# the change the page shows: one sentence of the delivery instructions
FILE = "prompts/modes/delivery.yaml"
OLD = "in one short message with `message_send`."
NEW = "in one or two short messages with `message_send`."


def documented(command: str) -> str:
    """The output the page prints under `$ COMMAND` (the block that starts with that line)."""
    m = re.search(r"^(`{3,4})(?:text|markdown)?\n\$ " + re.escape(command) + r"\n(.*?)^\1$", README, re.M | re.S)
    assert m, f"docs/reviewing.md has no block starting with `$ {command}`"
    return m.group(2)


@pytest.fixture
def repo(tmp_path, monkeypatch, git_identity) -> Path:
    shutil.copy(ROOT / "promptmill.yaml", tmp_path / "promptmill.yaml")
    shutil.copytree(ROOT / "prompts", tmp_path / "prompts")
    shutil.copytree(ROOT / "snapshots", tmp_path / "snapshots")
    git(tmp_path, "init", "-q", "-b", "main")
    git(tmp_path, "add", "-A")
    git(tmp_path, "commit", "-q", "-m", "the shipped prompts")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_the_readme_shows_what_test_and_diff_print(repo):
    path = repo / FILE
    text = path.read_text(encoding="utf-8")
    assert text.count(OLD) == 1
    path.write_text(text.replace(OLD, NEW), encoding="utf-8")
    runner = CliRunner()
    failed = runner.invoke(main, ["test"])
    assert failed.exit_code == 1
    assert failed.output == documented("promptmill test")
    assert runner.invoke(main, ["test", "--update"]).exit_code == 0
    git(repo, "commit", "-q", "-am", "delivery: allow two messages")
    shown = runner.invoke(main, ["diff", "HEAD~1", "HEAD", "--format", "markdown"])
    assert shown.exit_code == 0, shown.output
    assert shown.output == documented("promptmill diff HEAD~1 HEAD --format markdown")
