"""Batch files written atomically, split before a provider's limits.

Every file is written under a temporary name nobody else uses and renamed to
its real name only by `publish()`, after the whole run succeeded; `discard()`
removes the temporary file. `run_batch` writes into a private staging folder
of the output folder (`promptmill.batch.outdir`); `AtomicFile` alone (as
`collect` uses it) creates `.<name>.<random>.partial` beside its target.
Either way the file is created exclusively (O_EXCL, O_NOFOLLOW), so a
symbolic link planted under a partial name is never followed. A run that is
killed leaves only hidden partial files behind, never a file that looks
complete. A write that fails (disk full, file size limit, no permission) is
PM876 naming the file and the cause.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import tempfile
from pathlib import Path

# promptmill internals this module uses (kept together for the package move)
from ..core.errors import ConfigError, PromptmillError

NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
BUFFER = 1 << 20  # bytes an AtomicFile gathers before it writes and hashes them in one go


class WriteFailed(PromptmillError):
    """A batch output file that cannot be created or written (PM876)."""

    code = "PM876"


def write_failed(path: Path, exc: OSError, doing: str = "write") -> WriteFailed:
    """PM876 naming `path` and the cause (disk full, file too large, permission denied, ...)."""
    cause = exc.strerror or str(exc)
    return WriteFailed(
        f"cannot {doing} {path}: {cause}",
        hint="free some disk space, raise the file size limit (ulimit -f), or write to a folder you can write (--out)",
    )


class AtomicFile:
    """One file written under a temporary name, renamed into place by `publish()`.

    `staging` is a private folder to write the temporary file in (then named
    like the target); without it the temporary file is a hidden file with a
    random name beside the target. `size` and `sha256()` describe what was written.
    Writes are gathered up to `BUFFER` bytes, then written and hashed as one block
    (a write error surfaces there or at `close()`, PM876 either way).
    """

    def __init__(self, path: Path, staging: Path | None = None):
        self.path = Path(path)
        self.size = 0
        self._hash = hashlib.sha256()
        try:
            if staging is not None:
                self.tmp = Path(staging) / self.path.name
                fd = os.open(self.tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | NOFOLLOW | getattr(os, "O_CLOEXEC", 0), 0o666)
            else:  # mkstemp: O_EXCL, a name of its own, never an existing file or link
                fd, name = tempfile.mkstemp(prefix=f".{self.path.name}.", suffix=".partial", dir=self.path.parent)
                self.tmp = Path(name)
                with contextlib.suppress(OSError):
                    os.fchmod(fd, 0o644)
        except OSError as exc:
            raise write_failed(self.path, exc, "create") from None
        self.file = os.fdopen(fd, "wb")
        self._pending = bytearray()

    def write(self, data: bytes) -> None:
        self._pending += data
        self.size += len(data)
        if len(self._pending) >= BUFFER:
            self._flush()

    def _flush(self) -> None:
        block = self._pending
        if block:
            self._pending = bytearray()
            try:
                self.file.write(block)
            except OSError as exc:
                raise write_failed(self.path, exc) from None
            self._hash.update(block)

    def sha256(self) -> str:
        if not self.file.closed:
            self._flush()
        return self._hash.hexdigest()

    def close(self) -> None:
        if not self.file.closed:
            try:
                self._flush()
                self.file.flush()
                os.fsync(self.file.fileno())
            except OSError as exc:
                raise write_failed(self.path, exc) from None
            finally:
                with contextlib.suppress(OSError):
                    self.file.close()

    def publish(self) -> None:
        self.close()
        try:
            os.replace(self.tmp, self.path)
        except OSError as exc:
            raise write_failed(self.path, exc, "publish") from None

    def discard(self) -> None:
        self._pending = bytearray()
        with contextlib.suppress(OSError):
            self.file.close()  # a flush that fails on a full disk must not stop the cleanup
        with contextlib.suppress(OSError):
            self.tmp.unlink(missing_ok=True)


class ShardWriter:
    """Request lines into `prefix-00001.jsonl`, `prefix-00002.jsonl`, ...: a new file
    before one would hold more than `max_requests` lines or `max_bytes` bytes."""

    def __init__(self, folder: Path, prefix: str, max_requests: int, max_bytes: int, staging: Path | None = None):
        if max_requests < 1 or max_bytes < 1:
            raise ConfigError("shard limits must be at least 1 request and 1 byte", code="PM010")
        self.folder = Path(folder)
        self.staging = staging
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
        self.files.append(AtomicFile(self.folder / name, self.staging))
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
