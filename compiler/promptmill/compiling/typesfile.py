"""`promptmill types -o FILE`: compile the project in memory and write its types module.

The text comes from `typegen.types_module`; this module finds the project, compiles it
and writes the file atomically, never over a file `promptmill types` did not write (PM018).
"""

from __future__ import annotations

import os
from pathlib import Path

from ..core.diagnostics import has_errors, sort_diagnostics
from ..core.errors import CompileError, PromptmillError
from ..source.project import find_project
from .api import compile_bundles, load_project
from .typegen import HEADER_NOTE, module_path, types_module
from .writer import atomic_write


def write_types(path: str | os.PathLike[str], project: str | os.PathLike[str] = ".") -> Path:
    """Compile the project at `project` in memory and write its types module to `path` (atomically).

    Raises `CompileError` when a template has errors and PM018 when `path` cannot be written or holds
    a file `promptmill types` did not write (it is never overwritten)."""
    loaded = load_project(project, user_rules=False)
    bundles, _, diags = compile_bundles(loaded)
    all_diags = sort_diagnostics(loaded.diagnostics + diags)
    if has_errors(all_diags):
        raise CompileError(all_diags)
    target = Path(path)
    text = types_module(bundles, path=module_path(loaded.project.root, target))
    try:
        if target.is_symlink() or (os.path.lexists(target) and HEADER_NOTE not in target.read_text(encoding="utf-8", errors="replace")):
            raise PromptmillError(
                f"{target.as_posix()} exists and was not written by `promptmill types`; it is left as it is",
                code="PM018",
                hint="name another file with -o, or remove this one",
            )
        atomic_write(target, text.encode("utf-8"))
    except OSError as exc:
        raise PromptmillError(f"cannot write {target.as_posix()}: {exc.strerror or exc}", code="PM018") from None
    return target


def configured_path(project: str | os.PathLike[str] = ".") -> Path | None:
    """The module promptmill.yaml names (`types: {path}`), or None."""
    found, _ = find_project(project, user_rules=False)
    settings = found.config.get("types")
    return found.root / settings["path"] if isinstance(settings, dict) and isinstance(settings.get("path"), str) else None
