"""Run a callable when files change: debounced, and robust to how editors save.

    with Watcher([prompts_dir, state_file], rebuild, debounce=0.05):
        ...                     # rebuild(changed_paths) runs after each burst of saves
    watch([prompts_dir], rebuild, stop=event)   # the same, blocking until `stop` is set

This module knows nothing of promptmill (as mkdocs' livereload knows nothing
of mkdocs): it is handed a callable and calls it with the set of paths that
changed. The rules:

- A folder is watched recursively; a file is watched through its folder, so
  editors that save by writing a temporary file and renaming it over the
  original (vim, JetBrains, VS Code with some settings) are seen as a change
  of the file. In folders only names with one of `suffixes` count, plus
  folder creations, deletions and renames (which move every file inside);
  hidden names (a component starting with '.') and editor droppings are
  ignored, but a hidden temporary file renamed onto a real name counts.
- Events are debounced: the callable runs once events have been quiet for
  `debounce` seconds, or at the latest `max_delay` seconds after the first
  event of a burst, so a stream of saves cannot starve it.
- An exception in the callable is logged and the watcher keeps running; the
  callable is expected to report its own errors (a failed rebuild is normal
  while someone is typing).
- A watched folder that is deleted, renamed away or replaced is noticed by a
  periodic check (`rescan` seconds) and watched again when it comes back,
  which counts as a change of that folder.
"""

from __future__ import annotations

import logging
import os
import threading
import time
import warnings
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from watchdog.events import FileSystemEvent, FileSystemEventHandler
from watchdog.observers import Observer

log = logging.getLogger("promptmill.cli.watch")

# watchdog warns when the kernel reuses a watch descriptor for a folder created
# right after another was deleted (it then replaces the stale entry, which is
# what we want); under churn that would spam the terminal of `promptmill watch`.
warnings.filterwarnings("ignore", message="Callback with id .* already exists", category=RuntimeWarning)

DEFAULT_SUFFIXES = (".yaml", ".yml", ".json")
_DROPPINGS_PREFIX = (".#", "#")
_DROPPINGS_SUFFIX = ("~", ".swp", ".swx", ".tmp")

OnChange = Callable[[set[Path]], object]  # what it returns is ignored


def _identity(path: str) -> tuple[int, int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_dev, st.st_ino)


class _Root:
    """One thing asked to be watched: a folder (recursive) or a file (via its folder).

    A path that does not exist yet counts as a file until it appears.
    """

    def __init__(self, path: Path) -> None:
        self.path = os.path.abspath(path)
        self.is_file = not os.path.isdir(self.path)
        self.folder = os.path.dirname(self.path) if self.is_file else self.path
        self.watch: Any = None  # watchdog ObservedWatch while scheduled
        self.identity: tuple[int, int] | None = None
        self.lost = False  # its folder was deleted: the watch is dead even if the inode comes back

    def reclassify(self) -> bool:
        """A path that was missing may turn out a folder (or a file): adapt; True if it did."""
        if not os.path.exists(self.path):
            return False
        is_file = not os.path.isdir(self.path)
        if is_file == self.is_file:
            return False
        self.is_file = is_file
        self.folder = os.path.dirname(self.path) if is_file else self.path
        return True

    def matches(self, path: str, is_directory: bool, suffixes: tuple[str, ...]) -> bool:
        if self.is_file:
            return path == self.path
        if path != self.folder and not path.startswith(self.folder + os.sep):
            return False
        rel = path[len(self.folder) + 1 :]
        if path == self.folder:
            return is_directory
        parts = rel.split(os.sep)
        if any(p.startswith(".") for p in parts):
            return False
        name = parts[-1]
        if name.startswith(_DROPPINGS_PREFIX) or name.endswith(_DROPPINGS_SUFFIX):
            return False
        return is_directory or name.lower().endswith(suffixes)


class _Handler(FileSystemEventHandler):
    def __init__(self, watcher: Watcher) -> None:
        self.watcher = watcher

    def on_any_event(self, event: FileSystemEvent) -> None:
        if event.event_type in ("opened", "closed_no_write"):
            return
        if event.is_directory and event.event_type in ("modified", "closed"):
            return  # a folder's mtime changes with every file written in it
        paths = [os.fsdecode(event.src_path)]
        if getattr(event, "dest_path", ""):
            paths.append(os.fsdecode(event.dest_path))
        self.watcher._notify(paths, event.is_directory, event.event_type)


class Watcher:
    """Watch `paths` and call `on_change(changed_paths)` after each burst of changes.

    Use as a context manager, or `start()` / `stop()`. `on_change` runs on the
    watcher's own thread, one call at a time; events that arrive meanwhile are
    delivered in the next call. `rebuilds` counts calls, `errors` counts calls
    that raised. Setting the `stop` event (if given) stops it like `stop()`.
    """

    def __init__(
        self,
        paths: Iterable[str | os.PathLike[str]],
        on_change: OnChange,
        *,
        debounce: float = 0.05,
        max_delay: float = 2.0,
        suffixes: Iterable[str] = DEFAULT_SUFFIXES,
        rescan: float = 0.5,
        stop: threading.Event | None = None,
    ) -> None:
        self.roots = [_Root(Path(p)) for p in paths]
        self.on_change = on_change
        self.debounce = debounce
        self.max_delay = max(max_delay, debounce)
        self.suffixes = tuple(s.lower() for s in suffixes)
        self.rescan = rescan
        self.rebuilds = 0
        self.errors = 0
        self._pending: set[Path] = set()
        self._first = 0.0
        self._last = 0.0
        self._cond = threading.Condition()
        self._halt = threading.Event()
        self._external = stop
        self._observer = Observer()
        self._handler = _Handler(self)
        self._thread: threading.Thread | None = None

    # -- events (observer thread) -------------------------------------------
    def _notify(self, paths: list[str], is_directory: bool, event_type: str = "") -> None:
        if event_type in ("deleted", "moved"):
            for root in self.roots:
                if paths[0] == root.folder:
                    root.lost = True
        if is_directory and event_type in ("created", "moved"):
            # A folder that arrives by a move brings files no watch covers yet;
            # watchdog before 7.1 never adds one, so the next rescan watches
            # its root anew (and reports the root as changed meanwhile).
            arrived = paths[-1]
            for root in self.roots:
                if not root.is_file and arrived.startswith(root.folder + os.sep):
                    root.lost = True
        hits = {Path(p) for p in paths for root in self.roots if root.matches(p, is_directory, self.suffixes)}
        if hits:
            self._add(hits)

    def _add(self, paths: set[Path]) -> None:
        now = time.monotonic()
        with self._cond:
            if not self._pending:
                self._first = now
            self._pending |= paths
            self._last = now
            self._cond.notify_all()

    # -- scheduling -----------------------------------------------------------
    def _covered(self, root: _Root) -> bool:
        """A file root whose folder lies in a recursively watched folder needs no watch of its own."""
        return root.is_file and any(
            not other.is_file and (root.folder == other.folder or root.folder.startswith(other.folder + os.sep)) for other in self.roots
        )

    def _schedule(self, root: _Root) -> bool:
        """Watch `root`'s folder anew if it appeared, vanished or was replaced; True if so."""
        kind_changed = root.reclassify()
        if self._covered(root):
            return False
        identity = _identity(root.folder)
        if not kind_changed and not root.lost and identity == root.identity and (identity is None or root.watch is not None):
            return False
        if root.watch is not None:
            try:
                self._observer.unschedule(root.watch)
            except (KeyError, OSError):  # its emitter already stopped itself
                pass
            root.watch = None
        root.identity = identity
        root.lost = False
        if identity is not None:
            try:
                root.watch = self._observer.schedule(self._handler, root.folder, recursive=not root.is_file)
            except OSError as exc:  # vanished meanwhile, or out of inotify watches: retry on rescan
                log.warning("cannot watch %s: %s", root.folder, exc)
                root.identity = None
        return True

    def _rescan(self) -> None:
        changed = {Path(root.path) for root in self.roots if self._schedule(root)}
        if changed:
            self._add(changed)

    # -- the loop -------------------------------------------------------------
    def start(self, *, thread: bool = True) -> Watcher:
        """Start watching; returns once the watches are in place.

        With `thread` (the default) the rebuild loop runs on a thread of its
        own; otherwise call `run()` to run it on the current one.
        """
        if self._observer.is_alive():
            return self
        for root in self.roots:
            self._schedule(root)
        self._observer.start()
        if thread:
            self._thread = threading.Thread(target=self.run, name="promptmill-watch", daemon=True)
            self._thread.start()
        return self

    def stop(self, timeout: float | None = 10.0) -> None:
        """Stop watching; waits for a running `on_change` call to finish."""
        self._halt.set()
        with self._cond:
            self._cond.notify_all()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(timeout)
        self._observer.stop()
        if self._observer.is_alive():
            self._observer.join(timeout)

    @property
    def stopping(self) -> bool:
        return self._halt.is_set() or (self._external is not None and self._external.is_set())

    def __enter__(self) -> Watcher:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _take(self) -> set[Path] | None:
        """Wait for a quiet burst; None when stopping."""
        next_rescan = time.monotonic() + self.rescan
        with self._cond:
            while not self.stopping:
                now = time.monotonic()
                if self._pending:
                    due = min(self._last + self.debounce, self._first + self.max_delay)
                    if now >= due:
                        batch, self._pending = self._pending, set()
                        return batch
                    self._cond.wait(min(due - now, 0.2))
                    continue
                if now >= next_rescan:
                    self._cond.release()
                    try:
                        self._rescan()
                    finally:
                        self._cond.acquire()
                    next_rescan = time.monotonic() + self.rescan
                    continue
                self._cond.wait(min(next_rescan - now, 0.2))
        return None

    def run(self) -> None:
        """The rebuild loop: call `on_change` after each quiet burst until stopped."""
        while True:
            batch = self._take()
            if batch is None:
                return
            self.rebuilds += 1
            try:
                self.on_change(batch)
            except Exception:  # the callable reports its own errors; never die of one
                self.errors += 1
                log.exception("rebuild failed; still watching")


def watch(
    paths: Iterable[str | os.PathLike[str]],
    on_change: OnChange,
    *,
    debounce: float = 0.05,
    max_delay: float = 2.0,
    suffixes: Iterable[str] = DEFAULT_SUFFIXES,
    stop: threading.Event | None = None,
) -> None:
    """Watch `paths`, calling `on_change(changed)` after each burst, until `stop` is set.

    Runs the rebuild loop on the calling thread, so Ctrl-C (KeyboardInterrupt)
    reaches the caller; the watches are removed on the way out.
    """
    watcher = Watcher(paths, on_change, debounce=debounce, max_delay=max_delay, suffixes=suffixes, stop=stop)
    watcher.start(thread=False)
    try:
        watcher.run()
    finally:
        watcher.stop()
