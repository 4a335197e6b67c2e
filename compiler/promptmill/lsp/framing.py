"""The base protocol's framing, read defensively: `Content-Length: N` headers, a blank line, N bytes of JSON.

pygls' own reader trusts the header: a short, long or missing `Content-Length` desyncs it for good and
a huge one is allocated whole. `Framer` reads the file descriptor itself and survives all of them:

- A header block that is not `Name: value` lines is skipped up to the next `Content-Length:` header
  (a `Content-Length: N` followed by a line break cannot occur inside a JSON body: JSON escapes line
  breaks in strings, so it marks the next message reliably).
- A body that does not parse as N bytes is re-read up to the next header: a short or a long length
  still delivers the message; a missing length takes the JSON value that follows the header.
- A length over `MAX_MESSAGE` is never allocated: its bytes are dropped as they come, until the next
  header or until the editor pauses.
- When the editor pauses (`STALL_SECONDS`) with fewer bytes sent than announced, what came is taken
  when it is a whole JSON value, so an over-long length never leaves a request unanswered.

Each repair is reported (`problems`), the message itself is delivered; what cannot be read at all is a
`ParseError` for the dispatcher to answer (JSON-RPC -32700).
"""

from __future__ import annotations

import json
import os
import re
import select
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

MiB = 1 << 20
MAX_MESSAGE = 64 * MiB  # one message's body; a 50 MB buffer fits, a 2 GB length is refused unread
MAX_HEADER = 8 * 1024  # a header block (editors send one or two short lines)
STALL_SECONDS = 0.3  # a pause this long mid-body means the editor sent all it will send for now
_CHUNK = MiB
_NEXT = re.compile(rb"(?i)content-length[ \t]*:[ \t]*\d+[ \t]*\r?\n")
_START = re.compile(rb"(?i)content-length[ \t]*:")
_BLANK = re.compile(rb"\r?\n\r?\n")
_FIELD = re.compile(rb"^([A-Za-z0-9-]+)[ \t]*:[ \t]*(.*?)[ \t]*$")


@dataclass(frozen=True)
class ParseError:
    """A framed body that is not a JSON value (answered with -32700)."""

    reason: str


class Framer:
    """Messages from file descriptor `fd`: `next()` gives a decoded JSON value, a `ParseError`, or None at
    the end of input; `report(text)` is called for every framing problem it repaired or skipped."""

    def __init__(self, fd: int, report: Callable[[str], None], *, max_message: int = MAX_MESSAGE, stall: float = STALL_SECONDS) -> None:
        self.fd = fd
        self.report = report
        self.max_message = max_message
        self.stall = stall
        self.buf = bytearray()
        self.eof = False

    def _fill(self, timeout: float | None) -> bool:
        """Read what is there (waiting up to `timeout`, None: until something comes); False on a pause or the end."""
        if self.eof:
            return False
        ready, _, _ = select.select([self.fd], [], [], timeout)
        if not ready:
            return False
        chunk = os.read(self.fd, _CHUNK)
        if not chunk:
            self.eof = True
            return False
        self.buf += chunk
        return True

    def next(self) -> Any:
        while True:
            stripped = len(self.buf) - len(self.buf.lstrip(b" \t\r\n"))
            if stripped:
                del self.buf[:stripped]
            if not self.buf:
                if not self._fill(None):
                    return None
                continue
            end = _BLANK.search(self.buf, 0, MAX_HEADER)
            if end is None:
                if len(self.buf) >= MAX_HEADER or not self._plausible_header(bytes(self.buf)):
                    self._resync("bytes that are not a message header")
                    continue
                if not self._fill(None):
                    return self._at_end()
                continue
            fields = self._fields(bytes(self.buf[: end.start()]))
            if fields is None:
                self._resync("bytes that are not a message header")
                continue
            del self.buf[: end.end()]
            length = fields.get(b"content-length")
            if length is not None and not length.isdigit():
                self.report(f"a Content-Length of {length[:40].decode('latin-1')!r} is not a number; reading the JSON that follows")
                length = None
            elif length is None:
                self.report("a message header without Content-Length; reading the JSON that follows")
            size = int(length) if length is not None else None
            if size is not None and size > self.max_message:
                self.report(f"a message of {size:,} bytes is over the limit of {self.max_message:,} bytes; skipped unread")
                self._drop(size)
                continue
            return self._body(size)

    @staticmethod
    def _plausible_header(data: bytes) -> bool:
        """Could `data` (no blank line yet) still become a header block?"""
        lines = data.split(b"\n")
        return all(_FIELD.match(line.rstrip(b"\r")) for line in lines[:-1])

    @staticmethod
    def _fields(block: bytes) -> dict[bytes, bytes] | None:
        fields: dict[bytes, bytes] = {}
        for line in block.split(b"\n"):
            m = _FIELD.match(line.rstrip(b"\r"))
            if m is None:
                return None
            fields.setdefault(m.group(1).lower(), m.group(2))
        return fields

    def _resync(self, what: str) -> None:
        """Skip to the next `Content-Length:` header (after the first byte), reading on as needed."""
        skipped = 0
        while True:
            m = _START.search(self.buf, 1)
            if m is not None:
                skipped += m.start()
                del self.buf[: m.start()]
                break
            keep = min(len(self.buf) - 1, 16)
            skipped += len(self.buf) - keep
            del self.buf[: len(self.buf) - keep]
            if not self._fill(None):
                skipped += len(self.buf)
                self.buf.clear()
                break
        self.report(f"skipped {skipped:,} {what}")

    def _drop(self, size: int) -> None:
        """Drop up to `size` bytes as they come, stopping early at the next header or when the editor pauses."""
        dropped = 0
        while True:
            m = _NEXT.search(self.buf)
            take = min(len(self.buf), size - dropped) if m is None else min(m.start(), size - dropped)
            del self.buf[:take]
            dropped += take
            if m is not None or dropped >= size or not self._fill(self.stall):
                return

    def _body(self, size: int | None) -> Any:
        """The JSON value of a body announced as `size` bytes (None: not announced)."""
        limit = self.max_message if size is None else size
        scanned = 0
        while True:
            nxt = _NEXT.search(self.buf, max(scanned - 64, 0), limit + 64)
            scanned = len(self.buf)
            if nxt is not None and (size is None or nxt.start() < size):  # the next message starts early
                if size is not None:
                    self.report(f"a Content-Length of {size:,} bytes, but the next message starts after {nxt.start():,}")
                return self._take(nxt.start())
            if size is not None and len(self.buf) >= size:
                body, rest = (self.buf, bytearray()) if len(self.buf) == size else (self.buf[:size], self.buf[size:])
                self.buf = bytearray()
                value = self._decode_owned(body, rest)
                if not isinstance(value, ParseError):
                    return value
                longer = self._whole_value()  # a short length: the JSON goes on past it
                if longer is not None:
                    self.report(f"a Content-Length of {size:,} bytes, but the message is longer")
                    return longer
                if _NEXT.search(self.buf, size) is None and len(self.buf) < self.max_message and self._fill(self.stall):
                    continue  # more may complete it
                nxt = _NEXT.search(self.buf, size)
                del self.buf[: nxt.start() if nxt is not None else size]
                return value
            if len(self.buf) > limit:
                self.report(f"a message without a usable Content-Length runs over the limit of {self.max_message:,} bytes; skipped")
                self.buf.clear()
                self._drop(self.max_message)
                return ParseError("the message is over the size limit")
            if not self._fill(self.stall):  # the editor paused, or the input ended
                if self.buf.strip():
                    whole = self._decode(self.buf)
                    if not isinstance(whole, ParseError):  # it sent less than it announced
                        if size is not None:
                            self.report(f"a Content-Length of {size:,} bytes, but only {len(self.buf):,} came")
                        self.buf.clear()
                        return whole
                if self.eof:
                    return self._at_end()
                self._fill(None)

    def _whole_value(self) -> Any:
        """The JSON value from the start of the buffer up to the next header (or all of it), None when that is not one."""
        nxt = _NEXT.search(self.buf)
        end = nxt.start() if nxt is not None else len(self.buf)
        value = self._decode(self.buf[:end])
        if isinstance(value, ParseError):
            return None
        del self.buf[:end]
        return value

    def _take(self, end: int) -> Any:
        value = self._decode(self.buf[:end])
        del self.buf[:end]
        return value

    def _decode_owned(self, body: bytearray, rest: bytearray) -> Any:
        """`_decode` that lets the bytes go before the JSON is parsed (a 50 MB body is held once, not
        three times); the buffer is `rest` after a value, `body + rest` after a ParseError."""
        try:
            text = body.decode("utf-8")
        except UnicodeDecodeError:
            self.buf = body + rest
            return ParseError("the message is not UTF-8")
        body.clear()
        del body
        value = self._decode(text)
        self.buf = rest if not isinstance(value, ParseError) else bytearray(text.encode("utf-8")) + rest
        return value

    @staticmethod
    def _decode(body: str | bytes | bytearray) -> Any:
        try:
            return json.loads(body)
        except (ValueError, RecursionError) as exc:
            return ParseError(f"the message is not JSON: {str(exc)[:200]}")

    def _at_end(self) -> None:
        if self.buf.strip():
            self.report(f"the input ended inside a message ({len(self.buf):,} bytes unread)")
        self.buf.clear()
        return None
