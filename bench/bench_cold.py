"""Cold start: a fresh interpreter imports promptmill, loads a build and renders once.

    python bench/bench_cold.py                          # this checkout, both tokenizer backends
    python bench/bench_cold.py --against OTHER/compiler # and another checkout's package, in the same run: ratios
    python bench/bench_cold.py --runs 11                # more interpreters per row (the median is printed)

Each row starts `--runs` fresh interpreters per checkout, taking turns, (Python's own start-up excluded: the clock starts
before `import promptmill`) that time, in milliseconds: the import, `promptmill.load(build/)`,
the first `render("executor", <prompts/examples/executor.state.yaml>)` and its `to_payload()`.
Rows: `default` counts with tiktoken alone (PROMPTMILL_FAST_TOKENIZER=0, what the default install
does); `fast` lets promptmill[fast]'s quicktok load when the package is installed. The build is the
committed build/ (compiled by this checkout; `--against` renders the same state with the other
checkout's own build/ next to its compiler folder). Bytecode is warmed by one untimed run per row.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CHILD = r"""
import json, sys, time
t0 = time.perf_counter()
import promptmill
t1 = time.perf_counter()
rt = promptmill.load(sys.argv[1])
t2 = time.perf_counter()
req = rt.render("executor", json.loads(sys.argv[2]))
t3 = time.perf_counter()
req.to_payload()
t4 = time.perf_counter()
print(json.dumps({"import": t1 - t0, "load": t2 - t1, "render": t3 - t2, "payload": t4 - t3, "total": t4 - t0}))
"""
PARTS = ("import", "load", "render", "payload", "total")


def _state() -> str:
    import yaml

    return json.dumps(yaml.safe_load((ROOT / "prompts" / "examples" / "executor.state.yaml").read_text(encoding="utf-8")))


def _sample(compiler: Path, build: Path, fast: bool, state: str) -> dict[str, float]:
    """Milliseconds of each part in one fresh interpreter."""
    env = {**os.environ, "PYTHONPATH": str(compiler), "PROMPTMILL_FAST_TOKENIZER": "1" if fast else "0"}
    argv = [sys.executable, "-c", CHILD, str(build), state]
    out = subprocess.run(argv, capture_output=True, text=True, env=env, cwd=ROOT, check=True)
    got = json.loads(out.stdout.strip().splitlines()[-1])
    return {p: got[p] * 1000 for p in PARTS}


def measure(targets: list[tuple[Path, Path]], fast: bool, runs: int, state: str) -> list[dict[str, float]]:
    """Median milliseconds of each part over `runs` fresh interpreters per target, the targets taking
    turns (one sample of each, then the next round) so that a busy moment of the machine falls on all
    of them alike; one untimed warm-up each first (bytecode)."""
    samples: list[dict[str, list[float]]] = [{p: [] for p in PARTS} for _ in targets]
    for i in range(runs + 1):
        for k, (compiler, build) in enumerate(targets):
            got = _sample(compiler, build, fast, state)
            if i:
                for p in PARTS:
                    samples[k][p].append(got[p])
    return [{p: statistics.median(v) for p, v in s.items()} for s in samples]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--against", type=Path, help="another checkout's compiler/ folder (its build/ is the folder beside it)")
    args = ap.parse_args()
    state = _state()
    try:
        import quicktok  # noqa: F401

        rows = [("default", False), ("fast", True)]
    except ImportError:
        rows = [("default", False)]
        print("quicktok is not installed (promptmill[fast]): the fast row is left out")
    print(f"cold start, median of {args.runs} fresh interpreters, milliseconds (python {sys.version.split()[0]}, {os.cpu_count()} cores)")
    print(f"{'row':<22}" + "".join(f"{p:>10}" for p in PARTS))
    targets = [(ROOT / "compiler", ROOT / "build")]
    if args.against:
        targets.append((args.against.resolve(), args.against.resolve().parent / "build"))
    for label, fast in rows:
        measured = measure(targets, fast, args.runs, state)
        here = measured[0]
        print(f"{label:<22}" + "".join(f"{here[p]:>10.1f}" for p in PARTS))
        if args.against:
            other = measured[1]
            print(f"{label + ' (against)':<22}" + "".join(f"{other[p]:>10.1f}" for p in PARTS))
            print(f"{label + ' ratio':<22}" + "".join(f"{here[p] / other[p]:>9.2f}x" if other[p] else f"{'-':>10}" for p in PARTS))


if __name__ == "__main__":
    main()
