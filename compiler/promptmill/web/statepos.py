"""Where a state path stands in the state's text: `state.articles[0].text` -> line 4, column 11.

A state that parses but does not fit the role's inputs names its problems by
state path (PM810: `state.customer.name: expected string`); the page shows
the line and column of the first one under the editor, as it does for a
syntax error. The text is loaded again with positions (YAML, which holds
JSON) only when a render failed this way, and only up to `MAX_LOCATE_CHARS`:
past that, or where the text does not load, the path alone is shown. A path
the state lacks (`is required`) points at the nearest part of it that exists.
"""

from __future__ import annotations

import json
import re
from typing import Any

from ..source.loader import load_text

MAX_PLACES = 20  # as many as a StateError's message lists
MAX_LOCATE_CHARS = 256 * 1024  # a longer state is not loaded again: its errors name paths only
_STEP = re.compile(r'\.(?P<name>[A-Za-z_][A-Za-z0-9_]*)|\[(?P<index>\d+)\]|\[(?P<key>"(?:[^"\\]|\\.)*")\]')


def parse_path(path: str, root: str = "state") -> tuple[str | int, ...] | None:
    """`state.a[2]["odd key"]` -> ("a", 2, "odd key"); None when it is not such a path."""
    if not path.startswith(root):
        return None
    steps: list[str | int] = []
    at = len(root)
    while at < len(path):
        m = _STEP.match(path, at)
        if m is None:
            return None
        if m["name"] is not None:
            steps.append(m["name"])
        elif m["index"] is not None:
            steps.append(int(m["index"]))
        else:
            try:
                steps.append(json.loads(m["key"]))
            except ValueError:
                return None
        at = m.end()
    return tuple(steps)


def state_places(text: str, paths: list[str], *, name: str = "state") -> list[dict[str, Any]]:
    """Each path with the 1-based line and column of its value in `text` (`line`/`col`
    absent where unknown)."""
    doc = None
    if text.strip() and len(text) <= MAX_LOCATE_CHARS:
        doc, _ = load_text(text, name)
    out: list[dict[str, Any]] = []
    for path in paths:
        place: dict[str, Any] = {"path": path}
        steps = parse_path(path)
        if doc is not None and steps is not None:
            pos = doc.pos(steps)
            place["line"], place["col"] = pos.line, pos.col
        out.append(place)
    return out
