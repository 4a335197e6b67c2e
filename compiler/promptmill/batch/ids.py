"""Custom ids: taken from a column of the row, or generated from the row's position.

Generated ids are `row-<n>` with `n` the 0-based position of the row in its
input, so the same input gives the same ids on every run. Ids from a column
must be strings (or integers, written in decimal) that the provider accepts;
Anthropic's rule `^[A-Za-z0-9_-]{1,64}$` is applied to every provider, so a
file can move between providers. Duplicates are found with a set of the ids
seen (8-byte digests), only when ids come from a column.
"""

from __future__ import annotations

import hashlib
import re

ID_PATTERN = re.compile(r"[A-Za-z0-9_-]{1,64}")


def generated(index: int) -> str:
    return f"row-{index}"


def problem(value: object) -> str | None:
    """Why `value` cannot be a custom id, or None."""
    if isinstance(value, bool) or not isinstance(value, str | int):
        return f"custom id must be a string, got {type(value).__name__}"
    text = str(value)
    if not ID_PATTERN.fullmatch(text):
        shown = text if len(text) <= 80 else text[:77] + "..."
        return f"custom id {shown!r} does not match ^[A-Za-z0-9_-]{{1,64}}$ (the providers' rule)"
    return None


class Seen:
    """Ids already used in this run, kept as digests so memory stays small."""

    def __init__(self) -> None:
        self._seen: dict[bytes, int] = {}

    def first(self, custom_id: str, index: int) -> int | None:
        """The index of the row that used `custom_id` before, or None (and remember it)."""
        key = hashlib.blake2b(custom_id.encode("utf-8", "surrogatepass"), digest_size=8).digest()
        before = self._seen.get(key)
        if before is None:
            self._seen[key] = index
        return before
