"""One exclusive lock per folder: an advisory `flock` the kernel releases when its holder dies.

    with folder_lock(path, timeout=0, busy=..., failed=..., note=b"pid 12"):
        ...

Shared by `promptmill compile` (build/.lock) and `promptmill batch`
(out/.promptmill-batch.lock). The lock file is opened without following a
symbolic link. `note` (who holds the lock) is written into the file once the
lock is held, so a run that finds it busy can name the holder. With
`remove=True` the file is deleted before the lock is released, and a process
that locked a file someone removed meanwhile tries again on the new one.
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Callable, Iterator
from pathlib import Path

NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)


def read_note(path: Path, limit: int = 4096) -> str:
    """What the holder of the lock at `path` wrote into it ('' when nothing or unreadable)."""
    try:
        fd = os.open(path, os.O_RDONLY | NOFOLLOW)
    except OSError:
        return ""
    try:
        return os.read(fd, limit).decode("utf-8", "replace").strip()
    except OSError:
        return ""
    finally:
        os.close(fd)


@contextlib.contextmanager
def folder_lock(
    path: Path,
    *,
    timeout: float,
    busy: Callable[[str], Exception],
    failed: Callable[[OSError], Exception],
    note: bytes | None = None,
    remove: bool = False,
) -> Iterator[None]:
    """Hold the lock file `path`; `busy(holder's note)` after `timeout` seconds, `failed(OSError)` when it cannot be opened."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - non-POSIX: no locking
        yield
        return
    deadline = time.monotonic() + timeout
    while True:
        try:
            fd = os.open(path, os.O_RDWR | os.O_CREAT | NOFOLLOW, 0o644)
        except OSError as exc:
            raise failed(exc) from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            if time.monotonic() >= deadline:
                raise busy(read_note(path)) from None
            time.sleep(0.05)
            continue
        except OSError as exc:
            os.close(fd)
            raise failed(exc) from None
        if remove:  # the holder before us may have removed the file we locked: lock the one at `path`
            try:
                same = os.stat(path, follow_symlinks=False).st_ino == os.fstat(fd).st_ino
            except OSError:
                same = False
            if not same:
                os.close(fd)
                continue
        break
    try:
        if note is not None:
            with contextlib.suppress(OSError):
                os.ftruncate(fd, 0)
                os.pwrite(fd, note, 0)
        yield
    finally:
        if remove:
            with contextlib.suppress(OSError):
                os.unlink(path)
        os.close(fd)  # closing releases the lock
