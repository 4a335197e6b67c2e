"""One side of `promptmill diff`: a project folder as it is, or as a git revision holds it.

A revision is read from git's objects (`git ls-tree` and `git cat-file --batch`) into a
temporary folder that is removed afterwards: the working tree, the index and the
branches are never touched. Only blobs are written (links and submodules are
skipped), each at a path checked to stay inside the temporary folder.
"""

from __future__ import annotations

import os
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path, PurePosixPath

from ..core.errors import ConfigError, PromptmillError

WORKING_TREE = "working tree"


class RevisionError(PromptmillError):
    """BASE or HEAD of `promptmill diff` is neither a folder nor a revision git can read (PM016)."""

    code = "PM016"


def _git(args: list[str], cwd: Path, *, data: bytes | None = None) -> bytes:
    try:
        done = subprocess.run(["git", *args], cwd=cwd, input=data, capture_output=True, check=False)
    except OSError as exc:
        raise RevisionError(f"cannot run git: {exc.strerror or exc}", hint="install git, or compare two folders") from None
    if done.returncode != 0:
        raise RevisionError(f"git {args[0]} failed: {done.stderr.decode('utf-8', 'replace').strip()}")
    return done.stdout


def repository_root(folder: Path) -> Path | None:
    """The top of the git work tree holding `folder`, or None when it is in none."""
    done = subprocess.run(["git", "rev-parse", "--show-toplevel"], cwd=folder, capture_output=True, check=False)
    return Path(done.stdout.decode().strip()).resolve() if done.returncode == 0 else None


def resolve_revision(spec: str, folder: Path) -> str:
    """The commit `spec` names in the repository of `folder` (PM016 when it names none)."""
    if repository_root(folder) is None:
        raise RevisionError(
            f"{spec}: not a folder, and {folder} is not inside a git repository", hint="give two folders, or run in a git checkout"
        )
    if spec.startswith("-"):
        raise RevisionError(f"{spec}: not a revision (it starts with '-')")
    done = subprocess.run(["git", "rev-parse", "--verify", "--quiet", f"{spec}^{{commit}}"], cwd=folder, capture_output=True, check=False)
    if done.returncode != 0:
        raise RevisionError(
            f"{spec}: not a folder, and not a revision of the repository at {folder}",
            hint="give a commit, branch or tag (`git log --oneline` lists commits), or a folder",
        )
    return done.stdout.decode().strip()


def extract(commit: str, repo: Path, into: Path) -> None:
    """Write the files of `commit` under `into` from git's objects (blobs only)."""
    listing = _git(["ls-tree", "-r", "-z", "--full-tree", commit], repo)
    blobs: list[tuple[str, str, str]] = []
    for entry in listing.split(b"\0"):
        if not entry:
            continue
        meta, _, name = entry.partition(b"\t")
        mode, kind, sha = meta.decode().split(" ")
        path = name.decode("utf-8", "surrogateescape")
        parts = PurePosixPath(path).parts
        if kind != "blob" or mode == "120000" or not parts or any(p in ("", ".", "..") for p in parts) or path.startswith("/"):
            continue
        blobs.append((mode, sha, path))
    out = _git(["cat-file", "--batch"], repo, data="".join(f"{sha}\n" for _, sha, _ in blobs).encode())
    pos = 0
    for mode, sha, path in blobs:
        head_end = out.index(b"\n", pos)
        got, _, size = out[pos:head_end].decode().split(" ")
        assert got == sha
        start = head_end + 1
        content = out[start : start + int(size)]
        pos = start + int(size) + 1
        target = into.joinpath(*PurePosixPath(path).parts)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(content)
        if mode == "100755":
            os.chmod(target, 0o755)


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
def side(spec: str | None, project: Path) -> Iterator[tuple[Path, str]]:
    """(the project folder to render, its label) for one side of a diff: the working tree when
    `spec` is None, the folder `spec` names when it is one, else the revision, read into a
    temporary folder removed on exit."""
    if spec is None:
        yield project, WORKING_TREE
        return
    if Path(spec).is_dir():
        _refuse_build_folder(spec, Path(spec))
        yield Path(spec).resolve(), spec
        return
    commit = resolve_revision(spec, project)
    repo = repository_root(project)
    assert repo is not None
    rel = project.resolve().relative_to(repo)
    with tempfile.TemporaryDirectory(prefix="promptmill-diff-") as tmp:
        extract(commit, repo, Path(tmp))
        folder = Path(tmp).joinpath(*rel.parts)
        if not folder.is_dir():
            raise RevisionError(f"{spec}: the revision has no folder {rel.as_posix() or '.'}")
        yield folder, spec
