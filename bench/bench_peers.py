"""promptmill against peer libraries on the same executor workload, in one run.

Install the peers in a SEPARATE virtualenv (they are not promptmill dependencies):

    python3 -m venv .peers-venv
    .peers-venv/bin/pip install -e . prompt-poet priomptipy poml

Run from the repository root:

    .peers-venv/bin/python bench/bench_peers.py --quick   # few repetitions
    .peers-venv/bin/python bench/bench_peers.py           # the full run

A peer that is not installed is reported with its install command and skipped.

Workload: bench/workload.py (executor role: 7 sections, ~600 tokens of task
state, 200 memory entries of 60-120 tokens with a relevance score, 40 tools with
JSON-schema parameters), budgets 8,000 and 3,000 (both force trimming). Every
library gets the same texts and is asked for the same policy: drop the least
relevant memory entries first, then the last tools, then (as a last resort) the
task state; the rest is never dropped. Each is written in its own idiom:

- promptmill: the workload role, `rt.render("executor", state, budget=B)`
  (text) and `provider="openai"` (chat); it reports `req.tokens`.
- prompt-poet: a YAML+Jinja template, one part per memory entry and per tool
  with a `truncation_priority` (higher is dropped first), rendered through its
  cached template loader, `tokenize()` then `truncate()` with `token_limit=B`
  and `truncation_step=1`; it reports `len(prompt.tokens)` (o200k_base).
  `prompt.string` is the text, `prompt.messages` the chat (one message a part).
- priomptipy: `Scope`s with absolute priorities (higher is kept), rendered by
  `render(..., {"token_limit": B, "tokenizer": "o200k_base"})`, as plain text
  and as System+User messages; it reports `token_count`.
- poml: a POML document with `tokenLimit` on the root and `priority` on each
  paragraph (experimental feature of POML; lower is dropped first), rendered
  by `poml.poml(...)`, which runs POML's Node.js renderer in a new process per
  call (so its latency is mostly process start; it is timed with few runs).

Measured per library and budget: median and p95 latency for fresh content
(new texts every render) and for the same state repeated; the tokens the
library reports; the true count of what it returns (tiktoken o200k_base of the
text, and for chat OpenAI's cookbook count: 3 a message plus the tokens of
its role and content, plus 3 priming the reply); renders over budget; memory entries kept, whether they
are the most relevant ones, tools kept, and whether the task state survived.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import os
import re
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import yaml  # noqa: E402

import workload  # noqa: E402

ENTRIES, TOOLS = 200, 40
BUDGETS = (8000, 3000)
TIKTOKEN_URL = "https://openaipublic.blob.core.windows.net/encodings/{}.tiktoken"


def seed_tiktoken_cache() -> None:
    """Peers call `tiktoken.get_encoding`, which downloads the encoding files unless
    they are cached: seed tiktoken's cache from the hash-checked copies promptmill
    ships, so the benchmark runs offline."""
    if os.environ.get("TIKTOKEN_CACHE_DIR"):
        return
    import promptmill

    data = Path(promptmill.__file__).parent / "data"
    cache = Path(tempfile.gettempdir()) / "promptmill-bench-tiktoken"
    cache.mkdir(exist_ok=True)
    for name in ("o200k_base", "cl100k_base"):
        target = cache / hashlib.sha1(TIKTOKEN_URL.format(name).encode()).hexdigest()
        if not target.exists():
            shutil.copyfile(data / f"{name}.tiktoken", target)
    os.environ["TIKTOKEN_CACHE_DIR"] = str(cache)


seed_tiktoken_cache()
import tiktoken  # noqa: E402

ENC = tiktoken.get_encoding("o200k_base")


def count(text: str) -> int:
    """The true o200k_base count of `text`."""
    return len(ENC.encode_ordinary(text))


def chat_count(messages: list[dict]) -> int:
    """OpenAI's cookbook count of a chat request: 3 a message + its role and content, + 3."""
    return sum(3 + count(m.get("role") or "") + count(m.get("content") or "") for m in messages) + 3


# ---------------------------------------------------------------- the shared texts

SPEC = {s["id"]: s for s in yaml.safe_load(workload.ROLE)["sections"]}
SEP = yaml.safe_load(workload.ROLE)["separator"]
ROLE_TEXT = SPEC["role"]["text"].rstrip("\n")
OUTPUT_TEXT = SPEC["output_format"]["text"].rstrip("\n")
RULES_TEXT = SPEC["constraints"]["title"] + "\n" + SPEC["constraints"]["text"].rstrip("\n")
T_TASK, T_SUB, T_MEM, T_TOOLS = (SPEC[k]["title"] for k in ("task_state", "subtask", "memory", "tools"))


def subtask_text(st: dict) -> str:
    s = st["subtask"]
    return f"{T_SUB}\nID: {s['id']}\nDescription: {s['description']}\nAcceptance criteria: {s['acceptance_criteria']}"


def memory_line(m: dict) -> str:
    return f"- [{m['type']}] {m['summary']}"


def tool_text(t: dict) -> str:
    return f"- {t['name']}: {t['description']}\n  parameters: {json.dumps(t['parameters'])}"


@dataclass
class Output:
    """What a library returned for one render."""

    text: str | None  # the prompt as one text (None when the library only gives chat)
    messages: list[dict] | None  # chat messages (None for text-only output)
    reported: int | None  # the tokens the library says it used


# ---------------------------------------------------------------- promptmill

def promptmill_adapters() -> dict[str, Callable[[dict, int], Output]]:
    from promptmill.compiling.api import build_in_memory

    rt, _ = build_in_memory(workload.project())

    def text(st: dict, budget: int) -> Output:
        req = rt.render("executor", st, budget=budget)
        return Output(req.text, None, req.tokens)

    def chat(st: dict, budget: int) -> Output:
        req = rt.render("executor", st, budget=budget, provider="openai")
        return Output(None, req.to_openai()["messages"], req.tokens)

    return {"promptmill text": text, "promptmill openai": chat}


# ---------------------------------------------------------------- prompt-poet

POET_TEMPLATE = r"""
- name: role
  role: system
  content: |
    {{ escape_special_characters(role_text) }}
- name: task_state
  role: user
  truncation_priority: 1
  content: |
    {{ escape_special_characters(sep ~ t_task ~ "\n" ~ task_state) }}
- name: subtask
  role: user
  content: |
    {{ escape_special_characters(sep ~ subtask_text) }}
- name: memory_title
  role: user
  content: |
    {{ escape_special_characters(sep ~ t_mem) }}
{% for m in memory %}
- name: memory_{{ loop.index0 }}
  role: user
  truncation_priority: {{ 1000000 + ((1 - m.relevance) * 1000000) | int }}
  content: |
    {{ escape_special_characters("\n- [" ~ m.type ~ "] " ~ m.summary) }}
{% endfor %}
- name: tools_title
  role: user
  content: |
    {{ escape_special_characters(sep ~ t_tools) }}
{% for t in tools %}
- name: tool_{{ loop.index0 }}
  role: user
  truncation_priority: {{ 1000 + loop.index }}
  content: |
    {{ escape_special_characters("\n- " ~ t.name ~ ": " ~ t.description ~ "\n  parameters: " ~ to_json(t.parameters)) }}
{% endfor %}
- name: output_format
  role: user
  content: |
    {{ escape_special_characters(sep ~ output_text) }}
- name: constraints
  role: user
  content: |
    {{ escape_special_characters(sep ~ rules_text) }}
"""


def poet_adapters() -> dict[str, Callable[[dict, int], Output]]:
    import prompt_poet
    from template_loaders import LocalFSTemplateLoader  # prompt-poet puts its folder on sys.path

    folder = Path(tempfile.mkdtemp(prefix="poet-bench-"))
    (folder / "executor.yml.j2").write_text(POET_TEMPLATE, encoding="utf-8")
    loader = LocalFSTemplateLoader(str(folder / "executor.yml.j2"))
    static = {"role_text": ROLE_TEXT, "sep": SEP, "t_task": T_TASK, "t_mem": T_MEM, "t_tools": T_TOOLS,
              "output_text": OUTPUT_TEXT, "rules_text": RULES_TEXT, "to_json": json.dumps}

    def render(st: dict, budget: int) -> Output:
        data = {**static, "task_state": st["task_state"], "subtask_text": subtask_text(st),
                "memory": st["memory"], "tools": st["tools"]}
        p = prompt_poet.Prompt(template_data=data, template_loader=loader, from_cache=True,
                               token_limit=budget, truncation_step=1, tiktoken_encoding_name="o200k_base")
        p.tokenize()
        p.truncate()
        return Output(p.string, p.messages, len(p.tokens))

    return {"prompt-poet": render}


# ---------------------------------------------------------------- priomptipy

def priompt_tree(st: dict, chat: bool) -> list:
    """The prompt as priomptipy scopes: higher absolute priority is kept longer;
    unscoped text has the base priority (never dropped)."""
    from priomptipy import Scope, SystemMessage, UserMessage

    n_tools = len(st["tools"])
    body: list[Any] = [
        Scope(children=[("" if chat else SEP) + T_TASK + "\n" + st["task_state"]], absolute_priority=3_000_000),
        SEP + subtask_text(st),
        SEP + T_MEM,
        *(Scope(children=["\n" + memory_line(m)], absolute_priority=int(m["relevance"] * 1_000_000)) for m in st["memory"]),
        SEP + T_TOOLS,
        *(Scope(children=["\n" + tool_text(t)], absolute_priority=2_000_000 + n_tools - i) for i, t in enumerate(st["tools"])),
        SEP + OUTPUT_TEXT,
        SEP + RULES_TEXT,
    ]
    if chat:
        return [SystemMessage([ROLE_TEXT]), UserMessage(body)]
    return [ROLE_TEXT, *body]


def priompt_adapters() -> dict[str, Callable[[dict, int], Output]]:
    from priomptipy import render

    loop = asyncio.new_event_loop()

    def text(st: dict, budget: int) -> Output:
        out = loop.run_until_complete(render(priompt_tree(st, False), {"token_limit": budget, "tokenizer": "o200k_base"}))
        prompt = out["prompt"]
        return Output("".join(prompt) if isinstance(prompt, list) else prompt, None, out["token_count"])

    def chat(st: dict, budget: int) -> Output:
        out = loop.run_until_complete(render(priompt_tree(st, True), {"token_limit": budget, "tokenizer": "o200k_base"}))
        msgs = [{"role": m["role"], "content": m["content"]} for m in out["prompt"]["messages"]]
        return Output(None, msgs, out["token_count"])

    return {"priomptipy text": text, "priomptipy chat": chat}


# ---------------------------------------------------------------- poml

POML_TEMPLATE = """<poml syntax="markdown" tokenLimit="{budget}">
<p speaker="system" whiteSpace="pre" priority="100">{{{{ role_text }}}}</p>
<p speaker="human" whiteSpace="pre" priority="50">{{{{ task_text }}}}</p>
<p whiteSpace="pre" priority="100">{{{{ subtask_text }}}}</p>
<p whiteSpace="pre" priority="100">{{{{ t_mem }}}}</p>
<p for="m in memory" whiteSpace="pre" priority="{{{{ m.relevance }}}}">{{{{ m.line }}}}</p>
<p whiteSpace="pre" priority="100">{{{{ t_tools }}}}</p>
<p for="t in tools" whiteSpace="pre" priority="{{{{ t.priority }}}}">{{{{ t.text }}}}</p>
<p whiteSpace="pre" priority="100">{{{{ output_text }}}}</p>
<p whiteSpace="pre" priority="100">{{{{ rules_text }}}}</p>
</poml>"""


def poml_adapters() -> dict[str, Callable[[dict, int], Output]]:
    import poml

    def render(st: dict, budget: int) -> Output:
        n = len(st["tools"])
        ctx = {"role_text": ROLE_TEXT, "task_text": T_TASK + "\n" + st["task_state"], "subtask_text": subtask_text(st),
               "t_mem": T_MEM, "t_tools": T_TOOLS, "output_text": OUTPUT_TEXT, "rules_text": RULES_TEXT,
               "memory": [{"line": memory_line(m), "relevance": m["relevance"]} for m in st["memory"]],
               "tools": [{"text": tool_text(t), "priority": 10 + (n - i) / n} for i, t in enumerate(st["tools"])]}
        msgs = poml.poml(POML_TEMPLATE.format(budget=budget), context=ctx, format="openai_chat")["messages"]
        return Output(None, [{"role": m["role"], "content": m["content"]} for m in msgs], None)

    return {"poml": render}


# ---------------------------------------------------------------- measuring

PEERS = (
    ("promptmill", promptmill_adapters, "pip install -e ."),
    ("prompt-poet", poet_adapters, "pip install prompt-poet"),
    ("priomptipy", priompt_adapters, "pip install priomptipy"),
    ("poml", poml_adapters, "pip install poml  (needs node on PATH)"),
)


@dataclass
class Quality:
    """Correctness of one render."""

    reported: int | None
    true: int
    over: bool
    mem_kept: int
    top_k: bool
    tools_kept: int
    task: str  # full | cut | dropped
    notes: list[str] = field(default_factory=list)


def judge(out: Output, st: dict, budget: int) -> Quality:
    text = out.text if out.text is not None else "\n".join(m.get("content") or "" for m in out.messages or [])
    true = count(text) if out.text is not None else chat_count(out.messages or [])
    fresh = re.escape(st["subtask"]["id"].removeprefix("add-types-"))
    kept = {int(i) for i in re.findall(r"- \[\w+\] [^\n]*?\(" + fresh + r"(\d+)\)\.", text)}
    ranked = sorted(range(len(st["memory"])), key=lambda i: -st["memory"][i]["relevance"])
    tools = len(re.findall(r"- tool_\d+", text))
    first_line = st["task_state"].split("\n", 1)[0]
    task = "full" if st["task_state"] in text else ("cut" if first_line in text else "dropped")
    return Quality(out.reported, true, true > budget, len(kept), kept == set(ranked[: len(kept)]), tools, task)


def timed(fn: Callable[[dict, int], Output], states: list[dict], budget: int) -> tuple[list[float], list[Output]]:
    times, outs = [], []
    for st in states:
        t = time.perf_counter()
        outs.append(fn(st, budget))
        times.append(time.perf_counter() - t)
    return times, outs


def ms(xs: list[float]) -> tuple[float, float]:
    xs = sorted(xs)
    return statistics.median(xs) * 1e3, xs[min(len(xs) - 1, int(0.95 * len(xs)))] * 1e3


def faithfulness(adapters: dict[str, Callable[[dict, int], Output]]) -> None:
    """With a budget that trims nothing, every text rendition should equal promptmill's."""
    st = workload.state(20, 5, seed=7, fresh="f")
    ref = adapters["promptmill text"](st, 100_000).text
    print("same prompt, nothing trimmed (budget 100,000; 20 entries, 5 tools):")
    for name, fn in adapters.items():
        out = fn(st, 100_000)
        body = out.text if out.text is not None else SEP.join(m["content"] for m in out.messages or [])
        same = "identical text" if body == ref else f"differs (its own layout): {count(body)} vs {count(ref)} tokens"
        print(f"  {name:<20} {same}")


def row(name: str, t: list[float], qs: list[Quality], ref: float | None, budget: int) -> str:
    med, p95 = ms(t)
    q = qs[0]
    ratio = f"{med / ref:6.1f}x" if ref else "     -"
    rep = "-" if q.reported is None else str(q.reported)
    over = sum(x.over for x in qs)
    mismatch = sum(x.reported is not None and x.reported != x.true for x in qs)
    topk = "yes" if all(x.top_k for x in qs) else f"no ({sum(not x.top_k for x in qs)}/{len(qs)})"
    return (f"  {name:<20}{med:9.2f}{p95:9.2f} {ratio} {rep:>8} {q.true:>6} {q.true - budget:>+6} "
            f"{over:>2}/{len(qs):<3}{mismatch:>3}/{len(qs):<3} {q.mem_kept:>3}/{ENTRIES:<4}{topk:<9} "
            f"{q.tools_kept:>2}/{TOOLS:<3} {q.task}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("--quick", action="store_true", help="fewer repetitions")
    args = ap.parse_args()
    runs = 7 if args.quick else 31
    slow_runs = 2 if args.quick else 5  # poml starts a Node.js process per render

    adapters: dict[str, Callable[[dict, int], Output]] = {}
    for name, make, how in PEERS:
        try:
            adapters.update(make())
        except ImportError as e:
            print(f"{name}: not installed ({e.name}); install with: .peers-venv/bin/{how}")
    warm = workload.state(20, 5, seed=1, fresh="w")
    for fn in adapters.values():
        fn(warm, 8000)  # load tokenizers, compile templates
    faithfulness(adapters)

    for budget in BUDGETS:
        for mode in ("fresh content", "same state"):
            print(f"\nbudget {budget:,}, {mode} ({ENTRIES} entries, {TOOLS} tools offered)")
            print(f"  {'library':<20}{'med ms':>9}{'p95 ms':>9} {'vs pm':>7} {'reported':>8} {'true':>6} "
                  f"{'-budget':>6} {'over':>6}{'rep!=true':>9} {'memory kept':<17} {'tools':<6} task")
            ref: dict[bool, float] = {}
            for k, (name, fn) in enumerate(adapters.items()):
                n = slow_runs if name == "poml" else runs
                if mode == "fresh content":
                    states = [workload.state(ENTRIES, TOOLS, seed=i, fresh=f"a{k}b{budget}r{i}x") for i in range(n)]
                else:
                    one = workload.state(ENTRIES, TOOLS, seed=0, fresh=f"b{budget}same")
                    fn(one, budget)
                    states = [one] * n
                t, outs = timed(fn, states, budget)
                qs = [judge(o, s, budget) for o, s in zip(outs, states, strict=True)]
                is_chat = outs[0].messages is not None and outs[0].text is None
                if name.startswith("promptmill"):
                    ref[is_chat] = ms(t)[0]
                print(row(name, t, qs, ref.get(is_chat), budget))
                if name == "prompt-poet":  # one render, two views: its text and its messages
                    chat = [judge(Output(None, o.messages, o.reported), s, budget) for o, s in zip(outs, states, strict=True)]
                    print(row("  as messages", t, chat, ref.get(True), budget))
    print(NOTES)


NOTES = """
columns: med/p95 ms = render latency; vs pm = median against promptmill's same output kind (text or chat);
  reported = tokens the library says the prompt uses (first render); true = o200k_base count of what it
  returns (chat: 3 a message + role + content, + 3); -budget = true minus budget (negative: budget left unused);
  over = renders whose true count exceeds the budget; rep!=true = renders whose reported count is not the
  true count; memory kept (first render) and whether the kept entries were always the most relevant ones;
  tools kept; task state full, cut (truncated) or dropped.
notes:
  promptmill truncates the task state as a last resort; prompt-poet, priomptipy and poml can only keep or
    drop a whole part/scope/paragraph, so their task state is all or nothing.
  prompt-poet counts each part separately and adds the counts (no per-message overhead); it makes one
    message per part (~250 offered, ~70 kept at 8,000), so sent as chat the overhead is uncounted. Truncation removes parts by
    truncation_priority; relevance order comes from a per-entry priority computed in the template.
  priomptipy keeps every scope at or above one priority cutoff (binary search), so it cannot skip a large
    entry to keep a smaller, less relevant one; its chat count is contents + 4 per extra message + 3.
  poml's tokenLimit/priority are experimental: it drops whole priority levels, counts paragraphs
    separately (short ones as bytes/4), and does not report a count; it renders in a Node.js process
    started per call, so its latency is mostly process start.
"""


if __name__ == "__main__":
    main()
