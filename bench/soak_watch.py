"""Soak the watcher: 1,000 rapid saves, deletes and renames of files and folders.

    PYTHONPATH=compiler python bench/soak_watch.py [--saves 1000] [--roles 50]

Runs the same rebuild `promptmill watch` runs (a `LivePreview` over a
`Workspace`, handed to a real `Watcher`) on a generated project, then hammers
it without pauses: plain saves, temp-file-and-rename saves, an invalid edit
followed by a fix, a file deleted and re-created, files and folders renamed
back and forth, the state file rewritten; in bursts of 20 with short pauses,
so rebuilds run while files are changing under them. At the end it waits for the
watcher to go quiet and checks that:

- the watcher thread is alive and no rebuild raised;
- the last screen renders the role and shows the last content written;
- memory, threads and open files did not grow without bound.

Prints the outcome; exits 1 when a check fails.
"""

from __future__ import annotations

import argparse
import gc
import os
import random
import shutil
import sys
import tempfile
import threading
import time
import tracemalloc
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from genproject import make_project, role_file
from promptmill import Workspace
from promptmill.cli.livepreview import LivePreview
from promptmill.watch import Watcher

ROLE = "agent-007"


def rss_mib() -> float:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


def open_fds() -> int:
    return len(os.listdir("/proc/self/fd"))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--saves", type=int, default=1000)
    parser.add_argument("--roles", type=int, default=50)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        state = make_project(root, args.roles)
        os.chdir(root)
        roles = root / "prompts" / "roles"
        role = roles / f"{ROLE}.yaml"
        screens: list[str] = []
        lock = threading.Lock()

        def write(screen: str) -> None:
            with lock:
                screens.append(screen)
                del screens[:-3]

        preview = LivePreview(Workspace(root), ROLE, state, write=write)
        preview.refresh()
        watcher = Watcher(preview.watch_paths(), preview.refresh, debounce=0.05).start()
        tracemalloc.start()
        gc.collect()
        base_mem, base_rss, base_threads, base_fds = tracemalloc.get_traced_memory()[0], rss_mib(), threading.active_count(), open_fds()
        kinds: dict[str, int] = {}
        started = time.perf_counter()
        for i in range(args.saves):
            if i % 20 == 19:  # bursts with short pauses, so rebuilds run while files change
                time.sleep(rng.uniform(0, 0.08))
            kind = rng.choice(
                [
                    "save",
                    "save",
                    "save",
                    "rename-save",
                    "invalid-then-fix",
                    "delete-file",
                    "rename-file",
                    "rename-folder",
                    "new-folder",
                    "state",
                ]
            )
            kinds[kind] = kinds.get(kind, 0) + 1
            other = roles / f"agent-{rng.randrange(8, args.roles):03d}.yaml"
            if kind == "save":
                role.write_text(role_file(7, i))
            elif kind == "rename-save":
                tmp_file = roles / f".{ROLE}.yaml.swp"
                tmp_file.write_text(role_file(7, i))
                os.replace(tmp_file, role)
            elif kind == "invalid-then-fix":
                role.write_text("kind: role\nid: [broken\n")
                role.write_text(role_file(7, i))
            elif kind == "delete-file" and other.exists():
                text = other.read_text()
                other.unlink()
                other.write_text(text)
            elif kind == "rename-file" and other.exists():
                moved = other.with_name(other.stem + "-moved.yaml")
                os.rename(other, moved)
                os.rename(moved, other)
            elif kind == "rename-folder":
                os.rename(root / "prompts" / "constraints", root / "prompts" / "rules")
                os.rename(root / "prompts" / "rules", root / "prompts" / "constraints")
            elif kind == "new-folder":
                extra = root / "prompts" / "extra" / f"n{i}"
                extra.mkdir(parents=True)
                (extra / "note.yaml").write_text(f"kind: fragment\nid: extra/n{i}\nname: N{i}\ndescription: d\ntext: t\n")
                shutil.rmtree(root / "prompts" / "extra")
            elif kind == "state":
                state.write_text(state.read_text().replace("Profile the parser", "Profile the parser", 1))
        final = role_file(7, args.saves)
        role.write_text(final)
        burst = time.perf_counter() - started
        marker = f"(revision {args.saves})"
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            with lock:
                last = screens[-1] if screens else ""
            if marker in last and preview.ok and watcher._pending == set():
                break
            time.sleep(0.05)
        time.sleep(0.5)  # trailing events
        gc.collect()
        mem = tracemalloc.get_traced_memory()
        alive = watcher._thread is not None and watcher._thread.is_alive()
        threads, fds, rss = threading.active_count(), open_fds(), rss_mib()
        watcher.stop()
        with lock:
            last = screens[-1] if screens else ""
        checks = {
            "watcher alive after the soak": alive,
            "no rebuild raised": watcher.errors == 0,
            "last screen renders the role": preview.ok,
            "last screen shows the last save": marker in last,
            "threads did not grow": threads <= base_threads,
            "open files did not grow": fds <= base_fds + 4,
            "traced memory grew < 20 MiB": (mem[0] - base_mem) < 20 * 1_048_576,
        }
        print(f"{args.saves} changes in {burst:.2f} s ({', '.join(f'{k} {v}' for k, v in sorted(kinds.items()))})")
        print(f"rebuilds: {watcher.rebuilds} (debounced), exceptions in rebuild: {watcher.errors}, refreshes: {preview.refreshes}")
        print(
            f"memory: traced {base_mem / 1_048_576:.1f} -> {mem[0] / 1_048_576:.1f} MiB (peak {mem[1] / 1_048_576:.1f}), "
            f"RSS {base_rss:.0f} -> {rss:.0f} MiB; threads {base_threads} -> {threads}; open files {base_fds} -> {fds}"
        )
        for name, ok in checks.items():
            print(f"  {'ok  ' if ok else 'FAIL'} {name}")
        return 0 if all(checks.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
