"""What a batch run did: counts, token totals, the slowest rows (summary.json)."""

from __future__ import annotations

import heapq
from collections import Counter
from typing import Any

SLOWEST = 10


class Tally:
    """Running totals over row results, in constant memory."""

    def __init__(self) -> None:
        self.rows = self.ok = 0
        self.codes: Counter[str] = Counter()
        self.tokens = 0
        self.min_tokens: int | None = None
        self.max_tokens = 0
        self.trimmed_rows = 0
        self._slow: list[tuple[float, int, str | None]] = []

    def add(self, r: Any) -> None:
        self.rows += 1
        if r.ok:
            self.ok += 1
            self.tokens += r.tokens
            self.min_tokens = r.tokens if self.min_tokens is None else min(self.min_tokens, r.tokens)
            self.max_tokens = max(self.max_tokens, r.tokens)
            self.trimmed_rows += bool(r.dropped or r.trimmed)
        else:
            self.codes[r.code] += 1
        item = (r.seconds, -r.index, r.id)
        if len(self._slow) < SLOWEST:
            heapq.heappush(self._slow, item)
        else:
            heapq.heappushpop(self._slow, item)

    @property
    def failed(self) -> int:
        return self.rows - self.ok

    @property
    def error_rate(self) -> float:
        return self.failed / self.rows if self.rows else 0.0

    def as_dict(self) -> dict:
        return {
            "rows": self.rows,
            "ok": self.ok,
            "failed": self.failed,
            "error_rate": round(self.error_rate, 6),
            "codes": dict(sorted(self.codes.items())),
            "tokens": {
                "total": self.tokens,
                "mean": round(self.tokens / self.ok, 1) if self.ok else None,
                "min": self.min_tokens,
                "max": self.max_tokens if self.ok else None,
            },
            "trimmed_rows": self.trimmed_rows,
            "slowest": [{"id": i, "row": -n, "ms": round(s * 1000, 3)} for s, n, i in sorted(self._slow, reverse=True)],
        }
