"""Deprecated path of `parse_reply`, which moved to `promptmill.replies.parse`: import it from `promptmill`.
Kept for this release (docs/layout.md, "Public and internal module paths"); removed in the next.

The reply reader comes after the render path, so this module reaches it by name (runtime/registry.py),
never by an import.
"""

from __future__ import annotations

from typing import Any

from .registry import PARSE_REPLY, handover

__all__ = ["parse_reply"]  # noqa: F822  (served by __getattr__ below)


def __getattr__(name: str) -> Any:
    if name == "parse_reply":
        return handover(PARSE_REPLY)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
