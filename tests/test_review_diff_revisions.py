"""`promptmill diff` on real git repositories, run as a real process: it reads only the project's
files at a revision, one blob at a time with a per-file cap, so its memory is bounded by the
project and not by the repository (a 300 MB file beside the project used to cost 620 MB)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from git_support import IDENTITY
from promptmill.review.revisions import REVISION_FILE_LIMIT

COMPILER = Path(__file__).resolve().parents[1] / "compiler"
GIT_ENV = IDENTITY  # a fixed author, no global or system git configuration
# runs the command as its own child, then prints that child's peak resident size (KiB) last on stderr
MEASURE = (
    "import resource, subprocess, sys\n"
    "done = subprocess.run([sys.executable, *sys.argv[1:]])\n"
    "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, file=sys.stderr)\n"
    "sys.exit(done.returncode)\n"
)


def git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, env={**os.environ, **GIT_ENV})


def measured(project: Path, *args: str) -> tuple[subprocess.CompletedProcess[str], int]:
    """(the finished `promptmill ARGS`, its peak resident size in bytes)."""
    done = subprocess.run(
        [sys.executable, "-c", MEASURE, "-m", "promptmill.cli", *args],
        cwd=project,
        env={**os.environ, **GIT_ENV, "PYTHONPATH": str(COMPILER)},
        capture_output=True,
        text=True,
        timeout=120,
    )
    *said, peak = done.stderr.rstrip("\n").split("\n")
    return subprocess.CompletedProcess(done.args, done.returncode, done.stdout, "\n".join(said)), int(peak) * 1024


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A repository whose project is the folder `app/`, beside other things."""
    app = tmp_path / "repo" / "app"
    (app / "prompts").mkdir(parents=True)
    (app / "examples").mkdir()
    (app / "prompts/r.yaml").write_text("kind: role\nid: r\nsections:\n  - id: a\n    text: Hello.\n", encoding="utf-8")
    (app / "examples/r.state.yaml").write_text("{}\n", encoding="utf-8")
    git(tmp_path / "repo", "init", "-q")
    return tmp_path / "repo"


def test_a_big_file_outside_the_project_is_never_read(repo: Path):
    with open(repo / "big.bin", "wb") as f:
        f.truncate(300 * 2**20)  # 300 MB of zeros (sparse here; git stores it compressed)
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "base")
    (repo / "app/prompts/r.yaml").write_text("kind: role\nid: r\nsections:\n  - id: a\n    text: Hi there.\n", encoding="utf-8")
    baseline, base_peak = measured(repo / "app", "diff", ".")  # the same renders, no revision read
    assert baseline.returncode == 0, baseline.stderr
    done, peak = measured(repo / "app", "diff", "HEAD")
    assert done.returncode == 0, done.stderr
    assert "1 of 1 renders changed" in done.stdout and "+| Hi there." in done.stdout
    assert peak - base_peak < 64 * 2**20, f"reading the revision cost {(peak - base_peak) / 2**20:.0f} MB over the renders"


def test_a_file_over_the_cap_in_the_project_is_not_read_and_is_named(repo: Path):
    with open(repo / "app/examples/data.bin", "wb") as f:
        f.truncate(REVISION_FILE_LIMIT + 1)
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "base")
    done, _ = measured(repo / "app", "diff", "HEAD", "--format", "json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["not_read"] == [{"side": "HEAD", "file": "examples/data.bin", "bytes": REVISION_FILE_LIMIT + 1}]
    text, _ = measured(repo / "app", "diff", "HEAD")
    limit = f"{REVISION_FILE_LIMIT:,}"
    assert (
        f"HEAD: examples/data.bin: not read ({REVISION_FILE_LIMIT + 1:,} bytes; the limit for a file read from a revision is {limit})"
        in text.stdout
    )


def test_git_not_installed_is_pm020_with_a_way_out(repo: Path, tmp_path: Path):
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "base")
    empty = tmp_path / "no-git-here"
    empty.mkdir()
    done = subprocess.run(
        [sys.executable, "-m", "promptmill.cli", "diff", "HEAD"],
        cwd=repo / "app",
        env={**os.environ, "PATH": str(empty), "PYTHONPATH": str(COMPILER)},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 1
    assert done.stderr.startswith(
        "promptmill: error[PM020]: git is not installed or not on PATH: `promptmill diff` reads revisions with git\n"
    )
    assert "compare two folders: `promptmill diff OLD_FOLDER NEW_FOLDER`" in done.stderr


def test_a_name_too_long_is_pm022_in_the_project_and_ignored_outside_it(repo: Path):
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "base")
    blob = (
        subprocess.run(["git", "hash-object", "-w", "--stdin"], cwd=repo, input=b"x\n", capture_output=True, check=True)
        .stdout.decode()
        .strip()
    )
    long = "n" * 300
    git(repo, "update-index", "--add", "--cacheinfo", f"100644,{blob},docs/{long}.txt")
    git(repo, "commit", "-qm", "long name outside the project")
    outside, _ = measured(repo / "app", "diff", "HEAD")
    assert outside.returncode == 0, outside.stderr
    git(repo, "update-index", "--add", "--cacheinfo", f"100644,{blob},app/examples/{long}.txt")
    git(repo, "commit", "-qm", "long name inside")
    inside, _ = measured(repo / "app", "diff", "HEAD")
    assert inside.returncode == 1
    assert (
        f"promptmill: error[PM022]: HEAD: app/examples/{long}.txt: a file name in the revision is longer than this file system allows"
        in inside.stderr
    )
