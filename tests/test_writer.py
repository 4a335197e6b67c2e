"""The build writer: leftovers of killed compiles are collected, files are readable, the lock serializes."""

from __future__ import annotations

import os
import stat
import threading
import time

import pytest

from promptmill.compiling.writer import build_lock, write_build
from promptmill.core.errors import PromptmillError


def test_leftovers_of_a_killed_compile_are_removed(tmp_path):
    (tmp_path / "roles").mkdir()
    (tmp_path / ".tmp-manifest1").write_bytes(b"{half")  # a manifest write cut short
    (tmp_path / "roles" / ".tmp-x").write_bytes(b"half a bundle")
    (tmp_path / "roles" / "old.123.json").write_bytes(b"{}")  # listed by no manifest
    removed = write_build(tmp_path, {"roles/new.456.json": b"{}"}, b"{}\n")
    assert sorted(removed) == [".tmp-manifest1", "roles/.tmp-x", "roles/old.123.json"]
    assert sorted(p.name for p in tmp_path.rglob("*")) == [".lock", "manifest.json", "new.456.json", "roles"]


@pytest.mark.skipif(os.name != "posix", reason="POSIX file modes")
def test_build_files_are_readable_by_others(tmp_path):
    write_build(tmp_path, {"roles/a.1.json": b"{}"}, b"{}\n")
    for path in (tmp_path / "manifest.json", tmp_path / "roles" / "a.1.json"):
        assert stat.S_IMODE(path.stat().st_mode) == 0o644


@pytest.mark.skipif(os.name != "posix", reason="flock")
def test_a_held_lock_makes_a_second_compile_wait_then_fail_with_pm012(tmp_path):
    held = threading.Event()
    release = threading.Event()

    def holder() -> None:
        with build_lock(tmp_path):
            held.set()
            release.wait(5)

    thread = threading.Thread(target=holder)
    thread.start()
    held.wait(5)
    started = time.monotonic()
    with pytest.raises(PromptmillError) as err, build_lock(tmp_path, timeout=0.2):
        pass
    assert err.value.code == "PM012" and time.monotonic() - started >= 0.2
    release.set()
    thread.join()
    with build_lock(tmp_path, timeout=0.2):  # released when its holder is done
        pass


def test_a_file_where_the_build_folder_should_be_is_pm014(tmp_path):
    target = tmp_path / "build"
    target.write_text("not a folder")
    with pytest.raises(PromptmillError) as err:
        write_build(target, {"roles/a.1.json": b"{}"}, b"{}\n")
    assert err.value.code == "PM014"
    assert "it is a file, not a folder" in str(err.value)


def test_an_uncreatable_build_folder_is_pm014(tmp_path):
    (tmp_path / "file").write_text("x")
    with pytest.raises(PromptmillError) as err:
        write_build(tmp_path / "file" / "build", {"roles/a.1.json": b"{}"}, b"{}\n")
    assert err.value.code == "PM014"


def test_a_failed_bundle_write_is_pm014_and_keeps_the_old_manifest(tmp_path):
    write_build(tmp_path, {"roles/a.1.json": b"{}"}, b"old\n")
    (tmp_path / "roles" / "b.2.json").mkdir()  # a folder where the new bundle goes
    with pytest.raises(PromptmillError) as err:
        write_build(tmp_path, {"roles/b.2.json": b"{}"}, b"new\n")
    assert err.value.code == "PM014"
    assert (tmp_path / "manifest.json").read_bytes() == b"old\n"
    assert (tmp_path / "roles" / "a.1.json").is_file()
