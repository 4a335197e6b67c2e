"""The snapshot files on disk: which are promptmill's, what is wrong with a damaged one, and
writing and removing them through the one guard (`promptmill.core.userfiles`).

The rules (docs/hostile-review.md):

- Every read, write and removal stays inside the *guard root*: the project root, or the
  folder `--out` names (the user's own choice). A snapshots folder (or a `snapshots/ROLE`
  folder, or a snapshot file) that is a symbolic link out of it is PM017, found before
  anything is written or removed.
- Reads take regular files only, at most `SNAPSHOT_LIMIT` bytes (PM100, PM105).
- What proves a file is promptmill's: its first bytes are the mark `# promptmill snapshot`
  (every file promptmill writes there starts with it, and is written in one rename, so
  it is never left half-written). A file at the exact path of a current case's snapshot
  (`SNAPSHOTS/ROLE/STEM.txt`) that is empty or not UTF-8 text also counts as a damaged
  snapshot of promptmill's: nobody keeps notes there in that form, and rewriting it loses
  nothing readable. Anything else (text without the mark, a link, a FIFO, a device, a
  folder, a file over the limit) is not promptmill's: it is never overwritten or removed.
"""

from __future__ import annotations

import errno
import os
import stat
from dataclasses import dataclass
from pathlib import Path

from ..core import userfiles
from ..core.boundary import os_error
from ..core.errors import ConfigError, PromptmillError
from ..core.userfiles import MiB, PathOutsideError, read_bytes, write_text
from ..source.examples import example_stem

SUFFIX = ".txt"
MARK = "# promptmill snapshot"  # the first line of every file promptmill writes there; nothing else is removed
SNAPSHOT_LIMIT = 16 * MiB  # the largest snapshot file read or written
MAX_DEPTH = 8  # folders below the snapshots folder looked into for obsolete snapshots (more when a role id is deeper)
REPAIR_HINT = "run `promptmill test --update` (or `promptmill snapshot`): it rewrites the snapshot"
BLOCKED_HINT = "move it aside (promptmill never overwrites or removes a file it did not write), or choose another folder with `snapshots:`"


def key(path: Path | str) -> Path:
    """A path as the scan and the cases both name it: absolute, `..` resolved lexically, links not followed."""
    return Path(os.path.abspath(path))


@dataclass(frozen=True)
class Existing:
    """A file where a snapshot is or goes: its text when it is a sound snapshot, else the problem."""

    path: Path
    shown: str
    text: str | None = None  # a sound snapshot promptmill wrote
    ours: bool = False  # promptmill's to rewrite or remove (see the module's rules)
    problem: PromptmillError | None = None
    raw: bytes = b""

    @property
    def damaged(self) -> bool:
        """promptmill's, but not a sound snapshot: `test --update` rewrites it."""
        return self.ours and self.problem is not None

    @property
    def before(self) -> str:
        """The text to show in a diff (a damaged file with its bad bytes replaced)."""
        return self.text if self.text is not None else self.raw.decode("utf-8", "replace")


def shown_path(path: Path, root: Path) -> str:
    path = key(path)
    return path.relative_to(root).as_posix() if path.is_relative_to(root) else path.as_posix()


def folder_problem(path: Path, guard: Path, root: Path, what: str = "snapshots folder") -> PathOutsideError | None:
    """PM017 when `path`'s deepest existing part lies outside `guard` after links (or lexically)."""
    probe = key(path)
    while not os.path.lexists(probe) and probe != probe.parent:
        probe = probe.parent
    if key(path).is_relative_to(key(guard)):
        if userfiles.is_inside(probe, guard) or not os.path.lexists(key(guard)):
            return None  # inside after links, or below a --out folder not made yet (nothing below it exists)
    real = Path(os.path.realpath(probe)).as_posix()
    place = "the project" if key(guard) == key(root) else shown_path(guard, root)
    if not key(path).is_relative_to(key(guard)):
        why = f"lies outside {place}"
    else:
        why = f"is behind a symbolic link that leads out of {place} (to {real})"
    return PathOutsideError(
        f"{shown_path(path, root)}: the {what} {why}",
        hint="promptmill reads and writes snapshots only inside the project (or the folder --out names); remove the link, "
        "or name a folder inside the project",
    )


def inspect(path: Path, guard: Path, root: Path, *, case_path: bool) -> Existing | None:
    """What is at `path` (None: nothing). `case_path`: the exact path of a current case's snapshot."""
    shown = shown_path(path, root)
    try:
        info = os.lstat(path)
    except OSError:
        return None
    if stat.S_ISLNK(info.st_mode):
        return Existing(
            path,
            shown,
            problem=PathOutsideError(
                f"{shown}: the snapshot is a symbolic link; promptmill does not read or write snapshots through links",
                hint="remove the link; promptmill then writes a file of its own there",
            ),
        )
    try:
        raw = read_bytes(path, limit=SNAPSHOT_LIMIT, root=guard, what="snapshot")
    except PromptmillError as exc:  # a FIFO, a device, a folder, over the limit, unreadable, behind a link out
        said = exc.message.replace(path.as_posix(), shown, 1)
        problem = type(exc)(said, code=exc.code, hint=BLOCKED_HINT if exc.code in ("PM100", "PM105") else exc.hint)
        return Existing(path, shown, problem=problem)
    marked = raw.startswith(MARK.encode())
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as err:
        line = raw.count(b"\n", 0, err.start) + 1
        col = err.start - (raw.rfind(b"\n", 0, err.start) + 1) + 1
        problem = PromptmillError(
            f"{shown}:{line}:{col}: the snapshot is damaged: it is not UTF-8 text (byte 0x{raw[err.start]:02X})",
            code="PM102",
            hint=REPAIR_HINT if marked or case_path else BLOCKED_HINT,
        )
        return Existing(path, shown, ours=marked or case_path, problem=problem, raw=raw)
    if marked:
        return Existing(path, shown, text=text, ours=True, raw=raw)
    if case_path and not raw:
        problem = PromptmillError(f"{shown}: the snapshot is damaged: the file is empty", code="PM010", hint=REPAIR_HINT)
        return Existing(path, shown, ours=True, problem=problem, raw=raw)
    return Existing(
        path,
        shown,
        problem=ConfigError(
            f"{shown}: not a snapshot promptmill wrote (it does not start with `{MARK}`); not overwriting it",
            code="PM010",
            hint=BLOCKED_HINT,
        ),
    )


def scan(folder: Path, cases: list[Path], guard: Path, root: Path) -> tuple[dict[Path, Existing | None], dict[Path, Existing]]:
    """(what is at each case's path, the other snapshot files promptmill wrote under `folder`).

    The folder is walked without following links; a case's path is looked at directly, so a
    `snapshots/ROLE` link shows as PM017 at that case."""
    at_cases: dict[Path, Existing | None] = {}
    for path in cases:
        found = inspect(path, guard, root, case_path=True)
        if found is None:
            problem = folder_problem(path.parent, guard, root, "folder of the snapshot") or _file_in_the_way(path.parent, root)
            found = Existing(path, shown_path(path, root), problem=problem) if problem is not None else None
        at_cases[key(path)] = found
    others: dict[Path, Existing] = {}
    if os.path.isdir(folder):
        depth = max([MAX_DEPTH] + [len(p.relative_to(key(folder)).parts) for p in at_cases if p.is_relative_to(key(folder))])
        for top, dirs, files in os.walk(folder):
            level = len(Path(top).relative_to(folder).parts) + 1  # the parts of a file's path below the folder
            dirs[:] = sorted(d for d in dirs if level < depth and not d.startswith("."))
            for name in sorted(files):
                path = key(Path(top, name))
                if name.endswith(SUFFIX) and path not in at_cases and not name.startswith(userfiles.TMP_PREFIX):
                    found = inspect(path, guard, root, case_path=False)
                    if found is not None and found.ours and where_it_belongs(found.raw) == Path(top, name).relative_to(folder).as_posix():
                        others[path] = found
    return at_cases, others


def _file_in_the_way(folder: Path, root: Path) -> PromptmillError | None:
    """PM014 when a file (not a folder) is where `folder` or one of its parents goes."""
    probe = key(folder)
    while not os.path.lexists(probe) and probe != probe.parent:
        probe = probe.parent
    if os.path.isdir(probe):
        return None
    return ConfigError(
        f"{shown_path(probe, root)}: a file is where the snapshot's folder goes; promptmill does not replace it",
        code="PM014",
        hint=BLOCKED_HINT,
    )


def where_it_belongs(raw: bytes) -> str | None:
    """`ROLE/STEM.txt`, where promptmill writes the snapshot whose first line is `raw`'s (None: no such line).

    An obsolete snapshot is removed only where promptmill would have written it: a snapshot of
    another folder (`--out` set too high, a copy) sits elsewhere relative to this one, and stays."""
    head = raw.split(b"\n", 1)[0].decode("utf-8", "replace")
    lead = f"{MARK} of role "
    if not head.startswith(lead):
        return None
    role, sep, state = head[len(lead) :].partition(" with ")
    return f"{role}/{example_stem(state)}{SUFFIX}" if sep and role and state else None


def write(path: Path, text: str, guard: Path, shown: str) -> None:
    """Replace the snapshot in one rename, inside `guard` only, never through a link."""
    try:
        write_text(path, text, root=guard, what="snapshot")
    except OSError as exc:
        if exc.errno in (errno.ENAMETOOLONG, errno.ENOSPC, errno.EROFS, errno.EDQUOT):
            found = os_error(exc, f"writing the snapshot {shown}")
            if found is not None:
                raise found from None
        raise ConfigError(f"cannot write the snapshot {shown}: {exc.strerror or exc}", code="PM014") from None


def remove(path: Path, guard: Path, shown: str) -> None:
    try:
        userfiles.remove(path, root=guard)
    except OSError as exc:
        found = os_error(exc, f"removing the obsolete snapshot {shown}")
        raise (
            found if found is not None else ConfigError(f"cannot remove the obsolete snapshot {shown}: {exc.strerror or exc}", code="PM014")
        ) from None
