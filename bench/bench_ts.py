"""The TypeScript runtime next to the Python runtime, on bench_peers.py's workload, in one run.

Build the TypeScript runtime first, then run from the repository root:

    (cd runtimes/typescript && npm ci && npm run build)
    python bench/bench_ts.py                  # the full run (a minute or two on the 2-core machine)
    python bench/bench_ts.py --quick          # fewer repetitions
    python bench/bench_ts.py --sizes small --formats text --cold 1   # one table and one cold start

Workload: bench/workload.py's executor role and bench_peers.py's sizes: small (10 memory entries, 5 tools,
budget 8,000: nothing is trimmed), medium (200 entries, 40 tools, budgets 8,000 and 3,000) and large (2,000
entries, 200 tools, budget 32,000), each render a new state (fresh content: every text new, so no cache helps).
The role is compiled once into a build folder that both runtimes load.

Renders: Python runs `rt.render("executor", state, budget=B[, provider=F])` in this process, then `req.text` or
`req.to_payload()`; TypeScript runs the same in one long-lived Node process (bench/bench_ts_node.mjs):
`rt.render("executor", state, {budget: B, provider: F})`, then `requestText(req)` or `payloadFor(F, req)`, timed
inside Node with process.hrtime.bigint(), so process start, the pipe and parsing the state's JSON are not counted.
Before timing, both render 10 medium states untimed (Python's tokenizer moves to quicktok, when installed, after
256 Ki characters; Node's JIT compiles the render path), and each table starts with 3 untimed renders.
The two take turns state by state (which goes first alternates) and only one works at a time. Every timed render's
output is compared byte for byte (the text, or the payload as `promptmill render --format F` prints it) with its
token count: any difference stops the run with exit status 1, naming the render. Per table: the lazy floor
(bench_peers.py: tiktoken encoding the texts that can reach the prompt, best of 3), medians and p95 of both runtimes,
TS/Python (ratio of the medians), each against the floor, and the 1-minute load average when the table ended.

Cold start: a new process that imports the runtime, reads a medium state (JSON file), loads the build and renders
it once (budget 8,000, text), then exits: `node bench/bench_ts_node.mjs cold ...` against `python -c "import
promptmill; ..."`; wall time from spawn to exit measured here, and the phases timed inside each process.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))

import bench_peers  # noqa: E402  (seeds tiktoken's cache: the lazy floor runs offline)
import workload  # noqa: E402

DRIVER = HERE / "bench_ts_node.mjs"
DEFAULT_DIST = ROOT / "runtimes" / "typescript" / "dist"
FORMATS = ("text", "openai", "openai-responses", "anthropic", "gemini")

PY_COLD = """\
import json, sys, time
t0 = time.perf_counter()
import promptmill
t1 = time.perf_counter()
build, path, budget, fmt = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
with open(path, encoding="utf-8") as f:
    state = json.load(f)
t2 = time.perf_counter()
rt = promptmill.load(build)
t3 = time.perf_counter()
req = rt.render("executor", state, budget=budget, provider=None if fmt == "text" else fmt)
out = req.text if fmt == "text" else req.to_payload()
t4 = time.perf_counter()
if fmt != "text":
    out = json.dumps(out, ensure_ascii=False, indent=2)
print(json.dumps({"import_ns": int((t1 - t0) * 1e9), "load_ns": int((t3 - t2) * 1e9), "render_ns": int((t4 - t3) * 1e9), "out": out}))
"""


def fail(msg: str) -> None:
    print(f"\nFAIL: {msg}", file=sys.stderr)
    raise SystemExit(1)


class Node:
    """One long-lived `node bench_ts_node.mjs serve` process."""

    def __init__(self, dist: Path) -> None:
        self.proc = subprocess.Popen(
            ["node", str(DRIVER), "serve", str(dist)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            encoding="utf-8",
        )

    def ask(self, **cmd: Any) -> dict:
        assert self.proc.stdin and self.proc.stdout
        self.proc.stdin.write(json.dumps(cmd) + "\n")
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        if not line:
            fail(f"the Node process ended (exit status {self.proc.wait()})")
        reply = json.loads(line)
        if "error" in reply:
            fail(f"the TypeScript runtime failed on {cmd.get('op')}: {reply['error']}")
        return reply

    def close(self) -> None:
        if self.proc.stdin:
            self.proc.stdin.close()
        self.proc.wait(timeout=30)


def py_render(rt: Any, st: dict, budget: int, fmt: str) -> tuple[float, str, int, Any]:
    """(seconds, output bytes as str, tokens, request) of one Python render."""
    provider = None if fmt == "text" else fmt
    t = time.perf_counter_ns()
    req = rt.render("executor", st, budget=budget, provider=provider)
    out = req.text if fmt == "text" else req.to_payload()
    ns = time.perf_counter_ns() - t
    if fmt != "text":
        out = json.dumps(out, ensure_ascii=False, indent=2)
    return ns / 1e9, out, req.tokens, req


def ts_render(node: Node, st: dict, budget: int, fmt: str) -> tuple[float, str, int]:
    r = node.ask(op="render", state=json.dumps(st, ensure_ascii=False), budget=budget, format=fmt)
    return int(r["ns"]) / 1e9, r["out"], r["tokens"]


def first_difference(a: str, b: str) -> str:
    i = next((k for k, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), min(len(a), len(b)))
    near = slice(max(0, i - 40), i + 40)
    return f"first difference at character {i} of {len(a)} (Python) / {len(b)} (TypeScript): Python {a[near]!r}, TypeScript {b[near]!r}"


def pair(rt: Any, node: Node, st: dict, budget: int, fmt: str, ts_first: bool, what: str) -> tuple[float, float, Any]:
    """Render `st` in both runtimes (in the order given), check they agree; (python s, typescript s, python request)."""
    if ts_first:
        ts = ts_render(node, st, budget, fmt)
        py = py_render(rt, st, budget, fmt)
    else:
        py = py_render(rt, st, budget, fmt)
        ts = ts_render(node, st, budget, fmt)
    if py[1] != ts[1]:
        fail(f"{what}: the runtimes' outputs differ, {first_difference(py[1], ts[1])}")
    if py[2] != ts[2]:
        fail(f"{what}: same bytes but token counts differ: Python {py[2]}, TypeScript {ts[2]}")
    return py[0], ts[0], py[3]


def versions(dist: Path) -> None:
    import importlib.metadata as md

    import promptmill
    from promptmill.runtime import tokenizers

    node = subprocess.run(["node", "--version"], capture_output=True, text=True, check=True).stdout.strip()
    pkg = json.loads((dist.parent / "package.json").read_text(encoding="utf-8"))
    try:
        tiktoken = md.version("tiktoken")
    except md.PackageNotFoundError:
        tiktoken = "?"
    quicktok = "installed" if tokenizers.fast_available("o200k_base") else "not used"
    print(
        f"promptmill {promptmill.__version__} (python {platform.python_version()}, tiktoken {tiktoken}, quicktok {quicktok}); "
        f"TypeScript runtime {pkg['version']} (node {node})"
    )
    print(f"machine: {os.cpu_count()} cores, {platform.machine()}, load average {load()} (1, 5, 15 min) at start")


def load() -> str:
    return ", ".join(f"{x:.2f}" for x in os.getloadavg())


def ms(xs: list[float]) -> tuple[float, float]:
    return bench_peers.ms(xs)


HEADER = (
    f"  {'size':<7}{'budget':>7} {'format':<8}{'n':>4} {'floor ms':>9} {'py med':>8} {'py p95':>8} {'ts med':>8} {'ts p95':>8} "
    f"{'TS/Py':>6} {'py/floor':>8} {'ts/floor':>8} {'load':>5}"
)


WARM = 10


def warm_up(rt: Any, node: Node) -> None:
    """Untimed medium renders in both runtimes, so the timed ones see both in their steady state: Python's
    tokenizer moves to quicktok (when installed) after FAST_AFTER_CHARS characters counted (runtime/tokenizers.py),
    and Node's JIT has compiled the render path."""
    for i in range(WARM):
        st = workload.state(200, 40, seed=2000 + i, fresh=f"warm{i}x")
        pair(rt, node, st, 8000, "text" if i % 2 else "openai", i % 2 == 0, f"warm-up {i}")


def table(rt: Any, node: Node, size: Any, budget: int, fmt: str, runs: int) -> None:
    tag = f"{fmt}{budget}"
    for i in range(3):  # untimed: this size's first renders (and Node's JIT on them)
        st = workload.state(size.entries, size.tools, seed=1000 + i, fresh=f"{tag}w{i}x")
        pair(rt, node, st, budget, fmt, i % 2 == 0, f"{size.name} warm-up {i}")
    py_t: list[float] = []
    ts_t: list[float] = []
    floors: list[float] = []
    for i in range(runs):
        st = workload.state(size.entries, size.tools, seed=i, fresh=f"{tag}r{i}x")
        p, t, req = pair(rt, node, st, budget, fmt, i % 2 == 1, f"{size.name}, budget {budget}, {fmt}, render {i}")
        py_t.append(p)
        ts_t.append(t)
        floors.append(bench_peers.lazy_floor(bench_peers.floor_texts(req, st)))
    (fmed, _), (pmed, p95), (tmed, t95) = ms(floors), ms(py_t), ms(ts_t)
    print(
        f"  {size.name:<7}{budget:>7} {fmt:<8}{runs:>4} {fmed:9.3f} {pmed:8.3f} {p95:8.3f} {tmed:8.3f} {t95:8.3f} "
        f"{tmed / pmed:5.2f}x {pmed / fmed:7.2f}x {tmed / fmed:7.2f}x {os.getloadavg()[0]:5.2f}",
        flush=True,
    )


def cold_starts(build: Path, dist: Path, n: int) -> None:
    st = workload.state(200, 40, seed=3, fresh="cold")
    path = build.parent / "cold-state.json"
    path.write_text(json.dumps(st, ensure_ascii=False), encoding="utf-8")
    args = [str(build), str(path), "8000", "text"]
    runs: dict[str, list[dict]] = {"python": [], "node": []}
    cmds = {
        "python": [sys.executable, "-c", PY_COLD, *args],
        "node": ["node", str(DRIVER), "cold", str(dist), *args],
    }
    for i in range(n):
        for who in ("node", "python") if i % 2 == 0 else ("python", "node"):
            t = time.perf_counter()
            done = subprocess.run(cmds[who], capture_output=True, text=True, encoding="utf-8")
            wall = time.perf_counter() - t
            if done.returncode:
                fail(f"cold start of {who} failed (exit {done.returncode}): {done.stderr.strip()[-2000:]}")
            r = json.loads(done.stdout)
            r["wall"] = wall
            runs[who].append(r)
    for a, b in zip(runs["python"], runs["node"], strict=True):
        if a["out"] != b["out"]:
            fail(f"cold start: the runtimes' outputs differ, {first_difference(a['out'], b['out'])}")

    def med(who: str, key: str) -> float:
        return statistics.median(float(r[key]) / (1e6 if key.endswith("_ns") else 1) for r in runs[who])

    print(f"\ncold start (medium state: 200 entries, 40 tools; budget 8,000; text), median of {n}, ms (same output checked):")
    print(f"  {'':<12}{'wall':>8} {'import':>8} {'load':>8} {'render':>8}   (wall: spawn to exit, measured by this script)")
    py_wall = med("python", "wall") * 1e3
    node_wall = med("node", "wall") * 1e3

    def phases(who: str) -> str:
        return " ".join(f"{med(who, k):8.1f}" for k in ("import_ns", "load_ns", "render_ns"))

    print(f"  {'python':<12}{py_wall:8.1f} {phases('python')}   python -c 'import promptmill; load; render'")
    print(
        f"  {'typescript':<12}{node_wall:8.1f} {phases('node')}   node start + import + load + render; "
        f"node's own clock from its start to the render's end: {med('node', 'since_start_ms'):.1f}"
    )
    print(f"  TS/Python wall: {node_wall / py_wall:.2f}x; load average {load()}")


def checked(ap: argparse.ArgumentParser, args: argparse.Namespace) -> tuple[list[str], list[str]]:
    """The sizes and formats asked for, with the TypeScript runtime found; a usage error otherwise."""
    sizes = [n.strip() for n in args.sizes.split(",") if n.strip()]
    formats = [f.strip() for f in args.formats.split(",") if f.strip()]
    if not sizes or any(n not in bench_peers.SIZES for n in sizes):
        ap.error(f"--sizes: choose from {', '.join(bench_peers.SIZES)}")
    if not formats or any(f not in FORMATS for f in formats):
        ap.error(f"--formats: choose from {', '.join(FORMATS)}")
    if args.cold < 0:
        ap.error("--cold: a count, 0 or more")
    if shutil.which("node") is None:
        ap.error("node is not on PATH (the TypeScript runtime needs Node >= 20)")
    if not (args.dist / "index.js").is_file():
        ap.error(f"no built TypeScript runtime at {args.dist}: run `cd runtimes/typescript && npm ci && npm run build`")
    return sizes, formats


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("--quick", action="store_true", help="fewer repetitions (a quarter, at least 3)")
    ap.add_argument("--sizes", default="small,medium,large", help="comma-separated, of: " + ", ".join(bench_peers.SIZES))
    ap.add_argument("--formats", default="text,openai", help="comma-separated, of: " + ", ".join(FORMATS))
    ap.add_argument("--cold", type=int, default=5, metavar="N", help="cold starts of each runtime (0: none)")
    ap.add_argument("--dist", type=Path, default=DEFAULT_DIST, help="the TypeScript runtime's built dist folder")
    args = ap.parse_args()
    sizes, formats = checked(ap, args)

    import promptmill
    from promptmill.runtime import tokenizers

    versions(args.dist)
    root = Path(tempfile.mkdtemp(prefix="promptmill-bench-ts-"))
    (root / "prompts").mkdir()
    (root / "prompts" / "executor.yaml").write_text(workload.ROLE, encoding="utf-8")
    build = root / "build"
    promptmill.compile(root, output=build)

    node = Node(args.dist)
    tables = 0
    try:
        ts_load = int(node.ask(op="load", build=str(build))["ns"]) / 1e6
        t = time.perf_counter()
        rt = promptmill.load(build)
        py_load = (time.perf_counter() - t) * 1e3
        print(f"build loaded (one role): Python {py_load:.2f} ms, TypeScript {ts_load:.2f} ms (in the long-lived processes)")
        warm_up(rt, node)
        backend = getattr(tokenizers.get_tokenizer("o200k_base"), "backend", "?")
        print(f"warm-up: {WARM} medium renders in each runtime, untimed; Python now counts o200k_base with {backend}")
        print(f"\nrender, fresh content (a new state each render), ms; every render compared byte for byte:\n{HEADER}")
        for name in sizes:
            size = bench_peers.SIZES[name]
            runs = max(3, size.runs // 4) if args.quick else size.runs
            for budget in size.budgets:
                for fmt in formats:
                    table(rt, node, size, budget, fmt, runs)
                    tables += 1
    finally:
        node.close()
    print(f"  all {tables} tables: the same bytes and token counts from both runtimes on every render (warm-ups included)")
    if args.cold:
        cold_starts(build, args.dist, args.cold)
    print(f"\nload average at the end: {load()}")
    shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
