"""A closed standard output (issue 22): `promptmill ... | head` is an ordinary end, exit 141 (128 + SIGPIPE,
as a shell reports for any Unix tool whose reader went away), with nothing on stderr but what the command
would say anyway: no traceback, no PM000, no "Exception ignored". Files a command writes are still written.

Each case runs the real `promptmill` in a child process whose standard output is a pipe: the test closes its
read end before the child writes (or after reading a little of a long output), so every write fails with EPIPE.
A new command that prints is a new row of COMMANDS.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

EXE = str(Path(sys.executable).with_name("promptmill"))
STATE = "examples/helpdesk.state.yaml"
CLOSED = 141
ROWS = [{"id": f"r{i}", "customer": {"name": f"c{i}"}, "question": f"q{i}?"} for i in range(5)]
FORMAT_TEMPLATE = "Hello {name}, about {topic}:\n" + "Some fixed text between fields. " * 4000 + "\n{closing}\n"  # ~130 KB of output

# name -> (arguments, files that must exist afterwards, text stderr must hold)
COMMANDS: dict[str, tuple[list[str], list[str], str]] = {
    "lint": (["lint"], [], ""),
    "lint-sarif": (["lint", "--format", "sarif"], [], ""),
    "compile": (["compile"], [], ""),
    "compile-check": (["compile", "--check"], [], ""),
    "schema": (["schema", "role"], [], ""),
    "schema-write": (["schema", "--write", "schemas-out"], ["schemas-out/role.schema.json"], ""),
    "init": (["init", "fresh"], ["fresh/promptmill.yaml", "fresh/examples/helpdesk.state.yaml"], ""),
    "render-pretty": (["render", "helpdesk", "--state", STATE], [], ""),
    "render-text": (["render", "helpdesk", "--state", STATE, "--format", "text"], [], ""),
    "render-json": (["render", "helpdesk", "--state", STATE, "--format", "json"], [], ""),
    "render-openai": (["render", "helpdesk", "--state", STATE, "--format", "openai"], [], ""),
    "render-from-build": (["render", "helpdesk", "--state", STATE, "--build", "build"], [], ""),
    "which": (["which", "helpdesk"], [], ""),
    "port-format": (["port-format", "greeting.txt"], [], ""),
    "stats": (["stats"], [], ""),
    "watch": (["watch", ".", "--role", "helpdesk", "--state", STATE], [], ""),
    "preview": (["preview", "--port", "0"], [], ""),
    "batch": (
        ["batch", "helpdesk", "--input", "rows.jsonl", "--out", "out-batch"],
        ["out-batch/report.jsonl", "out-batch/summary.json", "out-batch/requests-00001.jsonl"],
        "",
    ),
    "batch-workers": (
        ["batch", "helpdesk", "--input", "rows.jsonl", "--out", "out-workers", "--workers", "2"],
        ["out-workers/report.jsonl", "out-workers/summary.json"],
        "",
    ),
    # the run fails (every row is bad): the failure is still told, and its report published
    "batch-failed": (
        ["batch", "helpdesk", "--input", "bad.jsonl", "--out", "out-failed"],
        ["out-failed/report.jsonl", "out-failed/summary.json"],
        "error[PM872]",
    ),
    "collect": (
        ["batch", "collect", "results.jsonl", "--batch", "done", "--out", "collected"],
        ["collected/replies.jsonl", "collected/failures.jsonl"],
        "",
    ),
    "help": (["--help"], [], ""),
    "version": (["--version"], [], ""),
    "batch-help": (["batch", "--help"], [], ""),
    "render-help": (["render", "--help"], [], ""),
}


def _env(**extra: str) -> dict[str, str]:
    """The environment of a user's shell: output buffered (unless `extra` says otherwise), no debug."""
    env = {k: v for k, v in os.environ.items() if k not in ("PROMPTMILL_DEBUG", "PYTHONUNBUFFERED")}
    return {**env, "NO_COLOR": "1", **extra}


@pytest.fixture(scope="module")
def project(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("closed") / "demo"
    subprocess.run([EXE, "init", str(root)], check=True, capture_output=True, env=_env())
    subprocess.run([EXE, "compile", str(root)], check=True, capture_output=True, env=_env())
    (root / "greeting.txt").write_text(FORMAT_TEMPLATE)
    (root / "rows.jsonl").write_text("".join(json.dumps(r) + "\n" for r in ROWS))
    (root / "bad.jsonl").write_text("".join(json.dumps({"id": f"b{i}"}) + "\n" for i in range(3)))
    subprocess.run(
        [EXE, "batch", "helpdesk", "--input", "rows.jsonl", "--out", "done"], cwd=root, check=True, capture_output=True, env=_env()
    )
    (root / "results.jsonl").write_text("")  # no replies yet: every request is a failure without a result
    return root


def _clean(err: str) -> None:
    for bad in ("Traceback", "PM000", "Exception ignored", "Broken pipe", "BrokenPipeError"):
        assert bad not in err, err


def _closed_early(args: list[str], cwd: Path, *, read: int = 0, env: dict[str, str] | None = None) -> tuple[int, str]:
    """Run promptmill with its standard output a pipe the test closes (after reading `read` bytes)."""
    proc = subprocess.Popen([EXE, *args], cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env or _env())
    assert proc.stdout is not None and proc.stderr is not None
    if read:
        proc.stdout.read(read)
    proc.stdout.close()
    try:
        err = proc.stderr.read().decode("utf-8", errors="replace")
        return proc.wait(timeout=60), err
    finally:
        if proc.poll() is None:
            proc.kill()


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_a_closed_output_is_an_ordinary_end(name, project):
    args, files, told = COMMANDS[name]
    code, err = _closed_early(args, project)
    assert code == CLOSED, (code, err)
    _clean(err)
    assert told in err
    for rel in files:
        assert (project / rel).is_file(), rel
    assert not list(project.rglob("*.partial")) and not list(project.rglob(".*.partial"))


@pytest.mark.parametrize("args", [["port-format", "greeting.txt"], ["schema", "bundle"]], ids=["port-format", "schema"])
def test_a_reader_that_leaves_in_the_middle_ends_it_the_same(args, project):
    """`| head -c 100`: the first bytes are read, the rest of a long output is cut off."""
    code, err = _closed_early(args, project, read=100)
    assert code in (0, CLOSED), (code, err)  # 0 when the whole output fitted in the pipe before the reader left
    _clean(err)
    if args[0] == "port-format":
        assert code == CLOSED  # over 64 KiB: it cannot all fit


@pytest.mark.parametrize("name", ["lint", "render-pretty", "batch-failed", "help"])
def test_unbuffered_output_ends_the_same(name, project):
    """PYTHONUNBUFFERED=1 (python -u): every write goes straight to the pipe."""
    args, _, told = COMMANDS[name]
    args = [a if not a.startswith("out-") else a + "-unbuffered" for a in args]
    code, err = _closed_early(args, project, env=_env(PYTHONUNBUFFERED="1"))
    assert code == CLOSED, (code, err)
    _clean(err)
    assert told in err


def test_through_a_shell_pipe_into_head(project):
    """What users type; pipefail shows promptmill's own status."""
    script = f'set -o pipefail; {EXE} port-format greeting.txt | head -c 10 >/dev/null; echo "status=${{PIPESTATUS[0]}}" >&2'
    got = subprocess.run(["bash", "-c", script], cwd=project, capture_output=True, text=True, env=_env(), timeout=60)
    assert f"status={CLOSED}" in got.stderr, got.stderr
    _clean(got.stderr)


def test_a_failure_without_output_keeps_its_exit_code(project):
    code, err = _closed_early(["render", "nosuch"], project)
    assert code == 1 and "error[PM802]" in err, err
    _clean(err)


@pytest.mark.parametrize(
    "args", [["lint"], ["render", "helpdesk", "--state", STATE], ["batch", "helpdesk", "--input", "rows.jsonl", "--out", "out-discarded"]]
)
def test_an_output_closed_from_the_start_is_discarded(args, project):
    """`promptmill ... >&-`: Python has no sys.stdout at all; the command runs, its output goes nowhere."""
    got = subprocess.run(
        ["bash", "-c", 'exec "$@" >&-', "promptmill", EXE, *args], cwd=project, capture_output=True, text=True, env=_env(), timeout=60
    )
    assert got.returncode == 0, got.stderr
    _clean(got.stderr)
    if args[0] == "batch":
        assert (project / "out-discarded" / "summary.json").is_file()


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["render", "helpdesk", "--state", "-"], "error[PM813]: state from <stdin>: standard input is closed"),
        (["lsp"], "error[PM010]: the language server talks to the editor over standard input and output, and one of them is closed"),
    ],
)
def test_an_input_closed_from_the_start_is_a_clear_error(args, said, project):
    """`promptmill ... <&-`: Python has no sys.stdin; a command that reads it says so (it was PM000, an
    AttributeError, for `render --state -`, and an OSError for `lsp`), exit 1."""
    got = subprocess.run(
        ["bash", "-c", 'exec "$@" <&-', "promptmill", EXE, *args], cwd=project, capture_output=True, text=True, env=_env(), timeout=60
    )
    assert got.returncode == 1 and said in got.stderr, got.stderr
    _clean(got.stderr)


def test_a_broken_pipe_that_is_not_the_output_is_still_a_bug(project):
    """Only the output's reader going away is an ordinary end: a BrokenPipeError from anywhere else
    (a worker's pipe) is PM000, exit 3, never a silent 141."""
    code = (
        "import promptmill.compiling.which as w\n"
        "def broken(*a, **k): raise BrokenPipeError(32, 'a pipe to a worker')\n"
        "w.which = broken\n"
        "from promptmill.cli.main import main\n"
        "main(['which', 'helpdesk'])\n"
    )
    got = subprocess.run([sys.executable, "-c", code], cwd=project, capture_output=True, text=True, env=_env(), timeout=60)
    assert got.returncode == 3 and "error[PM000]" in got.stderr and "BrokenPipeError" in got.stderr, got.stderr


def _touch(path: Path) -> None:
    path.write_text(path.read_text() + "\n# touched\n")


@pytest.mark.parametrize("args", [["watch", ".", "--role", "helpdesk"], ["preview", "helpdesk", "--port", "0"]], ids=["watch", "preview"])
def test_a_reader_that_leaves_a_running_watcher_ends_it(args, project):
    """The reader goes away after the first screen; the next change's output ends the command (141),
    instead of a traceback logged by the watcher's thread and a process writing into nothing."""
    state = project / "examples" / f"{args[0]}.state.yaml"  # its own, so the other cases see the project unchanged
    state.write_text((project / STATE).read_text())
    proc = subprocess.Popen([EXE, *args, "--state", str(state)], cwd=project, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=_env())
    assert proc.stdout is not None and proc.stderr is not None
    try:
        assert proc.stdout.readline()  # it is up
        time.sleep(0.5)
        proc.stdout.close()
        deadline = time.monotonic() + 30
        while proc.poll() is None and time.monotonic() < deadline:
            _touch(state)
            time.sleep(0.5)
        code = proc.wait(timeout=10)
        err = proc.stderr.read().decode("utf-8", errors="replace")
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGKILL)
            proc.wait()
    assert code == CLOSED, (code, err)
    _clean(err)
