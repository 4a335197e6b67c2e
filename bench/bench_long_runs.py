"""The cost of counting a long run without a split (issue 33, point 7), before and after, in one run.

    python bench/bench_long_runs.py            # scaling of one count, then the preview's render
    python bench/bench_long_runs.py --quick    # one repetition each

1. One count of a run that the pre-tokeniser cannot split (a 1 MB word): the time for n and 2n
   characters, per backend (quicktok when installed, tiktoken alone) and kind of run. A ratio near
   2 is linear, near 4 quadratic. tiktoken >= 0.13 merges a long piece with a heap (not the old
   quadratic scan), and quicktok is linear: the cost of a long run was never one count but the
   same count repeated.
2. The preview's render of a state holding a 1 MB word (the starter project's `helpdesk`, the word
   in a droppable article), measured three ways in the same process:
   - before: every wire of the registry rendered per request, and a long text counted on every use
     (the long-text memo and the encode memo turned off, as the code was);
   - after, every wire: the same ten renders, each long text counted once;
   - after, the page: the tab shown only (what the page asks for on a keystroke).
   The ratios are before/after.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from promptmill.runtime import counting, tokenizers


def best(fn: Callable[[], object], runs: int) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def runs_of(n: int) -> dict[str, str]:
    rng = random.Random(33)
    return {
        "random letters": "".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(n)),
        "one letter": "x" * n,
        "spaces": " " * n,
        "punctuation": "".join(rng.choice("!?.,;:-_=+*&%$#@") for _ in range(n)),
        "CJK": "".join(rng.choice("東京タワー日本語中文字") for _ in range(n)),
    }


def scaling(size: int, runs: int) -> None:
    print(f"1. one count of a run without a split: {size:,} and {2 * size:,} characters (ratio 2 = linear, 4 = quadratic)")
    backends = []
    fast_env = tokenizers.fast_enabled()
    for name in ("o200k_base", "cl100k_base"):
        ranks = tokenizers._load_ranks(name)
        encoding = tokenizers._tiktoken_encoding(name, ranks)
        backends.append((name, "tiktoken", tokenizers.TiktokenTokenizer(name, encoding)))
        fast = tokenizers.fast_encoder(name, encoding, ranks) if fast_env else None
        if fast is not None:
            backends.append((name, "quicktok", tokenizers.TiktokenTokenizer(name, encoding, fast)))
    small, large = runs_of(size), runs_of(2 * size)
    for name, backend, tok in backends:
        for kind in small:
            a = best(lambda t=small[kind], c=tok._count: c(t), runs)
            b = best(lambda t=large[kind], c=tok._count: c(t), runs)
            print(f"   {name:<12} {backend:<9} {kind:<15} {a * 1000:8.1f} ms {b * 1000:8.1f} ms   ratio {b / a:4.2f}")


def preview(size: int, runs: int) -> None:
    from promptmill import compile as compile_project
    from promptmill.cli.scaffold import init
    from promptmill.web.session import Session, wire_names

    print(f"\n2. the preview's render of a state holding a {size:,}-character word (helpdesk, starter project)")
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "demo"
        init(root)
        compile_project(root)
        word = runs_of(size)["random letters"]
        state = json.dumps({"customer": {"name": "Ada"}, "question": "Why?", "articles": [{"title": "t", "text": word}]})
        every = list(wire_names())

        def fresh() -> Session:  # a new session each time: no count from an earlier measurement is reused
            for name in tokenizers.SHIPPED_ENCODINGS:
                tok = tokenizers.get_tokenizer(name)
                if isinstance(tok, tokenizers.TiktokenTokenizer):
                    tok._last = None  # nor the ids of the last long text encoded
            return Session(root)

        def render(wires: list[str] | None) -> Callable[[], object]:
            def go() -> object:
                got = fresh().render("helpdesk", state, wires=wires)
                assert "error" not in got, got["error"]
                return got

            return go

        saved = (counting.LONG_TEXTS, tokenizers.LONG_ENCODE_CHARS)
        counting.LONG_TEXTS, tokenizers.LONG_ENCODE_CHARS = 0, sys.maxsize  # as before: no memo
        try:
            before = best(render(every), runs)
        finally:
            counting.LONG_TEXTS, tokenizers.LONG_ENCODE_CHARS = saved
        after_every = best(render(every), runs)
        after_page = best(render(None), runs)
        backend = tokenizers.get_tokenizer("o200k_base")
        print(f"   counting with {getattr(backend, 'backend', '?')}")
        print(f"   before: every wire, each long text counted on each use  {before:7.2f} s")
        print(f"   after:  every wire, each long text counted once         {after_every:7.2f} s   ratio {before / after_every:5.1f}x")
        print(f"   after:  the tab the page shows                          {after_page:7.2f} s   ratio {before / after_page:5.1f}x")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="one repetition each, smaller runs")
    args = parser.parse_args()
    runs = 1 if args.quick else 3
    scaling(100_000 if args.quick else 250_000, runs)
    preview(1_000_000, runs)


if __name__ == "__main__":
    main()
