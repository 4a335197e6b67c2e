"""Render latency against two reference points measured in the same run.

    python bench/bench_render.py            # both workloads and the scaling curve
    python bench/bench_render.py --quick    # fewer repetitions

References:
- encode-all: tiktoken encoding all the dynamic content offered, once;
- final-only: tiktoken encoding just the returned prompt, once (the floor for
  an exact count of the result);
- pieces: tiktoken encoding, one call each, exactly the texts a fresh render
  sends to the tokenizer (recorded from one render). Deciding item by item
  what fits needs a count per item, so this is the floor of any exact
  per-item trimmer built on tiktoken; the render's own Python work (checking,
  rendering, bookkeeping) comes on top of it.
The last lines check whether tiktoken encodes in parallel on two threads (it
does not hold up: see the ratio), which is why promptmill does not spread
tokenizing over threads.
Rows: a first render with fresh content (every text new), a repeated render
with the same items, and a typical next turn (new memory entries, the same
tools). Targets (issue 3): fresh <= 1.3x final-only; same items <= 0.5x
final-only; linear scaling in items.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import workload
from promptmill.compiling.api import build_in_memory
from promptmill.runtime.tokenizers import get_tokenizer


def timed(fn, runs: int) -> list[float]:
    out = []
    for _ in range(runs):
        t = time.perf_counter()
        fn()
        out.append(time.perf_counter() - t)
    return out


def ms(xs: list[float]) -> tuple[float, float]:
    xs = sorted(xs)
    return statistics.median(xs) * 1e3, xs[min(len(xs) - 1, int(0.95 * len(xs)))] * 1e3


def run(entries: int, tools: int, budget: int, runs: int, runtime) -> dict:
    tok = get_tokenizer("o200k_base")
    encode = tok.encode  # type: ignore[attr-defined]
    states = [workload.state(entries, tools, seed=i, fresh=f"r{i}x") for i in range(runs)]
    # first render with fresh content: every state is new text
    it = iter(states)
    first = timed(lambda: runtime.render("executor", next(it), budget=budget), runs)
    same = states[0]
    runtime.render("executor", same, budget=budget)
    repeat = timed(lambda: runtime.render("executor", same, budget=budget), runs)
    # a typical next turn of an agent: new memory entries, the same tool registry
    turns = [dict(s, tools=same["tools"]) for s in (workload.state(entries, tools, seed=100 + i, fresh=f"t{i}x") for i in range(runs))]
    it2 = iter(turns)
    next_turn = timed(lambda: runtime.render("executor", next(it2), budget=budget), runs)
    # the same fresh renders without checking the state (validate=False): what the checks cost
    unchecked_states = [workload.state(entries, tools, seed=200 + i, fresh=f"u{i}x") for i in range(runs)]
    it3 = iter(unchecked_states)
    unchecked = timed(lambda: runtime.render("executor", next(it3), budget=budget, validate=False), runs)
    req = runtime.render("executor", same, budget=budget)
    assert req.tokens == tok.count(req.text) and req.tokens <= budget
    text = req.text
    final_only = timed(lambda: encode(text), runs)
    pieces = workload.dynamic_texts(same)
    encode_all = timed(lambda: [encode(p) for p in pieces], runs)
    sent = recorded_pieces(runtime, workload.state(entries, tools, seed=999, fresh="p999x"), budget)
    encode_pieces = timed(lambda: [encode(p) for p in sent], runs)
    return {
        "first": ms(first),
        "repeat": ms(repeat),
        "turn": ms(next_turn),
        "unchecked": ms(unchecked),
        "final": ms(final_only),
        "all": ms(encode_all),
        "pieces": ms(encode_pieces),
        "pieces_chars": sum(map(len, sent)),
        "pieces_calls": len(sent),
        "chars": len(text),
        "tokens": req.tokens,
        "kept": {s.id: (len(s.items_kept), s.items_total) for s in req.sections if s.items_total is not None},
    }


def recorded_pieces(runtime, state, budget: int) -> list[str]:
    """The texts one fresh render sends to the tokenizer, in order."""
    counter = runtime.counter("o200k_base")
    raw = counter._raw_count
    sent: list[str] = []

    def record(text: str) -> int:
        sent.append(text)
        return raw(text)

    counter._raw_count = record
    try:
        runtime.render("executor", state, budget=budget)
    finally:
        counter._raw_count = raw
    return sent


def threads_vs_sequential(runs: int) -> float:
    """Time of two threads each encoding a long text, over one thread encoding both."""
    encode = get_tokenizer("o200k_base").encode  # type: ignore[attr-defined]
    text = "Some words, numbers 12345 and punctuation!\n" * 20_000

    def both() -> None:
        t = threading.Thread(target=encode, args=(text,))
        t.start()
        encode(text)
        t.join()

    seq = statistics.median(timed(lambda: (encode(text), encode(text)), runs))
    return statistics.median(timed(both, runs)) / seq


def show(name: str, r: dict) -> None:
    f, rep, fin, enc = r["first"][0], r["repeat"][0], r["final"][0], r["all"][0]
    print(f"\n{name}: prompt {r['tokens']} tokens, items kept {r['kept']}")
    print(
        f"  render, fresh content   median {f:7.3f} ms  p95 {r['first'][1]:7.3f} ms   "
        f"{f / fin:5.2f}x final-only  {f / enc:5.2f}x encode-all"
    )
    print(
        f"  render, same items      median {rep:7.3f} ms  p95 {r['repeat'][1]:7.3f} ms   "
        f"{rep / fin:5.2f}x final-only  {rep / enc:5.2f}x encode-all"
    )
    tu = r["turn"][0]
    print(
        f"  render, new memory only median {tu:7.3f} ms  p95 {r['turn'][1]:7.3f} ms   "
        f"{tu / fin:5.2f}x final-only  {tu / enc:5.2f}x encode-all"
    )
    un = r["unchecked"][0]
    print(
        f"  fresh, validate=False   median {un:7.3f} ms  p95 {r['unchecked'][1]:7.3f} ms   "
        f"{un / fin:5.2f}x final-only  {un / enc:5.2f}x encode-all"
    )
    print(f"  final-only (reference)  median {fin:7.3f} ms")
    print(f"  encode-all (reference)  median {enc:7.3f} ms")
    pc = r["pieces"][0]
    print(
        f"  pieces (reference)      median {pc:7.3f} ms   {pc / fin:5.2f}x final-only"
        f"  ({r['pieces_calls']} calls, {r['pieces_chars']:,} chars; the prompt has {r['chars']:,})"
    )
    print(f"  fresh render beyond tokenizing its pieces: {f - pc:.3f} ms ({(f - pc) / fin:.2f}x final-only)")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args()
    runs = 15 if args.quick else 41
    runtime, _ = build_in_memory(workload.project())
    runtime.render("executor", workload.state(10, 2, fresh="warm"), budget=8000)  # prepare role, load tokenizer
    show("executor workload (200 entries, 40 tools, budget 8,000)", run(200, 40, 8000, runs, runtime))
    show("large workload (2,000 entries, 200 tools, budget 32,000)", run(2000, 200, 32000, max(7, runs // 3), runtime))
    print("\nscaling: fresh render median vs items offered (40 tools, budget 8,000)")
    base = None
    for n in (100, 1000, 3000, 10000):
        r = run(n, 40, 8000, max(5, runs // 4), runtime)
        base = base or r["first"][0]
        print(f"  {n:>6} entries  {r['first'][0]:8.3f} ms  ({r['first'][0] / base:5.2f}x of 100)")
    ratio = threads_vs_sequential(max(5, runs // 4))
    print(f"\ntiktoken on two threads: two long encodes take {ratio:.2f}x the time of running them one after the other")


if __name__ == "__main__":
    main()
