"""`promptmill snapshot` and `promptmill test` on hostile snapshot folders, run as real processes:
links out of the project (the folder, `snapshots/ROLE`, a snapshot file to /dev/zero), a FIFO,
a file over the cap, a damaged snapshot that `test --update` must repair, a file of the user's
that it must not touch, and reports (JUnit, GitHub annotations) that stay valid whatever a
snapshot or a file name holds."""

from __future__ import annotations

import os
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from promptmill.review.snapshotfiles import MARK, SNAPSHOT_LIMIT

COMPILER = Path(__file__).resolve().parents[1] / "compiler"
ROLE = "kind: role\nid: r\nsections:\n  - id: a\n    text: Hello.\n"


def cli(project: Path, *args: str, timeout: float = 30) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(COMPILER)}
    return subprocess.run(
        [sys.executable, "-m", "promptmill.cli", *args],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        errors="replace",
        timeout=timeout,
    )


@pytest.fixture
def proj(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    (root / "prompts").mkdir(parents=True)
    (root / "examples").mkdir()
    (root / "prompts/r.yaml").write_text(ROLE, encoding="utf-8")
    (root / "prompts/s.yaml").write_text(ROLE.replace("id: r", "id: s"), encoding="utf-8")
    (root / "examples/r.state.yaml").write_text("{}\n", encoding="utf-8")
    (root / "examples/s.state.yaml").write_text("{}\n", encoding="utf-8")
    return root


def _files(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def test_a_role_folder_that_links_out_is_pm017_and_nothing_there_changes(proj: Path, tmp_path: Path):
    other = tmp_path / "other" / "r"
    other.mkdir(parents=True)
    (other / "r.txt").write_text(f"{MARK} of role r with examples/r.state.yaml\nits own\n", encoding="utf-8")
    (other / "stale.txt").write_text(f"{MARK} of role r with examples/r.stale.state.yaml\n", encoding="utf-8")
    (proj / "snapshots").mkdir()
    os.symlink(other, proj / "snapshots" / "r")
    before = _files(tmp_path / "other")
    for args in (["snapshot"], ["test"], ["test", "--update"]):
        done = cli(proj, *args)
        assert done.returncode == 1, done
        assert "PM017" in done.stdout + done.stderr and "snapshots/r" in done.stdout + done.stderr
        assert "Traceback" not in done.stderr
    assert _files(tmp_path / "other") == before
    assert not (proj / "snapshots" / "s").exists()  # checked before anything was written


def test_a_snapshot_linking_to_dev_zero_or_a_fifo_is_never_read_or_replaced(proj: Path):
    (proj / "snapshots/r").mkdir(parents=True)
    os.symlink("/dev/zero", proj / "snapshots/r/r.txt")
    (proj / "snapshots/s").mkdir()
    os.mkfifo(proj / "snapshots/s/s.txt")
    done = cli(proj, "test", timeout=20)
    said = done.stdout
    assert done.returncode == 1
    assert "blocked: r with examples/r.state.yaml\n  error[PM017] snapshots/r/r.txt: the snapshot is a symbolic link" in said
    assert "blocked: s with examples/s.state.yaml\n  error[PM100] snapshots/s/s.txt: the snapshot is a FIFO (named pipe)" in said
    assert "2 snapshots in snapshots/: 2 blocked" in said
    assert "promptmill test --update` (or" not in said  # it would not repair them: it is not asked to
    update = cli(proj, "test", "--update", timeout=20)
    assert update.returncode == 1 and "PM017" in update.stderr
    assert os.readlink(proj / "snapshots/r/r.txt") == "/dev/zero"


def test_a_snapshot_over_the_cap_is_not_read(proj: Path):
    (proj / "snapshots/r").mkdir(parents=True)
    with open(proj / "snapshots/r/r.txt", "wb") as f:
        f.truncate(SNAPSHOT_LIMIT + 1)  # sparse: no disk, no memory
    done = cli(proj, "test")
    assert done.returncode == 1
    said = f"error[PM105] snapshots/r/r.txt: the snapshot is {SNAPSHOT_LIMIT + 1:,} bytes; the limit is {SNAPSHOT_LIMIT:,} bytes"
    assert said in done.stdout


def test_a_damaged_snapshot_says_what_is_wrong_and_update_repairs_it(proj: Path):
    assert cli(proj, "snapshot").returncode == 0
    good = (proj / "snapshots/r/r.txt").read_bytes()
    (proj / "snapshots/r/r.txt").write_bytes(good.replace(b"Hello.", b"Hel\xfflo."))
    (proj / "snapshots/s/s.txt").write_bytes(b"")  # emptied by some other tool
    done = cli(proj, "test")
    assert done.returncode == 1
    line = good.decode().splitlines().index("| Hello.") + 1
    bad_byte = f"error[PM102] snapshots/r/r.txt:{line}:6: the snapshot is damaged: it is not UTF-8 text (byte 0xFF)"
    assert f"damaged: r with examples/r.state.yaml\n  {bad_byte}" in done.stdout
    empty = "error[PM010] snapshots/s/s.txt: the snapshot is damaged: the file is empty"
    assert f"damaged: s with examples/s.state.yaml\n  {empty}" in done.stdout
    assert "run `promptmill test --update`" in done.stdout
    update = cli(proj, "test", "--update")
    assert update.returncode == 0, update.stdout + update.stderr
    assert "2 snapshots in snapshots/: 2 passed; updated 2 files" in update.stdout
    assert (proj / "snapshots/r/r.txt").read_bytes() == good
    assert cli(proj, "test").returncode == 0


def test_a_file_of_the_users_where_a_snapshot_goes_is_blocked_and_never_overwritten(proj: Path):
    (proj / "snapshots/s").mkdir(parents=True)
    (proj / "snapshots/s/s.txt").write_text("my notes\n", encoding="utf-8")
    (proj / "snapshots/notes.txt").write_bytes(b"\xff not mine, not at a case's path\n")
    done = cli(proj, "test")
    assert done.returncode == 1
    assert "blocked: s with examples/s.state.yaml\n  error[PM010] snapshots/s/s.txt: not a snapshot promptmill wrote" in done.stdout
    assert "`promptmill test --update` does not touch a blocked snapshot's file: move it aside first" in done.stdout
    for args in (["snapshot"], ["test", "--update"]):
        refused = cli(proj, *args)
        assert refused.returncode == 1 and "PM010" in refused.stderr
    assert (proj / "snapshots/s/s.txt").read_text(encoding="utf-8") == "my notes\n"
    assert (proj / "snapshots/notes.txt").read_bytes() == b"\xff not mine, not at a case's path\n"
    assert not (proj / "snapshots/r").exists()  # refused before anything was written


def test_reports_stay_valid_xml_and_annotations_with_control_characters(proj: Path):
    (proj / "examples" / "s.a\x07b.state.yaml").write_text("{}\n", encoding="utf-8")  # a bell in a file name
    assert cli(proj, "snapshot").returncode == 0
    with open(proj / "snapshots/r/r.txt", "ab") as f:
        f.write("stray \x01\x1b[31m\x00 \ufffe and \x7f\r\n".encode())
    junit = cli(proj, "test", "--format", "junit")
    assert junit.returncode == 1
    root = ET.fromstring(junit.stdout.encode("utf-8"))  # the old report did not parse
    (failure,) = root.iter("failure")
    assert "-stray \\x01\\x1b[31m\\x00 \\ufffe and \\x7f" in (failure.text or "")
    names = {c.get("name") for c in root.iter("testcase")}
    assert "s with examples/s.a\\x07b.state.yaml" in names
    github = cli(proj, "test", "--format", "github")
    annotations = [line for line in github.stdout.split("\n") if line.startswith("::error")]
    assert len(annotations) == 1
    assert not any(ord(c) < 0x20 or 0x7F <= ord(c) < 0xA0 for c in annotations[0])
    assert "%0A-stray \\x01\\x1b[31m\\x00 \\ufffe and \\x7f" in annotations[0]
    text = cli(proj, "test").stdout
    assert "\x1b" not in text and "\x01" not in text  # nothing a terminal would act on


def test_an_obsolete_snapshot_is_removed_only_where_promptmill_would_have_written_it(proj: Path, tmp_path: Path):
    out = tmp_path / "review"  # --out is the user's own choice of folder, here one above another project's snapshots
    elsewhere = out / "other" / "snapshots" / "planner" / "planner.txt"
    elsewhere.parent.mkdir(parents=True)
    elsewhere.write_text(f"{MARK} of role planner with examples/planner.state.yaml\n", encoding="utf-8")
    stale = out / "gone" / "gone.long.txt"
    stale.parent.mkdir(parents=True)
    stale.write_text(f"{MARK} of role gone with examples/gone.long.state.yaml\n", encoding="utf-8")
    done = cli(proj, "snapshot", "--out", str(out))
    assert done.returncode == 0, done.stderr
    assert "2 snapshots written, 0 unchanged, 1 removed" in done.stdout
    assert elsewhere.exists()  # another project's snapshot, not where this folder's would be: it stays
    assert not stale.exists() and (out / "r" / "r.txt").exists()


def test_out_may_name_a_folder_that_does_not_exist_yet(proj: Path):
    done = cli(proj, "snapshot", "--out", "review/new")
    assert done.returncode == 0, done.stderr
    assert (proj / "review/new/r/r.txt").read_text(encoding="utf-8").startswith(MARK)
    assert cli(proj, "test", "--out", "review/new").returncode == 0
