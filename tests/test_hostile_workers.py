"""Hostile round 5: `promptmill batch --workers 2` and `render_rows(..., workers=2)` under stopped workers,
signals and programs that cannot start spawned workers. Real processes throughout."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from batch_support import ROLE, compile_build, rows, write_jsonl

CLI = [sys.executable, "-m", "promptmill.cli", "batch", ROLE]


@pytest.fixture(scope="module")
def build(tmp_path_factory):
    return compile_build(tmp_path_factory.mktemp("hostile-workers-build"))


def _wait_for(cond: Callable[[], object], seconds: float = 60) -> None:
    deadline = time.time() + seconds
    while not cond():
        if time.time() > deadline:
            raise AssertionError("timed out")
        time.sleep(0.05)


def _children(pid: int) -> list[int]:
    try:
        return [int(p) for p in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    except OSError:
        return []


def _alive(pid: int) -> bool:
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return text[text.rindex(")") + 2] != "Z"


@pytest.mark.skipif(not Path("/proc/self/task").exists(), reason="finds the workers in /proc")
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_a_stopped_worker_does_not_hold_the_run_when_it_is_ended(build, tmp_path, sig):
    """A worker stopped (SIGSTOP, a debugger, a frozen container) never finishes its chunk; SIGTERM or Ctrl-C
    to the main process must still end the run at once with nothing written, not wait for that chunk forever."""
    src = write_jsonl(tmp_path / "rows.jsonl", rows(4000))
    out = tmp_path / "out"
    cmd = [*CLI, "--input", str(src), "--out", str(out), "--build", str(build), "--id-column", "id"]
    main = subprocess.Popen([*cmd, "--workers", "2", "--max-requests", "100"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    workers: list[int] = []
    try:
        _wait_for(lambda: list(out.glob(".promptmill-tmp-*/requests-00002.jsonl")))  # the workers are rendering
        workers = _children(main.pid)
        assert len(workers) == 2, workers
        os.kill(workers[0], signal.SIGSTOP)
        time.sleep(0.5)
        main.send_signal(sig)
        _, err = main.communicate(timeout=20)
    finally:
        main.kill()
        main.wait()
        for pid in workers:
            if _alive(pid):
                os.kill(pid, signal.SIGKILL)
    assert main.returncode == (143 if sig == signal.SIGTERM else 1), err
    assert "Traceback" not in err, err
    assert list(out.iterdir()) == []
    _wait_for(lambda: not any(_alive(p) for p in workers), 10)
