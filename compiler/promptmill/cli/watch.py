"""Deprecated path: the watcher moved to `promptmill.watch` (kept for one release, see README)."""

from ..watch import Watcher, watch

__all__ = ["Watcher", "watch"]
