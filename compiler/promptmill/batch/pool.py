"""Rows rendered in order by a pool of processes, with a bounded number in flight.

Rows go to the workers in chunks; at most `workers * AHEAD` chunks, and about
AHEAD_BYTES of rows' text (a chunk ends past CHUNK_BYTES), are in flight, and
results are taken back in submission order, so the output is the same whatever
the number of workers, and memory does not grow with the input, nor with its
rows' size (`Pool.imap` would read the whole input ahead of the workers). A worker that
dies (killed, out of memory) fails the run with PM024 instead of hanging it,
which is why this is a `ProcessPoolExecutor` and not a `multiprocessing.Pool`.
A run that ends early (Ctrl-C, SIGTERM, an error, a caller that stops reading)
waits STOP_SECONDS for the chunks being rendered, then kills the workers
(`_stop`): a stopped worker (SIGSTOP, a frozen container) would otherwise hold
it forever.
`workers=1` renders in this process, with no pool.

How workers start (`start_method`): on Linux, from a process that runs a
single thread (counted by the kernel, so threads of native libraries count
too), they are *forked* after the renderer has warmed up here (`warm()`: the
build loaded, the role prepared, the tokenizer's tables built), so every worker
starts with them. A spawned worker instead imports promptmill, unpickles the
`BatchRenderer`, loads the build and builds the tables itself: about half a
second before its first row, on this project's 2-core machine, which a batch of
a few thousand rows notices (bench/bench_batch.py). With a second thread
running, one of them could hold a lock the child would inherit held, so such a
process, and every other platform, uses `spawn`.

Workers end when the process that started them ends, however it ends (even
SIGKILL): on Linux each asks the kernel for SIGKILL when its parent dies
(`prctl(PR_SET_PDEATHSIG)`), and everywhere a watchdog thread exits the worker
once its parent process is gone. With no worker left, multiprocessing's
resource tracker sees its pipe close and exits too.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import pickle
import signal
import sys
import threading
import time
from collections import deque
from collections.abc import Iterable, Iterator
from concurrent.futures import ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from typing import Any

# promptmill internals this module uses (kept together for the package move)
from ..core.boundary import environment_error
from ..core.errors import PromptmillError

AHEAD = 4  # chunks in flight per worker
CHUNK_BYTES = 1 << 20  # a chunk also ends once its rows' text passes this (rows of JSONL are bytes)
STOP_SECONDS = 2.0  # how long a run that ends early waits for the chunks its workers are rendering
AHEAD_BYTES = 64 << 20  # and no more rows' text than this waits for the workers, beyond one chunk
WATCH_SECONDS = 0.5  # how often a worker checks that its parent is alive
PR_SET_PDEATHSIG = 1  # linux/prctl.h
_RENDERER: Any = None  # the worker's BatchRenderer


def _init(renderer: Any, parent: int | None = None, deathsig: bool = False, started: Any = None) -> None:
    global _RENDERER
    _RENDERER = renderer
    if started is not None:  # this worker got past starting (a spawned one, past running the main module again)
        started.set()
    # a forked worker inherits the run's SIGTERM handler (run._sigterm_exits): a worker sent SIGTERM dies, as a spawned one does
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    if parent is not None:
        die_with_parent(parent, deathsig=deathsig)


def start_method() -> str:
    """`fork` on Linux from a process that runs one thread, else `spawn` (see the module's docstring)."""
    if not sys.platform.startswith("linux") or "fork" not in multiprocessing.get_all_start_methods():
        return "spawn"
    try:
        threads = len(os.listdir("/proc/self/task"))  # every thread, the interpreter's and native libraries' alike
    except OSError:
        return "spawn"
    return "fork" if threads == 1 else "spawn"


def die_with_parent(parent: int, *, deathsig: bool = True) -> None:
    """End this process when process `parent` ends: the kernel's parent-death signal on Linux, a watchdog thread everywhere.

    `deathsig` only when the parent started this process from its main thread:
    the kernel sends the signal when the *thread* that started the child ends.
    """
    if deathsig and sys.platform.startswith("linux"):
        try:
            import ctypes

            ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0)
        except (OSError, AttributeError):  # pragma: no cover - a libc without prctl: the watchdog still works
            pass
    if os.getppid() != parent:  # the parent died before the signal was asked for
        os._exit(1)
    threading.Thread(target=_watch, args=(parent,), name="promptmill-parent-watch", daemon=True).start()


def _watch(parent: int) -> None:
    while os.getppid() == parent:
        time.sleep(WATCH_SECONDS)
    os._exit(1)


def _work(chunk: list) -> list:
    return _RENDERER.render_chunk(chunk)


def _chunks(items: Iterable[Any], size: int) -> Iterator[tuple[list, int]]:
    """Chunks of at most `size` items, cut sooner past CHUNK_BYTES of row text, each with that byte count:
    64 rows of 64 MiB each (the line cap) are not one 4 GiB chunk."""
    chunk: list = []
    held = 0
    for item in items:
        chunk.append(item)
        held += _text_bytes(item)
        if len(chunk) >= size or held >= CHUNK_BYTES:
            yield chunk, held
            chunk, held = [], 0
    if chunk:
        yield chunk, held


def _text_bytes(item: Any) -> int:
    """The size of an `(index, row, where)` item's row when it is a line of text (bytes or str), else 0."""
    row = item[1] if isinstance(item, tuple) and len(item) > 1 else None
    return len(row) if isinstance(row, bytes | str) else 0


def ordered_results(renderer: Any, items: Iterable[Any], *, workers: int = 1, chunk: int = 64, method: str | None = None) -> Iterator[Any]:
    """`renderer.render_chunk` over `items`, results in input order; `method` is how workers start
    (`fork` or `spawn`; by default `start_method()`)."""
    if workers <= 1:
        for part, _ in _chunks(items, chunk):
            yield from renderer.render_chunk(part)
        return
    method = method or start_method()
    if method == "spawn":
        _check_spawnable()
    if method == "fork" and hasattr(renderer, "warm"):
        renderer.warm()  # once here, so no worker does it
    deathsig = threading.current_thread() is threading.main_thread()
    context = _Tracked(method)
    like: Any = context  # a context by duck typing: ProcessPoolExecutor takes only what a context has
    try:  # the pool's queues and this event are semaphores in shared memory (/dev/shm on Linux)
        started = context.Event()
        pool = ProcessPoolExecutor(workers, mp_context=like, initializer=_init, initargs=(renderer, os.getpid(), deathsig, started))
    except OSError as exc:
        found = environment_error(exc, "making the workers' semaphores in shared memory, /dev/shm on Linux")
        if found is None:
            raise
        hint = f"{found.hint}; or render in one process (--workers 1)" if found.hint else "render in one process (--workers 1)"
        raise PromptmillError(found.message, code=found.code, hint=hint) from None
    finished = False
    window: deque = deque()
    try:
        waiting = 0  # bytes of row text in the window
        for part, held in _chunks(items, chunk):
            window.append((pool.submit(_work, part), part, held))
            waiting += held
            while len(window) >= workers * AHEAD or (len(window) > 1 and waiting > AHEAD_BYTES):
                results = _taken(renderer, *window[0][:2])  # still in the window while awaited: `_stop` sees it
                waiting -= window.popleft()[2]
                yield from results
        while window:
            results = _taken(renderer, *window[0][:2])
            window.popleft()
            yield from results
        finished = True
    except BrokenProcessPool as exc:
        stopped = environment_error(exc, "no files were written")
        assert stopped is not None  # the boundary names a stopped worker (PM024)
        failed = _start_failure(context) if method == "spawn" and not started.is_set() else None
        if failed is not None:
            raise failed from None
        raise stopped from None
    finally:
        if not finished:  # Ctrl-C, SIGTERM, an error, or the caller stopped reading
            _stop(pool, context, [entry[0] for entry in window])
        pool.shutdown(wait=True, cancel_futures=True)


def _stop(pool: ProcessPoolExecutor, context: _Tracked, futures: list) -> None:
    """End a run early: chunks not started are cancelled, and the running ones get STOP_SECONDS to finish.
    A worker that does not finish them (stopped by SIGSTOP or a frozen container, or stuck) is killed, and
    the pool's pipes are closed on this side, so that its threads, waiting to write a chunk to a worker or
    to read the rest of a result a killed worker was writing, end instead of holding the shutdown forever.
    (Killing at once would cut a result short as a worker wrote it, and hang the shutdown so.)"""
    for future in futures:
        future.cancel()
    _, late = wait([f for f in futures if not f.done()], timeout=STOP_SECONDS)
    if not late:
        return
    context.kill()
    for queue, end in (("_call_queue", "_reader"), ("_result_queue", "_writer")):  # CPython's names, 3.11 to 3.14
        connection = getattr(getattr(pool, queue, None), end, None)
        if connection is not None:
            with contextlib.suppress(OSError):
                connection.close()


def _taken(renderer: Any, future: Any, part: list) -> list:
    """A chunk's results from its worker; a chunk that could not be sent to one (a row holding a value pickle
    cannot carry, such as a lock, from the Python API) renders here, so each row fails or renders as with
    one worker, instead of the whole run ending in pickle's TypeError."""
    try:
        return future.result()
    except BrokenProcessPool:
        raise
    except Exception:
        try:
            pickle.dumps(part)
        except Exception:
            return renderer.render_chunk(part)
        raise


class _Tracked:
    """A multiprocessing context that keeps the processes it starts, so a run that ends early can end them."""

    def __init__(self, method: str):
        self._context: Any = multiprocessing.get_context(method)
        self.processes: list[Any] = []

    def __getattr__(self, name: str) -> Any:
        return getattr(self._context, name)

    def Process(self, *args: Any, **kwargs: Any) -> Any:  # the name multiprocessing's contexts use
        process = self._context.Process(*args, **kwargs)
        self.processes.append(process)
        return process

    def kill(self) -> None:
        """SIGKILL every worker started (a stopped one too); the workers hold nothing the run writes."""
        for process in self.processes:
            if process.pid is not None:
                process.kill()


def _main_file() -> str | None:
    """The file a spawned worker runs again as its main module (multiprocessing's rule), None when none."""
    main = sys.modules.get("__main__")
    if main is None or getattr(getattr(main, "__spec__", None), "name", None) is not None:
        return None  # `python -m module`: imported again by its name
    path = getattr(main, "__file__", None)
    return path if isinstance(path, str) else None


def _check_spawnable() -> None:
    """PM010 before any worker starts when spawned workers cannot run the main module again (a program read from standard input)."""
    path = _main_file()
    if path is not None and not os.path.isfile(path):
        raise PromptmillError(
            f"workers must be spawned here (other threads run in this process), and a spawned worker runs the program's"
            f" main file again, which is not a file: {path}",
            code="PM010",
            hint="run the program from a file, or use one worker (workers=1, --workers 1)",
        )


def _start_failure(context: _Tracked) -> PromptmillError | None:
    """PM024 naming the program's main module when spawned workers, none of which started, exited with an
    error status instead of a signal."""
    codes = []
    for process in context.processes:
        if process.pid is not None:
            deadline = time.monotonic() + 5
            process.join(5)
            while process.exitcode is None and time.monotonic() < deadline:
                time.sleep(0.01)  # the executor's own thread may be reaping it at this moment: join() then returns early
            codes.append(process.exitcode)
    status = next((code for code in codes if code is not None and code > 0), None)
    if status is None:
        return None
    path = _main_file()
    return PromptmillError(
        f"a worker process could not start (exit status {status}): a spawned worker runs the program's main module again"
        + (f" ({path})" if path else "")
        + ", and that failed; its error is printed above (no files were written)",
        code="PM024",
        hint='keep the program\'s own work under `if __name__ == "__main__":`, or use one worker (workers=1, --workers 1)',
    )
