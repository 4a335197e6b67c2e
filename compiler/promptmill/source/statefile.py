"""Read a render state from a file (`render --state`, `watch --state`).

A state file is `.yaml`, `.yml` or `.json`; `-` reads the state from standard
input (JSON when it starts with `{` or `[`, else YAML). Whatever goes wrong reading it is
a `PromptmillError` with a stable code, never a traceback:

- PM813: missing, a folder, unreadable, not UTF-8, another suffix, a syntax
  error (with line and column), nested too deeply;
- PM812: larger than `MAX_STATE_FILE_BYTES` (checked before reading).

Checking the *content* (JSON-like values, size, the role's inputs schema) is
the runtime's job; this module only turns a file into data. Compile side: it
may import YAML.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import IO, Any

from ..core import userfiles
from ..core.errors import PromptmillError

MAX_STATE_FILE_BYTES = 8 * 1024 * 1024
SUFFIXES = (".yaml", ".yml", ".json")


def _fail(path: Path, problem: str, code: str = "PM813", hint: str | None = None) -> PromptmillError:
    return PromptmillError(f"state file {path}: {problem}", code=code, hint=hint)


def _where(exc: BaseException) -> str:
    """` at line L, column C` from a YAML or JSON parse error, when it has one."""
    mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
    if mark is not None:
        return f" at line {mark.line + 1}, column {mark.column + 1}"
    if hasattr(exc, "lineno") and hasattr(exc, "colno"):
        return f" at line {exc.lineno}, column {exc.colno}"
    return ""


STDIN = "-"  # `--state -`: the state comes from standard input
_TOO_BIG_HINT = "pass only what the role renders; large lists are trimmed to the budget anyway"


def _blank(raw: bytes) -> bool:
    """Nothing but blank lines and comments: an empty state."""
    text = raw.decode("utf-8", errors="replace")
    return all(not line.strip() or line.lstrip().startswith("#") for line in text.splitlines())


def read_state(path: str | os.PathLike[str], *, max_bytes: int = MAX_STATE_FILE_BYTES, root: str | os.PathLike[str] | None = None) -> Any:
    """The data in state file `path` (an empty file is an empty state); `-` reads standard input.

    A regular file only, at most `max_bytes`; with `root` (a project's example states)
    a link out of that folder is PM017. A path the user names on the command line is
    read without `root`: they chose the file, but it must still be a regular file."""
    from .loader import load_data_bytes

    if os.fspath(path) == STDIN:
        stream = getattr(sys.stdin, "buffer", None)  # None when the process was started with stdin closed
        if stream is None:
            hint = "pipe the state in, or name a state file"
            raise PromptmillError("state from <stdin>: standard input is closed", code="PM813", hint=hint)
        return read_state_stream(stream, max_bytes=max_bytes)
    p = Path(path)
    if p.suffix.lower() not in SUFFIXES:
        raise _fail(p, f"unknown file type '{p.suffix or '(none)'}'", hint="use a .yaml, .yml or .json file")
    raw = read_bounded(p, max_bytes, root=root)
    if _blank(raw):
        return {}  # an empty (or comments-only) state file is an empty state
    # the bytes already read (not the file again): StateFileError with file:line:col
    data = load_data_bytes(raw, p.as_posix(), json_text=p.suffix.lower() == ".json", max_bytes=max_bytes)
    return {} if data is None else data


def read_bounded(p: Path, max_bytes: int, *, root: str | os.PathLike[str] | None = None) -> bytes:
    """The bytes of the state file `p`, at most `max_bytes` (`userfiles.read_bytes`): a regular
    file only (a FIFO, `/dev/zero` or a folder is PM813, never waited on or slurped), over
    the limit is PM812, and with `root` a link out of that folder is PM017."""
    if not os.path.exists(p):
        raise _fail(p, "no such file")
    try:
        return userfiles.read_bytes(p, limit=max_bytes, root=root, what="state file")
    except userfiles.PathOutsideError:
        raise
    except PromptmillError as exc:
        if exc.code == "PM105":
            raise _fail(p, f"is over the limit of {max_bytes / 1_048_576:.1f} MiB", code="PM812", hint=_TOO_BIG_HINT) from None
        problem = exc.message.split(": ", 1)[1] if exc.message.startswith(f"{p.as_posix()}: ") else exc.message
        hint = "name a regular file, or pipe the state in: --state - (standard input)" if "regular files only" in problem else exc.hint
        raise _fail(p, problem.replace("the state file is", "is"), hint=hint) from None


def read_state_stream(stream: IO[bytes], *, max_bytes: int = MAX_STATE_FILE_BYTES, name: str = "<stdin>") -> Any:
    """A state read from a byte stream: JSON when it starts with `{` or `[`, else YAML."""
    from .loader import load_data_bytes

    try:
        raw = stream.read(max_bytes + 1)
    except OSError as exc:
        raise PromptmillError(f"state from {name}: cannot read it: {exc.strerror or exc}", code="PM813") from None
    if len(raw) > max_bytes:
        raise PromptmillError(
            f"state from {name}: over the limit of {max_bytes / 1_048_576:.1f} MiB",
            code="PM812",
            hint=_TOO_BIG_HINT,
        )
    if _blank(raw):
        return {}
    json_text = raw.decode("utf-8", errors="replace").lstrip("\ufeff \t\r\n")[:1] in ("{", "[")
    data = load_data_bytes(raw, name, json_text=json_text, max_bytes=max_bytes)
    return {} if data is None else data
