"""Rows rendered in order by a pool of processes, with a bounded number in flight.

Rows go to the workers in chunks (`apply_async`); at most `workers * AHEAD`
chunks are in flight and results are taken back in submission order, so the
output is the same whatever the number of workers and memory does not grow
with the input (`Pool.imap` would read the whole input ahead of the workers).
Each worker unpickles the `BatchRenderer` once (its build is loaded once per
process). `workers=1` renders in this process, with no pool.
"""

from __future__ import annotations

import multiprocessing
from collections import deque
from collections.abc import Iterable, Iterator
from itertools import islice
from typing import Any

AHEAD = 4  # chunks in flight per worker
_RENDERER: Any = None  # the worker's BatchRenderer


def _init(renderer: Any) -> None:
    global _RENDERER
    _RENDERER = renderer


def _work(chunk: list) -> list:
    return _RENDERER.render_chunk(chunk)


def _chunks(items: Iterable[Any], size: int) -> Iterator[list]:
    it = iter(items)
    while chunk := list(islice(it, size)):
        yield chunk


def ordered_results(renderer: Any, items: Iterable[Any], *, workers: int = 1, chunk: int = 64) -> Iterator[Any]:
    """`renderer.render_chunk` over `items`, results in input order."""
    if workers <= 1:
        for part in _chunks(items, chunk):
            yield from renderer.render_chunk(part)
        return
    pool = multiprocessing.get_context("spawn").Pool(workers, initializer=_init, initargs=(renderer,))
    try:
        window: deque = deque()
        for part in _chunks(items, chunk):
            window.append(pool.apply_async(_work, (part,)))
            while len(window) >= workers * AHEAD:
                yield from window.popleft().get()
        while window:
            yield from window.popleft().get()
        pool.close()
        pool.join()
    finally:
        pool.terminate()
