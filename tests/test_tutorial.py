"""Run the tutorials as a new user would, and compare every output.

Two documents hold one: docs/tutorial.md (the whole tutorial) and README.md (its
five-minute quickstart). A tutorial is the part of the document between
`<!-- tutorial:start -->` and `<!-- tutorial:end -->`. Its fenced blocks are steps, run in order in one
empty temporary folder:

- ```console: lines starting with `$ ` are commands, run with bash; the lines
  up to the next command are the expected output (stdout and stderr together,
  as a terminal shows them). `cd DIR` changes the folder of later steps. A
  command exits 1 when its expected output shows an `error[` and 0 otherwise.
- ```diff: an edit, applied to the file on its `+++ b/PATH` line: the ` ` and
  `-` lines must occur exactly once in the file and become the ` ` and `+` lines.
- ```python: run with the current interpreter; when the next block is ```text,
  it is the expected output.
- ```sh: shown, not run (the installation; see below). No other kinds are allowed.

`promptmill` and `python` resolve to this interpreter and the promptmill package
under test (a shim folder first on PATH), so the tutorial runs against the code
of this checkout, installed or not. The only normalisations: trailing spaces of
each line and trailing blank lines are ignored, and the temporary folder's path
would read `/tmp/tutorial`. The installation itself (`pip install -e .` in a
fresh virtualenv) is checked by `.ci/run`, which installs the same way.

PROMPTMILL_UPDATE_TUTORIAL=1 rewrites the expected outputs in both documents from
what the commands print (review the diff before committing).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import pytest

import promptmill

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"  # its quickstart, between the markers
TUTORIAL = ROOT / "docs" / "tutorial.md"  # the whole tutorial
# each document with a tutorial, and the commands its steps must keep running
DOCUMENTS = {
    README: ("promptmill init", "promptmill compile", "promptmill render", "to_openai()"),
    TUTORIAL: ("promptmill init", "promptmill lint", "promptmill compile", "promptmill render", "to_openai()"),
}
START, END = "<!-- tutorial:start -->", "<!-- tutorial:end -->"
KINDS = ("console", "diff", "python", "text", "sh")
SHOWN_PATH = "/tmp/tutorial"


@dataclass
class Block:
    lang: str
    first: int  # index in the document's lines of the first body line
    lines: list[str]  # body lines


def tutorial_blocks(lines: list[str]) -> list[Block]:
    """The fenced blocks between the tutorial markers."""
    start, end = lines.index(START), lines.index(END)
    blocks: list[Block] = []
    i = start
    while i < end:
        fence = re.match(r"^```(\S*)\s*$", lines[i])
        if fence:
            close = lines.index("```", i + 1)
            assert close < end, f"line {i + 1}: block not closed before {END}"
            blocks.append(Block(fence.group(1), i + 1, lines[i + 1 : close]))
            i = close
        i += 1
    return blocks


def console_steps(block: Block) -> list[tuple[str, list[str]]]:
    steps: list[tuple[str, list[str]]] = []
    for line in block.lines:
        if line.startswith("$ "):
            steps.append((line[2:], []))
        else:
            assert steps, f"line {block.first + 1}: output before the first `$ ` command"
            steps[-1][1].append(line)
    return steps


def normal(text: str, tmp: Path) -> list[str]:
    lines = [line.rstrip() for line in text.replace(str(tmp), SHOWN_PATH).split("\n")]
    while lines and not lines[-1]:
        lines.pop()
    return lines


def apply_diff(block: Block, cwd: Path) -> None:
    target = next(line[6:] for line in block.lines if line.startswith("+++ b/"))
    body = [line for line in block.lines if not line.startswith(("--- ", "+++ ", "@@"))]
    old = "".join(line[1:] + "\n" for line in body if line[:1] in (" ", "-"))
    new = "".join(line[1:] + "\n" for line in body if line[:1] in (" ", "+"))
    path = cwd / target
    text = path.read_text("utf-8")
    assert text.count(old) == 1, f"line {block.first + 1}: the diff's old lines are not in {target} exactly once"
    path.write_text(text.replace(old, new), "utf-8")


def shim_env(bin_dir: Path) -> dict[str, str]:
    """PATH with `promptmill` and `python` of this interpreter and this checkout first."""
    bin_dir.mkdir()
    package_root = Path(promptmill.__file__).resolve().parent.parent
    (bin_dir / "promptmill").write_text(
        f'#!/bin/sh\nexec "{sys.executable}" -c "import sys; from promptmill.cli.main import main; '
        f'sys.exit(main(prog_name=\'promptmill\'))" "$@"\n'
    )
    (bin_dir / "python").write_text(f'#!/bin/sh\nexec "{sys.executable}" "$@"\n')
    for name in ("promptmill", "python"):
        (bin_dir / name).chmod(0o755)
    env = dict(os.environ)
    env.update(
        PATH=f"{bin_dir}{os.pathsep}{env.get('PATH', '')}",
        PYTHONPATH=str(package_root),
        PYTHONUNBUFFERED="1",  # stdout and stderr interleave as on a terminal
        NO_COLOR="1",
        LC_ALL="C.UTF-8",
    )
    env.pop("PROMPTMILL_DEBUG", None)
    return env


def run(args: list[str], cwd: Path, env: dict[str, str], prefix: Sequence[str] = ()) -> tuple[int, str]:
    proc = subprocess.run([*prefix, *args], cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=120)
    return proc.returncode, proc.stdout


def play(
    blocks: list[Block], tmp_path: Path, env: dict[str, str], python: str, prefix: Sequence[str] = ()
) -> tuple[list[str], dict, list[str]]:
    """Run the tutorial's blocks in `tmp_path/tutorial`; python blocks with `python`,
    every command behind `prefix` (for example `unshare -n`).

    Returns the failures (stale outputs), the updated block bodies keyed by first
    line, and the commands run.
    """
    cwd = home = tmp_path / "tutorial"
    cwd.mkdir()
    updates: dict[int, tuple[int, list[str]]] = {}  # first line -> (body length, new body)
    failures: list[str] = []
    commands: list[str] = []
    for i, block in enumerate(blocks):
        if block.lang == "console":
            body: list[str] = []
            for command, expected in console_steps(block):
                commands.append(command)
                body.append(f"$ {command}")
                cd = re.fullmatch(r"cd (\S+)", command)
                if cd:
                    cwd = (cwd / cd.group(1)).resolve()
                    assert cwd.is_dir(), f"`{command}`: no such folder"
                    continue
                code, out = run(["bash", "-c", command], cwd, env, prefix)
                got = normal(out, home)
                body.extend(got)
                want_code = 1 if any("error[" in line for line in expected) else 0
                if got != normal("\n".join(expected), home) or code != want_code:
                    failures.append(f"$ {command}  (exit {code}, expected {want_code})\n" + "\n".join(got))
            updates[block.first] = (len(block.lines), body)
        elif block.lang == "diff":
            apply_diff(block, cwd)
        elif block.lang == "python":
            commands.append("\n".join(block.lines))
            code, out = run([python, "-c", "\n".join(block.lines)], cwd, env, prefix)
            got = normal(out, home)
            assert code == 0, f"line {block.first}: the python block failed:\n{out}"
            following = blocks[i + 1] if i + 1 < len(blocks) else None
            if following is not None and following.lang == "text":
                updates[following.first] = (len(following.lines), got)
                if got != normal("\n".join(following.lines), home):
                    failures.append(f"python block at line {block.first}:\n" + "\n".join(got))
            elif got:
                failures.append(f"python block at line {block.first} printed, but no ```text block follows")
    return failures, updates, commands


@pytest.mark.parametrize("document", list(DOCUMENTS), ids=lambda p: p.relative_to(ROOT).as_posix())
def test_tutorial_runs_as_printed(tmp_path, document):
    lines = document.read_text("utf-8").split("\n")
    blocks = tutorial_blocks(lines)
    name = document.relative_to(ROOT).as_posix()
    unknown = [f"{name}:{b.first}: ```{b.lang}" for b in blocks if b.lang not in KINDS]
    assert not unknown, f"tutorial blocks of unknown kind (one of {KINDS}): {unknown}"
    env = shim_env(tmp_path / "bin")
    failures, updates, commands = play(blocks, tmp_path, env, sys.executable)
    if failures and os.environ.get("PROMPTMILL_UPDATE_TUTORIAL"):
        for first in sorted(updates, reverse=True):
            length, body = updates[first]
            lines[first : first + length] = body
        document.write_text("\n".join(lines), "utf-8")
        return
    assert not failures, f"{name}: the tutorial's printed output is stale; the real output:\n\n" + "\n\n".join(failures)
    joined = "\n".join(commands)
    for needed in DOCUMENTS[document]:
        assert needed in joined, f"{name}: the tutorial no longer runs `{needed}`"


def test_diff_blocks_must_match_exactly(tmp_path):
    (tmp_path / "a.yaml").write_text("x: 1\ny: 2\n")
    block = Block("diff", 1, ["--- a/a.yaml", "+++ b/a.yaml", " x: 1", "-y: 2", "+y: 3"])
    apply_diff(block, tmp_path)
    assert (tmp_path / "a.yaml").read_text() == "x: 1\ny: 3\n"
    try:
        apply_diff(block, tmp_path)  # `y: 2` is gone now
    except AssertionError as exc:
        assert "exactly once" in str(exc)
    else:
        raise AssertionError("a diff whose old lines are missing was applied")
