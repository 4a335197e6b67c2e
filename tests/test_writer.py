"""The build writer: leftovers of killed compiles are collected, files are readable, the lock serializes."""

from __future__ import annotations

import errno
import os
import stat
import subprocess
import sys
import threading
import time
from pathlib import Path

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


PROJECT_ROLE = "kind: role\nid: r\nsections:\n  - id: a\n    text: Hello.\n"


def _project(tmp_path):
    (tmp_path / "prompts").mkdir(parents=True)
    (tmp_path / "prompts" / "r.yaml").write_text(PROJECT_ROLE)
    return tmp_path


@pytest.mark.parametrize("error", [errno.ENOSPC, errno.EROFS])
def test_a_disk_that_refuses_the_build_is_pm014_through_the_cli(tmp_path, monkeypatch, error):
    """Disk full or read-only while the build is renamed into place: PM014 naming the cause, never PM000."""
    from click.testing import CliRunner

    from promptmill.cli.main import main

    project = _project(tmp_path)
    monkeypatch.chdir(project)

    def refuse(src, dst, *args, **kwargs):
        raise OSError(error, os.strerror(error), str(dst))

    monkeypatch.setattr(os, "replace", refuse)
    result = CliRunner().invoke(main, ["compile"], catch_exceptions=False)
    assert result.exit_code == 1, result.output
    assert "error[PM014]" in result.output and os.strerror(error) in result.output, result.output
    assert "PM000" not in result.output and "Traceback" not in result.output
    assert not (project / "build" / "manifest.json").exists()
    assert [p.name for p in (project / "build").rglob(".tmp-*")] == []  # the temporary files went too


def test_a_build_folder_linking_to_another_project_is_pm017_and_nothing_there_changes(tmp_path):
    """The other project's file named like a bundle (a stale one, to garbage collection) stays."""
    project, other = _project(tmp_path / "p"), tmp_path / "other"
    (other / "roles").mkdir(parents=True)
    stale = other / bundle_path("gone", b"{}")
    stale.write_bytes(b"{}")  # its content hashes to its name: garbage collection would take it
    (project / "build").symlink_to(other)
    done = subprocess.run(
        [sys.executable, "-m", "promptmill.cli", "compile"], cwd=project, capture_output=True, text=True, env=_env(), timeout=60
    )
    assert done.returncode == 1, done.stderr
    assert "error[PM017]" in done.stderr and "Traceback" not in done.stderr
    assert stale.read_bytes() == b"{}" and sorted(p.name for p in other.rglob("*")) == sorted(["roles", stale.name])


def test_o_naming_a_folder_outside_the_project_is_allowed(tmp_path):
    """`-o` outside the project is the user's choice: the build goes there."""
    project = _project(tmp_path / "p")
    done = subprocess.run(
        [sys.executable, "-m", "promptmill.cli", "compile", "-o", str(tmp_path / "elsewhere")],
        cwd=project,
        capture_output=True,
        text=True,
        env=_env(),
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "elsewhere" / "manifest.json").is_file()


def _env() -> dict[str, str]:
    compiler = str(Path(__file__).resolve().parents[1] / "compiler")
    return {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in (compiler, os.environ.get("PYTHONPATH", "")) if p)}
