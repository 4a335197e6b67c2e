"""Hostile round 5: `promptmill batch --workers 2` and `render_rows(..., workers=2)` under stopped workers,
signals and programs that cannot start spawned workers. Real processes throughout."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from batch_support import ROLE, compile_build, rows, write_jsonl
from batch_support import wait_for as _wait_for

CLI = [sys.executable, "-m", "promptmill.cli", "batch", ROLE]


@pytest.fixture(scope="module")
def build(tmp_path_factory):
    return compile_build(tmp_path_factory.mktemp("hostile-workers-build"))


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


# A program that runs a second thread spawns its workers, and multiprocessing's spawned workers run the program's
# main module again: from standard input there is none to run, and an unguarded script runs its batch again.
PROGRAM = """\
import json, sys, threading
from promptmill.batch import render_rows
stop = threading.Event()
threading.Thread(target=stop.wait, daemon=True).start()  # a second thread: workers are spawned, not forked
rows = [json.loads(line) for line in open(sys.argv[1] if len(sys.argv) > 1 else {rows!r})]
print(sum(r.ok for r in render_rows(rows, {role!r}, build={build!r}, workers=2, id_column="id")))
"""


def _program(build: Path, tmp_path: Path) -> str:
    src = write_jsonl(tmp_path / "rows.jsonl", rows(20))
    return PROGRAM.format(rows=str(src), role=ROLE, build=str(build))


def test_a_program_read_from_standard_input_that_must_spawn_workers_is_refused_before_any_starts(build, tmp_path):
    run = subprocess.run([sys.executable, "-"], input=_program(build, tmp_path), capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert run.returncode == 1
    assert run.stderr.count("Traceback") == 1, run.stderr  # the program's own, for the PromptmillError; no worker's
    assert "[PM010]" in run.stderr and "<stdin>" in run.stderr and "workers=1" in run.stderr, run.stderr
    assert "spawn_main" not in run.stderr and "FileNotFoundError" not in run.stderr, run.stderr


def test_an_unguarded_script_that_spawns_workers_is_told_why_they_did_not_start(build, tmp_path):
    script = tmp_path / "unguarded.py"
    script.write_text(_program(build, tmp_path), encoding="utf-8")
    run = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert run.returncode == 1
    last = run.stderr.strip().splitlines()[-2:]
    assert "[PM024] a worker process could not start (exit status 1)" in last[0] and str(script) in last[0], run.stderr
    assert "killed by a signal" not in last[0], run.stderr  # no signal and no memory shortage stopped it
    assert 'if __name__ == "__main__":' in last[1], run.stderr
    guarded = tmp_path / "guarded.py"
    body = "".join("    " + line + "\n" for line in _program(build, tmp_path).splitlines())
    guarded.write_text('if __name__ == "__main__":\n' + body, encoding="utf-8")
    ok = subprocess.run([sys.executable, str(guarded)], capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert (ok.returncode, ok.stdout) == (0, "20\n"), ok.stderr


def test_a_row_pickle_cannot_carry_fails_alone_as_with_one_worker(build):
    """From the Python API a row may hold any object; one that cannot be sent to a worker (a lock) made the
    whole run raise pickle's TypeError at workers=2, where workers=1 fails that row alone (PM811)."""
    import threading

    from promptmill.batch import render_rows

    given = rows(5)
    given[2]["test_id"] = threading.Lock()
    one = [(r.ok, r.code, r.id) for r in render_rows(given, ROLE, build=build, id_column="id")]
    two = [(r.ok, r.code, r.id) for r in render_rows(given, ROLE, build=build, id_column="id", workers=2, chunk=2)]
    assert one == two
    assert [ok for ok, _, _ in two] == [True, True, False, True, True] and two[2][1] == "PM811"


@pytest.mark.parametrize("method", ["fork", "spawn"])
def test_a_spawned_worker_that_dies_mid_run_is_not_called_a_start_failure(method):
    """A worker that started and then exited with a status (here os._exit(1) on its first chunk) stopped; only
    workers that never got past starting are told to guard the main module."""
    from batch_support import DyingRenderer
    from promptmill.batch.pool import ordered_results

    if method == "fork" and not sys.platform.startswith("linux"):
        pytest.skip("workers fork only on Linux")
    with pytest.raises(Exception) as err:
        list(ordered_results(DyingRenderer(), range(10), workers=2, chunk=2, method=method))
    assert getattr(err.value, "code", None) == "PM024" and "stopped before it finished" in str(err.value), err.value


def test_large_rows_are_not_held_in_flight_by_the_chunk(build, tmp_path):
    """Chunks were cut by row count alone: 24 rows of 8 MiB (each PM812, far over the text limit) were all in
    flight at once, pickled for the workers, and the run peaked at about 690 MB; chunks now also end past
    1 MiB of row text and about 64 MiB wait for the workers (about 240 MB here)."""
    from hostile_support import MEASURE
    from promptmill.batch.pool import _chunks

    sizes = [[len(item[1]) for item in part] for part, _ in _chunks(((i, b"x" * 600_000, None) for i in range(5)), 64)]
    assert sizes == [[600_000, 600_000], [600_000, 600_000], [600_000]]
    src = tmp_path / "fat.jsonl"
    pad = "y" * (8 << 20)
    src.write_text("".join(f'{{"id": "f{i}", "x": "{pad}"}}\n' for i in range(24)), encoding="utf-8")
    peak_file = tmp_path / "peak"
    args = ["--input", str(src), "--out", str(tmp_path / "out"), "--build", str(build), "--id-column", "id", "--workers", "2"]
    run = subprocess.run(
        [sys.executable, "-S", "-c", MEASURE, str(peak_file), *CLI[1:], *args], capture_output=True, text=True, timeout=300
    )
    assert run.returncode == 1 and "24 rows: 0 ok, 24 failed (PM812 x24)" in run.stdout, run.stdout + run.stderr
    peak_mb = int(peak_file.read_text()) / 1024
    assert peak_mb < 450, f"peak {peak_mb:.0f} MB"


def _private_mounts() -> list[str] | None:
    """`unshare` arguments for a private mount namespace (as root, or in a user namespace), None when refused."""
    import shutil

    unshare = shutil.which("unshare")
    if unshare is None:
        return None
    for args in ([unshare, "-m"], [unshare, "-rm"]):
        if subprocess.run([*args, "true"], capture_output=True).returncode == 0:
            return args
    return None


def test_no_shared_memory_for_the_workers_names_it_and_not_the_out_folder(build, tmp_path):
    """The pool's queues are semaphores in /dev/shm: with it read-only the run said only 'the file system is
    read-only', which reads as --out; it now says what was being made, and that one worker needs none."""
    prefix = _private_mounts()
    if prefix is None:
        pytest.skip("this machine allows no private mount namespace (unshare -m or -rm)")
    src = write_jsonl(tmp_path / "rows.jsonl", rows(3))
    cli = " ".join(
        [sys.executable, *CLI[1:], "--input", str(src), "--out", str(tmp_path / "out"), "--build", str(build), "--id-column", "id"]
    )
    script = f"mount -t tmpfs -o ro,size=4k tmpfs /dev/shm && {cli} --workers 2"
    run = subprocess.run([*prefix, "sh", "-c", script], capture_output=True, text=True, timeout=120, env=dict(os.environ))
    assert run.returncode == 1, run.stderr
    assert "error[PM021]: the file system is read-only (making the workers' semaphores in shared memory, /dev/shm" in run.stderr
    assert "--workers 1" in run.stderr and "Traceback" not in run.stderr, run.stderr
    assert list((tmp_path / "out").iterdir()) == []
    one = subprocess.run([*prefix, "sh", "-c", script.replace("--workers 2", "--workers 1")], capture_output=True, text=True, timeout=120)
    assert one.returncode == 0, one.stderr  # one worker needs no shared memory


ABANDON = """\
import os, sys
from promptmill.batch import render_rows
sys.path.insert(0, {tests!r})
from batch_support import rows
given = rows(1500)
for attempt in range(10):
    results = render_rows(given, {role!r}, build={build!r}, workers=2, id_column="id")
    assert next(results).ok
    results.close()  # the caller stops reading: the run ends, with chunks in flight
import time
alone = [str(os.getpid())]
deadline = time.monotonic() + 10  # the kernel lets a joined thread's task go a moment after join() returns
while os.listdir(f"/proc/{{os.getpid()}}/task") != alone and time.monotonic() < deadline:
    time.sleep(0.01)
print("ok", os.listdir(f"/proc/{{os.getpid()}}/task") == alone)
"""


@pytest.mark.skipif(not Path("/proc/self/task").exists(), reason="counts the threads in /proc")
def test_a_caller_that_stops_reading_ends_the_run_at_once_every_time(build):
    """Killing the workers at once when a run ends early cut a result short as a worker wrote it, and the pool's
    shutdown then waited for the rest of it forever (about one run in twenty); the run now lets the chunks being
    rendered finish first, and no pool thread is left behind."""
    code = ABANDON.format(tests=str(Path(__file__).parent), role=ROLE, build=str(build))
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert (run.returncode, run.stdout) == (0, "ok True\n"), run.stderr
