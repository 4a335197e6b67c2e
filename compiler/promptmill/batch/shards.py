"""Batch files written atomically, split before a provider's limits.

Every file is written under a hidden temporary name (`.requests-00001.jsonl.partial`)
and renamed to its real name only by `publish()`, after the whole run
succeeded; `discard()` removes the temporary files. A run that is killed
leaves only `.partial` files behind, never a file that looks complete.
"""

from __future__ import annotations

import os
from pathlib import Path

# promptmill internals this module uses (kept together for the package move)
from ..core.errors import ConfigError


def _partial(path: Path) -> Path:
    return path.with_name(f".{path.name}.partial")


class AtomicFile:
    """One file written under a temporary name, renamed into place by `publish()`."""

    def __init__(self, path: Path):
        self.path = Path(path)
        self.tmp = _partial(self.path)
        try:
            self.file = self.tmp.open("wb")
        except OSError as exc:
            raise ConfigError(f"cannot write {self.tmp}: {exc.strerror}", code="PM014") from None

    def write(self, data: bytes) -> None:
        self.file.write(data)

    def close(self) -> None:
        if not self.file.closed:
            self.file.flush()
            os.fsync(self.file.fileno())
            self.file.close()

    def publish(self) -> None:
        self.close()
        os.replace(self.tmp, self.path)

    def discard(self) -> None:
        self.file.close()
        self.tmp.unlink(missing_ok=True)


class ShardWriter:
    """Request lines into `prefix-00001.jsonl`, `prefix-00002.jsonl`, ...: a new file
    before one would hold more than `max_requests` lines or `max_bytes` bytes."""

    def __init__(self, folder: Path, prefix: str, max_requests: int, max_bytes: int):
        if max_requests < 1 or max_bytes < 1:
            raise ConfigError("shard limits must be at least 1 request and 1 byte", code="PM010")
        self.folder = Path(folder)
        self.prefix = prefix
        self.max_requests = max_requests
        self.max_bytes = max_bytes
        self.files: list[AtomicFile] = []
        self.counts: list[tuple[int, int]] = []  # (requests, bytes) of each file
        self._requests = self._bytes = 0

    def fits(self, line: bytes) -> bool:
        """Can `line` go into a file at all?"""
        return len(line) <= self.max_bytes

    def write(self, line: bytes) -> None:
        if not self.files or self._requests >= self.max_requests or self._bytes + len(line) > self.max_bytes:
            self._roll()
        self.files[-1].write(line)
        self._requests += 1
        self._bytes += len(line)
        self.counts[-1] = (self._requests, self._bytes)

    def _roll(self) -> None:
        if self.files:
            self.files[-1].close()
        name = f"{self.prefix}-{len(self.files) + 1:05d}.jsonl"
        self.files.append(AtomicFile(self.folder / name))
        self.counts.append((0, 0))
        self._requests = self._bytes = 0

    def names(self) -> list[str]:
        return [f.path.name for f in self.files]

    def publish(self) -> None:
        for f in self.files:
            f.close()
        for f in self.files:
            f.publish()

    def discard(self) -> None:
        for f in self.files:
            f.discard()


def remove_stale(folder: Path, prefix: str, keep: list[str]) -> list[str]:
    """Remove `prefix-NNNNN.jsonl` files of an earlier run that this run did not write."""
    removed = []
    for path in sorted(Path(folder).glob(f"{prefix}-[0-9][0-9][0-9][0-9][0-9].jsonl")):
        if path.name not in keep:
            path.unlink()
            removed.append(path.name)
    return removed
