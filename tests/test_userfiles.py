"""core/userfiles, the one file-system guard, on real files: links, FIFOs, devices, sizes, atomic writes."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

from promptmill.core import userfiles
from promptmill.core.errors import PromptmillError


def _code(call) -> str:
    with pytest.raises(PromptmillError) as info:
        call()
    return info.value.code


def test_reads_a_regular_file_inside_the_root(tmp_path):
    (tmp_path / "a.txt").write_text("héllo", encoding="utf-8")
    assert userfiles.read_text(tmp_path / "a.txt", root=tmp_path) == "héllo"


def test_a_link_out_of_the_root_is_pm017_and_is_not_opened(tmp_path):
    project, other = tmp_path / "p", tmp_path / "o"
    project.mkdir()
    other.mkdir()
    os.mkfifo(other / "pipe")  # opened, it would block: the check must come before the open
    os.symlink(other / "pipe", project / "state.yaml")
    assert _code(lambda: userfiles.read_bytes(project / "state.yaml", root=project)) == "PM017"


def test_a_link_inside_the_root_is_followed(tmp_path):
    (tmp_path / "real.txt").write_text("x")
    os.symlink("real.txt", tmp_path / "link.txt")
    assert userfiles.read_text(tmp_path / "link.txt", root=tmp_path) == "x"


def test_a_fifo_without_a_writer_is_pm100_at_once(tmp_path):
    os.mkfifo(tmp_path / "pipe")
    done = []
    thread = threading.Thread(target=lambda: done.append(_code(lambda: userfiles.read_bytes(tmp_path / "pipe"))), daemon=True)
    thread.start()
    thread.join(5)
    assert done == ["PM100"]


def test_a_device_is_pm100_and_nothing_is_read():
    with pytest.raises(PromptmillError) as info:
        userfiles.read_bytes("/dev/zero")
    assert info.value.code == "PM100" and "a device" in info.value.message


def test_a_file_over_the_limit_is_pm105_naming_file_and_limit(tmp_path):
    (tmp_path / "big").write_bytes(b"x" * 101)
    with pytest.raises(PromptmillError) as info:
        userfiles.read_bytes(tmp_path / "big", limit=100, what="snapshot")
    assert info.value.code == "PM105" and "big" in info.value.message and "100 bytes" in info.value.message


def test_invalid_utf8_is_pm102_with_line_and_column(tmp_path):
    (tmp_path / "s").write_bytes(b"ok\nab\xff")
    with pytest.raises(PromptmillError) as info:
        userfiles.read_text(tmp_path / "s")
    assert info.value.code == "PM102" and ":2:3:" in info.value.message


def test_write_through_a_linked_folder_is_refused_before_anything_is_made(tmp_path):
    project, other = tmp_path / "p", tmp_path / "o"
    project.mkdir()
    (other / "snaps").mkdir(parents=True)
    (other / "snaps" / "keep.txt").write_text("theirs")
    os.symlink(other / "snaps", project / "snapshots")
    assert _code(lambda: userfiles.write_text(project / "snapshots" / "r" / "r.txt", "mine", root=project)) == "PM017"
    assert sorted(p.name for p in (other / "snaps").iterdir()) == ["keep.txt"]
    assert _code(lambda: userfiles.remove(project / "snapshots" / "keep.txt", root=project)) == "PM017"
    assert (other / "snaps" / "keep.txt").read_text() == "theirs"


def test_write_never_goes_through_a_link_even_inside(tmp_path):
    (tmp_path / "target.txt").write_text("old")
    os.symlink("target.txt", tmp_path / "out.txt")
    assert _code(lambda: userfiles.write_text(tmp_path / "out.txt", "new", root=tmp_path)) == "PM017"
    assert (tmp_path / "target.txt").read_text() == "old"


def test_write_is_atomic_and_makes_folders(tmp_path):
    userfiles.write_text(tmp_path / "a" / "b" / "c.txt", "one", root=tmp_path)
    userfiles.write_text(tmp_path / "a" / "b" / "c.txt", "two", root=tmp_path)
    assert (tmp_path / "a" / "b" / "c.txt").read_text() == "two"
    assert sorted(p.name for p in (tmp_path / "a" / "b").iterdir()) == ["c.txt"]  # no temporary file left


def test_a_failed_write_leaves_the_old_file_and_no_temporary(tmp_path, monkeypatch):
    (tmp_path / "f.txt").write_text("old")

    def full(*args, **kwargs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(userfiles.os, "replace", full)
    with pytest.raises(OSError):
        userfiles.write_text(tmp_path / "f.txt", "new", root=tmp_path)
    assert (tmp_path / "f.txt").read_text() == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["f.txt"]


def test_remove_takes_regular_files_only(tmp_path):
    (tmp_path / "d").mkdir()
    (tmp_path / "f").write_text("x")
    os.symlink("f", tmp_path / "l")
    assert userfiles.remove(tmp_path / "d", root=tmp_path) is False
    assert userfiles.remove(tmp_path / "l", root=tmp_path) is False and (tmp_path / "f").exists()
    assert userfiles.remove(tmp_path / "f", root=tmp_path) is True and not (tmp_path / "f").exists()
    assert userfiles.remove(tmp_path / "missing", root=tmp_path) is False


def test_make_folder_refuses_a_link_out(tmp_path):
    project, other = tmp_path / "p", tmp_path / "o"
    project.mkdir()
    other.mkdir()
    os.symlink(other, project / "gen")
    assert _code(lambda: userfiles.make_folder(project / "gen" / "sub", root=project)) == "PM017"
    assert list(other.iterdir()) == []


def test_a_name_too_long_is_named_by_the_boundary(tmp_path):
    from promptmill.core.boundary import environment_error

    with pytest.raises(OSError) as info:
        userfiles.write_text(tmp_path / ("n" * 300), "x", root=tmp_path)
    found = environment_error(info.value)
    assert found is not None and found.code == "PM022"
    with pytest.raises(PromptmillError) as read:
        userfiles.read_bytes(tmp_path / ("n" * 300))
    assert read.value.code == "PM100" and "longer than the file system allows" in read.value.message


def test_the_guard_module_imports_nothing_of_the_compiler():
    import ast

    tree = ast.parse(Path(userfiles.__file__).read_text(encoding="utf-8"))
    imported = {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module}
    assert imported <= {"__future__", "pathlib", "errors"}, imported
