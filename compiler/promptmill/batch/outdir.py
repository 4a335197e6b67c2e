"""The `--out` folder of `promptmill batch`: promptmill's own files only, one run at a time.

    with OutputFolder(Path("out")) as outdir:       # PM876, PM875, PM874 before anything is written
        report = outdir.file("report.jsonl")        # written in a private staging folder
        ...
        outdir.publish([*requests, report, summary])  # renamed into place; stale files removed

promptmill never deletes or overwrites a file it did not write. Each run
writes a manifest, `.promptmill-batch.json`, naming every file it published
with its size and SHA-256. A run accepts an `--out` that does not exist, is
empty, or holds exactly the files the manifest there lists, unchanged since;
it replaces those and removes the ones it does not write again. Any other
file (someone's notes, rows.jsonl, a `report.jsonl` promptmill did not write
or that was edited since) makes the run refuse with PM874 before it writes
anything. Files are written in a private folder (`.promptmill-tmp-XXXXXXXX`,
made by `mkdtemp`, mode 0700) and renamed into place at the end; the staging
folder a killed run left behind is removed by the next run when it holds only
files named like promptmill's output.

Publishing first writes a manifest that accepts both the old and the new
version of every file, then renames the files, then writes the manifest of
the new files alone: a run killed at any moment leaves a folder the next run
accepts. A lock, `.promptmill-batch.lock` (an advisory `flock` the kernel
releases when its holder dies, `promptmill.core.filelock`), keeps a second
run out while one writes (PM875, naming its process id and start time); the
lock file is removed when the run ends.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import shutil
import stat
import tempfile
import time
from pathlib import Path
from typing import Any

# promptmill internals this module uses (kept together for the package move)
from ..core import userfiles
from ..core.errors import PromptmillError
from ..core.filelock import NOFOLLOW, folder_lock
from .shards import AtomicFile, write_failed

LOCK = ".promptmill-batch.lock"
MANIFEST = ".promptmill-batch.json"
STAGING_PREFIX = ".promptmill-tmp-"
KIND = "promptmill-batch-output"
SHOWN = 5  # offending files named in PM874
MANIFEST_LIMIT = 64 << 20  # a manifest lists a few files per shard; far more than any run writes

_STAGING = re.compile(re.escape(STAGING_PREFIX) + r"[a-z0-9_]{8}")  # mkdtemp's names
_OUTPUT_NAME = re.compile(r"requests-\d{5}\.jsonl|report\.jsonl|summary\.json|" + re.escape(MANIFEST))

Versions = dict[str, list[dict[str, Any]]]  # file name -> the versions ({bytes, sha256}) promptmill wrote


class FolderNotOurs(PromptmillError):
    """The --out folder holds files promptmill did not write, or that changed since (PM874)."""

    code = "PM874"


class FolderBusy(PromptmillError):
    """Another run writes to the same --out folder (PM875)."""

    code = "PM875"


def _sha256(path: Path) -> str | None:
    try:
        fd = os.open(path, os.O_RDONLY | NOFOLLOW)
    except OSError:
        return None
    digest = hashlib.sha256()
    with os.fdopen(fd, "rb") as fh:
        while block := fh.read(1 << 20):
            digest.update(block)
    return digest.hexdigest()


def _regular_size(path: Path) -> int | None:
    """The size of `path` when it is a regular file (not a link, not a folder), else None."""
    try:
        st = os.lstat(path)
    except OSError:
        return None
    return st.st_size if stat.S_ISREG(st.st_mode) else None


def read_manifest(path: Path) -> Versions | None:
    """The files a manifest lists, or None when it is not a promptmill batch manifest."""
    if _regular_size(path) is None:
        return None
    try:
        data = json.loads(userfiles.read_bytes(path, limit=MANIFEST_LIMIT, root=path.parent, what="batch manifest"))
    except (PromptmillError, ValueError, RecursionError):
        return None
    if not isinstance(data, dict) or data.get("kind") != KIND or not isinstance(data.get("files"), dict):
        return None
    files: Versions = {}
    for name, versions in data["files"].items():
        if not (isinstance(name, str) and _OUTPUT_NAME.fullmatch(name) and isinstance(versions, list)):
            return None
        for v in versions:
            if not (isinstance(v, dict) and isinstance(v.get("bytes"), int) and isinstance(v.get("sha256"), str)):
                return None
        files[name] = versions
    return files


def _holder(note: str) -> str:
    try:
        data = json.loads(note)
        return f" (pid {int(data['pid'])}, started {data['started']})"
    except (ValueError, TypeError, KeyError):
        return ""


class OutputFolder:
    """The --out folder, locked and checked; files staged in a private folder and published together."""

    def __init__(self, folder: Path):
        self.folder = Path(folder)
        self.owned: Versions = {}  # what the previous run's manifest lists (and is still there, unchanged)
        self.staging: Path | None = None
        self._lock: Any = None

    # -- entering: create, lock, check, stage
    def __enter__(self) -> OutputFolder:
        folder = self.folder
        try:
            folder.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            if folder.exists() and not folder.is_dir():
                raise write_failed(folder, OSError(0, "it is a file, not a folder"), "create the output folder") from None
            raise write_failed(folder, exc, "create the output folder") from None
        note = json.dumps({"pid": os.getpid(), "started": time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime())})
        self._lock = folder_lock(
            folder / LOCK,
            timeout=0,
            note=note.encode(),
            remove=True,
            busy=lambda held: FolderBusy(
                f"another promptmill batch run{_holder(held)} is writing to {folder}",
                hint="wait until it ends, or write this run to another --out folder",
            ),
            failed=lambda exc: write_failed(folder / LOCK, exc, "create"),
        )
        self._lock.__enter__()
        try:
            self.owned, leftovers = self._check()
            for old in leftovers:
                shutil.rmtree(old, ignore_errors=True)
            try:
                self.staging = Path(tempfile.mkdtemp(prefix=STAGING_PREFIX, dir=folder))
            except OSError as exc:
                raise write_failed(folder, exc, "write in") from None
        except BaseException:
            self._lock.__exit__(None, None, None)
            raise
        return self

    def _check(self) -> tuple[Versions, list[Path]]:
        """The previous run's files and its leftover staging folders; PM874 for anything else."""
        folder = self.folder
        try:
            names = sorted(os.listdir(folder))
        except OSError as exc:
            raise write_failed(folder, exc, "read") from None
        listed: Versions = {}
        problems: list[str] = []
        if MANIFEST in names:
            manifest = read_manifest(folder / MANIFEST)
            if manifest is None:
                problems.append(f"{MANIFEST} (not a promptmill batch manifest)")
            else:
                listed = manifest
        owned: Versions = {}
        leftovers: list[Path] = []
        for name in names:
            path = folder / name
            if name in (LOCK, MANIFEST):
                continue
            if _STAGING.fullmatch(name) and self._is_leftover(path):
                leftovers.append(path)
            elif name not in listed:
                problems.append(name)
            elif self._unchanged(path, listed[name]):
                owned[name] = listed[name]
            else:
                problems.append(f"{name} (changed since promptmill wrote it)")
        if problems:
            shown = ", ".join(problems[:SHOWN]) + (f" and {len(problems) - SHOWN} more" if len(problems) > SHOWN else "")
            raise FolderNotOurs(
                f"not writing to {folder}: it holds files promptmill did not write there: {shown}",
                hint="use a new or empty folder for --out, or remove these files; promptmill replaces only the files "
                f"its previous run in that folder listed in {MANIFEST}",
            )
        return owned, leftovers

    @staticmethod
    def _unchanged(path: Path, versions: list[dict[str, Any]]) -> bool:
        size = _regular_size(path)
        if size is None or all(v["bytes"] != size for v in versions):
            return False
        digest = _sha256(path)
        return any(v["bytes"] == size and v["sha256"] == digest for v in versions)

    @staticmethod
    def _is_leftover(path: Path) -> bool:
        """A staging folder of a killed run: a real folder holding only files named like promptmill's output."""
        try:
            if not stat.S_ISDIR(os.lstat(path).st_mode):
                return False
            return all(_OUTPUT_NAME.fullmatch(n) and _regular_size(path / n) is not None for n in os.listdir(path))
        except OSError:
            return False

    # -- writing
    def file(self, name: str) -> AtomicFile:
        assert self.staging is not None, "use OutputFolder as a context manager"
        return AtomicFile(self.folder / name, self.staging)

    def _write_manifest(self, files: Versions) -> None:
        data = {"kind": KIND, "version": 1, "files": {name: files[name] for name in sorted(files)}}
        manifest = self.file(MANIFEST)
        try:
            manifest.write((json.dumps(data, indent=1) + "\n").encode("ascii"))
            manifest.publish()
        finally:
            manifest.discard()

    def publish(self, files: list[AtomicFile]) -> None:
        """Rename `files` into place and remove the previous run's files not among them."""
        folder = self.folder
        for f in files:
            f.close()
        new: Versions = {f.path.name: [{"bytes": f.size, "sha256": f.sha256()}] for f in files}
        changed = []  # appeared or changed during the run: not ours to overwrite
        for name in new:
            size = _regular_size(folder / name)
            if name in self.owned:
                if os.path.lexists(folder / name) and (size is None or all(v["bytes"] != size for v in self.owned[name])):
                    changed.append(name)
            elif os.path.lexists(folder / name):
                changed.append(name)
        if changed:
            raise FolderNotOurs(
                f"not publishing to {folder}: these files appeared or changed during the run: {', '.join(changed)}",
                hint="do not write into --out while promptmill batch runs",
            )
        both = {name: self.owned.get(name, []) + new.get(name, []) for name in {*self.owned, *new}}
        self._write_manifest(both)  # a run killed from here on leaves files this manifest accepts
        for f in files:
            f.publish()
        for name in sorted(set(self.owned) - set(new)):
            size = _regular_size(folder / name)
            if size is not None and any(v["bytes"] == size for v in self.owned[name]):
                with contextlib.suppress(OSError, PromptmillError):
                    userfiles.remove(folder / name, root=folder)  # a regular file, never a link
        self._write_manifest(new)
        self.owned = new

    # -- leaving: the staging folder goes, the lock is released (and its file removed)
    def __exit__(self, *exc: object) -> None:
        try:
            if self.staging is not None:
                shutil.rmtree(self.staging, ignore_errors=True)
                self.staging = None
        finally:
            self._lock.__exit__(None, None, None)
