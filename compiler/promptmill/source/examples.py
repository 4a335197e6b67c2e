"""The example render states of a project: `*.state.yaml|yml|json` files under its root.

The web preview lists them, `promptmill snapshot` and `promptmill test` render
each role with the ones named after it, and with those its `examples:` key lists
(`listed_examples`: paths relative to the role file, inside the project). Hidden folders, the build folder,
virtualenvs and `node_modules` are skipped, and so is a link to a file outside
the project (only what the project holds counts). At most `MAX_EXAMPLES` files,
`MAX_DEPTH` folders deep; the order is sorted and so deterministic.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

STATE_SUFFIXES = (".state.yaml", ".state.yml", ".state.json")
SKIP_DIRS = {"node_modules", "__pycache__", "site-packages"}
MAX_EXAMPLES = 200
MAX_DEPTH = 4


def find_examples(root: Path, *, skip: Iterable[Path] = ()) -> list[str]:
    """Example state files under `root`, as posix paths relative to it, sorted.

    `skip` names folders (the build folder, the snapshots folder) whose contents are not examples.
    """
    root = root.resolve()
    skipped = {Path(p).resolve() for p in skip}
    found: set[str] = set()
    for folder, dirs, files in os.walk(root):
        here = Path(folder)
        depth = len(here.relative_to(root).parts)
        dirs[:] = sorted(
            d
            for d in dirs
            if not d.startswith(".")
            and d not in SKIP_DIRS
            and depth < MAX_DEPTH
            and (here / d).resolve() not in skipped
            and not (here / d / "pyvenv.cfg").exists()
        )
        for name in files:
            if name.lower().endswith(STATE_SUFFIXES) and Path(os.path.realpath(here / name)).is_relative_to(root):
                found.add((here / name).relative_to(root).as_posix())
        if len(found) >= MAX_EXAMPLES:
            break
    return sorted(found)[:MAX_EXAMPLES]


def example_stem(path: str) -> str:
    """The name before `.state.`: `prompts/examples/planner.state.yaml` -> `planner`,
    `planner.long.state.json` -> `planner.long`; a listed file without `.state.`: the name
    without its suffix (`shared/long-chat.yaml` -> `long-chat`)."""
    name = Path(path).name
    return name.split(".state.")[0] if ".state." in name else Path(name).stem


def listed_examples(role_file: Path, root: Path, entries: Iterable[object]) -> list[tuple[int, str | None, str | None]]:
    """Per entry of a role's `examples:` list: (index, the file relative to `root` as a posix
    path, None) when it is a file inside the project, else (index, None, what is wrong)."""
    out: list[tuple[int, str | None, str | None]] = []
    base = role_file.parent
    real_root = root.resolve()
    for i, entry in enumerate(entries):
        if not isinstance(entry, str) or not entry:
            continue  # the schema reports it
        target = base / entry
        real = Path(os.path.realpath(target))
        if not real.is_relative_to(real_root):
            out.append((i, None, f"example state {entry} is outside the project ({real})"))
        elif not real.is_file():
            why = "is a folder, not a file" if real.is_dir() else "does not exist"
            out.append((i, None, f"example state {entry} {why} (looked for {real.relative_to(real_root).as_posix()})"))
        else:
            out.append((i, real.relative_to(real_root).as_posix(), None))
    return out


def examples_for(role: str, examples: Iterable[str]) -> list[str]:
    """The example states of `role`: those named `ROLE.state.*` or `ROLE.VARIANT.state.*`."""
    return [p for p in examples if example_stem(p) == role or example_stem(p).startswith(role + ".")]
