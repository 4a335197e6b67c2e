"""Exact token counts of concatenated pieces, from cached piece counts.

A prompt is assembled from pieces (section titles, rendered items, separators).
`Counter.count_parts(parts)` returns exactly `tokenizer.count("".join(parts))`
while tokenizing each distinct piece at most once (counts are cached by content)
and never the assembled text: where the tokenizer guarantees that no token
spans a join (a *hard* join, see `Tokenizer.hard_join`), counts add up; around
a soft join only a short region (from the last hard boundary before the join to
the first one after it) is counted again. Tokenizers without hard-join rules
(Hugging Face, approx) have no hard boundaries, so the whole text is counted.

A text over `MAX_KEY_CHARS` (a 1 MB word in a state) is not kept in the count
cache, whose entries are many and small, but in a memo of the last few long
texts (`LONG_TEXTS`, `LONG_CHARS`): the same text met again (another wire of
the preview, the same item fitted then assembled, the next keystroke) is
counted once, not once per use. Counting a long run without a split is linear
in its length with both backends (bench/bench_long_runs.py measures it).
"""

from __future__ import annotations

import threading
from collections.abc import Sequence

from .cache import GenerationalCache
from .tokenizers import Tokenizer

# How far to look for a hard boundary inside a piece before giving up and
# treating the whole piece as part of the region (correct either way).
_SCAN = 64
# Bounds of the join-correction cache (its keys are short regions around soft joins).
MAX_DELTAS = 100_000
MAX_DELTA_CHARS = 2_000_000
MAX_DELTA_KEY_CHARS = 4_096
MAX_JOIN_KEY_CHARS = 20_000  # count_parts remembers soft joins between pieces this long at most
MAX_KEY_CHARS = 200_000  # text longer than this is not kept in the count cache, but in the long-text memo
LONG_TEXTS = 8  # the long-text memo: the last texts over MAX_KEY_CHARS counted, at most this many
LONG_CHARS = 16_000_000  # ... and at most this many characters in all (a longer text is counted every time)


class CountCache(GenerationalCache[str, int]):
    """A bounded, content-addressed map text -> token count (`GenerationalCache`).

    Each entry weighs the length of its text plus `ENTRY_COST` (the dict slot,
    the int and the str header), so many short entries are bounded as well as a
    few long ones: memory stays within about twice `max_chars` bytes of text
    whatever the workload (bench/soak_render.py).
    """

    ENTRY_COST = 64

    def __init__(self, max_chars: int = 8_000_000, max_key_chars: int = MAX_KEY_CHARS) -> None:
        super().__init__(max_chars)
        self.max_key_chars = max_key_chars

    def put(self, text: str, value: int, size: int | None = None) -> None:
        if len(text) <= self.max_key_chars:
            GenerationalCache.put(self, text, value, len(text) + self.ENTRY_COST)

    def weigh(self, key: str, value: int) -> int:
        return len(key) + self.ENTRY_COST

    @property
    def chars(self) -> int:
        """Characters of cached text (both generations)."""
        return sum(map(len, self._young)) + sum(map(len, self._old))


class Counter:
    """Counts tokens for one tokenizer with a shared cache. Thread-safe."""

    def __init__(self, tokenizer: Tokenizer, cache: CountCache | None = None) -> None:
        self.tokenizer = tokenizer
        self.cache = cache if cache is not None else CountCache()
        self._hard = tokenizer.hard_join
        self._raw_count = tokenizer.count
        self.encoded_chars = 0  # characters actually sent to the tokenizer (for tests and benches)
        self._deltas: dict[tuple[str, str], int] = {}
        self.delta_chars = 0  # characters held in the keys of _deltas
        # soft joins met by count_parts: (left piece, right piece, where the region before
        # ended in left) -> (count correction, where the region ended in right)
        self._joins: dict[tuple[str, str, int], tuple[int, int]] = {}
        self.join_chars = 0  # characters of the pieces the keys of _joins hold
        self._long: dict[str, int] = {}  # the long-text memo, oldest first
        self._long_chars = 0
        self._long_lock = threading.Lock()

    def count(self, text: str) -> int:
        """Token count of `text` (cached)."""
        value = self.cache._young.get(text)
        if value is not None:
            return value
        if not text:
            return 0
        if len(text) > self.cache.max_key_chars:
            return self._count_long(text)
        value = self.cache._old.get(text)
        if value is None:
            value = self._raw_count(text)
            self.encoded_chars += len(text)
        self.cache.put(text, value)
        return value

    def _count_long(self, text: str) -> int:
        """A text too long for the count cache, counted once while it stays in the long-text memo."""
        with self._long_lock:
            value = self._long.pop(text, None)
            if value is not None:
                self._long[text] = value  # the most recent again
                return value
        value = self._raw_count(text)
        self.encoded_chars += len(text)
        if len(text) > LONG_CHARS:
            return value
        with self._long_lock:
            if text not in self._long:
                self._long[text] = value
                self._long_chars += len(text)
            while len(self._long) > LONG_TEXTS or self._long_chars > LONG_CHARS:
                oldest = next(iter(self._long))
                del self._long[oldest]
                self._long_chars -= len(oldest)
        return value

    def _last_hard(self, text: str, floor: int) -> int:
        """Largest internal hard boundary of `text` at or after `floor` (else `floor`)."""
        hard = self._hard
        stop = max(floor, len(text) - _SCAN)
        for i in range(len(text) - 1, stop, -1):
            if hard(text[i - 1], text[i]):
                return i
        return floor

    def _first_hard(self, text: str) -> int:
        """Smallest internal hard boundary of `text` (else len(text))."""
        hard = self._hard
        for i in range(1, min(len(text), _SCAN + 1)):
            if hard(text[i - 1], text[i]):
                return i
        return len(text)

    def join_delta(self, left: str, right: str) -> int:
        """About count(left + right) - count(left) - count(right), from short strings.

        Exact when `right` holds a hard boundary (or ends the text); used for
        estimates while fitting, never for reported totals.
        """
        if not left or not right or self._hard(left[-1], right[0]):
            return 0
        if not self.tokenizer.has_hard_joins:
            return self.count(left + right) - self.count(left) - self.count(right)
        key = (left[self._last_hard(left, 0) :], right[: self._first_hard(right)])
        delta = self._deltas.get(key)
        if delta is None:
            tail, head = key
            delta = self.count(tail + head) - self.count(tail) - self.count(head)
            size = len(tail) + len(head)
            if size <= MAX_DELTA_KEY_CHARS:  # a piece without hard boundaries can be long: not kept
                if len(self._deltas) >= MAX_DELTAS or self.delta_chars + size > MAX_DELTA_CHARS:
                    self._deltas = {}
                    self.delta_chars = 0
                self._deltas[key] = delta
                self.delta_chars += size
        return delta

    def _remember_join(self, key: tuple[str, str, int], delta: int, floor: int) -> None:
        size = len(key[0]) + len(key[1])
        if size > MAX_JOIN_KEY_CHARS:
            return
        if len(self._joins) >= MAX_DELTAS or self.join_chars + size > MAX_DELTA_CHARS:
            self._joins = {}
            self.join_chars = 0
        self._joins[key] = (delta, floor)
        self.join_chars += size

    def count_parts(self, parts: Sequence[str]) -> int:
        """Exactly `tokenizer.count("".join(parts))`, from cached piece counts."""
        pieces = [p for p in parts if p]
        if not pieces:
            return 0
        if not self.tokenizer.has_hard_joins:
            # No hard-boundary rules: the only correct answer is the whole text.
            return self.count("".join(pieces))
        count = self.count
        hard = self._hard
        total = 0
        for p in pieces:
            total += count(p)
        n = len(pieces)
        floor = 0  # hard boundary inside pieces[i] where the previous region ended
        i = 0
        joins = self._joins
        while i < n - 1:
            left = pieces[i]
            if hard(left[-1], pieces[i + 1][0]):
                i += 1
                floor = 0
                continue
            key = (left, pieces[i + 1], floor)
            known = joins.get(key)
            if known is not None:  # this soft join was counted before (a repeated layout)
                total += known[0]
                floor = known[1]
                i += 1
                continue
            # A soft join: gather the region from the last hard boundary before it
            # to the first hard boundary after it, possibly across several pieces.
            start = self._last_hard(left, floor)
            region = [left[start:]]
            minus = count(left[start:])
            j = i + 1
            while True:
                piece = pieces[j]
                end = self._first_hard(piece)
                if end < len(piece) or j == n - 1 or hard(piece[-1], pieces[j + 1][0]):
                    head = piece[:end]
                    region.append(head)
                    minus += count(head)
                    floor = end if end < len(piece) else 0
                    break
                region.append(piece)
                minus += count(piece)
                j += 1
            delta = count("".join(region)) - minus
            total += delta
            if j == i + 1 and floor:  # the region closed inside the next piece: it depends on these two alone
                self._remember_join(key, delta, floor)
            if floor == 0:
                # the region ended at the end of piece j, at a hard join (or the end)
                i = j + 1
            else:
                i = j
        return total
