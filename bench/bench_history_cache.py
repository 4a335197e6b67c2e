"""Cache-prefix stability of history trimming over a simulated 50-turn chat.

    PYTHONPATH=compiler python bench/bench_history_cache.py [--turns 50] [--budget 1400]

Each turn adds a user message and an assistant reply; the role keeps the
newest turns that fit. Provider caches reuse the longest identical prefix of
consecutive requests, so what matters is whether request t still starts with
everything request t-1 sent before its new turn (system + the same oldest
kept turn). With `step: 1` the oldest kept turn moves on every turn once the
budget is full; with `step: k` it moves k turns at a time.

Printed per step: the share of consecutive request pairs whose prefix
(system + kept history start) is identical, and the mean share of request
t's tokens that repeat request t-1's prefix (what a prefix cache can reuse).
"""

from __future__ import annotations

import argparse
import random
import tempfile
from pathlib import Path

from promptmill.compiling.api import build_in_memory
from promptmill.runtime.tokenizers import get_tokenizer

ROLE = """kind: role
id: chat-step-{step}
provider: openai
budget: {{max_tokens: 100000, reserve: 1000}}
inputs:
  type: object
  required: [message]
  properties:
    history:
      type: array
      items: {{type: object, required: [role, content], properties: {{role: {{enum: [user, assistant]}}, content: {{type: string}}}}}}
    message: {{type: string}}
sections:
  - id: persona
    text: |
      You are a patient tutor. You explain one idea at a time, check understanding with a short
      question, and never give the full solution before the student has tried.
  - id: history
    history: history
    step: {step}
  - id: message
    template: "{{{{ message }}}}"
    trim: never
"""

WORDS = "the a loop list index value function returns error test case input output string number why how".split()


def conversation(turns: int, seed: int = 7) -> list[dict]:
    rng = random.Random(seed)
    out = []
    for t in range(turns):
        for role in ("user", "assistant"):
            n = rng.randint(8, 60) if role == "user" else rng.randint(20, 120)
            out.append({"role": role, "content": f"[{t}] " + " ".join(rng.choice(WORDS) for _ in range(n))})
    return out


def simulate(rt, step: int, turns: list[dict], budget: int, tok) -> tuple[float, float, list[int], float]:
    requests = []
    oldest = []
    tokens = []
    for t in range(len(turns) // 2):
        state = {"history": turns[: 2 * t], "message": f"turn {t}: what next?"}
        req = rt.render(f"chat-step-{step}", state, budget=budget)
        requests.append([(m.role, m.content) for m in req.messages])
        tokens.append(req.tokens)
        kept = req.section("history").items_kept
        oldest.append(kept[0] if kept else -1)
    same = shares = 0.0
    for prev, cur in zip(requests, requests[1:], strict=False):
        common = 0
        for a, b in zip(prev[:-1], cur, strict=False):  # prev without its current message
            if a != b:
                break
            common += 1
        same += common == len(prev) - 1
        reused = sum(4 + tok.count(c) for _, c in cur[:common])  # 3 + the role token (OpenAI)
        shares += reused / (3 + sum(4 + tok.count(c) for _, c in cur))
    pairs = len(requests) - 1
    return same / pairs, shares / pairs, oldest, sum(tokens) / len(tokens)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=50)
    parser.add_argument("--budget", type=int, default=1400)
    parser.add_argument("--steps", default="1,2,4,8")
    args = parser.parse_args()
    steps = [int(s) for s in args.steps.split(",")]
    tok = get_tokenizer("o200k_base")
    with tempfile.TemporaryDirectory() as tmp:
        prompts = Path(tmp) / "prompts"
        prompts.mkdir()
        for step in steps:
            (prompts / f"chat-step-{step}.yaml").write_text(ROLE.format(step=step), encoding="utf-8")
        rt, _ = build_in_memory(tmp)
        turns = conversation(args.turns)
        print(f"{args.turns} turns, budget {args.budget} tokens, provider openai (o200k_base)")
        print(
            f"{'step':>5}  {'identical prefix':>17}  {'reused tokens':>14}  {'mean tokens':>11}  oldest kept history index, last 12 turns"
        )
        for step in steps:
            same, share, oldest, mean = simulate(rt, step, turns, args.budget, tok)
            print(f"{step:>5}  {same:>16.0%}  {share:>13.0%}  {mean:>11.0f}  {oldest[-12:]}")
        print("identical prefix: consecutive requests whose system + kept history start are the same;")
        print("reused tokens: mean share of a request's tokens that repeat the previous request's prefix;")
        print("mean tokens: what a larger step costs (up to step-1 fewer history messages kept).")


if __name__ == "__main__":
    main()
