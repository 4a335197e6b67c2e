"""The hostile corpus, round 4 (the runner; the tests are tests/test_hostile_cases*.py): each case under
tests/cases/hostile/ runs the real CLI in a fresh project.

A case is one YAML file (tests/cases/hostile/README.md gives the format): the
project's files, files of another project beside it (`outside/`), symbolic
links, FIFOs, set-up commands (git), the command line, the environment, and
what must come out. Every case, whatever it expects, must also: print no
traceback and never PM000; leave every file outside the project as it was
(nothing written, changed or removed there); finish within 20 s and 500 MB of
peak memory (the child's own maximum resident size).
"""

from __future__ import annotations

import hashlib
import os
import shlex
import shutil
import subprocess
import sys
import time
from collections.abc import Collection
from pathlib import Path

import pytest
import yaml

from git_support import IDENTITY

CASES = Path(__file__).parent / "cases" / "hostile"
COMPILER = Path(__file__).resolve().parents[1] / "compiler"
TIME_LIMIT = 20.0
MEMORY_LIMIT = 500 * 1024 * 1024
# runs the command as its own child, then writes that child's peak resident size (KiB) to argv[1]. A small
# process of its own, run with -S and importing nothing (posix_spawn, wait4: 10 ms, where site and subprocess
# took 40-50 ms a case): the child of a pytest worker would count the worker's own peak (Linux keeps the
# parent's high-water mark in a child's maxrss across exec), hundreds of MB after the Spark or browser tests.
MEASURE = (
    "import os, sys\n"
    "pid = os.posix_spawn(sys.executable, [sys.executable, *sys.argv[2:]], os.environ)\n"
    "_, status, usage = os.wait4(pid, 0)\n"
    "open(sys.argv[1], 'w').write(str(usage.ru_maxrss))\n"
    "sys.exit(os.waitstatus_to_exitcode(status))\n"
)
GIT_ENV = IDENTITY  # a fixed author, no global or system git configuration


def case_files(surfaces: Collection[str] | None = None) -> list[Path]:
    """The cases (of the folders named in `surfaces`, or all)."""
    # lsp/ holds raw JSON-RPC exchanges in a format of their own, run by tests/test_lsp_hostile.py
    found = sorted(p for p in CASES.rglob("*.yaml") if p.relative_to(CASES).parts[0] != "lsp")
    return [p for p in found if surfaces is None or p.relative_to(CASES).parts[0] in surfaces]


def case_id(path: Path) -> str:
    return path.relative_to(CASES).with_suffix("").as_posix()


def _fill(text: str, project: Path, outside: Path) -> str:
    return text.replace("{outside}", str(outside)).replace("{project}", str(project))


def _write(base: Path, files: dict[str, str] | None) -> None:
    for rel, content in (files or {}).items():
        path = base / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(content.encode("utf-8", "surrogatepass"))


def picture(base: Path) -> dict[str, str]:
    """Every entry under `base` (links not followed) with what it is: a digest, a link's target, 'dir'."""
    out = {}
    for folder, dirs, files in os.walk(base):
        for name in dirs + files:
            path = Path(folder, name)
            rel = path.relative_to(base).as_posix()
            if path.is_symlink():
                out[rel] = "link:" + os.readlink(path)
            elif path.is_file():
                out[rel] = hashlib.sha256(path.read_bytes()).hexdigest()
            else:
                out[rel] = "dir" if path.is_dir() else "special"
    return out


def build(case: dict, tmp: Path) -> tuple[Path, Path]:
    """The case's project and the other project beside it, with links, FIFOs and set-up done."""
    project, outside = tmp / "project", tmp / "outside"
    project.mkdir(parents=True)
    outside.mkdir()
    _write(project, case.get("files"))
    _write(outside, case.get("outside"))
    for rel, target in (case.get("links") or {}).items():
        link = project / rel
        link.parent.mkdir(parents=True, exist_ok=True)
        os.symlink(_fill(target, project, outside), link)
    for rel in case.get("fifos") or []:
        (project / rel).parent.mkdir(parents=True, exist_ok=True)
        os.mkfifo(project / rel)
    for rel in case.get("outside_fifos") or []:
        os.mkfifo(outside / rel)
    promptmill = f"{shlex.quote(sys.executable)} -m promptmill.cli"  # {promptmill} in a set-up line: this checkout's
    path = os.pathsep.join(p for p in (str(COMPILER), os.environ.get("PYTHONPATH", "")) if p)
    for command in case.get("setup") or []:  # shell lines run in the project first (git init, commits, ...)
        subprocess.run(
            _fill(command, project, outside).replace("{promptmill}", promptmill),
            shell=True,
            cwd=project,
            check=True,
            capture_output=True,
            env={**os.environ, **GIT_ENV, "PYTHONPATH": path},
        )
    return project, outside


def environment(case: dict, project: Path, outside: Path, tmp: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env.update(GIT_ENV)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(COMPILER), env.get("PYTHONPATH", "")) if p)
    for key, value in (case.get("env") or {}).items():
        if value == "{PATH without git}":  # only the interpreter and a shell: git is not there
            bin_dir = tmp / "bin-without-git"
            bin_dir.mkdir(exist_ok=True)
            for name in ("sh", "env"):
                found = shutil.which(name)
                if found:
                    os.symlink(found, bin_dir / name)
            value = str(bin_dir)
        env[key] = _fill(str(value), project, outside)
    return env


def run_case(path: Path, tmp_path: Path) -> None:
    """Run one case and check what it expects and what every case must hold."""
    case = yaml.safe_load(path.read_text(encoding="utf-8"))
    expect = case["expect"]
    project, outside = build(case, tmp_path / "w")
    before_outside, before_project = picture(outside), picture(project)
    args = [_fill(str(a), project, outside) for a in case["run"]]
    peak_file = tmp_path / "peak"
    started = time.monotonic()
    try:
        done = subprocess.run(
            [sys.executable, "-S", "-c", MEASURE, str(peak_file), "-m", "promptmill.cli", *args],
            cwd=project,
            env=environment(case, project, outside, tmp_path),
            input=case.get("stdin", ""),
            capture_output=True,
            text=True,
            errors="replace",
            timeout=TIME_LIMIT * 3,
        )
    except subprocess.TimeoutExpired as exc:
        pytest.fail(f"promptmill {' '.join(args)} did not end within {TIME_LIMIT * 3:.0f} s: {exc.stderr!r}")
    elapsed = time.monotonic() - started
    peak = int(peak_file.read_text()) * 1024
    said = done.stdout + done.stderr
    tail = said[-3000:]
    assert "Traceback" not in said, tail
    assert "PM000" not in said, tail
    after_outside = picture(outside)
    assert after_outside == before_outside, (
        f"changed outside the project: {sorted(set(after_outside.items()) ^ set(before_outside.items()))}"
    )
    assert elapsed < TIME_LIMIT, f"took {elapsed:.1f} s"
    assert peak < MEMORY_LIMIT, f"peak memory {peak / 2**20:.0f} MB"
    assert done.returncode == expect.get("exit", 1), tail
    if "code" in expect:
        assert expect["code"] in said, tail
    for text in expect.get("says", []):
        assert _fill(text, project, outside) in said, f"{text!r} not in:\n{tail}"
    for text in expect.get("not_says", []):
        assert _fill(text, project, outside) not in said, f"{text!r} in:\n{tail}"
    after_project = picture(project)
    for rel in expect.get("unchanged", []):  # project entries left exactly as they were
        assert after_project.get(rel) == before_project.get(rel), rel
    for rel in expect.get("absent", []):
        assert not os.path.lexists(project / rel), rel
    for rel in expect.get("present", []):
        assert os.path.lexists(project / rel), rel
