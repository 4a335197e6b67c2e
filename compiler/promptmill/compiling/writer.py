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
from collections.abc import Iterator
from pathlib import Path

from ..core import userfiles
from ..core.errors import PromptmillError
from ..core.filelock import folder_lock

LOCK_NAME = ".lock"
LOCK_TIMEOUT = 60.0
TMP_PREFIX = userfiles.TMP_PREFIX


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


def check_build_folder(build_dir: Path, project_root: Path, *, named: bool) -> None:
    """PM017 when the build folder would lie outside the project once links are followed.

    The folder from `build:` (or the default `build/`) must stay inside the project:
    a cloned repository whose `build` links to another project must not get
    files written or removed there. A folder the user names with `-o` is theirs
    when it lies outside the project as typed (`-o /srv/app/prompts`); typed
    inside the project, a link on its way out (`-o linked/build`) is PM017 too.
    """
    build, root = Path(os.path.abspath(build_dir)), Path(project_root)
    if named and not build.is_relative_to(root) and not build.is_relative_to(os.path.realpath(root)):
        return
    if not named and not build.is_relative_to(root):
        raise userfiles.PathOutsideError(
            f"{build.as_posix()}: the build folder lies outside the project {root.as_posix()}",
            hint="set `build:` to a folder inside the project, or name a folder elsewhere with `-o DIR`",
        )
    probe = build
    while not os.path.lexists(probe) and probe != probe.parent:
        probe = probe.parent  # the deepest part that exists decides where the folder lands
    if not userfiles.is_inside(probe, root):
        raise userfiles.PathOutsideError(
            f"{build_dir}: the build folder is behind a symbolic link that leads out of the project {root.as_posix()}"
            f" ({probe.as_posix()} leads to {os.path.realpath(probe)})",
            hint="promptmill writes a build only inside the project, or into a folder you name outside it with `-o`; remove the link",
        )


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
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))  # the folder itself, to flush its entries
    except OSError:  # pragma: no cover - platform without directory fds
        return
    try:
        os.fsync(fd)
    except OSError:  # pragma: no cover
        pass
    finally:
        os.close(fd)


def atomic_write(path: Path, data: bytes, *, durable: bool = False, root: Path | None = None) -> None:
    """Write `data` to `path` so that readers see the old or the new content, never a part.

    `userfiles.write_bytes` inside `root` (default: the file's folder): a temporary
    file, then one rename, never through a link. With `durable` the data and the
    folder entry are also flushed to disk (power loss); bundles do without, since
    they are content-addressed and hash-checked on load.
    """
    userfiles.write_bytes(path, data, root=root if root is not None else path.parent, durable=durable, what="build file")
    if durable:
        _fsync_dir(path.parent)


def _holds(path: Path, data: bytes, root: Path) -> bool:
    """Does the build file `path` (a regular file inside `root`) already hold exactly `data`?"""
    try:
        return userfiles.read_bytes(path, limit=len(data), root=root, what="build file") == data
    except PromptmillError:  # missing, too large, a link out, not a regular file: not the same
        return False


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
            if _holds(target, data, build_dir):
                continue
            atomic_write(target, data, root=build_dir)
        atomic_write(build_dir / "manifest.json", manifest, durable=True, root=build_dir)
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
            data = userfiles.read_bytes(build_dir / rel, root=build_dir, what="build file")
        except PromptmillError:  # a link out of the build, a FIFO, unreadable: not ours to remove
            return False
        return hashlib.sha256(data).hexdigest()[:length] == match.group(1)
    return False


def _collect_garbage(build_dir: Path, keep: set[str], owned: frozenset[str] = frozenset()) -> list[str]:
    removed = []
    for path in sorted(build_dir.glob(TMP_PREFIX + "*")):  # a manifest write that was killed
        if _TMP_NAME.fullmatch(path.name):
            with contextlib.suppress(OSError, PromptmillError):
                if userfiles.remove(path, root=build_dir):  # a regular file inside the build, never a link
                    removed.append(path.name)
    emptied: set[Path] = set()
    for rel in _build_files(build_dir):
        if rel not in keep and written_by_promptmill(build_dir, rel, owned):
            with contextlib.suppress(OSError, PromptmillError):
                if userfiles.remove(build_dir / rel, root=build_dir):
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
        if not _holds(build_dir / rel, data, build_dir):
            stale.append(rel)
    stale.extend(rel for rel in _build_files(build_dir) if rel not in files and written_by_promptmill(build_dir, rel, owned))
    return stale
