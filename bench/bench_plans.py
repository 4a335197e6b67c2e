"""What wider compile-time plans (issue 28, lever 1) are worth, measured in one run.

    python bench/bench_plans.py            # small, medium and large
    python bench/bench_plans.py --runs 9   # renders per size and variant

The workload of bench/bench_peers.py (bench/workload.py) with richer item
templates, of the kinds issue 28 names: a memory entry shows its relevance
formatted `'%.3f' % entry.relevance` and its required parameters joined, a
tool lists its parameters in a `for` loop with `loop.index` and an `if`:

    - [{{ entry.type }}] ({{ '%.3f' % entry.relevance }}) {{ entry.summary }}
    - {{ tool.name }}: {{ tool.description }}{% for p in tool.parameters.required %} ...

Three runtimes render the same fresh-content states, interleaved state by state
(each first in turn) so machine load hits them alike: `wide plans` (this compiler), `flat plans`
(only plans made of text and lookups, which is what the compiler before
issue 28 could plan: these item templates render in the Jinja sandbox) and
`no plans` (every template in the sandbox). Every text is checked identical.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import workload

MEMORY = "- [{{ entry.type }}] ({{ '%.3f' % entry.relevance }}) {{ entry.summary }}"
TOOLS = (
    "- {{ tool.name }}: {{ tool.description }}"
    "{% for p in tool.parameters.required %}{% if loop.first %} (needs {% endif %}{{ p }}"
    "{% if loop.last %}){% else %}, {% endif %}{% endfor %}\n"
    "  parameters: {{ tool.parameters | to_json }}"
)
SIZES = {"small": (10, 5, 8000), "medium": (200, 40, 3000), "large": (2000, 200, 32000)}


def project() -> Path:
    root = workload.project()
    role = root / "prompts" / "executor.yaml"
    text = role.read_text(encoding="utf-8")
    text = text.replace('template: "- [{{ entry.type }}] {{ entry.summary }}"', "template: " + _yaml_str(MEMORY))
    text = text.replace("    tools: tools\n", "    tools: tools\n    template: " + _yaml_str(TOOLS) + "\n")
    role.write_text(text, encoding="utf-8")
    return root


def _yaml_str(s: str) -> str:
    import json

    return json.dumps(s)  # a JSON string is a YAML double-quoted scalar


def variants() -> dict[str, Any]:
    from promptmill.compiling.api import build_in_memory
    from promptmill.runtime.engine import Runtime

    def keep(plan: Any) -> Any:
        return plan if plan is not None and all(step[0] in ("t", "v", "f") for step in plan) else None

    def strip(rt: Any, rule: Any) -> Any:
        return Runtime(
            {
                n: dataclasses.replace(b, sections=tuple(dataclasses.replace(s, plan=rule(s.plan)) for s in b.sections))
                for n, b in ((n, rt.bundle(n)) for n in rt.roles)
            }
        )

    wide, _ = build_in_memory(project())
    planned = [s.id for s in wide.bundle("executor").sections if s.plan is not None]
    assert {"memory", "tools"} <= set(planned), f"the rich templates did not plan: {planned}"
    flat = strip(build_in_memory(project())[0], keep)
    assert all(s.plan is None for s in flat.bundle("executor").sections if s.id in ("memory", "tools"))
    bare = strip(build_in_memory(project())[0], lambda plan: None)
    return {"wide plans": wide, "flat plans (before)": flat, "no plans": bare}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=15, help="fresh states per size (large: a third)")
    ap.add_argument("--sizes", default="small,medium,large")
    args = ap.parse_args()
    from promptmill.runtime.tokenizers import get_tokenizer

    backend = getattr(get_tokenizer("o200k_base"), "backend", "tiktoken")
    print(f"load {os.getloadavg()[0]:.2f} (1 min); tokenizer backend {backend}")
    rts = variants()
    warm = workload.state(20, 5, seed=1, fresh="w")
    for rt in rts.values():
        rt.render("executor", warm, budget=8000)
    for size in args.sizes.split(","):
        entries, tools, budget = SIZES[size]
        runs = max(3, args.runs // 3) if size == "large" else args.runs
        times: dict[str, list[float]] = {name: [] for name in rts}
        for i in range(runs):
            texts = set()
            names = list(rts)
            for name in names[i % len(names) :] + names[: i % len(names)]:  # each variant goes first in turn
                rt = rts[name]
                st = workload.state(entries, tools, seed=i, fresh=f"{size[0]}{i}")  # the same content, new objects
                t = time.perf_counter()
                req = rt.render("executor", st, budget=budget)
                times[name].append(time.perf_counter() - t)
                texts.add(req.text)
            assert len(texts) == 1, "a variant rendered a different text"
        ref = statistics.median(times["wide plans"])
        print(f"\n{size} ({entries} entries, {tools} tools, budget {budget:,}), fresh content, {runs} renders each:")
        for name, xs in times.items():
            med = statistics.median(xs)
            print(f"  {name:<22}{med * 1e3:9.3f} ms  {med / ref:5.2f}x of wide plans")
    print(f"\nload {os.getloadavg()[0]:.2f} (1 min)")


if __name__ == "__main__":
    main()
