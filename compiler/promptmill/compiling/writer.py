"""Write a build atomically, deterministically and under a lock.

Layout: `build/manifest.json` plus one bundle per role under `build/roles/`,
named by role id and content hash (`roles/executor.3f2a9c1b0d4e.json`). A new
build writes its bundles first (each to a temporary file, flushed, then renamed
into place), then replaces `manifest.json` in one rename, and only then removes
files the new manifest no longer lists (temporary files of a killed compile
included), and of those only files promptmill wrote: a bundle or tokenizer
named by its content hash, or one the previous manifest listed. A template or
any other file in the folder is never deleted. A reader therefore always sees the old
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
import re
import tempfile
from collections.abc import Iterator
from pathlib import Path

from ..core.errors import PromptmillError
from ..core.filelock import folder_lock

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
    with folder_lock(
        build_dir / LOCK_NAME,
        timeout=timeout,
        busy=lambda _holder: PromptmillError(f"another compile holds the lock on {build_dir} (waited {timeout:.0f}s)", code="PM012"),
        failed=lambda exc: unwritable(build_dir, exc),
    ):
        yield


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


def write_build(build_dir: Path, files: dict[str, bytes], manifest: bytes, owned: frozenset[str] = frozenset()) -> list[str]:
    """Install a build under the lock: `files` maps relative paths to bytes. Returns removed stale paths."""
    build_dir = Path(build_dir)
    with build_lock(build_dir):
        return install_build(build_dir, files, manifest, owned)


def install_build(build_dir: Path, files: dict[str, bytes], manifest: bytes, owned: frozenset[str] = frozenset()) -> list[str]:
    """Install a build; the caller holds `build_lock(build_dir)`. Returns removed stale paths.

    A write that fails (disk full, no permission, a folder in the way) is PM014;
    the manifest is written last, so the previous build stays loadable.
    `owned` holds the paths the previous manifest listed; garbage collection
    removes only files promptmill wrote (see `written_by_promptmill`).
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
    return _collect_garbage(build_dir, set(files), owned)


_TMP_NAME = re.compile(re.escape(TMP_PREFIX) + r"[a-z0-9_]{8}")  # tempfile.mkstemp's names
_BUNDLE_NAME = re.compile(r"roles/(?:[A-Za-z0-9][A-Za-z0-9_.-]*/)*[A-Za-z0-9][A-Za-z0-9_.-]*\.([0-9a-f]{12})\.json")
_TOKENIZER_NAME = re.compile(r"tokenizers/([0-9a-f]{16})\.json")


def written_by_promptmill(build_dir: Path, rel: str, owned: frozenset[str] | set[str] = frozenset()) -> bool:
    """True when the build file `rel` is one promptmill writes, so garbage collection may remove it.

    A temporary file of a killed write (`.tmp-` and mkstemp's 8 characters), or
    a file named like a bundle (`roles/<id>.<hash>.json`) or a shipped tokenizer
    (`tokenizers/<hash>.json`) that the previous manifest listed or whose
    content hashes to its name. Anything else, a template or someone's notes in
    a folder they pointed `-o` at, is never touched.
    """
    if _TMP_NAME.fullmatch(rel.rsplit("/", 1)[-1]):
        return True
    for pattern, length in ((_BUNDLE_NAME, 12), (_TOKENIZER_NAME, 16)):
        match = pattern.fullmatch(rel)
        if match is None:
            continue
        if rel in owned:
            return True
        try:
            return hashlib.sha256((build_dir / rel).read_bytes()).hexdigest()[:length] == match.group(1)
        except OSError:
            return False
    return False


def _collect_garbage(build_dir: Path, keep: set[str], owned: frozenset[str] = frozenset()) -> list[str]:
    removed = []
    for path in sorted(build_dir.glob(TMP_PREFIX + "*")):  # a manifest write that was killed
        if _TMP_NAME.fullmatch(path.name) and path.is_file():
            with contextlib.suppress(OSError):
                path.unlink()
                removed.append(path.name)
    emptied: set[Path] = set()
    for rel in _build_files(build_dir):
        if rel not in keep and written_by_promptmill(build_dir, rel, owned):
            with contextlib.suppress(OSError):
                (build_dir / rel).unlink()
                removed.append(rel)
                emptied.add((build_dir / rel).parent)
    for folder in sorted(emptied, key=lambda p: len(p.parts), reverse=True):  # only folders this emptied
        while folder != build_dir and folder.is_relative_to(build_dir):
            try:
                folder.rmdir()
            except OSError:
                break
            folder = folder.parent
    return removed


def _build_files(build_dir: Path) -> list[str]:
    """Relative paths of the regular files under the build's `roles/` and `tokenizers/`."""
    out: list[str] = []
    for sub in ("roles", "tokenizers"):
        root = build_dir / sub
        if root.is_dir() and not root.is_symlink():
            out.extend(p.relative_to(build_dir).as_posix() for p in root.rglob("*") if p.is_file() and not p.is_symlink())
    return sorted(out)


def stale_files(build_dir: Path, files: dict[str, bytes], manifest: bytes, owned: frozenset[str] = frozenset()) -> list[str]:
    """Relative paths whose content in `build_dir` differs from what a compile would write."""
    build_dir = Path(build_dir)
    stale = []
    for rel, data in sorted({**files, "manifest.json": manifest}.items()):
        path = build_dir / rel
        if not path.is_file() or path.read_bytes() != data:
            stale.append(rel)
    stale.extend(rel for rel in _build_files(build_dir) if rel not in files and written_by_promptmill(build_dir, rel, owned))
    return stale
