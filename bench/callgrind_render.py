"""N renders of bench/workload.py's executor workload, for counting instructions with callgrind.

Wall-clock ratios on a shared machine move with its load; callgrind's instruction
count (Ir) does not. Run it twice, with N renders and with 0 (both making the same N
states, the optional last argument), and subtract: the difference is what the N renders
cost, whatever the set-up (imports, the compile of the workload, the states) cost. `promptmill --version` says whether the runtime
under test is pure Python or compiled with mypyc.

    PYTHONHASHSEED=0 valgrind --tool=callgrind --callgrind-out-file=/tmp/n.out python bench/callgrind_render.py medium fresh 10
    PYTHONHASHSEED=0 valgrind --tool=callgrind --callgrind-out-file=/tmp/0.out python bench/callgrind_render.py medium fresh 0 10
    callgrind_annotate /tmp/n.out | grep 'PROGRAM TOTALS'    # minus the same line of /tmp/0.out, divided by 10

Or `python bench/callgrind_render.py --ir medium fresh 10`, which runs both under valgrind and prints Ir per render,
or `--cpu medium fresh 40`: the median CPU time of this process per render (time.process_time; less
moved by other jobs than wall time, not immune to them: shared caches, frequency).
Sizes as bench/bench_peers.py: small (10 entries, 5 tools, budget 8,000), medium (200, 40, 8,000),
large (2,000, 200, 32,000). Modes: fresh (every text new), same (one state again and again).
"""

from __future__ import annotations

import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

SIZES = {"small": (10, 5, 8000), "medium": (200, 40, 8000), "large": (2000, 200, 32000)}


def renders(size: str, mode: str, n: int, made: int | None = None) -> list[float]:
    """Render n states (of `made`, default n, generated first); returns each render's CPU seconds."""
    import workload
    from promptmill.compiling.api import build_in_memory

    entries, tools, budget = SIZES[size]
    runtime, _ = build_in_memory(workload.project())
    runtime.render("executor", workload.state(entries, tools, seed=99, fresh="warm"), budget=budget)  # prepare role, load tokenizer
    if mode == "fresh":
        states = [workload.state(entries, tools, seed=i, fresh=f"r{i}x") for i in range(max(n, made or 0))][:n]
    else:
        same = workload.state(entries, tools, seed=0, fresh="same")
        runtime.render("executor", same, budget=budget)
        states = [same] * n
    cpu = []
    for st in states:
        t = time.process_time()
        runtime.render("executor", st, budget=budget)
        cpu.append(time.process_time() - t)
    return cpu


def ir(args: list[str]) -> int:
    """Instructions executed by this script with `args`, under callgrind."""
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "cg.out")
        env = {**os.environ, "PYTHONHASHSEED": "0"}
        cmd = ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", sys.executable, __file__, *args]
        subprocess.run(cmd, check=True, env=env, capture_output=True)
        totals = Path(out).read_text(encoding="utf-8", errors="replace")
        return int(re.search(r"^totals:\s+(\d+)", totals, re.M).group(1))  # type: ignore[union-attr]


def main() -> None:
    args = sys.argv[1:]
    if args and args[0] == "--ir":
        size, mode, n = args[1], args[2], int(args[3])
        per = (ir([size, mode, str(n), str(n)]) - ir([size, mode, "0", str(n)])) / n  # both make the n states
        print(f"{size} {mode}: {per / 1e6:.2f} M instructions per render ({n} renders)")
        return
    if args and args[0] == "--cpu":
        from promptmill.runtime.buildinfo import build_description

        cpu = renders(args[1], args[2], int(args[3]))
        print(f"{args[1]} {args[2]}: {statistics.median(cpu) * 1e3:.3f} ms CPU per render, median of {len(cpu)} ({build_description()})")
        return
    renders(args[0], args[1], int(args[2]), int(args[3]) if len(args) > 3 else None)


if __name__ == "__main__":
    main()
