"""The watcher, driven for real: a tmp_path folder, a real watchdog observer, real saves.

Tests wait on the callback with timeouts rather than sleeping; the only fixed
waits are where a test proves that something does *not* happen.
"""

from __future__ import annotations

import os
import shutil
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from promptmill.watch import Watcher, watch

TIMEOUT = 10.0


class Recorder:
    """The on_change callable: records each batch (and what `read` saw then)."""

    def __init__(self, read: Callable[[], object] | None = None, fail_first: int = 0) -> None:
        self.batches: list[set[Path]] = []
        self.seen: list[object] = []
        self.times: list[float] = []
        self.read = read
        self.fail_first = fail_first
        self.cond = threading.Condition()

    def __call__(self, paths: set[Path]) -> None:
        snapshot = self.read() if self.read else None
        with self.cond:
            self.batches.append(set(paths))
            self.seen.append(snapshot)
            self.times.append(time.monotonic())
            self.cond.notify_all()
        if len(self.batches) <= self.fail_first:
            raise RuntimeError("a rebuild that blows up")

    def wait(self, predicate: Callable[[Recorder], bool], what: str) -> None:
        with self.cond:
            assert self.cond.wait_for(lambda: predicate(self), TIMEOUT), f"timed out waiting for {what}; batches: {self.batches}"

    def wait_path(self, path: Path, after: int = 0) -> None:
        self.wait(lambda r: any(path in b for b in r.batches[after:]), str(path))

    def until_seen(self, path: Path, save: Callable[[], object]) -> None:
        """Save again until a batch names `path`.

        A folder that just appeared is watched a moment later (inotify adds its
        watch asynchronously, or the periodic rescan does): a save in that
        moment is reported as a change of the folder rather than of the file.
        What matters is that saves after it are seen.
        """
        deadline = time.monotonic() + TIMEOUT
        n = len(self.batches)
        while time.monotonic() < deadline:
            save()
            with self.cond:
                if self.cond.wait_for(lambda: any(path in b for b in self.batches[n:]), 0.2):
                    return
        raise AssertionError(f"never saw {path}; batches: {self.batches}")

    @property
    def paths(self) -> set[Path]:
        return set().union(*self.batches) if self.batches else set()


@pytest.fixture
def folder(tmp_path) -> Path:
    root = tmp_path / "prompts"
    (root / "roles").mkdir(parents=True)
    (root / "roles" / "a.yaml").write_text("id: a\n")
    return root


def start(paths, rec: Recorder, **kw) -> Watcher:
    kw.setdefault("debounce", 0.03)
    kw.setdefault("rescan", 0.05)
    return Watcher(paths, rec, **kw).start()


def test_save_is_seen(folder):
    rec = Recorder()
    with start([folder], rec):
        (folder / "roles" / "a.yaml").write_text("id: a2\n")
        rec.wait_path(folder / "roles" / "a.yaml")


def test_new_file_is_seen(folder):
    rec = Recorder()
    with start([folder], rec):
        (folder / "roles" / "b.yml").write_text("id: b\n")
        rec.wait_path(folder / "roles" / "b.yml")


def test_temp_file_then_rename_save(folder):
    target = folder / "roles" / "a.yaml"
    rec = Recorder(read=target.read_text)
    with start([folder], rec):
        tmp = folder / "roles" / ".a.yaml.tmp1234"
        tmp.write_text("id: renamed\n")
        os.replace(tmp, target)
        rec.wait_path(target)
    assert rec.seen[-1] == "id: renamed\n"
    assert not any(p.name.startswith(".a.yaml") for p in rec.paths)


def test_watched_file_saved_by_rename_and_its_neighbours_ignored(tmp_path, folder):
    state = tmp_path / "state.yaml"
    state.write_text("a: 1\n")
    rec = Recorder(read=state.read_text)
    with start([folder, state], rec):
        (tmp_path / "other.yaml").write_text("not watched\n")
        tmp = tmp_path / "state.yaml.swp~"
        tmp.write_text("a: 2\n")
        os.replace(tmp, state)
        rec.wait_path(state)
    assert rec.seen[-1] == "a: 2\n"
    assert tmp_path / "other.yaml" not in rec.paths


def test_state_file_inside_a_watched_folder(folder):
    state = folder / "state.json"
    state.write_text("{}")
    rec = Recorder()
    with start([folder, state], rec):
        state.write_text('{"a": 1}')
        rec.wait_path(state)


def test_burst_of_saves_is_debounced_and_the_last_one_wins(folder):
    target = folder / "roles" / "a.yaml"
    rec = Recorder(read=target.read_text)
    with start([folder], rec, debounce=0.1, max_delay=5.0):
        for i in range(200):
            target.write_text(f"id: a\nrevision: {i}\n")
        rec.wait(lambda r: r.seen and r.seen[-1] == "id: a\nrevision: 199\n", "the last save")
    assert len(rec.batches) <= 5, f"{len(rec.batches)} rebuilds for one burst"


def test_max_delay_bounds_the_wait_during_a_stream_of_saves(folder):
    target = folder / "roles" / "a.yaml"
    rec = Recorder()
    with start([folder], rec, debounce=0.5, max_delay=0.1):
        begin = time.monotonic()
        while time.monotonic() - begin < 1.0:
            target.write_text(f"t: {time.monotonic()}\n")
            time.sleep(0.01)
        stream_end = time.monotonic()
        rec.wait(lambda r: bool(r.batches), "a rebuild")
    # with the debounce alone, nothing would run before the stream of saves ends
    assert rec.times[0] < stream_end


def test_delete_and_rename_files(folder):
    a = folder / "roles" / "a.yaml"
    rec = Recorder()
    with start([folder], rec):
        b = folder / "roles" / "b.yaml"
        os.rename(a, b)
        rec.wait(lambda r: {a, b} <= r.paths, "rename of a file")
        n = len(rec.batches)
        b.unlink()
        rec.wait_path(b, after=n)


def test_rename_and_delete_folders(folder):
    rec = Recorder()
    with start([folder], rec):
        roles, renamed = folder / "roles", folder / "renamed"
        os.rename(roles, renamed)
        rec.wait(lambda r: {roles, renamed} <= r.paths, "rename of a folder")
        rec.until_seen(renamed / "c.yaml", lambda: (renamed / "c.yaml").write_text("id: c\n"))  # watched under its new name
        n = len(rec.batches)
        shutil.rmtree(renamed)
        rec.wait_path(renamed, after=n)
        n = len(rec.batches)
        (folder / "new" / "deeper").mkdir(parents=True)
        (folder / "new" / "deeper" / "d.yaml").write_text("id: d\n")
        rec.wait(lambda r: any(p.is_relative_to(folder / "new") for b in r.batches[n:] for p in b), "a new folder")
        rec.until_seen(folder / "new" / "deeper" / "d.yaml", lambda: (folder / "new" / "deeper" / "d.yaml").write_text("id: d2\n"))


def test_folder_moved_in_from_outside(tmp_path, folder):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "e.yaml").write_text("id: e\n")
    rec = Recorder()
    with start([folder], rec):
        os.rename(outside, folder / "moved")
        rec.wait_path(folder / "moved")
        rec.until_seen(folder / "moved" / "e.yaml", lambda: (folder / "moved" / "e.yaml").write_text("id: e2\n"))


def test_watched_folder_deleted_and_recreated(folder):
    rec = Recorder()
    with start([folder], rec):
        shutil.rmtree(folder)
        rec.wait_path(folder)
        n = len(rec.batches)
        (folder / "roles").mkdir(parents=True)
        (folder / "roles" / "a.yaml").write_text("id: back\n")
        rec.wait(lambda r: any(p == folder or p.is_relative_to(folder) for b in r.batches[n:] for p in b), "the folder to come back")
        rec.until_seen(folder / "roles" / "a.yaml", lambda: (folder / "roles" / "a.yaml").write_text("id: back again\n"))


def test_watched_folder_renamed_away_and_replaced(tmp_path, folder):
    rec = Recorder()
    with start([folder], rec):
        os.rename(folder, tmp_path / "old")
        folder.mkdir()
        rec.wait_path(folder)
        rec.until_seen(folder / "f.yaml", lambda: (folder / "f.yaml").write_text("id: f\n"))


def test_folder_that_does_not_exist_yet(tmp_path):
    later = tmp_path / "later"
    rec = Recorder()
    with start([later], rec):
        later.mkdir()
        rec.wait_path(later)
        rec.until_seen(later / "g.yaml", lambda: (later / "g.yaml").write_text("id: g\n"))


def test_ignored_names(folder):
    roles = folder / "roles"
    rec = Recorder()
    with start([folder], rec):
        ignored = [roles / "a.txt", roles / ".hidden.yaml", roles / "a.yaml~", roles / ".#a.yaml", roles / "#a.yaml#"]
        (roles / ".git").mkdir()
        ignored.append(roles / ".git" / "x.json")
        for p in ignored:
            p.write_text("x")
        (roles / "real.yaml").write_text("id: real\n")
        rec.wait_path(roles / "real.yaml")
        time.sleep(0.2)  # proving a negative: give stray events time to arrive
    assert not set(ignored) & rec.paths


def test_an_exception_in_the_callback_does_not_stop_the_watcher(folder, caplog):
    target = folder / "roles" / "a.yaml"
    rec = Recorder(fail_first=2)
    with start([folder], rec) as w:
        for i in range(3):
            n = len(rec.batches)
            target.write_text(f"id: a{i}\n")
            rec.wait_path(target, after=n)
        assert w.errors == 2 and w.rebuilds >= 3
    assert "rebuild failed; still watching" in caplog.text


def test_watch_blocks_until_stopped(folder):
    rec = Recorder()
    stop = threading.Event()
    thread = threading.Thread(target=watch, args=([folder], rec), kwargs={"debounce": 0.02, "stop": stop})
    thread.start()
    try:
        target = folder / "roles" / "a.yaml"  # the watch may not be in place yet: save until seen
        rec.until_seen(target, lambda: target.write_text(f"t: {time.monotonic()}\n"))
    finally:
        stop.set()
        thread.join(TIMEOUT)
    assert not thread.is_alive()
