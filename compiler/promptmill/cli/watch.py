"""Deprecated path: the watcher moved to `promptmill.watch` (kept for one release, see docs/layout.md)."""

from ..watch import Watcher, watch

__all__ = ["Watcher", "watch"]
