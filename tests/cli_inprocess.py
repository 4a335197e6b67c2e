"""`promptmill ARGS` run in the test's own process through click's CliRunner, for tests whose point is what a
command says and does, not the process around it (a process costs a second of imports and tokenizer tables;
here those are loaded once per test worker). Exit codes, stdout and stderr are the command's own: `handled`
turns errors into messages and exit codes in-process as in a child. Where the process boundary is the point
(signals, a closed pipe, peak memory, a hung FIFO, the interpreter's start-up), tests start the real process
(tests/test_hostile_cases.py, test_closed_output.py, test_crash.py and the few real-process rows kept beside
each converted file).
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path

from click.testing import CliRunner

from promptmill.cli.main import main


def _runner() -> CliRunner:
    try:  # click < 8.2 mixes stderr into stdout unless told not to; 8.2 removed the argument (always separate)
        return CliRunner(mix_stderr=False)  # type: ignore[call-arg]
    except TypeError:
        return CliRunner()


def run_cli(
    cwd: Path | str,
    *args: str,
    env: Mapping[str, str | None] | None = None,
    input: str | None = None,
    keys: bool = False,
) -> subprocess.CompletedProcess[str]:
    """`promptmill *args` in `cwd`, as subprocess.run(..., capture_output=True, text=True) would return it.
    API keys (*_API_KEY) are removed from the environment unless `keys`; `env` adds or (None) removes variables.
    An exception that escapes the CLI's own handling is raised here, as a traceback in a child would fail."""
    changes: dict[str, str | None] = {} if keys else {k: None for k in os.environ if k.endswith("_API_KEY")}
    changes.update(env or {})
    before = os.getcwd()
    os.chdir(cwd)
    try:
        # CliRunner.isolation, not invoke: click 8.1's invoke reads the captured streams without flushing
        # them after SystemExit, so what a failing command wrote to sys.stderr was lost (the lowest lock)
        with _runner().isolation(input=input, env=changes) as streams:  # (stdout, stderr[, output]) buffers
            try:
                main.main(args=list(args), prog_name="promptmill")
                code = 0
            except SystemExit as exc:
                code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
            finally:
                sys.stdout.flush()
                sys.stderr.flush()
            out, err = streams[0].getvalue(), streams[1].getvalue()
    finally:
        os.chdir(before)
    return subprocess.CompletedProcess(["promptmill", *args], code, _decode(out), _decode(err))


def _decode(data: bytes) -> str:
    """As click's Result.stdout reads its bytes."""
    return data.decode("utf-8", "replace").replace("\r\n", "\n")
