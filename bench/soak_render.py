"""Soak the runtime: many renders of fresh content must keep memory flat.

    PYTHONPATH=compiler python bench/soak_render.py [--renders 100000] [--every 10000] [--tracemalloc]

Renders the shipped roles (build/) over states made fresh for every render:
every free-text field gets new words, lists change length, some values are
long unbroken hex strings (the worst case for the join-correction cache), and
provider, budget and event vary. Nothing repeats, so every cache keeps
filling and must evict. At intervals it prints the resident set size, Python
heap (with --tracemalloc; slower), live objects and the size of every cache
the runtime keeps, then checks that memory after the warm-up stayed within a
bound. Exits 1 when it did not.

`soak()` is also used by tests/test_soak.py for a short run.
"""

from __future__ import annotations

import argparse
import gc
import json
import random
import sys
import time
import tracemalloc
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "compiler"))

import promptmill  # noqa: E402
from promptmill.core.errors import BudgetError, ProviderError  # noqa: E402
from promptmill.runtime import conditions  # noqa: E402
from promptmill.runtime.jinja import guard as jinjaguard  # noqa: E402
from promptmill.runtime.schema import metaschema  # noqa: E402

ROLES = {
    "executor": "executor.state.yaml",
    "companion-chat": "companion-chat.state.yaml",
    "companion-beat": "companion-beat.state.yaml",
    "companion-delivery": "companion-delivery.state.yaml",
    "companion-live": "companion-live.state.yaml",
}
FREE_TEXT = {"summary", "content", "text", "description", "message", "task_state", "acceptance_criteria", "output"}
GROWABLE = {"memory", "memories", "history", "attachments", "results"}
PROVIDERS = ("text", "openai", "anthropic", "gemini", "live")
WORDS = (
    "parser tokenizer budget cache moon tide river lisbon marathon knee coffee commit branch "
    "schema section fragment render state memory verify report plan subtask tool result"
).split()


def example_states() -> dict[str, dict]:
    """The shipped example states (JSON-parsed from YAML without importing the loader twice)."""
    from promptmill.source.loader import load_data_file

    return {role: load_data_file(ROOT / "prompts" / "examples" / name) for role, name in ROLES.items()}


BLOBS = {"task_state", "content", "message"}  # free text without a length limit in the schemas


def fresh_text(rng: random.Random, n: int, blob: bool) -> str:
    words = [rng.choice(WORDS) for _ in range(rng.randint(3, 12))]
    words.insert(rng.randrange(len(words)), f"#{n}-{rng.getrandbits(32):08x}")
    if blob and rng.random() < 0.05:  # a long run without hard token boundaries
        words.append(f"{rng.getrandbits(4 * rng.randint(200, 4000)):x}")
    return " ".join(words)


def freshen(value: Any, rng: random.Random, n: int, key: str = "") -> Any:
    """A copy of `value` with new free text everywhere and list lengths varied."""
    if isinstance(value, dict):
        return {k: freshen(v, rng, n, k) for k, v in value.items()}
    if isinstance(value, list):
        items = value
        if key in GROWABLE and items:
            items = [rng.choice(items) for _ in range(rng.randint(0, 3 * len(items)))]
        return [freshen(v, rng, n, key) for v in items]
    if isinstance(value, str) and key in FREE_TEXT:
        text = value[: rng.randint(0, len(value))] + " " + fresh_text(rng, n, key in BLOBS)
        return text[:300] if key == "summary" else text  # executor memory: maxLength 300
    if isinstance(value, float) and key in ("relevance", "score"):
        return round(rng.random(), 3)
    return value


@dataclass
class Sample:
    renders: int
    seconds: float
    rss_mib: float
    heap_mib: float | None
    objects: int
    blocks: int  # sys.getallocatedblocks(): live allocations of the Python allocator
    caches: dict[str, int]
    refused: dict[str, int]


def rss_mib() -> float:
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024
    except OSError:  # not Linux
        pass
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def cache_sizes(rt: Any) -> dict[str, int]:
    """Sizes of every cache a runtime keeps, by name (characters or entries)."""
    out: dict[str, int] = {"prepared roles": len(rt._prepared)}
    for name, counter in rt._counters.items():
        out[f"count cache {name} (chars)"] = counter.cache.chars
        out[f"count cache {name} (entries)"] = len(counter.cache)
        out[f"join deltas {name} (entries)"] = len(counter._deltas)
        out[f"join deltas {name} (chars)"] = counter.delta_chars
    out["item memo (entries)"] = len(rt._memo)
    out["item memo (weight)"] = rt._memo.weight
    out["schema regex verdicts"] = metaschema._cached_compiles.cache_info().currsize
    out["condition regexes"] = conditions._regex.cache_info().currsize
    out["printf formats"] = jinjaguard._printf_specs.cache_info().currsize
    return out


def soak(
    renders: int,
    every: int,
    *,
    seed: int = 7,
    heap: bool = False,
    cache_chars: int | None = None,
    build: Path = ROOT / "build",
    progress: Any = None,
) -> list[Sample]:
    """Render `renders` times; a `Sample` every `every` renders (and one at the start)."""
    rng = random.Random(seed)
    states = example_states()
    kwargs = {} if cache_chars is None else {"cache_chars": cache_chars}
    rt = promptmill.load(build, **kwargs)
    roles = sorted(states)
    if heap:
        tracemalloc.start()
    samples: list[Sample] = []
    started = time.perf_counter()
    refused: dict[str, int] = {}

    def sample(n: int) -> None:
        gc.collect()
        traced = tracemalloc.get_traced_memory()[0] / 2**20 if heap else None
        samples.append(
            Sample(
                n,
                time.perf_counter() - started,
                rss_mib(),
                traced,
                len(gc.get_objects()),
                sys.getallocatedblocks(),
                cache_sizes(rt),
                dict(refused),
            )
        )
        if progress is not None:
            progress(samples[-1])

    sample(0)
    for n in range(1, renders + 1):
        role = roles[n % len(roles)]
        state = freshen(states[role], rng, n)
        provider = rng.choice(PROVIDERS)
        budget = rng.choice((None, rng.randint(300, 12_000)))
        try:
            req = rt.render(role, state, budget=budget, provider=provider, event=rng.choice(("start", "continue")))
            payload = getattr(req, f"to_{provider}")()
            json.dumps(payload, default=str)
        except (BudgetError, ProviderError) as exc:  # a budget too small, or history starting with the assistant
            refused[exc.code] = refused.get(exc.code, 0) + 1
        if n % every == 0:
            sample(n)
    if heap:
        tracemalloc.stop()
    return samples


def print_sample(s: Sample) -> None:
    heap = f"  heap {s.heap_mib:7.1f} MiB" if s.heap_mib is not None else ""
    counts = "  ".join(f"{k}={v:,}" for k, v in s.caches.items() if "o200k" in k or "cl100k" in k)
    print(
        f"{s.renders:>8,} renders  {s.seconds:7.1f}s  rss {s.rss_mib:7.1f} MiB{heap}  objects {s.objects:,}  blocks {s.blocks:,}  {counts}",
        flush=True,
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--renders", type=int, default=100_000)
    parser.add_argument("--every", type=int, default=10_000)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--tracemalloc", action="store_true", help="also trace the Python heap (about 2x slower)")
    parser.add_argument("--cache-chars", type=int, default=None, help="Runtime cache_chars (default: promptmill's)")
    parser.add_argument("--max-growth", type=float, default=64.0, help="MiB of RSS growth allowed after the warm-up sample")
    args = parser.parse_args()
    samples = soak(args.renders, args.every, seed=args.seed, heap=args.tracemalloc, cache_chars=args.cache_chars, progress=print_sample)
    warm = samples[min(2, len(samples) - 1)]
    last = samples[-1]
    growth = max(s.rss_mib for s in samples[2:] or samples) - warm.rss_mib
    per = last.seconds / max(last.renders, 1) * 1000
    print(
        f"\n{last.renders:,} renders in {last.seconds:.0f}s ({per:.2f} ms each); "
        f"RSS {samples[0].rss_mib:.0f} -> {warm.rss_mib:.0f} MiB after {warm.renders:,} renders -> {last.rss_mib:.0f} MiB at the end "
        f"(peak growth after warm-up {growth:+.1f} MiB)"
    )
    print("refused (expected errors): " + (", ".join(f"{k} {v:,}" for k, v in sorted(last.refused.items())) or "none"))
    print("caches at the end: " + ", ".join(f"{k} {v:,}" for k, v in last.caches.items()))
    if growth > args.max_growth:
        print(f"FAIL: memory grew by {growth:.1f} MiB after the warm-up (limit {args.max_growth} MiB)")
        return 1
    print("ok: memory stayed flat")
    return 0


if __name__ == "__main__":
    sys.exit(main())
