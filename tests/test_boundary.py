"""core/boundary: the environment is a PM-coded error, a bug is still PM000; through the real CLI."""

from __future__ import annotations

import errno
import os
import subprocess
import sys
from pathlib import Path

import pytest

from promptmill.core import boundary
from promptmill.core.boundary import environment_error


@pytest.mark.parametrize(
    ("exc", "code"),
    [
        (FileNotFoundError(errno.ENOENT, "No such file or directory", "git"), "PM020"),
        (OSError(errno.ENOSPC, "No space left on device", "build/x"), "PM021"),
        (OSError(errno.EROFS, "Read-only file system", "build/x"), "PM021"),
        (PermissionError(errno.EACCES, "Permission denied", "build/x"), "PM021"),
        (OSError(errno.ENAMETOOLONG, "File name too long", "x" * 300), "PM022"),
        (MemoryError(), "PM023"),
        (ConnectionRefusedError(errno.ECONNREFUSED, "Connection refused"), "PM844"),
        (TimeoutError("timed out"), "PM844"),
    ],
)
def test_the_environment_is_coded(exc, code):
    found = environment_error(exc)
    assert found is not None and found.code == code and found.hint


def test_a_missing_file_with_a_path_is_not_a_missing_program():
    assert environment_error(FileNotFoundError(errno.ENOENT, "No such file or directory", "prompts/r.yaml")) is None


@pytest.mark.parametrize("exc", [ValueError("x"), KeyError("k"), ZeroDivisionError(), BrokenPipeError()])
def test_a_bug_stays_a_bug(exc):
    assert environment_error(exc) is None


def test_sdk_errors_are_recognised_by_class_without_importing_an_sdk():
    import anthropic

    try:  # the SDKs moved from httpx to httpx2
        import httpx2 as httpx
    except ImportError:
        import httpx
    request = httpx.Request("POST", "http://127.0.0.1:9/v1/messages/count_tokens")
    refused = anthropic.AuthenticationError("invalid x-api-key", response=httpx.Response(401, request=request), body=None)
    unreachable = anthropic.APIConnectionError(request=request)
    assert environment_error(refused).code == "PM843"
    assert "HTTP 401" in environment_error(refused).message
    assert environment_error(unreachable).code == "PM844"
    assert environment_error(httpx.ConnectError("refused")).code == "PM844"


def test_provider_timeout_reads_the_environment(monkeypatch):
    monkeypatch.delenv(boundary.PROVIDER_TIMEOUT_ENV, raising=False)
    assert boundary.provider_timeout() == boundary.DEFAULT_PROVIDER_TIMEOUT
    monkeypatch.setenv(boundary.PROVIDER_TIMEOUT_ENV, "2.5")
    assert boundary.provider_timeout() == 2.5
    for bad in ("soon", "0", "-1", "1e9", "nan"):
        monkeypatch.setenv(boundary.PROVIDER_TIMEOUT_ENV, bad)
        with pytest.raises(Exception) as info:
            boundary.provider_timeout()
        assert getattr(info.value, "code", None) == "PM010", bad


def test_the_cli_turns_the_environment_into_a_coded_error(tmp_path):
    """A real process: the compile's write fails on a file name too long for the file system (`-o` names it)."""
    (tmp_path / "prompts").mkdir()
    (tmp_path / "prompts" / "r.yaml").write_text("kind: role\nid: r\nsections:\n  - id: a\n    text: Hello.\n")
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1] / "compiler")}
    done = subprocess.run(
        [sys.executable, "-m", "promptmill.cli", "compile", "-o", "b" * 300],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    said = done.stdout + done.stderr
    assert done.returncode == 1, said
    assert "PM000" not in said and "Traceback" not in said, said
    assert "PM014" in said or "PM022" in said, said


def test_memory_error_in_a_command_is_pm023(monkeypatch):
    from click.testing import CliRunner

    from promptmill.cli.main import main
    from promptmill.compiling import api

    def exhausted(*args, **kwargs):
        raise MemoryError

    monkeypatch.setattr(api, "lint", exhausted)
    result = CliRunner().invoke(main, ["lint", "."])
    assert result.exit_code == 1
    assert "PM023" in result.output and "PM000" not in result.output
