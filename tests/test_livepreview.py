"""`LivePreview` (what `promptmill watch` runs on each save) and the `watch` command itself."""

from __future__ import annotations

import os
import queue
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

from promptmill import Workspace
from promptmill.cli.livepreview import STATUS_MARK, LivePreview
from promptmill.watch import Watcher

CASES = Path(__file__).parent / "cases" / "render"
TIMEOUT = 15.0


class Screens:
    """Collects what the preview writes; tests wait for a screen that matches."""

    def __init__(self) -> None:
        self.items: list[str] = []
        self.cond = threading.Condition()

    def __call__(self, text: str) -> None:
        with self.cond:
            self.items.append(text)
            self.cond.notify_all()

    def wait_for(self, *needles: str, after: int = 0) -> str:
        def found() -> str | None:
            return next((s for s in self.items[after:] if all(n in s for n in needles)), None)

        with self.cond:
            assert self.cond.wait_for(lambda: found() is not None, TIMEOUT), f"no screen with {needles}: {self.items[after:]}"
            return found()  # type: ignore[return-value]


def preview(project: Path, role: str = "triage", **kw) -> tuple[LivePreview, Screens]:
    screens = Screens()
    return LivePreview(Workspace(project), role, project / "state.yaml", write=screens, **kw), screens


def test_good_render(project):
    lp, screens = preview(project)
    screen = lp.refresh()
    assert lp.ok and screens.items == [screen]
    assert screen.startswith("triage → text")
    assert "Login fails with {{ 7*7 }} in the password" in screen
    status = screen.splitlines()[-1]
    assert status.startswith(STATUS_MARK + "triage · ok · refreshed ") and " ms" in status


def test_broken_edit_shows_diagnostics_then_the_fix_renders(project):
    lp, _ = preview(project)
    lp.refresh()
    role = project / "prompts" / "roles" / "triage.yaml"
    good = role.read_text()
    role.write_text(good.replace("{{ ticket.title }}", "{{ ticket.title }"))
    screen = lp.refresh()
    assert not lp.ok
    assert "✗ templates have 1 error(s)" in screen
    assert "prompts/roles/triage.yaml:" in screen and "PM401" in screen
    assert "triage · failed" in screen.splitlines()[-1]
    role.write_text(good.replace("queue name only", "queue name, nothing else"))
    screen = lp.refresh()
    assert lp.ok and "queue name, nothing else" in screen
    assert "reparsed prompts/roles/triage.yaml; recompiled 1 role(s)" in screen.splitlines()[-1]


def test_status_names_a_deleted_file(project):
    lp, _ = preview(project)
    lp.refresh()
    extra = project / "prompts" / "roles" / "extra.yaml"
    extra.write_text((project / "prompts" / "roles" / "triage.yaml").read_text().replace("id: triage\n", "id: extra\n"))
    lp.refresh()
    extra.unlink()
    screen = lp.refresh()
    assert lp.ok and "removed prompts/roles/extra.yaml" in screen.splitlines()[-1]


def test_bad_state_and_unknown_role_are_shown_not_raised(project):
    lp, _ = preview(project)
    (project / "state.yaml").write_text("ticket: {id: one}\n")
    screen = lp.refresh()
    assert not lp.ok and "error[PM810]" in screen and "state.ticket" in screen
    (project / "state.yaml").write_text("ticket: [\n")
    assert "error[PM813]" in lp.refresh()
    (project / "state.yaml").unlink()
    assert "error[PM813]" in lp.refresh()
    lp2, _ = preview(project, role="triag")
    screen = lp2.refresh()
    assert "error[PM802]" in screen and "did you mean 'triage'" in screen


def test_budget_and_provider_are_passed_on(project):
    lp, _ = preview(project, budget=80, provider="openai")
    screen = lp.refresh()
    assert screen.startswith("triage → openai") and "/ 80 tokens" in screen


def test_watch_paths(project):
    lp, _ = preview(project)
    lp.refresh()
    paths = lp.watch_paths()
    assert project / "prompts" in paths
    assert project / "promptmill.yaml" in paths
    assert project / "state.yaml" in paths
    assert not any("library" in str(p) for p in paths)


def test_through_the_real_watcher(project):
    lp, screens = preview(project)
    lp.refresh()
    role = project / "prompts" / "roles" / "triage.yaml"
    good = role.read_text()
    with Watcher(lp.watch_paths(), lp.refresh, debounce=0.03):
        n = len(screens.items)
        role.write_text(good.replace("id: triage\n", "id: triage\nbogus_key: 1\n"))
        screens.wait_for("✗ templates have", "triage.yaml", after=n)
        n = len(screens.items)
        tmp = role.with_name(".triage.yaml.swp")
        tmp.write_text(good.replace("queue name only", "queue name and a reason"))
        os.replace(tmp, role)  # an editor's rename save fixes it
        screens.wait_for("queue name and a reason", "· ok ·", after=n)
        n = len(screens.items)
        state = project / "state.yaml"
        state.write_text(state.read_text().replace("Login fails", "Logout fails"))
        screens.wait_for("Logout fails", after=n)


def _reader(stream, lines: queue.Queue) -> None:
    for line in stream:
        lines.put(line)


def _wait_line(lines: queue.Queue, needle: str, seen: list[str]) -> str:
    deadline = time.monotonic() + TIMEOUT
    while time.monotonic() < deadline:
        try:
            line = lines.get(timeout=0.1)
        except queue.Empty:
            continue
        seen.append(line)
        if needle in line:
            return line
    raise AssertionError(f"no line with {needle!r} in:\n{''.join(seen[-40:])}")


def test_watch_command_end_to_end(project):
    env = dict(os.environ, PYTHONPATH=str(Path(__file__).parents[1] / "compiler"), NO_COLOR="1")
    proc = subprocess.Popen(
        [sys.executable, "-m", "promptmill.cli.main", "watch", ".", "--role", "triage", "--state", "state.yaml", "--debounce", "0.02"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        cwd=project,
    )
    try:
        out: queue.Queue = queue.Queue()
        err: queue.Queue = queue.Queue()
        threading.Thread(target=_reader, args=(proc.stdout, out), daemon=True).start()
        threading.Thread(target=_reader, args=(proc.stderr, err), daemon=True).start()
        seen: list[str] = []
        _wait_line(out, "triage · ok", seen)
        _wait_line(err, "watching", [])
        role = project / "prompts" / "roles" / "triage.yaml"
        good = role.read_text()
        role.write_text(good.replace("{{ ticket.id }}", "{{ ticket.id"))
        _wait_line(out, "PM401", seen)
        _wait_line(out, "triage · failed", seen)
        role.write_text(good.replace("queue name only", "queue name (fixed)"))
        _wait_line(out, "queue name (fixed)", seen)
        _wait_line(out, "triage · ok", seen)
        proc.send_signal(signal.SIGINT)
        assert proc.wait(TIMEOUT) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
