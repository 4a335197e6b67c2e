"""Save-to-refresh latency of `promptmill watch` on a generated 50-role project.

    PYTHONPATH=compiler python bench/bench_watch.py [--roles 50] [--saves 30]

Runs the real command (`python -m promptmill.cli.main watch`, default debounce
0.05 s) in a subprocess, then saves files the way an editor does and times,
from just before each write until the refreshed screen showing the new text
has been printed:

- role:     one role file edited (1 file parsed, 1 role recompiled);
- fragment: a fragment shared by 10 roles edited (1 parsed, 10 recompiled);
- rename:   the role saved by writing a temp file and renaming it over;
- state:    the state file edited (nothing recompiled, re-rendered).

Prints median, p95 and max per scenario, and the refresh's own time as the
command reports it (the rest is the debounce and the filesystem events);
then, in-process, the ratio of a compile from scratch to an incremental
`Workspace.refresh()` after a one-role edit.
Target: median and p95 under 300 ms.
"""

from __future__ import annotations

import argparse
import os
import queue
import re
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from genproject import make_project, role_file

ROLE = "agent-007"
STATUS = re.compile(r"── \S+ · (ok|failed) · refreshed \S+ in (\d+) ms")


class Screen:
    """Reads the command's stdout; `wait(needle)` returns (seconds, refresh ms) of the screen holding it."""

    def __init__(self, stream) -> None:
        self.lines: queue.Queue[tuple[float, str]] = queue.Queue()
        threading.Thread(target=self._read, args=(stream,), daemon=True).start()

    def _read(self, stream) -> None:
        for line in stream:
            self.lines.put((time.perf_counter(), line))

    def wait(self, needle: str, timeout: float = 20.0) -> tuple[float, int]:
        found = False
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                at, line = self.lines.get(timeout=0.5)
            except queue.Empty:
                continue
            if needle in line:
                found = True
            m = STATUS.search(line)
            if m and found:
                return at, int(m.group(2))
            if m:
                found = False  # a screen without the needle: keep waiting
        raise SystemExit(f"timed out waiting for a screen with {needle!r}")


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def run_scenario(name: str, saves: int, save, screen: Screen) -> tuple[list[float], list[int]]:
    latencies, refresh = [], []
    for i in range(1, saves + 1):
        start = time.perf_counter()
        needle = save(i)
        at, ms = screen.wait(needle)
        latencies.append((at - start) * 1000)
        refresh.append(ms)
        time.sleep(0.1)  # let trailing events of this save settle before the next one
    return latencies, refresh


def incremental_ratio(root: Path, role: Path, runs: int = 7) -> tuple[float, float]:
    """(ms of a compile from scratch, ms of a Workspace refresh after one role edit), medians."""
    from promptmill import Workspace
    from promptmill.compiling.api import build_in_memory

    scratch, refresh = [], []
    ws = Workspace(root)
    ws.refresh()
    for i in range(runs):
        start = time.perf_counter()
        build_in_memory(root)
        scratch.append((time.perf_counter() - start) * 1000)
        role.write_text(role_file(7, 5000 + i))
        start = time.perf_counter()
        ws.refresh()
        refresh.append((time.perf_counter() - start) * 1000)
    return statistics.median(scratch), statistics.median(refresh)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--roles", type=int, default=50)
    parser.add_argument("--saves", type=int, default=30)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        state = make_project(root, args.roles)
        role = root / "prompts" / "roles" / f"{ROLE}.yaml"
        guide = root / "prompts" / "fragments" / "guide-2.yaml"
        guide_text = guide.read_text()
        state_text = state.read_text()
        env = dict(os.environ, NO_COLOR="1")
        proc = subprocess.Popen(
            [sys.executable, "-m", "promptmill.cli.main", "watch", ".", "--role", ROLE, "--state", "state.yaml"],
            cwd=root,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
            env=env,
        )
        try:
            screen = Screen(proc.stdout)
            _, first_ms = screen.wait(f"You are agent {7}.")
            time.sleep(0.5)

            def save_role(i: int) -> str:
                role.write_text(role_file(7, i))
                return f"(revision {i})"

            def save_fragment(i: int) -> str:
                guide.write_text(guide_text.replace("Guideline 2.0:", f"Guideline 2.0 (edit {i}):"))
                return f"(edit {i})"

            def save_by_rename(i: int) -> str:
                tmp_file = role.with_name(f".{role.name}.tmp")
                tmp_file.write_text(role_file(7, 1000 + i))
                os.replace(tmp_file, role)
                return f"(revision {1000 + i})"

            def save_state(i: int) -> str:
                state.write_text(state_text.replace("Profile the parser", f"Profile the parser (take {i})"))
                return f"(take {i})"

            print(f"promptmill watch, {args.roles} roles, {args.saves} saves per scenario (first render {first_ms} ms)")
            print(f"{'scenario':<10} {'median':>8} {'p95':>8} {'max':>8}   refresh itself (median)")
            for name, save in (("role", save_role), ("fragment", save_fragment), ("rename", save_by_rename), ("state", save_state)):
                lat, refresh = run_scenario(name, args.saves, save, screen)
                print(
                    f"{name:<10} {statistics.median(lat):6.0f}ms {percentile(lat, 0.95):6.0f}ms {max(lat):6.0f}ms   "
                    f"{statistics.median(refresh):.0f} ms"
                )
            print("target: save-to-refresh under 300 ms (includes the 50 ms debounce)")
            scratch, refresh = incremental_ratio(root, role)
            print(
                f"in-process: compile from scratch {scratch:.0f} ms, Workspace refresh after a role edit "
                f"{refresh:.0f} ms: {scratch / refresh:.0f}x less work per save"
            )
        finally:
            proc.terminate()
            proc.wait(10)


if __name__ == "__main__":
    main()
