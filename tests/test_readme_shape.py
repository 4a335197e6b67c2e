"""The README is the newcomer's first screen (issue 35): short, the two commands near the top,
and every section that moved out one link away. Its examples run in tests/test_tutorial.py."""

from __future__ import annotations

import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")
LINES = README.split("\n")
SCREEN = 45  # lines a laptop terminal or a repository page shows before scrolling

# the README's sections before the documentation site (by anchor), and the page each moved to: the one
# table, which the docs site's hook also uses to send old README links to their page
sys.path.insert(0, str(ROOT / "tools"))
from mkdocs_hooks import README_SECTIONS  # noqa: E402


def test_the_readme_is_short() -> None:
    assert len(LINES) <= 250, f"README.md has {len(LINES)} lines; the rest belongs in docs/"


def test_the_first_screen_has_the_install_and_test_commands_and_an_example() -> None:
    screen = "\n".join(LINES[:SCREEN])
    assert "pip install -e ." in screen
    assert "promptmill render" in screen
    assert "python -m pytest -n 2 --dist loadfile" in screen
    # the first fenced block is the user's install, not the development environment
    first = re.search(r"```sh\n(.*?)```", README, re.S)
    assert first is not None and "pip install -e ." in first.group(1) and "dev.lock" not in first.group(1)


def test_the_readme_test_command_is_the_one_ci_runs() -> None:
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    command = "python -m pytest -n 2 --dist loadfile"
    assert command in README and f"\n{command}\n" in ci


def test_every_moved_section_is_one_link_away() -> None:
    links = set(re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", README))
    for anchor, page in README_SECTIONS.items():
        assert f"docs/{page}" in links, f"README.md has no link to docs/{page} (once its section #{anchor})"
        assert (ROOT / "docs" / page).is_file(), page


def test_every_relative_link_of_the_readme_leads_to_a_file() -> None:
    for target in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", README):
        if "://" not in target:
            assert (ROOT / target).exists(), f"README.md links to {target}, which does not exist"
