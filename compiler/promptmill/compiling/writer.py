"""Write a build atomically, deterministically and under a lock.

Layout: `build/manifest.json` plus one bundle per role under `build/roles/`,
named by role id and content hash (`roles/executor.3f2a9c1b0d4e.json`). A new
build writes its bundles first (each to a temporary file, flushed, then renamed
into place), then replaces `manifest.json` in one rename, and only then removes
files the new manifest no longer lists (temporary files of a killed compile
included). A reader therefore always sees the old
manifest with all its files, or the new one with all of its files; a compile
killed at any moment leaves one of the two, and the next complete compile
removes whatever the killed one left behind. A lock file (`build/.lock`, an
advisory `flock` the kernel releases when its holder dies) serializes
compiles: `api.compile` holds it from reading the old manifest to the end of
the garbage collection, so a concurrent compile never deletes a bundle this
one is about to reuse. tests/test_crash.py kills compiles at random moments.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

from ..core.errors import PromptmillError

LOCK_NAME = ".lock"
LOCK_TIMEOUT = 60.0
TMP_PREFIX = ".tmp-"
FILE_MODE = 0o644  # mkstemp creates 0600; a build is read by services running as other users


def unwritable(build_dir: Path, exc: OSError) -> PromptmillError:
    """PM014 for a build folder that cannot be created or written."""
    reason = "it is a file, not a folder" if build_dir.exists() and not build_dir.is_dir() else exc.strerror or str(exc)
    where = f" ({exc.filename})" if exc.filename and str(exc.filename) != str(build_dir) else ""
    return PromptmillError(
        f"cannot write the build folder {build_dir}: {reason}{where}",
        code="PM014",
        hint="compile into a folder you can write (`-o DIR`, or `build:` in promptmill.yaml)",
    )


def bundle_path(role_id: str, data: bytes) -> str:
    """Relative, content-addressed file name of a role's bundle."""
    digest = hashlib.sha256(data).hexdigest()[:12]
    return f"roles/{role_id}.{digest}.json"


@contextlib.contextmanager
def build_lock(build_dir: Path, timeout: float = LOCK_TIMEOUT) -> Iterator[None]:
    """Hold the build folder's lock (POSIX advisory lock; released if the process dies).

    A folder that cannot be created or opened (a file in the way, no permission,
    a read-only file system) is PM014, not a traceback.
    """
    try:
        build_dir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise unwritable(build_dir, exc) from None
    try:
        import fcntl
    except ImportError:  # pragma: no cover - non-POSIX: no locking
        yield
        return
    try:
        fd = os.open(build_dir / LOCK_NAME, os.O_RDWR | os.O_CREAT, 0o644)
    except OSError as exc:
        raise unwritable(build_dir, exc) from None
    try:
        deadline = time.monotonic() + timeout
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() > deadline:
                    raise PromptmillError(
                        f"another compile holds the lock on {build_dir} (waited {timeout:.0f}s)",
                        code="PM012",
                    ) from None
                time.sleep(0.05)
        yield
    finally:
        os.close(fd)  # closing releases the lock


def _fsync_dir(path: Path) -> None:
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:  # pragma: no cover - platform without directory fds
        return
    try:
        os.fsync(fd)
    except OSError:  # pragma: no cover
        pass
    finally:
        os.close(fd)


def atomic_write(path: Path, data: bytes, *, durable: bool = False) -> None:
    """Write `data` to `path` so that readers see the old or the new content, never a part.

    A rename is atomic for other processes, also when this one is killed. With
    `durable` the data is also flushed to disk before the rename (power loss);
    bundles do without, since they are content-addressed and hash-checked on load.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=TMP_PREFIX, dir=path.parent)
    try:
        with contextlib.suppress(OSError):  # not every platform or filesystem has modes
            os.fchmod(fd, FILE_MODE)
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            if durable:
                fh.flush()
                os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    if durable:
        _fsync_dir(path.parent)


def write_build(build_dir: Path, files: dict[str, bytes], manifest: bytes) -> list[str]:
    """Install a build under the lock: `files` maps relative paths to bytes. Returns removed stale paths."""
    build_dir = Path(build_dir)
    with build_lock(build_dir):
        return install_build(build_dir, files, manifest)


def install_build(build_dir: Path, files: dict[str, bytes], manifest: bytes) -> list[str]:
    """Install a build; the caller holds `build_lock(build_dir)`. Returns removed stale paths.

    A write that fails (disk full, no permission, a folder in the way) is PM014;
    the manifest is written last, so the previous build stays loadable.
    """
    build_dir = Path(build_dir)
    try:
        for rel, data in sorted(files.items()):
            target = build_dir / rel
            if target.is_file() and target.read_bytes() == data:
                continue
            atomic_write(target, data)
        atomic_write(build_dir / "manifest.json", manifest, durable=True)
    except OSError as exc:
        raise unwritable(build_dir, exc) from None
    return _collect_garbage(build_dir, set(files))


def _collect_garbage(build_dir: Path, keep: set[str]) -> list[str]:
    removed = []
    for path in sorted(build_dir.glob(TMP_PREFIX + "*")):  # a manifest write that was killed
        with contextlib.suppress(OSError):
            path.unlink()
            removed.append(path.name)
    for sub in ("roles", "tokenizers"):
        root = build_dir / sub
        if not root.is_dir():
            continue
        for path in sorted(root.rglob("*"), reverse=True):
            rel = path.relative_to(build_dir).as_posix()
            if path.is_dir():
                with contextlib.suppress(OSError):
                    path.rmdir()  # only empty folders go
                continue
            if rel not in keep:
                with contextlib.suppress(OSError):
                    path.unlink()
                    removed.append(rel)
    return removed


def stale_files(build_dir: Path, files: dict[str, bytes], manifest: bytes) -> list[str]:
    """Relative paths whose content in `build_dir` differs from what a compile would write."""
    build_dir = Path(build_dir)
    stale = []
    for rel, data in sorted({**files, "manifest.json": manifest}.items()):
        path = build_dir / rel
        if not path.is_file() or path.read_bytes() != data:
            stale.append(rel)
    for sub in ("roles", "tokenizers"):
        root = build_dir / sub
        if root.is_dir():
            for path in sorted(root.rglob("*")):
                rel = path.relative_to(build_dir).as_posix()
                if path.is_file() and rel not in files:
                    stale.append(rel)
    return stale
