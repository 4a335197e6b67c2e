"""Many renders keep memory flat; threads render exactly what a single thread renders.

The long soak (100,000 renders) is bench/soak_render.py; this is its short
form with small caches, so every cache fills and evicts many times within the
test.
"""

from __future__ import annotations

import random
import sys
import threading
from pathlib import Path

import pytest

import promptmill
from promptmill.core.errors import PromptmillError
from promptmill.runtime.counting import MAX_DELTA_CHARS, MAX_DELTAS

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
from promptmill.runtime.itemmemo import MAX_KEY_BYTES
from soak_render import PROVIDERS, example_states, freshen, soak

ROOT = Path(__file__).resolve().parents[1]
# Small caches fill sooner: after 400 renders every cache below is full, and the 1,600 renders after
# that cycle each cache through many generations (5,000 renders with 200,000 chars proved no more, in 3x the time).
CACHE_CHARS = 50_000
RENDERS, EVERY = 2000, 200


def test_renders_of_fresh_content_keep_memory_flat():
    samples = soak(RENDERS, EVERY, seed=11, cache_chars=CACHE_CHARS)
    warm, last = samples[2], samples[-1]  # after 400 renders every cache is full
    after = RENDERS - warm.renders
    for s in samples[2:]:
        # live allocations and objects stay within what the bounded caches hold: less than
        # 5 blocks and 1.25 objects per render after warm-up (a leak of a few objects a render fails)
        assert s.blocks - warm.blocks < 5 * after, [(x.renders, x.blocks) for x in samples]
        assert s.objects - warm.objects < 1.25 * after, [(x.renders, x.objects) for x in samples]
        chars = s.caches["count cache o200k_base (chars)"]
        entries = s.caches["count cache o200k_base (entries)"]
        assert chars + 64 * entries <= 2 * CACHE_CHARS + 200_000  # two generations, one oversized put
        assert s.caches["join deltas o200k_base (entries)"] <= MAX_DELTAS
        assert s.caches["join deltas o200k_base (chars)"] <= MAX_DELTA_CHARS
        assert s.caches["prepared roles"] <= 5
        assert s.caches["item memo (weight)"] <= 2 * CACHE_CHARS + MAX_KEY_BYTES + 200_000
    assert last.renders == RENDERS and sum(last.refused.values()) < RENDERS // 4


def _cases(n: int) -> list[tuple[str, dict, str, int | None]]:
    rng = random.Random(5)
    states = example_states()
    roles = sorted(states)
    return [
        (
            roles[i % len(roles)],
            freshen(states[roles[i % len(roles)]], rng, i),
            rng.choice(PROVIDERS),
            rng.choice((None, rng.randint(400, 9000))),
        )
        for i in range(n)
    ]


def _outcome(rt, case) -> str:
    role, state, provider, budget = case
    try:
        req = rt.render(role, state, budget=budget, provider=provider)
        return repr((req.text, req.tokens, getattr(req, f"to_{provider}")()))
    except PromptmillError as exc:
        return f"{exc.code}: {exc.message}"


@pytest.mark.parametrize("shared", [True, False], ids=["one-runtime", "runtime-per-thread"])
def test_eight_threads_render_exactly_what_one_thread_renders(shared):
    cases = _cases(160)
    expected = [_outcome(promptmill.load(ROOT / "build"), c) for c in cases]
    runtime = promptmill.load(ROOT / "build", cache_chars=50_000)  # small: evictions race with lookups
    results: dict[int, str] = {}
    barrier = threading.Barrier(8)

    def work(k: int) -> None:
        rt = runtime if shared else promptmill.load(ROOT / "build", cache_chars=50_000)
        barrier.wait()
        for n in range(k, len(cases), 8):
            results[n] = _outcome(rt, cases[n])

    threads = [threading.Thread(target=work, args=(k,)) for k in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert [results[n] for n in range(len(cases))] == expected
