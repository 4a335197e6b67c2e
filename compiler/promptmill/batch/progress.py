"""A one-line progress display on a terminal (rows done, rows per second); silent otherwise."""

from __future__ import annotations

import time
from typing import TextIO


class Progress:
    def __init__(self, stream: TextIO, every: float = 0.2):
        self.stream = stream
        self.enabled = bool(getattr(stream, "isatty", lambda: False)())
        self.every = every
        self.start = self.last = time.perf_counter()
        self.shown = False

    def update(self, rows: int) -> None:
        now = time.perf_counter()
        if not self.enabled or now - self.last < self.every:
            return
        self.last = now
        rate = rows / (now - self.start) if now > self.start else 0.0
        self.stream.write(f"\r  {rows:,} rows  {rate:,.0f} rows/s ")
        self.stream.flush()
        self.shown = True

    def done(self) -> None:
        if self.shown:
            self.stream.write("\r\033[K")
            self.stream.flush()
