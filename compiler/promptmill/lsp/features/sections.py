"""Hover on a section id: its static tokens, its share of the budget rendered with the role's example
state (`<role>.state.yaml|yml|json` under the project, as `watch` and the preview pick it), and its text."""

from __future__ import annotations

import contextlib
import os
import stat
from pathlib import Path

from lsprotocol import types

from ...core.errors import PromptmillError
from ...explain.account import budget_sum
from ...runtime.bundle import RoleBundle
from ...runtime.engine import Runtime
from ...source.statefile import read_state
from .words import word_at

MAX_SHOWN = 1500  # characters of the section's text in the hover
MAX_FOLDERS = 2000  # folders an example-state search walks at most
_SUFFIXES = (".state.yaml", ".state.yml", ".state.json")
_SKIP = {"build", "node_modules", ".git", ".venv", "venv"}


def example_state(root: Path, role: str) -> Path | None:
    """The first `<role>.state.*` under `root` (hidden, build and virtualenv folders skipped), or None.

    Only regular files count (not a link, a FIFO or a device), links to folders are not followed, and
    the walk stops after MAX_FOLDERS folders: a hover never reads outside the project nor walks a disk."""
    names = {role + suffix: n for n, suffix in enumerate(_SUFFIXES)}
    found: list[tuple[int, str, Path]] = []
    for seen, (folder, dirs, files) in enumerate(os.walk(root)):
        if seen >= MAX_FOLDERS:
            break
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d not in _SKIP)
        for name in files:
            if name in names:
                path = Path(folder, name)
                with contextlib.suppress(OSError):
                    if stat.S_ISREG(os.lstat(path).st_mode):
                        found.append((names[name], path.as_posix(), path))
    return min(found)[2] if found else None


def budget_hover(bundles: dict[str, RoleBundle], role: str | None, root: Path, text: str, position: types.Position) -> types.Hover | None:
    """On a role's `budget:` key: the budget line as `render` prints it, rendered with the role's example state."""
    lines = text.splitlines()
    bundle = bundles.get(role) if role is not None else None
    if bundle is None or position.line >= len(lines) or not lines[position.line].startswith("budget:"):
        return None
    state_file = example_state(root, bundle.id)
    try:
        req = Runtime(bundles, base_dir=root).render(bundle.id, read_state(state_file) if state_file is not None else {})
    except PromptmillError as exc:
        shown = f"budget: rendering for the budget line failed: {exc.code} {exc}"
    else:
        used = f"{req.tokens} of {req.budget} tokens used"
        shown = (
            f"budget {req.budget}: {budget_sum(req)}\n\n{used} with `{state_file.relative_to(root).as_posix()}`"
            if state_file
            else f"budget {req.budget}: {budget_sum(req)}"
        )
    span = types.Range(types.Position(position.line, 0), types.Position(position.line, len("budget")))
    return types.Hover(contents=types.MarkupContent(kind=types.MarkupKind.Markdown, value=shown), range=span)


def section_hover(bundles: dict[str, RoleBundle], role: str | None, root: Path, text: str, position: types.Position) -> types.Hover | None:
    """The hover for the section id at `position` in role `role`'s file, or None when it is not one."""
    found = word_at(text, position.line, position.character)
    bundle = bundles.get(role) if role is not None else None
    if found is None or bundle is None:
        return None
    word, start, end = found
    section = next((s for s in bundle.sections if s.id == word), None)
    if section is None or "id:" not in text.splitlines()[position.line][:start]:
        return None
    lines = [f"section `{section.id}` ({section.kind}, priority {section.priority}, trim {section.trim})"]
    if section.kind == "static":
        lines.append(f"static: {section.tokens + section.title_tokens} tokens")
    state_file = example_state(root, bundle.id)
    shown = section.text if section.kind == "static" else None
    if state_file is not None:
        try:
            req = Runtime(bundles, base_dir=root).render(bundle.id, read_state(state_file))
        except PromptmillError as exc:
            lines.append(f"with `{state_file.relative_to(root).as_posix()}`: {exc.code} {exc}")
        else:
            placed = next((s for s in req.sections if s.id == section.id), None)
            if placed is not None:
                share = 100.0 * placed.tokens / req.budget if req.budget else 0.0
                where = state_file.relative_to(root).as_posix()
                lines.append(f"with `{where}`: {placed.status}, {placed.tokens} of {req.budget} tokens ({share:.1f}%)")
                shown = placed.text or shown
    if shown:
        body = shown if len(shown) <= MAX_SHOWN else shown[:MAX_SHOWN] + "\n…"
        lines.append("```text\n" + body.replace("```", "` ` `") + "\n```")
    span = types.Range(types.Position(position.line, start), types.Position(position.line, end))
    return types.Hover(contents=types.MarkupContent(kind=types.MarkupKind.Markdown, value="\n\n".join(lines)), range=span)
