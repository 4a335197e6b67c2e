"""Batch rendering throughput, memory over a streamed input, and Ray/Spark overhead.

    python bench/bench_batch.py                          # defaults: a couple of minutes
    python bench/bench_batch.py --rows 100000 --memory-rows 1000000 --engine-rows 20000
    python bench/bench_batch.py --no-engines             # skip Ray and Spark
    python bench/bench_batch.py --no-engines --memory-rows 0 --chart docs/img/perf/batch-workers.svg

Rows are the shipped `directive-triage` role's example state, varied per row
(tests/batch_support.py), rendered for OpenAI. Prints:

1. rows/s of a plain loop over `rt.render(...).to_openai()` and of `run_batch`
   (`promptmill batch`) at 1 and at 2 workers, alternating for `--repeat` rounds
   in the same process, with each round's ratios and their medians; then
   the CPU the batch machinery alone costs per row (renders answered from a table);
2. peak RSS of `promptmill batch` (a child process) over a small and a large
   streamed input: flat means the large run peaks where the small one does;
3. Ray Data and Spark (local, 2 CPUs) against the local pool on the same rows:
   wall time with and without engine start-up, and the per-row overhead;
4. with `--chart PATH`: rows/s of `promptmill batch` at 1 to `--chart-workers` workers (best of
   `--repeat` runs each) against the plain loop, drawn as an SVG line chart (bench/charts.py).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

import promptmill  # noqa: E402
from batch_support import ROLE, compile_build, state  # noqa: E402
from promptmill.batch import pool, run_batch  # noqa: E402


def write_rows(path: Path, n: int, *, state_column: bool = False) -> Path:
    with path.open("w", encoding="utf-8") as f:
        for i in range(n):
            s = state(i)
            f.write(json.dumps({"id": f"case-{i}", "state": json.dumps(s)} if state_column else {"id": f"case-{i}", **s}) + "\n")
    return path


def loop_rate(build: Path, states: list[dict]) -> tuple[float, float]:
    """(rows per wall second, rows per CPU second) of a plain loop over `rt.render(...).to_openai()`,
    on a freshly loaded runtime (warmed by one render)."""
    rt = promptmill.load(build)
    rt.render(ROLE, states[0], provider="openai")  # warm: prepared role, tokenizer
    start, cpu = time.perf_counter(), time.process_time()
    for s in states:
        rt.render(ROLE, s, provider="openai").to_openai()
    return len(states) / (time.perf_counter() - start), len(states) / (time.process_time() - cpu)


def batch_rate(build: Path, src: Path, out: Path, n: int, workers: int) -> tuple[float, float]:
    """(rows per wall second, rows per CPU second of this process) of `run_batch` (`promptmill batch`),
    loading its own runtime as the command does."""
    shutil.rmtree(out, ignore_errors=True)
    start, cpu = time.perf_counter(), time.process_time()
    run_batch(ROLE, src, out, build=build, provider="openai", id_column="id", workers=workers)
    return n / (time.perf_counter() - start), n / (time.process_time() - cpu)


def throughput(build: Path, folder: Path, n: int, repeat: int) -> None:
    """The loop and `--workers 1` alternate `repeat` times (each on a fresh runtime, so neither reuses the
    other's caches and both see the same machine load): each round's rates and ratio, then the median ratios.
    CPU seconds (this process's) are what the work costs; wall seconds also count waiting for a shared CPU."""
    src = write_rows(folder / "rows.jsonl", n)
    states = [state(i) for i in range(n)]
    print(f"throughput over {n:,} rows ({ROLE}, openai), {repeat} alternating rounds, rows/s by wall clock [by CPU time]")
    wall, cpu, pair = [], [], []
    for i in range(repeat):
        loop, loop_cpu = loop_rate(build, states)
        one, one_cpu = batch_rate(build, src, folder / "out1", n, 1)
        two, _ = batch_rate(build, src, folder / "out2", n, 2)
        wall.append(one / loop)
        cpu.append(one_cpu / loop_cpu)
        pair.append(two / loop)
        print(f"  round {i + 1}, load average {os.getloadavg()[0]:.1f}")
        print(f"    plain loop over rt.render(...).to_openai()  {loop:7,.0f} [{loop_cpu:7,.0f}] rows/s")
        ratio = f"({wall[-1]:.2f}x [{cpu[-1]:.2f}x] the loop)"
        print(f"    promptmill batch --workers 1                {one:7,.0f} [{one_cpu:7,.0f}] rows/s  {ratio}")
        print(f"    promptmill batch --workers 2                {two:7,.0f} rows/s            ({pair[-1]:.2f}x the loop, wall clock)")
    print(f"  median ratio of --workers 1 to the loop: {statistics.median(wall):.2f}x [{statistics.median(cpu):.2f}x]")
    print(f"  median ratio of --workers 2 to the loop: {statistics.median(pair):.2f}x (workers {pool.start_method()}ed)")
    same = all((folder / "out1" / p.name).read_bytes() == p.read_bytes() for p in (folder / "out2").glob("requests-*"))
    print(f"  request files identical at 1 and 2 workers: {same}")
    machinery(build, folder, n)


def machinery(build: Path, folder: Path, n: int) -> None:
    """CPU per row of `run_batch --workers 1` with `Runtime.render` answering from requests rendered beforehand:
    what the batch adds to rendering (read, parse, check, serialise, write, hash, report, summary), best of 5."""
    from promptmill.runtime.engine import Runtime

    src = write_rows(folder / "machinery.jsonl", n)
    rt = promptmill.load(build)
    ready = {s["test_id"]: rt.render(ROLE, s, provider="openai") for s in (state(i) for i in range(n))}
    render = Runtime.render
    Runtime.render = lambda self, role, s, **options: ready[s["test_id"]]  # type: ignore[method-assign]
    try:
        best = min(batch_rate(build, src, folder / "machinery-out", n, 1)[1] for _ in range(5))
    finally:
        Runtime.render = render  # type: ignore[method-assign]
    start = time.process_time()
    for req in ready.values():
        req.to_openai()
    loop = (time.process_time() - start) / n
    alone = f"{1e6 / best:5.1f} us CPU per row, the loop's to_openai() {loop * 1e6:4.1f} us"
    print(f"  batch machinery alone (renders answered from a table): {alone}")


def peak_rss(build: Path, folder: Path, n: int) -> tuple[float, float]:
    """(peak RSS in MiB, seconds) of `promptmill batch --workers 1` over n streamed rows, in a child process."""
    src = write_rows(folder / f"mem-{n}.jsonl", n)
    code = (
        "import resource, sys, time; from promptmill.batch import run_batch; t = time.perf_counter(); "
        f"run_batch({ROLE!r}, {str(src)!r}, {str(folder / f'mem-out-{n}')!r}, build={str(build)!r}, provider='openai'); "
        "print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, time.perf_counter() - t)"
    )
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True).stdout.split()
    src.unlink()
    return float(out[0]), float(out[1])


def memory(build: Path, folder: Path, n: int) -> None:
    print("peak RSS of promptmill batch (one process), streamed JSONL input")
    for rows in (max(n // 10, 1), n):
        rss, seconds = peak_rss(build, folder, rows)
        print(f"  {rows:>10,} rows  peak RSS {rss:7.1f} MiB  ({seconds:.0f} s)")


def engines(build: Path, folder: Path, n: int) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    from promptmill.batch import BatchRenderer

    src = write_rows(folder / "eng.jsonl", n, state_column=True)
    items = [json.loads(x) for x in src.read_text().splitlines()]
    pq.write_table(pa.Table.from_pylist(items), folder / "eng.parquet")
    start = time.perf_counter()
    run_batch(ROLE, src, folder / "eng-out", build=build, provider="openai", id_column="id", state_column="state", workers=2)
    pool = time.perf_counter() - start
    print(f"engines over {n:,} rows, 2 CPUs (wall seconds; start-up excluded where noted)")
    print(f"  local pool, --workers 2                   {pool:7.1f} s  {n / pool:7,.0f} rows/s")

    import ray

    from promptmill.batch.ray import render_dataset

    t0 = time.perf_counter()
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, configure_logging=False)
    up = time.perf_counter() - t0
    t1 = time.perf_counter()
    ds = ray.data.read_parquet(str(folder / "eng.parquet"), override_num_blocks=8)
    got = render_dataset(ds, build, ROLE, provider="openai", id_column="id", state_column="state", concurrency=2, num_cpus=0.5).count()
    run = time.perf_counter() - t1
    ray.shutdown()
    assert got == n
    print(
        f"  Ray Data map_batches, 2 actors            {run:7.1f} s  {n / run:7,.0f} rows/s  "
        f"(+{(run - pool) / n * 1000:.2f} ms/row over the pool; ray.init {up:.1f} s more)"
    )

    from pyspark.sql import SparkSession

    from promptmill.batch.spark import OUTPUT_DDL, map_in_arrow

    t0 = time.perf_counter()
    spark = (
        SparkSession.builder.master("local[2]")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.execution.arrow.pyspark.enabled", "true")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    up = time.perf_counter() - t0
    t1 = time.perf_counter()
    df = spark.read.parquet(str(folder / "eng.parquet")).repartition(2)
    renderer = BatchRenderer(build, ROLE, provider="openai", id_column="id", state_column="state")
    got = df.mapInArrow(map_in_arrow(renderer), OUTPUT_DDL).count()
    run = time.perf_counter() - t1
    spark.stop()
    assert got == n
    print(
        f"  Spark mapInArrow, local[2]                {run:7.1f} s  {n / run:7,.0f} rows/s  "
        f"(+{(run - pool) / n * 1000:.2f} ms/row over the pool; session start {up:.1f} s more)"
    )


def workers_chart(build: Path, folder: Path, n: int, repeat: int, most: int, path: str) -> None:
    """rows/s of `run_batch` at 1..most workers (best of `repeat`) and of the plain loop, as a chart at `path`."""
    from charts import line_chart, machine

    src = write_rows(folder / "chart-rows.jsonl", n)
    states = [state(i) for i in range(n)]
    loop = max(loop_rate(build, states)[0] for _ in range(repeat))
    rates = []
    for w in range(1, most + 1):
        best = max(batch_rate(build, src, folder / f"chart-out{w}", n, w)[0] for _ in range(repeat))
        rates.append((w, best))
        print(f"  chart: promptmill batch --workers {w}  {best:7,.0f} rows/s (best of {repeat})")
    print(f"  chart: plain loop                    {loop:7,.0f} rows/s (best of {repeat})")
    command = "python bench/bench_batch.py " + " ".join(sys.argv[1:])
    line_chart(
        path,
        {"promptmill batch": rates, "plain loop, one process": [(1, loop), (most, loop)]},
        title=f"Batch throughput against workers ({n:,} rows, {ROLE}, OpenAI requests)",
        x_label="workers (--workers)",
        y_label="rows per second (wall clock)",
        caption=[command, machine()],
        dashed=["plain loop, one process"],
    )
    print(f"  chart written to {path}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=5_000, help="rows for the throughput runs")
    parser.add_argument("--repeat", type=int, default=3, help="alternating rounds of the loop and --workers 1")
    parser.add_argument(
        "--memory-rows", type=int, default=50_000, help="rows of the large memory run (the small one is a tenth); 0 skips it"
    )
    parser.add_argument("--engine-rows", type=int, default=4_000, help="rows for the Ray and Spark runs")
    parser.add_argument("--no-engines", action="store_true", help="skip Ray and Spark")
    parser.add_argument("--chart", metavar="PATH", help="also chart rows/s against workers as an SVG at PATH")
    parser.add_argument("--chart-workers", type=int, default=4, help="the chart's most workers (from 1)")
    args = parser.parse_args()
    if args.chart_workers < 1:
        parser.error("--chart-workers must be 1 or more")
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f}")
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        build = compile_build(folder)
        throughput(build, folder, args.rows, args.repeat)
        if args.memory_rows:
            memory(build, folder, args.memory_rows)
        if not args.no_engines:
            engines(build, folder, args.engine_rows)
        if args.chart:
            workers_chart(build, folder, args.rows, args.repeat, args.chart_workers, args.chart)


if __name__ == "__main__":
    main()
