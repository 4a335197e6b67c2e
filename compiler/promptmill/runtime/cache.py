"""A bounded map in two generations, for the runtime's content-addressed caches.

Lookups hit the young generation, then the old one (promoting the entry).
When adding an entry would take the young generation past `max_weight`, it
becomes the old one and the previous old one is dropped. Callers give each
entry a weight (say, its characters plus a fixed cost), so memory stays within
about twice `max_weight` whatever mix of small and large entries arrives, and
entries that keep being used survive a turnover.
"""

from __future__ import annotations

import threading
from typing import Any, Generic, TypeVar

K = TypeVar("K")
V = TypeVar("V")


class GenerationalCache(Generic[K, V]):
    """Two-generation bounded map; thread-safe (writes take a lock, reads need none)."""

    def __init__(self, max_weight: int) -> None:
        self.max_weight = max_weight
        self._young: dict[K, V] = {}
        self._old: dict[K, V] = {}
        self._young_weight = 0
        self._lock = threading.Lock()

    def get(self, key: K) -> V | None:
        value = self._young.get(key)
        if value is not None:
            return value
        value = self._old.get(key)
        if value is not None:
            self.put(key, value)
        return value

    def put(self, key: K, value: V, size: int | None = None) -> None:
        """Add an entry; `size` is its weight when the caller knows it (else `weigh`)."""
        if size is None:
            size = self.weigh(key, value)
        with self._lock:
            if self._young_weight + size > self.max_weight:
                self._old = self._young
                self._young = {}
                self._young_weight = 0
            if key not in self._young:
                self._young[key] = value
                self._young_weight += size

    def weigh(self, key: K, value: V) -> int:  # pragma: no cover - every cache defines its own
        raise NotImplementedError

    def items(self) -> Any:
        """Every entry of both generations (for measuring, not for lookups)."""
        return [*self._young.items(), *self._old.items()]

    def __len__(self) -> int:
        return len(self._young) + len(self._old)
