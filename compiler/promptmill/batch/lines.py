"""JSONL lines read with a size cap, in the encoding the file's BOM names, and parsed to one JSON object.

    for number, line in lines(f, cap=MAX_LINE_BYTES):   # 1-based line numbers; blank lines skipped
        line                                            # UTF-8 bytes, or Unreadable(code, message)

A line longer than `cap` bytes (as stored) is never held: the rest of it is
skipped a block at a time and it comes back as `Unreadable("PM812", ...)`.
A file that starts with a UTF-16 or UTF-32 byte order mark (what Windows
PowerShell writes) is split on its own newline code unit and each line is
decoded to UTF-8; a line that does not decode is `Unreadable("PM870", ...)`.
A UTF-8 BOM is dropped. Without a BOM lines are passed on as bytes, as read.
"""

from __future__ import annotations

import codecs
import json
from collections.abc import Iterator
from typing import IO, Any, NamedTuple

MAX_LINE_BYTES = 64 * 1024 * 1024  # one JSONL row or results line, as stored
BLOCK = 1024 * 1024

# longest first: the UTF-32-LE mark starts with the UTF-16-LE one
_BOMS = (
    (codecs.BOM_UTF32_LE, "utf-32-le"),
    (codecs.BOM_UTF32_BE, "utf-32-be"),
    (codecs.BOM_UTF8, "utf-8"),
    (codecs.BOM_UTF16_LE, "utf-16-le"),
    (codecs.BOM_UTF16_BE, "utf-16-be"),
)


class Unreadable(NamedTuple):
    """A line that was not read: its PM code and why (small, so it pickles to a worker for nothing)."""

    code: str
    message: str


def encoding_of(head: bytes) -> tuple[str, int]:
    """(the encoding the byte order mark at the start of `head` names, the mark's length); UTF-8 without one."""
    for bom, name in _BOMS:
        if head.startswith(bom):
            return name, len(bom)
    return "utf-8", 0


def lines(f: IO[bytes], *, cap: int = MAX_LINE_BYTES, block: int = BLOCK) -> Iterator[tuple[int, bytes | Unreadable]]:
    """(line number, the line as UTF-8 bytes or why it was not read) for each non-blank line of binary file `f`."""
    head = f.read(4)
    encoding, skip = encoding_of(head)
    newline = "\n".encode(encoding)
    first = head[skip:]
    for number, raw in enumerate(_split(f, first, newline, cap, block), 1):
        if isinstance(raw, int):
            yield number, Unreadable("PM812", f"the line is {raw:,} bytes, more than the limit of {cap:,} bytes; it was not read")
            continue
        if encoding != "utf-8":
            try:
                raw = raw.decode(encoding).encode("utf-8")
            except UnicodeDecodeError as exc:
                named = encoding.upper()[:6]
                yield number, Unreadable("PM870", f"the line is not valid {named} (the file's byte order mark): {exc.reason}")
                continue
        if raw.strip():
            yield number, raw


def _split(f: IO[bytes], first: bytes, newline: bytes, cap: int, block: int) -> Iterator[bytes | int]:
    """The lines of `first` + the rest of `f`, newline kept, split on the code unit `newline` at unit boundaries;
    the byte count instead of a line longer than `cap`."""
    unit = len(newline)
    buf = bytearray(first)
    start = 0  # where the current line starts in buf
    search = 0  # where to look for its newline
    skipped = -1  # bytes of an over-long line dropped so far, -1 while not dropping
    eof = False
    while True:
        end = _find(buf, newline, search, start, unit)
        if end >= 0:
            stop = end + unit
            if skipped >= 0:
                yield skipped + stop - start
                skipped = -1
            elif stop - start > cap:
                yield stop - start
            else:
                yield bytes(buf[start:stop])
            start = search = stop
            continue
        # no newline in what is buffered: keep whole units of the line, read more
        search = len(buf) - (len(buf) - start) % unit
        if skipped >= 0 or search - start > cap:
            skipped = max(skipped, 0) + search - start
            del buf[:search]
            start = search = 0
        if eof:
            if len(buf) > start or skipped >= 0:
                rest = len(buf) - start
                if skipped >= 0:
                    yield skipped + rest
                elif rest > cap:
                    yield rest
                else:
                    yield bytes(buf[start:])
            return
        if start:
            del buf[:start]
            search -= start
            start = 0
        chunk = f.read(block)
        if not chunk:
            eof = True
        buf += chunk


def _find(buf: bytearray, newline: bytes, search: int, start: int, unit: int) -> int:
    """The position of `newline` in buf at or after `search`, at a whole number of units from `start`; -1 if none."""
    while True:
        i = buf.find(newline, search)
        if i < 0 or (i - start) % unit == 0:
            return i
        search = i + 1


def json_object(raw: bytes | str, what: str) -> tuple[dict | None, str | None]:
    """(the JSON object `raw` holds, None) or (None, why it is not one): a line of a JSONL file, parsed without a traceback."""
    try:
        value: Any = json.loads(raw)
    except RecursionError:
        return None, f"{what} is nested too deeply to read"
    except ValueError as exc:  # JSONDecodeError, UnicodeDecodeError
        return None, f"{what} is not JSON: {exc}"
    if not isinstance(value, dict):
        return None, f"{what} must be a JSON object, got {_kind(value)}"
    return value, None


def _kind(value: Any) -> str:
    return {dict: "an object", list: "a list", str: "a string", bool: "a boolean", type(None): "null"}.get(type(value), "a number")
