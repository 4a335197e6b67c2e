"""What a dropped list item is, in a few words: the page lists dropped items by what they are.

A render reports the items a list section dropped as indices into its list
(`RenderedSection.items_dropped`); the list itself is the request's state at
the section's path (the bundle's `Section.path`), after the section's own
`declare`d tools for a tools section. An item is named by its state path and
a label read from the item itself: a tool's name, a history turn's role and
first words, an entry's key, title, name, id or type and the first words of
its text.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from ..runtime.bundle import Section
from ..runtime.fill import state_path

NAME_KEYS = ("key", "title", "name", "id", "type", "kind")  # what an entry is called, first found wins
TEXT_KEYS = ("summary", "text", "content", "description", "message", "body", "value")  # what it says
WORDS = 8  # words of an excerpt
CHARS = 60  # characters of an excerpt at most
MAX_ITEMS = 50  # dropped items named per section; the rest are counted


def excerpt(text: str) -> str:
    """The first words of `text` on one line, with `…` when cut."""
    words = text.split()
    out = " ".join(words[:WORDS])
    cut = len(words) > WORDS
    if len(out) > CHARS:
        out, cut = out[: CHARS - 1].rstrip(), True
    return out + ("…" if cut else "")


def _scalar(value: Any) -> str | None:
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, (str, int, float)):
        text = str(value).strip()
        return text or None
    return None


def _text_of(content: Any) -> str | None:
    """Readable text of a value: a string, or the `text` of content blocks (a chat message's parts)."""
    if isinstance(content, str):
        return content.strip() or None
    if isinstance(content, Sequence) and not isinstance(content, (str, bytes)):
        parts = [str(b["text"]) for b in content if isinstance(b, Mapping) and isinstance(b.get("text"), str)]
        return " ".join(parts).strip() or None
    return None


def label(kind: str, item: Any) -> str:
    """What `item` of a `kind` section (each, tools, history) is, in a few words."""
    if isinstance(item, Mapping):
        if kind == "tools" and _scalar(item.get("name")):
            return str(item["name"])
        if kind == "history" and _scalar(item.get("role")):
            said = _text_of(item.get("content"))
            return f"{item['role']}: “{excerpt(said)}”" if said else str(item["role"])
        name_key = next((k for k in NAME_KEYS if _scalar(item.get(k))), None)
        said = next((t for k in TEXT_KEYS if k != name_key and (t := _text_of(item.get(k)))), None)
        if said is None:  # no known text key: the first other string in the entry
            said = next((v.strip() for k, v in item.items() if k != name_key and isinstance(v, str) and v.strip()), None)
        name = _scalar(item.get(name_key)) if name_key else None
        if name and said:
            return f"{excerpt(name)}: “{excerpt(said)}”"
        if name or said:
            return excerpt(name) if name else f"“{excerpt(said or '')}”"
        return excerpt(json.dumps(item, ensure_ascii=False, sort_keys=True))
    if isinstance(item, str):
        return f"“{excerpt(item)}”"
    return excerpt(json.dumps(item, ensure_ascii=False))


def _items(spec: Section, state: Any) -> list[Any]:
    """The section's list as the render saw it: its declared tools, then the state's list."""
    value: Any = state
    for part in spec.path:
        value = value.get(part) if isinstance(value, Mapping) else None
    found = list(value) if isinstance(value, list) else []
    return [*spec.declared, *found]


def dropped_items(spec: Section | None, dropped: Sequence[int], state: Any) -> list[dict[str, str]]:
    """Each dropped item (up to MAX_ITEMS) as `{where, what}`: its state path and its label."""
    if spec is None or not dropped:
        return []
    items = _items(spec, state)
    declared = len(spec.declared)
    out = []
    for i in list(dropped)[:MAX_ITEMS]:
        where = f"declare[{i}]" if i < declared else state_path((*spec.path, i - declared))
        what = label(spec.kind, items[i]) if i < len(items) else "?"
        out.append({"where": where, "what": what})
    return out
