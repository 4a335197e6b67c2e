"""Raw bytes to text that YAML may parse: size, encoding, characters, line length.

These checks run before the parser so that binary files, other encodings, NUL
and control characters, huge files and huge lines are refused with a precise
position and a plain message, without the parser ever seeing them.
"""

from __future__ import annotations

import os
import re
import stat

Pos = tuple[int, int]

# Characters YAML does not allow in a stream (PyYAML's Reader uses the same set).
NON_PRINTABLE = re.compile("[^\x09\x0a\x0d\x20-\x7e\x85\xa0-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")
UTF8_BOM = b"\xef\xbb\xbf"


def read_bytes(path: os.PathLike[str] | str, limit: int) -> bytes | tuple[str, str]:
    """The file's bytes, or (code, message): PM100 unreadable, PM105 over `limit` bytes.

    Opens first and checks the open file, so a file swapped after listing is
    caught; reads at most limit+1 bytes whatever the size claims.
    """
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0))
    except FileNotFoundError:
        return "PM100", "the file does not exist (it may have been moved or deleted)"
    except PermissionError:
        return "PM100", "the file cannot be read: permission denied"
    except OSError as err:
        return "PM100", f"the file cannot be read: {err.strerror or err}"
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            mode = info.st_mode
            kind = (
                "a folder"
                if stat.S_ISDIR(mode)
                else "a FIFO (named pipe)"
                if stat.S_ISFIFO(mode)
                else "a device"
                if stat.S_ISCHR(mode) or stat.S_ISBLK(mode)
                else "not a regular file"
            )
            return "PM100", f"expected a YAML file, but this is {kind}"
        if info.st_size > limit:
            return "PM105", f"the file is {info.st_size:,} bytes; the limit is {limit:,} bytes"
        chunks, size = [], 0
        while size <= limit:  # at most limit+1 bytes, whatever fstat said
            chunk = os.read(fd, min(limit + 1 - size, 1 << 20))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
        raw = b"".join(chunks)
    except OSError as err:
        return "PM100", f"the file cannot be read: {err.strerror or err}"
    finally:
        os.close(fd)
    if len(raw) > limit:
        return "PM105", f"the file is larger than the limit of {limit:,} bytes"
    return raw


def decode(raw: bytes) -> str | tuple[Pos, str, str]:
    """UTF-8 text without a BOM, or (position, message, hint) for PM102."""
    if raw.startswith((b"\xff\xfe", b"\xfe\xff")):
        return (
            (1, 1),
            "the file is UTF-16 text; promptmill reads UTF-8 only",
            "save the file as UTF-8",
        )
    if raw.startswith(UTF8_BOM):
        raw = raw[len(UTF8_BOM) :]
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as err:
        line_start = raw.rfind(b"\n", 0, err.start) + 1
        pos = (
            raw.count(b"\n", 0, err.start) + 1,
            len(raw[line_start : err.start].decode("utf-8", "replace")) + 1,
        )
        if b"\x00" in raw[:8192]:
            return (
                pos,
                "this looks like a binary file, not YAML text",
                "template files must be UTF-8 text",
            )
        return (
            pos,
            f"the file is not UTF-8 text: byte 0x{raw[err.start]:02X} is not valid UTF-8",
            "save the file as UTF-8 (it may be Latin-1 or Windows-1252)",
        )


def text_problem(text: str, max_line_chars: int) -> tuple[str, Pos, str, str] | None:
    """Refuse characters YAML forbids and over-long lines before parsing."""
    bad = NON_PRINTABLE.search(text)
    if bad is not None:
        char = bad.group()
        pos = line_col(text, bad.start())
        if char == "\x00":
            return (
                "PM102",
                pos,
                "the file holds a NUL byte; it looks like a binary file",
                "template files must be UTF-8 text",
            )
        return (
            "PM102",
            pos,
            f"the character U+{ord(char):04X} is a control character, which YAML does not allow",
            "remove it, or write it as an escape inside a double-quoted string",
        )
    if len(text) > max_line_chars:
        lines = text.splitlines()
        if max(map(len, lines), default=0) > max_line_chars:
            number = next(i for i, line in enumerate(lines, 1) if len(line) > max_line_chars)
            return (
                "PM112",
                (number, max_line_chars + 1),
                f"line {number} has {len(lines[number - 1]):,} characters; the limit is {max_line_chars:,}",
                "break the text over several lines, for example with a block scalar (|)",
            )
    return None


def line_col(text: str, index: int) -> Pos:
    """1-based (line, col) of a character index."""
    start = text.rfind("\n", 0, index) + 1
    return text.count("\n", 0, index) + 1, index - start + 1
