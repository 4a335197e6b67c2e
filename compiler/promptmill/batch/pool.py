"""Rows rendered in order by a pool of processes, with a bounded number in flight.

Rows go to the workers in chunks; at most `workers * AHEAD` chunks are in
flight and results are taken back in submission order, so the output is the
same whatever the number of workers, and memory does not grow with the input
(`Pool.imap` would read the whole input ahead of the workers). Workers are
started with `spawn` (no inherited threads or locks) and unpickle the
`BatchRenderer` once, so each loads the build once. A worker that dies (killed,
out of memory) fails the run with PM000 instead of hanging it, which is why
this is a `ProcessPoolExecutor` and not a `multiprocessing.Pool`. `workers=1`
renders in this process, with no pool.
"""

from __future__ import annotations

import multiprocessing
from collections import deque
from collections.abc import Iterable, Iterator
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from itertools import islice
from typing import Any

# promptmill internals this module uses (kept together for the package move)
from ..core.errors import PromptmillError

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
    pool = ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("spawn"), initializer=_init,
                               initargs=(renderer,))
    try:
        window: deque = deque()
        for part in _chunks(items, chunk):
            window.append(pool.submit(_work, part))
            while len(window) >= workers * AHEAD:
                yield from window.popleft().result()
        while window:
            yield from window.popleft().result()
    except BrokenProcessPool as exc:
        raise PromptmillError(
            f"a worker process stopped unexpectedly ({exc}); no files were written",
            code="PM000", hint="run with --workers 1 to render in one process (a script read from standard input cannot start workers)",
        ) from None
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
