"""promptmill batch's --out folder under hostile conditions (issue 22): other people's files, symbolic links,
two runs at once, write errors, ids UTF-8 cannot hold, and a killed main process.

FOLDERS is the corpus of folder set-ups: a new bad case is a new row. Each refused set-up must leave the
folder exactly as it was (every file's bytes, no new file) and name the offending file.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

import promptmill
from batch_support import ROLE, compile_build, rows, write_jsonl
from batch_support import wait_for as _wait_for
from promptmill.batch import run_batch
from promptmill.batch.outdir import LOCK, MANIFEST
from promptmill.batch.shards import AtomicFile

CLI = [sys.executable, "-m", "promptmill.cli", "batch", ROLE]


@pytest.fixture(scope="module")
def build(tmp_path_factory):
    return compile_build(tmp_path_factory.mktemp("batch-out-build"))


@pytest.fixture()
def src(tmp_path):
    return write_jsonl(tmp_path / "rows.jsonl", rows(3))


def _snapshot(folder: Path) -> dict[str, object]:
    """Every entry under `folder`: a file's bytes, a link's target, a folder's marker."""
    out: dict[str, object] = {}
    for root, dirs, files in os.walk(folder):
        for name in dirs + files:
            p = Path(root) / name
            rel = p.relative_to(folder).as_posix()
            out[rel] = ("link", os.readlink(p)) if p.is_symlink() else ("dir",) if p.is_dir() else p.read_bytes()
    return out


def _run(build, src, out, **kw):
    return run_batch(ROLE, src, out, build=build, provider="text", id_column="id", **kw)


# -- the corpus of --out set-ups: (name, set-up, the file PM874 names or None when the run may go ahead)
def _previous_run(build, src, out):
    _run(build, src, out, max_requests=1)  # three request files


def _foreign(name: str, data: bytes = b"mine\n") -> Callable:
    def setup(build, src, out):
        out.mkdir(exist_ok=True)
        (out / name).write_bytes(data)

    return setup


def _after_run(then: Callable) -> Callable:
    def setup(build, src, out):
        _previous_run(build, src, out)
        then(out)

    return setup


def _symlink(name: str) -> Callable:
    def setup(build, src, out):
        out.mkdir(exist_ok=True)
        outside = out.parent / f"outside-{name}"
        outside.write_text("someone else's file\n")
        (out / name).symlink_to(outside)

    return setup


def _leftover_staging(build, src, out):
    _previous_run(build, src, out)
    left = out / ".promptmill-tmp-abcd1234"  # what a killed run leaves: its private staging folder
    left.mkdir()
    (left / "report.jsonl").write_text('{"id": "half"')
    (left / "requests-00001.jsonl").write_text("")


def _foreign_staging_lookalike(build, src, out):
    out.mkdir()
    look = out / ".promptmill-tmp-abcd1234"
    look.mkdir()
    (look / "thesis.tex").write_text("\\section{mine}\n")


def _stale_lock(build, src, out):
    out.mkdir()
    (out / LOCK).write_text('{"pid": 1, "started": "long ago"}')  # no process holds it


FOLDERS: list[tuple[str, Callable | None, str | None]] = [
    ("missing", None, None),
    ("empty", lambda b, s, o: o.mkdir(), None),
    ("previous-run", _previous_run, None),
    ("killed-run-staging", _leftover_staging, None),
    ("stale-lock-file", _stale_lock, None),
    ("foreign-file", _foreign("notes.txt"), "notes.txt"),
    ("users-report", _foreign("report.jsonl"), "report.jsonl"),
    ("users-summary", _foreign("summary.json", b"{}"), "summary.json"),
    ("users-requests", _foreign("requests-00001.jsonl"), "requests-00001.jsonl"),
    ("input-in-out", lambda b, s, o: (o.mkdir(), shutil.copy(s, o / "rows.jsonl")), "rows.jsonl"),
    ("foreign-folder", lambda b, s, o: (o.mkdir(), (o / "data").mkdir()), "data"),
    ("unlisted-requests-beside-a-run", _after_run(lambda o: (o / "requests-00009.jsonl").write_text("mine\n")), "requests-00009.jsonl"),
    (
        "edited-report",
        _after_run(lambda o: (o / "report.jsonl").write_bytes((o / "report.jsonl").read_bytes() + b"\n")),
        "report.jsonl (changed",
    ),
    (
        "same-size-edit",
        _after_run(lambda o: (o / "summary.json").write_bytes(b"X" + (o / "summary.json").read_bytes()[1:])),
        "summary.json (changed",
    ),
    ("collect-output", _after_run(lambda o: (o / "replies.jsonl").write_text("")), "replies.jsonl"),
    ("corrupt-manifest", _after_run(lambda o: (o / MANIFEST).write_text("{")), MANIFEST),
    (
        "forged-manifest",
        _after_run(lambda o: (o / MANIFEST).write_text(json.dumps({"kind": "promptmill-batch-output", "files": {"../x": []}}))),
        MANIFEST,
    ),
    ("report-symlink", _symlink("report.jsonl"), "report.jsonl"),
    ("partial-symlink", _symlink(".report.jsonl.partial"), ".report.jsonl.partial"),
    ("requests-partial-symlink", _symlink(".requests-00001.jsonl.partial"), ".requests-00001.jsonl.partial"),
    ("staging-lookalike", _foreign_staging_lookalike, ".promptmill-tmp-abcd1234"),
    ("manifest-symlink", _symlink(MANIFEST), MANIFEST),
    ("lock-symlink", _symlink(LOCK), f"{LOCK}: Too many levels of symbolic links"),  # PM876: the lock is never followed
]


@pytest.mark.parametrize(("setup", "offender"), [(s, o) for _, s, o in FOLDERS], ids=[n for n, _, _ in FOLDERS])
def test_out_folder_corpus(build, src, tmp_path, setup, offender):
    out = tmp_path / "out"
    if setup is not None:
        setup(build, src, out)
    before = _snapshot(out) if out.exists() else None
    outside = {p.name: p.read_bytes() for p in tmp_path.glob("outside-*")}
    if offender is None:
        summary = _run(build, src, out)
        assert summary["status"] == "ok"
        assert sorted(p.name for p in out.iterdir()) == [MANIFEST, "report.jsonl", "requests-00001.jsonl", "summary.json"]
        listed = json.loads((out / MANIFEST).read_text())["files"]
        assert sorted(listed) == ["report.jsonl", "requests-00001.jsonl", "summary.json"]
    else:
        with pytest.raises(promptmill.PromptmillError) as err:
            _run(build, src, out)
        assert err.value.code == ("PM876" if offender.startswith(LOCK) else "PM874"), err.value
        assert offender in err.value.message and err.value.hint
        assert _snapshot(out) == before  # nothing written, nothing deleted, nothing overwritten
    assert {p.name: p.read_bytes() for p in tmp_path.glob("outside-*")} == outside  # no link followed


def test_a_run_replaces_its_own_previous_output_and_removes_only_what_it_wrote(build, src, tmp_path):
    out = tmp_path / "out"
    _run(build, src, out, max_requests=1)
    assert len(list(out.glob("requests-*"))) == 3
    _run(build, src, out)  # fewer files: the other two were this folder's previous output
    assert sorted(p.name for p in out.glob("requests-*")) == ["requests-00001.jsonl"]
    (out / "requests-00002.jsonl").write_text("mine\n")  # not the previous run's any more: refused, kept
    with pytest.raises(promptmill.PromptmillError, match="requests-00002.jsonl"):
        _run(build, src, out)
    assert (out / "requests-00002.jsonl").read_text() == "mine\n"


@pytest.mark.parametrize("fail_at", [1, 2, 3, 4, 5, 6])
def test_a_publish_cut_short_at_any_rename_leaves_a_folder_the_next_run_accepts(build, tmp_path, monkeypatch, fail_at):
    from promptmill.batch import shards

    out = tmp_path / "out"
    _run(build, write_jsonl(tmp_path / "a.jsonl", rows(3)), out, max_requests=1)  # three request files
    src = write_jsonl(tmp_path / "b.jsonl", rows(5)[3:])  # other rows: two files, other bytes
    calls = []
    real = os.replace

    def replace(a, b):  # the manifest, the two request files, the report, the summary, the manifest
        calls.append(Path(b).name)
        if len(calls) == fail_at:
            raise OSError(28, "No space left on device")
        return real(a, b)

    monkeypatch.setattr(shards.os, "replace", replace)
    with pytest.raises(promptmill.PromptmillError) as err:
        _run(build, src, out, max_requests=1)
    assert err.value.code == "PM876" and "No space left on device" in err.value.message
    assert not list(out.glob(".promptmill-tmp-*")) and not (out / LOCK).exists()
    monkeypatch.setattr(shards.os, "replace", real)
    _run(build, src, out, max_requests=1)  # whatever mix of old and new files is there, it is promptmill's
    assert sorted(p.name for p in out.iterdir()) == [
        MANIFEST,
        "report.jsonl",
        "requests-00001.jsonl",
        "requests-00002.jsonl",
        "summary.json",
    ]


def test_a_partial_name_planted_as_a_symlink_is_never_followed(tmp_path):
    """AtomicFile alone (batch collect writes with it): a random exclusive name, never `.<name>.partial`."""
    outside = tmp_path / "outside.txt"
    outside.write_text("keep me\n")
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / ".report.jsonl.partial").symlink_to(outside)
    f = AtomicFile(tmp_path / "out" / "report.jsonl")
    f.write(b"new\n")
    f.publish()
    assert (tmp_path / "out" / "report.jsonl").read_bytes() == b"new\n" and outside.read_text() == "keep me\n"
    staging = tmp_path / "staging"
    staging.mkdir()
    (staging / "report.jsonl").symlink_to(outside)  # in a staging folder: O_EXCL|O_NOFOLLOW refuses the name
    with pytest.raises(promptmill.PromptmillError) as err:
        AtomicFile(tmp_path / "out" / "report.jsonl", staging)
    assert err.value.code == "PM876" and outside.read_text() == "keep me\n"


# -- a lone surrogate in an id (valid JSON, not UTF-8) is that row's failure, not the run's end
def test_an_id_holding_a_lone_surrogate_is_a_pm871_row_and_the_run_goes_on(build, tmp_path):
    items = rows(3)
    items[1]["id"] = "a\ud800"
    src = write_jsonl(tmp_path / "rows.jsonl", items)  # json.dumps writes the escape \ud800
    summary = _run(build, src, tmp_path / "out", max_error_rate=0.5)
    report = [json.loads(x) for x in (tmp_path / "out" / "report.jsonl").read_text(encoding="utf-8").splitlines()]
    assert [(r["ok"], r["code"]) for r in report] == [(True, None), (False, "PM871"), (True, None)]
    assert report[1]["id"] == "a\ud800"  # written as a JSON escape, read back as it was
    assert summary["codes"] == {"PM871": 1} and summary["files"][0]["requests"] == 2
    json.loads((tmp_path / "out" / "summary.json").read_text(encoding="utf-8"))
    ok = (tmp_path / "out" / "report.jsonl").read_bytes().splitlines()[0]
    assert ok == json.dumps(report[0], ensure_ascii=False, separators=(",", ":")).encode()  # other lines unchanged


# -- subprocesses: the CLI as a user runs it
def _cli(build, src, out, *extra):
    return [*CLI, "--input", str(src), "--out", str(out), "--build", str(build), "--id-column", "id", *extra]


def test_a_second_run_into_the_same_folder_is_refused_and_sigterm_ends_the_first_cleanly(build, tmp_path):
    src = write_jsonl(tmp_path / "rows.jsonl", rows(4000))
    out = tmp_path / "out"
    first = subprocess.Popen(_cli(build, src, out, "--max-requests", "100"), stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        _wait_for(lambda: list(out.glob(".promptmill-tmp-*/requests-00002.jsonl")))
        with pytest.raises(promptmill.PromptmillError) as err:
            _run(build, write_jsonl(tmp_path / "few.jsonl", rows(2)), out)
        assert err.value.code == "PM875"
        assert f"another promptmill batch run (pid {first.pid}, started " in err.value.message
        first.send_signal(signal.SIGTERM)
        _, stderr = first.communicate(timeout=60)
    finally:
        first.kill()
        first.wait()
    assert first.returncode == 143 and b"Traceback" not in stderr, stderr
    assert list(out.iterdir()) == []  # partial files, staging folder and lock file all gone
    _run(build, src, out, max_requests=1000)  # and the folder is free again


def _limited(limit: int) -> Callable[[], None]:
    def preexec() -> None:
        import resource

        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # the write then fails with EFBIG instead of killing

    return preexec


def test_a_file_size_limit_is_pm876_naming_the_file_and_leaves_no_partial_file(build, tmp_path):
    src = write_jsonl(tmp_path / "rows.jsonl", rows(200))  # about 600 kB of requests
    out = tmp_path / "out"
    proc = subprocess.run(
        _cli(build, src, out, "--provider", "text"), capture_output=True, text=True, timeout=300, preexec_fn=_limited(100_000)
    )
    assert proc.returncode == 1, proc.stderr
    assert "error[PM876]: cannot write " in proc.stderr and "requests-00001.jsonl: File too large" in proc.stderr, proc.stderr
    assert "Traceback" not in proc.stderr + proc.stdout
    assert list(out.iterdir()) == []


def _without_dac_override() -> None:
    """As root a folder's mode does not stop a write: drop CAP_DAC_OVERRIDE and CAP_DAC_READ_SEARCH from the
    bounding set (prctl PR_CAPBSET_DROP), so the program exec'd next does not get them."""
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    for cap in (1, 2):
        if libc.prctl(24, cap, 0, 0, 0) != 0:
            raise OSError(ctypes.get_errno(), "prctl(PR_CAPBSET_DROP)")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="drops root's capabilities with prctl")
def test_a_read_only_folder_is_pm876_and_nothing_is_left(build, src, tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    os.chmod(out, 0o555)
    try:
        proc = subprocess.run(
            _cli(build, src, out),
            capture_output=True,
            text=True,
            timeout=300,
            preexec_fn=_without_dac_override if os.geteuid() == 0 else None,
        )
    finally:
        os.chmod(out, 0o755)
    assert proc.returncode == 1, proc.stderr
    assert f"error[PM876]: cannot create {out / LOCK}: Permission denied" in proc.stderr, proc.stderr
    assert "Traceback" not in proc.stderr + proc.stdout
    assert list(out.iterdir()) == []


# -- workers end with the main process
def _stat(pid: int) -> tuple[int, str, str] | None:
    """(parent pid, state, start time) of a live process, None when it is gone."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = text[text.rindex(")") + 2 :].split()
    return int(fields[1]), fields[0], fields[19]


def _descendants(pid: int) -> dict[int, str]:
    """pid -> start time of every process whose parent chain leads to `pid`."""
    parents = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit() and (st := _stat(int(entry))) is not None:
            parents[int(entry)] = st
    found: dict[int, str] = {}
    todo = [pid]
    while todo:
        p = todo.pop()
        for child, (ppid, _, start) in parents.items():
            if ppid == p and child not in found:
                found[child] = start
                todo.append(child)
    return found


def _alive(pid: int, start: str) -> bool:
    st = _stat(pid)
    return st is not None and st[2] == start and st[1] != "Z"


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads the process table from /proc")
@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGTERM], ids=["SIGKILL", "SIGTERM"])
def test_workers_end_when_the_main_process_ends(build, tmp_path, sig):
    src = write_jsonl(tmp_path / "rows.jsonl", rows(4000))
    out = tmp_path / "out"
    main = subprocess.Popen(
        _cli(build, src, out, "--workers", "2", "--max-requests", "100"), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    family: dict[int, str] = {}
    try:
        _wait_for(lambda: list(out.glob(".promptmill-tmp-*/requests-00002.jsonl")))  # workers are rendering
        family = _descendants(main.pid)
        assert len(family) >= 2, family  # two workers (and multiprocessing's resource tracker, where it runs one)
        main.send_signal(sig)
        main.wait(timeout=60)
        deadline = time.time() + 10
        while time.time() < deadline and any(_alive(p, s) for p, s in family.items()):
            time.sleep(0.1)
        left = [p for p, s in family.items() if _alive(p, s)]
        assert left == [], f"still running after {sig.name} of the main process: {left}"
    finally:
        main.kill()
        main.wait()
        for p, s in family.items():
            if _alive(p, s):
                os.kill(p, signal.SIGKILL)
    if sig == signal.SIGTERM:
        assert main.returncode == 143 and list(out.iterdir()) == []


# -- how workers start: forked after a warm-up where that is safe, spawned elsewhere
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="workers fork only on Linux")
def test_start_method_forks_only_from_a_single_threaded_process():
    code = (
        "import threading\n"
        "from promptmill.batch.pool import start_method\n"
        "print(start_method())\n"
        "stop = threading.Event()\n"
        "t = threading.Thread(target=stop.wait)\n"
        "t.start()\n"
        "print(start_method())\n"
        "stop.set()\n"
        "t.join()\n"
        "import time\n"
        "deadline = time.monotonic() + 5\n"
        "while start_method() != 'fork' and time.monotonic() < deadline:\n"
        "    time.sleep(0.01)  # the kernel lets the thread's task go a moment after join() returns\n"
        "print(start_method())\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True).stdout.split()
    assert out == ["fork", "spawn", "fork"]


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads the process table from /proc")
def test_forked_workers_write_the_bytes_of_one_process_and_a_killed_one_fails_the_run(build, tmp_path):
    """`promptmill batch --workers 2` forks its workers (their command line is the main process's, not
    multiprocessing's spawn_main), they write what one process writes; a worker sent SIGTERM dies, and
    the run fails with no request file written, as with spawned workers."""
    src = write_jsonl(tmp_path / "rows.jsonl", rows(600))
    one = subprocess.run(_cli(build, src, tmp_path / "one", "--max-requests", "100"), capture_output=True, text=True, timeout=120)
    assert one.returncode == 0, one.stderr
    big = write_jsonl(tmp_path / "big.jsonl", rows(4000))
    runs = []
    for name in ("two", "killed"):
        out = tmp_path / name
        main = subprocess.Popen(
            _cli(build, src if name == "two" else big, out, "--workers", "2", "--max-requests", "100"),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        try:
            _wait_for(lambda out=out, main=main: list(out.glob(".promptmill-tmp-*/requests-00002.jsonl")) or main.poll() is not None)
            family = _descendants(main.pid)
            cmdlines = {p: Path(f"/proc/{p}/cmdline").read_bytes() for p in family if _stat(p) is not None}
            if name == "killed":
                assert len(cmdlines) == 2, cmdlines  # two forked workers, and no resource tracker
                assert all(b"spawn_main" not in c for c in cmdlines.values()), cmdlines
                assert set(cmdlines.values()) == {Path(f"/proc/{main.pid}/cmdline").read_bytes()}
                os.kill(max(cmdlines), signal.SIGTERM)
            _, err = main.communicate(timeout=120)
        finally:
            main.kill()
            main.wait()
        runs.append((main.returncode, err))
    assert runs[0][0] == 0, runs[0][1]
    files = sorted(p.name for p in (tmp_path / "one").glob("requests-*"))
    assert len(files) == 6 and files == sorted(p.name for p in (tmp_path / "two").glob("requests-*"))
    assert all((tmp_path / "one" / f).read_bytes() == (tmp_path / "two" / f).read_bytes() for f in files)
    code, err = runs[1]
    assert code == 1 and "error[PM024]" in err and "stopped before it finished" in err and "Traceback" not in err, err
    assert "standard input" not in err  # that aside is for spawned workers only
    assert list((tmp_path / "killed").iterdir()) == []
