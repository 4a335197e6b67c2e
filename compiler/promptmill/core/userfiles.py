"""The one guard for every file promptmill reads or writes on a user's behalf.

    text = read_text(path, limit=MiB, root=project_root, what="snapshot")
    write_bytes(root / "snapshots" / "r.snap", data, root=project_root)
    remove(path, root=project_root)

The rules, for every command (compile, snapshot, test, types, diff, batch,
counts, preview, lsp):

- **Reads** take regular files only: a FIFO, a device (`/dev/zero`), a socket
  or a folder is PM100, and the file is opened without blocking, so a FIFO
  with no writer never hangs. At most `limit` bytes are read whatever the file
  claims; a larger file is PM105 naming the file and the limit. With `root`,
  a path whose real location (after every symbolic link) lies outside the
  root's real location is PM017: a link out of the project is never followed.
- **Writes** go to a temporary file beside the target, then one rename, so a
  reader sees the old or the new file, never a part. The target's folder must
  lie inside `root` after every link (a `snapshots` folder that links to
  another project is PM017, checked before anything is created), and the
  target itself is never a symbolic link: promptmill replaces files, it does
  not write through links.
- **Removes** take a regular file inside `root` only (not a link, not a
  folder); the caller decides that it is a file promptmill wrote.
- The operating system's refusals (a full or read-only disk, a name longer
  than the file system allows, no permission) become PM-coded errors with the
  file and the cause (`promptmill.core.boundary`), never PM000.

`tests/test_userfiles_guard.py` walks the package and fails when a module
opens, writes, renames or removes a path without going through this module
(a short list of reviewed exceptions names why each may).
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
import tempfile
from pathlib import Path

from .errors import PromptmillError

NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
NONBLOCK = getattr(os, "O_NONBLOCK", 0)
BINARY = getattr(os, "O_BINARY", 0)
MiB = 1 << 20
DEFAULT_LIMIT = 64 * MiB  # the cap of a read that names none: far above any prompt file, far below the memory
FILE_MODE = 0o644  # mkstemp makes 0600; what promptmill writes is read by other users' services too
TMP_PREFIX = ".tmp-"

PathLike = str | os.PathLike[str]


class PathOutsideError(PromptmillError):
    """A path whose real location lies outside the folder a command works in (PM017)."""

    code = "PM017"


def _real(path: PathLike) -> Path:
    return Path(os.path.realpath(path))


def is_inside(path: PathLike, root: PathLike) -> bool:
    """Does `path`'s real location (after every link) lie inside `root`'s real location?"""
    return _real(path).is_relative_to(_real(root))


def check_inside(path: PathLike, root: PathLike, *, what: str = "file") -> Path:
    """`path`'s real location, or PM017 when a symbolic link takes it outside `root`."""
    real = _real(path)
    if not real.is_relative_to(_real(root)):
        raise PathOutsideError(
            f"{Path(path).as_posix()}: the {what} is behind a symbolic link that leads out of {Path(root).as_posix()}"
            f" (to {real.as_posix()})",
            hint="promptmill reads and writes only inside the folder it works in; copy the file in, or remove the link",
        )
    return real


def kind_of(mode: int) -> str:
    """A file type in words: 'a folder', 'a FIFO (named pipe)', 'a device', ..."""
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


def read_bytes(path: PathLike, *, limit: int = DEFAULT_LIMIT, root: PathLike | None = None, what: str = "file") -> bytes:
    """A regular file's bytes, at most `limit`; PM100 (not readable, not a regular file), PM105 (too large), PM017 (outside `root`)."""
    shown = Path(path).as_posix()
    if root is not None:
        check_inside(path, root, what=what)
    try:
        fd = os.open(path, os.O_RDONLY | NONBLOCK | BINARY)
    except OSError as exc:
        raise PromptmillError(f"{shown}: cannot read the {what}: {reason(exc)}", code="PM100") from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise PromptmillError(
                f"{shown}: the {what} is {kind_of(info.st_mode)}; promptmill reads regular files only",
                code="PM100",
                hint="name a regular file",
            )
        if info.st_size > limit:
            raise too_large(shown, what, limit, info.st_size)
        chunks, size = [], 0
        while size <= limit:  # at most limit+1 bytes, whatever fstat said
            chunk = os.read(fd, min(limit + 1 - size, MiB))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
    except OSError as exc:
        raise PromptmillError(f"{shown}: cannot read the {what}: {reason(exc)}", code="PM100") from None
    finally:
        os.close(fd)
    if size > limit:
        raise too_large(shown, what, limit, None)
    return b"".join(chunks)


def read_text(path: PathLike, *, limit: int = DEFAULT_LIMIT, root: PathLike | None = None, what: str = "file") -> str:
    """`read_bytes` decoded as UTF-8; PM102 with the line and column of the first byte that is not."""
    raw = read_bytes(path, limit=limit, root=root, what=what)
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as err:
        line = raw.count(b"\n", 0, err.start) + 1
        col = err.start - (raw.rfind(b"\n", 0, err.start) + 1) + 1
        raise PromptmillError(
            f"{Path(path).as_posix()}:{line}:{col}: the {what} is not UTF-8 text (byte 0x{raw[err.start]:02X})",
            code="PM102",
            hint="save it as UTF-8",
        ) from None


def too_large(shown: str, what: str, limit: int, size: int | None) -> PromptmillError:
    said = f"{size:,} bytes" if size is not None else "larger than that"
    return PromptmillError(
        f"{shown}: the {what} is {said}; the limit is {limit:,} bytes", code="PM105", hint="promptmill reads files up to that size"
    )


def reason(exc: OSError) -> str:
    """An OSError's cause in words, without Python's decoration."""
    if isinstance(exc, FileNotFoundError):
        return "it does not exist"
    if exc.errno == errno.ENAMETOOLONG:
        return "the name is longer than the file system allows"
    if exc.errno == errno.ELOOP:
        return "a symbolic link loops, or the file is a link promptmill does not follow"
    return exc.strerror or str(exc)


def _check_folder(folder: Path, root: Path, what: str) -> None:
    """PM017 unless every existing part of `folder` between `root` and it stays inside `root` after links."""
    real_root = _real(root)
    probe = folder
    while not os.path.lexists(probe) and probe != probe.parent:
        probe = probe.parent  # the deepest part that exists decides where new folders will land
    if not _real(probe).is_relative_to(real_root):
        raise PathOutsideError(
            f"{folder.as_posix()}: the folder for the {what} is behind a symbolic link that leads out of {root.as_posix()}"
            f" (to {_real(probe).as_posix()})",
            hint="promptmill writes only inside the folder it works in; remove the link or name a folder inside it",
        )


def write_bytes(path: PathLike, data: bytes, *, root: PathLike, durable: bool = False, what: str = "file") -> None:
    """Replace `path` with `data` in one rename, inside `root` only, never through a link.

    PM017 for a folder or target outside `root` (after links) or a target that is a
    symbolic link; an OSError (full or read-only disk, permissions, a name too long)
    propagates for the caller's error boundary to name (`boundary.environment_error`).
    """
    target, top = Path(path), Path(root)
    if not os.path.lexists(top):
        top.mkdir(parents=True, exist_ok=True)
    _check_folder(target.parent, top, what)
    if os.path.islink(target):
        raise PathOutsideError(
            f"{target.as_posix()}: the {what} is a symbolic link; promptmill does not write through links",
            hint="remove the link; promptmill then writes a file of its own there",
        )
    target.parent.mkdir(parents=True, exist_ok=True)
    _check_folder(target.parent, top, what)  # a folder swapped for a link while it was made
    fd, tmp = tempfile.mkstemp(prefix=TMP_PREFIX, dir=target.parent)
    try:
        with contextlib.suppress(OSError):  # not every file system has modes
            os.fchmod(fd, FILE_MODE)
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            if durable:
                fh.flush()
                os.fsync(fh.fileno())
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def write_text(path: PathLike, text: str, *, root: PathLike, what: str = "file") -> None:
    """`write_bytes` of UTF-8 text with the newlines as given."""
    write_bytes(path, text.encode("utf-8"), root=root, what=what)


def remove(path: PathLike, *, root: PathLike) -> bool:
    """Remove a regular file inside `root` (not a link, not a folder); False when there was none to remove."""
    target = Path(path)
    _check_folder(target.parent, Path(root), "file")
    try:
        info = os.lstat(target)
    except FileNotFoundError:
        return False
    if not stat.S_ISREG(info.st_mode):
        return False
    os.unlink(target)
    return True


def make_folder(path: PathLike, *, root: PathLike, what: str = "folder") -> Path:
    """Create `path` (and its parents) inside `root`; PM017 when a link would put it outside."""
    folder, top = Path(path), Path(root)
    _check_folder(folder, top, what)
    folder.mkdir(parents=True, exist_ok=True)
    _check_folder(folder, top, what)
    return folder
