"""One side of `promptmill diff`: a project folder as it is, or as a git revision holds it.

A revision is read from git's objects into a temporary folder that is removed afterwards:
the working tree, the index and the branches are never touched. Only the project's own
files are read (`git ls-tree` limited to the project's folder), one blob at a time
(`git cat-file --batch`), each at most `REVISION_FILE_LIMIT` bytes: memory is bounded
by the largest file of the project, not by the repository. A larger file is not read and
is named in the diff's notes. Only blobs are written (links and submodules are skipped),
each through `core.userfiles` at a path checked to stay inside the temporary folder. A name
longer than the file system allows is PM022; git not installed is PM020.
"""

from __future__ import annotations

import errno
import os
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from ..core.boundary import os_error
from ..core.errors import ConfigError, PromptmillError
from ..core.userfiles import MiB, write_bytes

WORKING_TREE = "working tree"
REVISION_FILE_LIMIT = 16 * MiB  # above every file a render reads (templates 1 MiB, states 8 MiB)
GIT_HINT = "install git (e.g. `apt-get install git`), or compare two folders: `promptmill diff OLD_FOLDER NEW_FOLDER`"


class RevisionError(PromptmillError):
    """BASE or HEAD of `promptmill diff` is neither a folder nor a revision git can read (PM016)."""

    code = "PM016"


@dataclass
class Side:
    """One side of a diff: the folder to render, its label, and the files of the revision not read."""

    folder: Path
    label: str
    skipped: list[tuple[str, int]] = field(default_factory=list)  # (path in the project, size) over the cap


def _git_missing() -> PromptmillError:
    return PromptmillError("git is not installed or not on PATH: `promptmill diff` reads revisions with git", code="PM020", hint=GIT_HINT)


def _spawn(args: list[str], cwd: Path, **kwargs: object) -> subprocess.Popen[bytes]:
    try:
        return subprocess.Popen(["git", *args], cwd=cwd, **kwargs)  # type: ignore[call-overload]
    except FileNotFoundError as exc:
        if exc.filename in ("git", None):
            raise _git_missing() from None
        raise
    except OSError as exc:
        found = os_error(exc, "running git")
        raise found if found is not None else RevisionError(f"cannot run git: {exc.strerror or exc}", hint=GIT_HINT) from None


def _run(args: list[str], cwd: Path) -> subprocess.CompletedProcess[bytes]:
    proc = _spawn(args, cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL)
    out, err = proc.communicate()
    return subprocess.CompletedProcess(args, proc.returncode, out, err)


def _git(args: list[str], cwd: Path) -> bytes:
    done = _run(args, cwd)
    if done.returncode != 0:
        raise RevisionError(f"git {args[0]} failed: {done.stderr.decode('utf-8', 'replace').strip()}")
    return done.stdout


def repository_root(folder: Path) -> Path | None:
    """The top of the git work tree holding `folder`, or None when it is in none."""
    done = _run(["rev-parse", "--show-toplevel"], folder)
    return Path(os.fsdecode(done.stdout.strip())).resolve() if done.returncode == 0 else None


def resolve_revision(spec: str, folder: Path) -> str:
    """The commit `spec` names in the repository of `folder` (PM016 when it names none)."""
    if repository_root(folder) is None:
        raise RevisionError(
            f"{spec}: not a folder, and {folder} is not inside a git repository", hint="give two folders, or run in a git checkout"
        )
    if spec.startswith("-"):
        raise RevisionError(f"{spec}: not a revision (it starts with '-')")
    done = _run(["rev-parse", "--verify", "--quiet", f"{spec}^{{commit}}"], folder)
    if done.returncode != 0:
        raise RevisionError(
            f"{spec}: not a folder, and not a revision of the repository at {folder}",
            hint="give a commit, branch or tag (`git log --oneline` lists commits), or a folder",
        )
    return done.stdout.decode().strip()


def listing(commit: str, repo: Path, rel: PurePosixPath) -> list[tuple[str, int, str]]:
    """(sha, size, path from the repository's top) of each blob under `rel` at `commit`."""
    spec = ["--", f"{rel.as_posix()}/"] if rel.parts else []
    out = _git(["--literal-pathspecs", "ls-tree", "-r", "-z", "-l", "--full-tree", commit, *spec], repo)
    blobs = []
    for entry in out.split(b"\0"):
        if not entry:
            continue
        meta, _, name = entry.partition(b"\t")
        mode, kind, sha, size = meta.decode().split()
        path = os.fsdecode(name)
        parts = PurePosixPath(path).parts
        if kind != "blob" or mode == "120000" or not parts or any(p in ("", ".", "..") for p in parts) or path.startswith("/"):
            continue
        blobs.append((sha, int(size), path))
    return blobs


def extract(commit: str, repo: Path, rel: PurePosixPath, into: Path, label: str) -> list[tuple[str, int]]:
    """Write the files under `rel` of `commit` into `into` from git's objects, one blob at a time;
    the (path, size) of each file over REVISION_FILE_LIMIT, which is not read."""
    blobs, skipped = [], []
    for sha, size, path in listing(commit, repo, rel):
        if size > REVISION_FILE_LIMIT:
            skipped.append((PurePosixPath(path).relative_to(rel).as_posix(), size))
        else:
            blobs.append((sha, size, path))
    if not blobs:
        return skipped
    proc = _spawn(["cat-file", "--batch"], repo, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    assert proc.stdin is not None and proc.stdout is not None
    try:
        for sha, size, path in blobs:
            proc.stdin.write(f"{sha}\n".encode())
            proc.stdin.flush()
            head = proc.stdout.readline().split()
            if len(head) != 3 or head[0].decode() != sha or int(head[2]) != size:
                raise RevisionError(f"{label}: git cat-file answered {b' '.join(head).decode('utf-8', 'replace')!r} for {path}")
            content = proc.stdout.read(size)
            proc.stdout.read(1)  # the newline after the content
            _put(into, path, content, label)
    finally:
        proc.stdin.close()
        proc.stdout.close()
        proc.wait()
    return skipped


def _put(into: Path, path: str, content: bytes, label: str) -> None:
    target = into.joinpath(*PurePosixPath(path).parts)
    try:
        write_bytes(target, content, root=into, what="file of the revision")
    except OSError as exc:
        if exc.errno == errno.ENAMETOOLONG:
            raise PromptmillError(
                f"{label}: {path}: a file name in the revision is longer than this file system allows; "
                "promptmill diff cannot read the revision",
                code="PM022",
                hint="shorten the name in the repository, or compare two folders: `promptmill diff OLD_FOLDER NEW_FOLDER`",
            ) from None
        found = os_error(exc, f"reading {path} of {label} into a temporary folder")
        raise found if found is not None else exc from None


def _refuse_build_folder(spec: str, folder: Path) -> None:
    """PM011 for a build folder (the build manifest, no promptmill.yaml, no prompts/): `diff`
    renders from templates and example states, and a build folder holds neither."""
    if (folder / "manifest.json").is_file() and not (folder / "promptmill.yaml").is_file() and not (folder / "prompts").is_dir():
        raise ConfigError(
            f"{spec}: a build folder, not a project: `promptmill diff` renders from a project's templates and example states, "
            "which a build folder does not hold",
            code="PM011",
            hint="give the project folder the build came from, or a git revision",
        )


@contextmanager
def side(spec: str | None, project: Path) -> Iterator[Side]:
    """The project folder to render for one side of a diff: the working tree when `spec` is None,
    the folder `spec` names when it is one, else the revision, read into a temporary folder
    removed on exit."""
    if spec is None:
        yield Side(project, WORKING_TREE)
        return
    if Path(spec).is_dir():
        _refuse_build_folder(spec, Path(spec))
        yield Side(Path(spec).resolve(), spec)
        return
    commit = resolve_revision(spec, project)
    repo = repository_root(project)
    assert repo is not None
    rel = PurePosixPath(*project.resolve().relative_to(repo).parts)
    with tempfile.TemporaryDirectory(prefix="promptmill-diff-") as tmp:
        skipped = extract(commit, repo, rel, Path(tmp), spec)
        folder = Path(tmp).joinpath(*rel.parts)
        if not folder.is_dir():
            raise RevisionError(f"{spec}: the revision has no folder {rel.as_posix() or '.'}")
        yield Side(folder, spec, skipped)
