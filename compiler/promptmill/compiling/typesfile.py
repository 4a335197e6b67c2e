"""`promptmill types -o FILE`: compile the project in memory and write its types module.

The text comes from `typegen.types_module`; this module finds the project, compiles it
and writes the file through the file-system guard (`core.write_text`: one
atomic rename, never through a symbolic link), never over a file `promptmill types`
did not write (PM018).

Where it may write:
- `-o` naming a folder (an existing one, or a path ending in `/`) writes
  `promptmill_types.py` inside it;
- a module inside the project folder (as written, before links) is written with the
  project as the guard's root: a folder on the way that links out of it is PM017;
- a module `-o` names outside the project is the user's explicit choice: the guard's
  root is then its own folder (links above it are the user's; the file itself is still
  never a link);
- the module promptmill.yaml names (`types: {path}`) must lie inside the project: a
  cloned project cannot make `promptmill types` write elsewhere (PM017).
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from ..core.boundary import environment_error
from ..core.diagnostics import has_errors, sort_diagnostics
from ..core.errors import CompileError, PromptmillError
from ..core.userfiles import PathOutsideError, kind_of, read_bytes, write_text
from ..source.project import find_project
from .api import compile_bundles, load_project
from .typegen import DEFAULT_NAME, FIRST_LINE, HEADER_NOTE, module_path, types_module

HEAD_CHARS = 1024  # the header the module starts with lies within its first characters


def target_file(path: str | os.PathLike[str]) -> Path:
    """The module `-o PATH` means: PATH itself, or `PATH/promptmill_types.py` when PATH is a folder
    or ends in a slash."""
    text = os.fspath(path)
    if not text.strip():
        raise PromptmillError(
            "the types module's path is empty", code="PM018", hint="name a file (-o app/pm_types.py) or a folder (-o app/)"
        )
    if text.endswith(("/", os.sep)) or os.path.isdir(text):
        return Path(text) / DEFAULT_NAME
    return Path(text)


def _root_for(target: Path, project_root: Path, *, configured: bool) -> Path:
    """The folder the guard keeps the write inside (see the module docstring)."""
    absolute, project = Path(os.path.abspath(target)), Path(os.path.abspath(project_root))
    if absolute.is_relative_to(project):
        return project
    if configured:
        raise PathOutsideError(
            f"{target.as_posix()}: the types module promptmill.yaml names lies outside the project {project.as_posix()}",
            hint="name a path inside the project in `types: {path}`, or write elsewhere with -o",
        )
    return absolute.parent


def write_types(path: str | os.PathLike[str], project: str | os.PathLike[str] = ".", *, configured: bool = False) -> Path:
    """Compile the project at `project` in memory and write its types module to `path` (atomically;
    a folder gets `promptmill_types.py`). `configured`: the path comes from promptmill.yaml.

    Raises `CompileError` when a template has errors, PM018 when `path` holds a file
    `promptmill types` did not write (it is never overwritten) or cannot be written, PM017
    when a link would take the write out of its folder."""
    loaded = load_project(project, user_rules=False)
    bundles, _, diags = compile_bundles(loaded)
    all_diags = sort_diagnostics(loaded.diagnostics + diags)
    if has_errors(all_diags):
        raise CompileError(all_diags)
    target = target_file(path)
    root = _root_for(target, loaded.project.root, configured=configured)
    text = types_module(bundles, path=module_path(loaded.project.root, target))
    shown = target.as_posix()
    if os.path.islink(target):
        raise PromptmillError(
            f"{shown} is a symbolic link; `promptmill types` does not write through links",
            code="PM018",
            hint="name another file with -o, or remove the link",
        )
    mode = os.lstat(target).st_mode if os.path.lexists(target) else None
    if mode is not None and not stat.S_ISREG(mode):
        raise PromptmillError(
            f"{shown} is {kind_of(mode)}; `promptmill types` writes a regular file of its own",
            code="PM018",
            hint="name another file with -o",
        )
    if mode is not None and not _written_by_us(target, root):
        raise PromptmillError(
            f"{shown} exists and was not written by `promptmill types`; it is left as it is",
            code="PM018",
            hint="name another file with -o, or remove this one",
        )
    try:
        write_text(target, text, root=root, what="types module")
    except PromptmillError:
        raise
    except IsADirectoryError:
        raise PromptmillError(
            f"cannot write {shown}: it is a folder", code="PM018", hint="name a file, or a folder with a trailing /"
        ) from None
    except OSError as exc:
        mapped = environment_error(exc, f"writing {shown}")
        if mapped is not None:
            raise mapped from None
        raise PromptmillError(f"cannot write {shown}: {exc.strerror or exc}", code="PM018") from None
    return target


def _written_by_us(target: Path, root: Path) -> bool:
    """Whether the file at `target` starts as the modules `promptmill types` writes do."""
    try:
        head = read_bytes(target, root=root, what="file at the types module's path")
    except PromptmillError as exc:
        if exc.code == "PM105":  # far larger than any module promptmill writes
            return False
        raise
    text = head[: HEAD_CHARS * 4].decode("utf-8", errors="replace")
    return text.startswith(FIRST_LINE) and HEADER_NOTE in text[:HEAD_CHARS]


def configured_path(project: str | os.PathLike[str] = ".") -> Path | None:
    """The module promptmill.yaml names (`types: {path}`), or None."""
    found, _ = find_project(project, user_rules=False)
    settings = found.config.get("types")
    return found.root / settings["path"] if isinstance(settings, dict) and isinstance(settings.get("path"), str) else None
