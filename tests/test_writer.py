"""The build writer: leftovers of killed compiles are collected, files are readable, the lock serializes."""

from __future__ import annotations

import os
import stat
import threading
import time

import pytest

from promptmill.compiling.writer import build_lock, bundle_path, write_build
from promptmill.core.errors import PromptmillError


def test_leftovers_of_a_killed_compile_are_removed(tmp_path):
    (tmp_path / "roles").mkdir()
    (tmp_path / ".tmp-manifest").write_bytes(b"{half")  # a manifest write cut short (mkstemp: 8 characters)
    (tmp_path / "roles" / ".tmp-x1y2z3_q").write_bytes(b"half a bundle")
    old = bundle_path("old", b"{}")  # a bundle written by a killed compile: listed by no manifest
    (tmp_path / old).write_bytes(b"{}")
    new = bundle_path("new", b"{ }")
    removed = write_build(tmp_path, {new: b"{ }"}, b"{}\n")
    assert sorted(removed) == [".tmp-manifest", "roles/.tmp-x1y2z3_q", old]
    assert sorted(p.name for p in tmp_path.rglob("*")) == [".lock", "manifest.json", new[6:], "roles"]


def test_garbage_collection_removes_only_files_promptmill_wrote(tmp_path):
    (tmp_path / "roles" / "team").mkdir(parents=True)
    mine = {
        "roles/my-notes.json": b"{}",  # not named like a bundle
        "roles/r.yaml": b"kind: role\n",  # a template
        "roles/x.0123456789ab.json": b"{}",  # named like a bundle, but its content does not hash to the name
        "roles/team/.tmp-notes": b"x",  # not mkstemp's name
        "tokenizers/abc.json": b"{}",
    }
    for rel, data in mine.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_bytes(data)
    listed = bundle_path("gone", b"old")  # listed by the previous manifest
    (tmp_path / listed).write_bytes(b"edited since")
    removed = write_build(tmp_path, {bundle_path("a", b"{}"): b"{}"}, b"{}\n", owned=frozenset({listed}))
    assert removed == [listed]
    for rel, data in mine.items():
        assert (tmp_path / rel).read_bytes() == data


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
