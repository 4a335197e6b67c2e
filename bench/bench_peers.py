"""promptmill against peer libraries on the same executor workload, in one run.

Install the peers in a SEPARATE virtualenv (they are not promptmill dependencies).
prompt-poet pins tiktoken==0.7.0, older than promptmill allows (0.13 fixed its
quadratic counting), so the install overrides that pin (bench/peers-overrides.txt)
and every library counts with the same tiktoken:

    python3 -m venv .peers-venv && .peers-venv/bin/pip install uv
    .peers-venv/bin/python -m uv pip install --python .peers-venv/bin/python \
        --override bench/peers-overrides.txt -e . prompt-poet priomptipy poml langchain-core banks

Run from the repository root:

    .peers-venv/bin/python bench/bench_peers.py --quick   # few repetitions (~1.5 min)
    .peers-venv/bin/python bench/bench_peers.py           # the full run (a few minutes)
    .peers-venv/bin/python bench/bench_peers.py --sizes small,medium
    .peers-venv/bin/python bench/bench_peers.py --chart docs/img/perf/peers-render.svg   # and draw it

It prints the installed version of every peer first. A peer that is not
installed is reported with its install command and skipped; poml also needs
`node` on PATH.

Workload: bench/workload.py (executor role: 7 sections, ~600 tokens of task
state, memory entries of 60-120 tokens with a relevance score, tools with
JSON-schema parameters) at three sizes: small (10 entries, 5 tools, budget
8,000: ~2,500 tokens, nothing is trimmed), medium (200 entries, 40 tools,
budgets 8,000 and 3,000) and large (2,000 entries, 200 tools, budget 32,000),
both trimming. Every library gets the same texts and is asked for the same
policy: drop the least relevant memory entries first, then the last tools,
then (as a last resort) the task state; the rest is never dropped. Each is
written in its own idiom:

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
- LangChain (langchain-core): one message per part, ordered so that
  `trim_messages(strategy="first", token_counter=<tiktoken o200k_base counter
  of LangChain's trimming how-to>)` keeps the parts to keep first; kept
  messages are put back in prompt order. Text = the contents joined; it
  reports no count.
- banks: a Jinja template rendered by `banks.Prompt.text` (and with `{% chat %}`
  blocks by `Prompt.chat_messages`); banks has no token budget, so the adapter
  counts with tiktoken and picks items greedily (see the printed notes).
- poml: a POML document with `tokenLimit` on the root and `priority` on each
  paragraph (experimental feature of POML; lower is dropped first), rendered
  by `poml.poml(...)`, which runs POML's Node.js renderer in a new process per
  call (so its latency is mostly process start; it is timed with few runs,
  for fresh content only).

Reference: the lazy floor, tiktoken (o200k_base, `encode_ordinary`, one call
each) encoding exactly the texts that can reach the prompt, taken from
promptmill's own render report of the same state: each present non-list
section, each present list section's title and kept items, and in each list
section that lost items the first that does not fit (per state, the best of
3 tries, so noise cannot inflate it).

Measured per size, budget and library, in three modes: fresh content (new
texts every render), the same state repeated, and an agent loop (the next
turns of one conversation from `workload.agent_turns`: same tools, 90% of the
memory entries recur with new scores, 10% new, a few task-state lines change;
only turns after the first are timed). Per row: median and p95 latency, the
ratio to promptmill and to the lazy floor; the tokens the library reports;
the true count of what it returns (tiktoken o200k_base of the text, and for
chat OpenAI's cookbook count: 3 a message plus the tokens of its role and
content, plus 3 priming the reply); renders over budget; memory entries kept,
whether they are the most relevant ones, tools kept, and whether the task
state survived. A summary at the end judges issue 16's targets from the
numbers measured.
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

import yaml

import workload

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


# the workload's fixed texts, as the Jinja-based peers (prompt-poet, banks) read them
TEMPLATE_CONSTANTS = {
    "role_text": ROLE_TEXT,
    "sep": SEP,
    "t_task": T_TASK,
    "t_mem": T_MEM,
    "t_tools": T_TOOLS,
    "output_text": OUTPUT_TEXT,
    "rules_text": RULES_TEXT,
    "to_json": json.dumps,
}


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
    req: Any = None  # promptmill's PromptRequest (its render report), for the lazy floor


# ---------------------------------------------------------------- promptmill


def promptmill_adapters() -> dict[str, Callable[[dict, int], Output]]:
    from promptmill.compiling.api import build_in_memory

    rt, _ = build_in_memory(workload.project())
    # the warm-up is where tokenizers load: a tokenizer counts its first 16 Ki characters of plain ASCII
    # from the ranks alone and builds tiktoken's tables after (tokenizers.STARTER_CHARS); build them now,
    # or one timed render of the first table pays the ~0.2 s build
    from promptmill.runtime.tokenizers import get_tokenizer

    get_tokenizer("o200k_base").encode("warm")

    def text(st: dict, budget: int) -> Output:
        req = rt.render("executor", st, budget=budget)
        return Output(req.text, None, req.tokens, req)

    def chat(st: dict, budget: int) -> Output:
        req = rt.render("executor", st, budget=budget, provider="openai")
        return Output(None, req.to_openai()["messages"], req.tokens, req)

    return {"promptmill text": text, "promptmill openai": chat}


def lever_adapters() -> dict[str, Callable[[dict, int], Output]]:
    """With --levers, promptmill text twice more, each with one of issue 28's levers taken away,
    timed in the same run as the rows they are compared with (their `vs pm` is the lever's effect):
    `pm/tiktoken only` counts with tiktoken alone (PROMPTMILL_FAST_TOKENIZER=0: lever 3 off; the
    same as promptmill text when promptmill[fast] is not installed) and `pm/no plans` renders
    every template in the Jinja sandbox (its bundles' plans removed: what plans are worth)."""
    import dataclasses

    from promptmill.compiling.api import build_in_memory
    from promptmill.runtime import tokenizers
    from promptmill.runtime.engine import Runtime

    slow, _ = build_in_memory(workload.project())
    shared = dict(tokenizers._cache)  # a private tokenizer for this runtime only, then the shared ones back
    os.environ[tokenizers.FAST_ENV], before = "0", os.environ.get(tokenizers.FAST_ENV)
    try:
        tokenizers._cache.clear()
        slow.render("executor", workload.state(5, 2, seed=1, fresh="lever"), budget=8000)  # its counter keeps that tokenizer
    finally:
        tokenizers._cache.clear()
        tokenizers._cache.update(shared)
        if before is None:
            del os.environ[tokenizers.FAST_ENV]
        else:
            os.environ[tokenizers.FAST_ENV] = before
    rt, _ = build_in_memory(workload.project())
    bare = Runtime(
        {
            n: dataclasses.replace(b, sections=tuple(dataclasses.replace(x, plan=None) for x in b.sections))
            for n, b in ((n, rt.bundle(n)) for n in rt.roles)
        }
    )

    def adapter(runtime: Any) -> Callable[[dict, int], Output]:
        def text(st: dict, budget: int) -> Output:
            req = runtime.render("executor", st, budget=budget)
            return Output(req.text, None, req.tokens, req)

        return text

    return {"pm/tiktoken only": adapter(slow), "pm/no plans": adapter(bare)}


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
    static = dict(TEMPLATE_CONSTANTS)

    def render(st: dict, budget: int) -> Output:
        data = {**static, "task_state": st["task_state"], "subtask_text": subtask_text(st), "memory": st["memory"], "tools": st["tools"]}
        p = prompt_poet.Prompt(
            template_data=data,
            template_loader=loader,
            from_cache=True,
            token_limit=budget,
            truncation_step=1,
            tiktoken_encoding_name="o200k_base",
        )
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


# ---------------------------------------------------------------- LangChain


def langchain_adapters() -> dict[str, Callable[[dict, int], Output]]:
    """One message per part (contents carry their separators, so joined they are the
    prompt text), ordered so that `trim_messages(strategy="first")`, which keeps the
    longest prefix that fits, drops the least relevant memory entries first, then the
    last tools, then the task state; the kept messages are then put back in prompt
    order. The token counter is the tiktoken counter of LangChain's trimming how-to
    (OpenAI's chat count: 3 a message + role + content, + 3), on o200k_base."""
    from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage, trim_messages

    enc = tiktoken.get_encoding("o200k_base")

    def str_token_counter(text: str) -> int:
        return len(enc.encode(text))

    def tiktoken_counter(messages: list[BaseMessage]) -> int:
        num_tokens = 3  # every reply is primed with <|start|>assistant<|message|>
        for msg in messages:
            if isinstance(msg, HumanMessage):
                role = "user"
            elif isinstance(msg, AIMessage):
                role = "assistant"
            elif isinstance(msg, ToolMessage):
                role = "tool"
            elif isinstance(msg, SystemMessage):
                role = "system"
            else:
                raise ValueError(f"Unsupported messages type {msg.__class__}")
            num_tokens += 3 + str_token_counter(role) + str_token_counter(msg.content)  # type: ignore[arg-type]
            if msg.name:
                num_tokens += 1 + str_token_counter(msg.name)
        return num_tokens

    def render(st: dict, budget: int) -> Output:
        # prompt order: role, task state, subtask, memory title, entries, tools title, tools, output, rules
        fixed = [
            (0, SystemMessage(ROLE_TEXT)),
            (2, HumanMessage(SEP + subtask_text(st))),
            (3, HumanMessage(SEP + T_MEM)),
            (5, HumanMessage(SEP + T_TOOLS)),
            (7, HumanMessage(SEP + OUTPUT_TEXT)),
            (8, HumanMessage(SEP + RULES_TEXT)),
        ]
        task = [(1, HumanMessage(SEP + T_TASK + "\n" + st["task_state"]))]
        tools = [((6, i), HumanMessage("\n" + tool_text(t))) for i, t in enumerate(st["tools"])]
        ranked = sorted(range(len(st["memory"])), key=lambda i: -st["memory"][i]["relevance"])
        memory = [((4, i), HumanMessage("\n" + memory_line(st["memory"][i]))) for i in ranked]
        order = fixed + task + tools + memory  # what trim_messages keeps first comes first
        position = {id(m): (k, 0) if isinstance(k, int) else k for k, m in order}
        kept = trim_messages([m for _, m in order], max_tokens=budget, token_counter=tiktoken_counter, strategy="first")
        kept.sort(key=lambda m: position[id(m)])
        msgs = [{"role": "system" if m.type == "system" else "user", "content": m.content} for m in kept]
        return Output("".join(m["content"] for m in msgs), msgs, None)

    return {"langchain": render}


# ---------------------------------------------------------------- banks

BANKS_REST = (
    # banks sets Jinja's trim_blocks: a newline right after a block tag is dropped, so it is written as {{ "\\n" }}
    '{% if memory %}{{ sep }}{{ t_mem }}{% for m in memory %}{{ "\\n" }}- [{{ m.type }}] {{ m.summary }}{% endfor %}{% endif %}'
    '{% if tools %}{{ sep }}{{ t_tools }}{% for t in tools %}{{ "\\n" }}- {{ t.name }}: {{ t.description }}'
    "\n  parameters: {{ to_json(t.parameters) }}{% endfor %}{% endif %}"
    "{{ sep }}{{ output_text }}{{ sep }}{{ rules_text }}"
)
BANKS_TEXT = "{{ role_text }}{% if task_state %}{{ sep }}{{ t_task }}\n{{ task_state }}{% endif %}{{ sep }}{{ subtask_text }}" + BANKS_REST
BANKS_CHAT = (
    '{% chat role="system" %}{{ role_text }}{% endchat %}\n{% chat role="user" %}'
    "{% if task_state %}{{ t_task }}\n{{ task_state }}{{ sep }}{% endif %}{{ subtask_text }}" + BANKS_REST + "{% endchat %}"
)


def banks_adapters() -> dict[str, Callable[[dict, int], Output]]:
    """banks renders a Jinja template (`Prompt.text`, or `Prompt.chat_messages` with
    `{% chat %}` blocks) and has no token budget: the adapter fits with tiktoken the
    way a banks user would. Render the template without memory and tools and count
    it (if that is over budget, render it without the task state); then add tools in
    order and memory entries from the most relevant, counting each item's text
    (+ its section's title with the first), until one does not fit. The prompt is
    rendered again with the kept items; the count reported is that sum."""
    from banks import Prompt

    static = dict(TEMPLATE_CONSTANTS)

    def adapter(template: str, chat: bool) -> Callable[[dict, int], Output]:
        prompt = Prompt(template)

        def rendered(ctx: dict) -> tuple[str | None, list[dict] | None, int]:
            if chat:
                msgs = [
                    {"role": m.role, "content": m.content if isinstance(m.content, str) else "".join(b.text or "" for b in m.content)}
                    for m in prompt.chat_messages(ctx)
                ]
                return None, msgs, chat_count(msgs)
            text = prompt.text(ctx)
            return text, None, count(text)

        def render(st: dict, budget: int) -> Output:
            ctx = {**static, "task_state": st["task_state"], "subtask_text": subtask_text(st), "memory": [], "tools": []}
            _, _, used = rendered(ctx)
            if used > budget:
                ctx["task_state"] = ""
                _, _, used = rendered(ctx)
            for key, title, items, line in (
                ("tools", T_TOOLS, st["tools"], tool_text),
                ("memory", T_MEM, sorted(st["memory"], key=lambda m: -m["relevance"]), memory_line),
            ):
                kept: list[dict] = []
                for item in items:
                    cost = count(("" if kept else SEP + title) + "\n" + line(item))
                    if used + cost > budget:
                        break
                    kept.append(item)
                    used += cost
                if key == "memory":  # back in state order, as promptmill places them
                    chosen = {id(m) for m in kept}
                    kept = [m for m in st["memory"] if id(m) in chosen]
                ctx[key] = kept
            text, msgs, _ = rendered(ctx)
            return Output(text, msgs, used)

        return render

    return {"banks text": adapter(BANKS_TEXT, False), "banks chat": adapter(BANKS_CHAT, True)}


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
        ctx = {
            "role_text": ROLE_TEXT,
            "task_text": T_TASK + "\n" + st["task_state"],
            "subtask_text": subtask_text(st),
            "t_mem": T_MEM,
            "t_tools": T_TOOLS,
            "output_text": OUTPUT_TEXT,
            "rules_text": RULES_TEXT,
            "memory": [{"line": memory_line(m), "relevance": m["relevance"]} for m in st["memory"]],
            "tools": [{"text": tool_text(t), "priority": 10 + (n - i) / n} for i, t in enumerate(st["tools"])],
        }
        msgs = poml.poml(POML_TEMPLATE.format(budget=budget), context=ctx, format="openai_chat")["messages"]
        return Output(None, [{"role": m["role"], "content": m["content"]} for m in msgs], None)

    return {"poml": render}


# ---------------------------------------------------------------- measuring

PEERS = (
    ("promptmill", promptmill_adapters, "pip install -e .", "promptmill"),
    ("prompt-poet", poet_adapters, "pip install prompt-poet", "prompt-poet"),
    ("priomptipy", priompt_adapters, "pip install priomptipy", "priomptipy"),
    ("langchain", langchain_adapters, "pip install langchain-core", "langchain-core"),
    ("banks", banks_adapters, "pip install banks", "banks"),
    ("poml", poml_adapters, "pip install poml  (needs node on PATH)", "poml"),
)


@dataclass(frozen=True)
class Size:
    name: str
    entries: int
    tools: int
    budgets: tuple[int, ...]
    runs: int  # repetitions in a full run (a library slower than CAP_S / runs gets fewer)


SIZES = {
    "small": Size("small", 10, 5, (8000,), 41),  # ~2,500 tokens: nothing is trimmed
    "medium": Size("medium", 200, 40, (8000, 3000), 31),
    "large": Size("large", 2000, 200, (32000,), 15),
}
MODES = ("fresh content", "same state", "agent loop")
SLOW = {"poml": "a Node.js process per render, ~1.5 s whatever the state"}
CAP_S = 2.5  # about this many seconds of renders per library and table (at least 3 renders)


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
    nonce = re.compile(r"\(" + fresh + r"(\d+)\)\.$")
    ids = [int(nonce.search(m["summary"]).group(1)) for m in st["memory"]]  # type: ignore[union-attr]
    kept = {int(i) for i in re.findall(r"- \[\w+\] [^\n]*?\(" + fresh + r"(\d+)\)\.", text)}
    ranked = sorted(range(len(ids)), key=lambda i: -st["memory"][i]["relevance"])
    tools = len(re.findall(r"- tool_\d+", text))
    first_line = st["task_state"].split("\n", 1)[0]
    task = "full" if st["task_state"] in text else ("cut" if first_line in text else "dropped")
    top_k = kept == {ids[i] for i in ranked[: len(kept)]}
    return Quality(out.reported, true, true > budget, len(kept), top_k, tools, task)


def floor_texts(req: Any, st: dict) -> list[str]:
    """The texts that can reach the prompt of promptmill's render `req` of `st`: each
    present non-list section, each present list section's title and kept items, and
    in each list section that lost items the first that does not fit (the most
    relevant dropped entry, the first dropped tool)."""
    lists = {"memory": (st["memory"], memory_line, lambda i: -st["memory"][i]["relevance"]), "tools": (st["tools"], tool_text, lambda i: i)}
    texts: list[str] = []
    for s in req.sections:
        if s.items_total is None:
            if s.present and s.text:
                texts.append(s.text)
            continue
        items, line, rank = lists[s.id]
        if s.present:
            texts.append(s.text.split("\n", 1)[0])  # its title
            texts += [line(items[i]) for i in s.items_kept]
        if s.items_dropped:
            texts.append(line(items[min(s.items_dropped, key=rank)]))
    return texts


def lazy_floor(texts: list[str], repeat: int = 3) -> float:
    """Seconds tiktoken takes to encode `texts`, one call each: the best of `repeat`
    tries, so a noisy machine cannot inflate the floor (it only makes targets stricter)."""
    encode = ENC.encode_ordinary
    best = float("inf")
    for _ in range(repeat):
        t = time.perf_counter()
        for x in texts:
            encode(x)
        best = min(best, time.perf_counter() - t)
    return best


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


HEADER = (
    f"  {'library':<20}{'med ms':>9}{'p95 ms':>9} {'vs pm':>7} {'vs floor':>8} {'reported':>8} {'true':>6} "
    f"{'-budget':>6} {'over':>6}{'rep!=true':>9} {'memory kept':<19} {'tools':<8} task"
)


def row(name: str, t: list[float], qs: list[Quality], ref: float | None, floor: float | None, budget: int, size: Size) -> str:
    med, p95 = ms(t)
    q = qs[0]
    ratio = f"{med / ref:6.2f}x" if ref else "      -"
    vs_floor = f"{med / floor:7.2f}x" if floor else "       -"
    rep = "-" if q.reported is None else str(q.reported)
    over = sum(x.over for x in qs)
    mismatch = sum(x.reported is not None and x.reported != x.true for x in qs)
    topk = "yes" if all(x.top_k for x in qs) else f"no ({sum(not x.top_k for x in qs)}/{len(qs)})"
    return (
        f"  {name:<20}{med:9.3f}{p95:9.3f} {ratio} {vs_floor} {rep:>8} {q.true:>6} {q.true - budget:>+6} "
        f"{over:>2}/{len(qs):<3}{mismatch:>3}/{len(qs):<3} {q.mem_kept:>4}/{size.entries:<5}{topk:<9} "
        f"{q.tools_kept:>3}/{size.tools:<4} {q.task}"
    )


@dataclass
class Results:
    """Medians (ms) by (size, budget, mode, library), lazy floors by (size, budget, mode),
    and promptmill's exactness over every render of the run."""

    med: dict[tuple[str, int, str, str], float] = field(default_factory=dict)
    floor: dict[tuple[str, int, str], float] = field(default_factory=dict)
    pm_renders: int = 0
    pm_mismatch: int = 0
    pm_over: int = 0


def states_for(mode: str, size: Size, n: int, tag: str) -> tuple[dict | None, list[dict]]:
    """The states one library renders in a table: a state to render first, untimed
    (None when there is none), and the timed ones."""
    e, t = size.entries, size.tools
    if mode == "fresh content":
        return None, [workload.state(e, t, seed=i, fresh=f"{tag}r{i}x") for i in range(n)]
    if mode == "same state":
        one = workload.state(e, t, seed=0, fresh=f"{tag}x")
        return one, [one] * n
    turns = list(workload.agent_turns(e, t, n + 1, seed=1, fresh=f"{tag}x"))
    return turns[0], turns[1:]


def table(size: Size, budget: int, mode: str, adapters: dict[str, Callable[[dict, int], Output]], runs: int, res: Results) -> None:
    what = {
        "fresh content": "every text new",
        "same state": "one state rendered again",
        "agent loop": "next turns of one conversation: same tools, 90% of entries recur with new scores, "
        "10% new, task state changed by a few lines; the first turn is rendered untimed",
    }[mode]
    print(f"\n{size.name}, budget {budget:,}, {mode} ({size.entries} entries, {size.tools} tools offered; {what})")
    print(HEADER)
    ref: dict[bool, float] = {}
    floor: float | None = None
    for k, (name, fn) in enumerate(adapters.items()):
        if name in SLOW and mode != "fresh content":
            print(f"  {name:<20}(fresh content only: {SLOW[name]})")
            continue
        tag = f"{size.name[0]}{k}b{budget}{mode[0]}"
        probe = workload.state(size.entries, size.tools, seed=10_000 + k, fresh=f"{tag}p")
        t0 = time.perf_counter()
        fn(probe, budget)  # a first render of this size, untimed: how many more fit in CAP_S
        n = max(3, min(runs, int(CAP_S / max(time.perf_counter() - t0, 1e-9))))
        first, states = states_for(mode, size, n, tag)
        if first is not None:
            fn(first, budget)
        t, outs = timed(fn, states, budget)
        qs = [judge(o, s, budget) for o, s in zip(outs, states, strict=True)]
        if name == "promptmill text":  # in a pass of its own: timed between renders it slowed promptmill ~15%
            floors = [lazy_floor(floor_texts(o.req, s)) for o, s in zip(outs, states, strict=True)]
            floor = ms(floors)[0]
            res.floor[(size.name, budget, mode)] = floor
            calls = len(floor_texts(outs[0].req, states[0]))
            fmed, fp95 = ms(floors)
            print(
                f"  {'lazy floor':<20}{fmed:9.3f}{fp95:9.3f} {'':>7} {1:7.2f}x   (tiktoken o200k_base, "
                f"{calls} encode_ordinary calls: the texts that can reach the prompt)"
            )
        if name.startswith("promptmill"):
            res.pm_renders += len(qs)
            res.pm_mismatch += sum(q.reported != q.true for q in qs)
            res.pm_over += sum(q.over for q in qs)
        is_chat = outs[0].messages is not None and outs[0].text is None
        res.med[(size.name, budget, mode, name)] = ms(t)[0]
        if name.startswith("promptmill"):
            ref[is_chat] = ms(t)[0]
        print(row(name, t, qs, ref.get(is_chat), floor, budget, size))
        if name in ("prompt-poet", "langchain"):  # one render, two views: its text and its messages
            chat = [judge(Output(None, o.messages, o.reported), s, budget) for o, s in zip(outs, states, strict=True)]
            print(row("  as messages", t, chat, ref.get(True), floor, budget, size))


def summary(res: Results, sizes: list[Size]) -> None:
    """Issue 16's targets, each judged from the numbers measured above."""

    def line(size: str, label: str, value: float, target: str, ok: bool, detail: str) -> None:
        print(f"  {size:<7} {label:<36} {value:7.3f}x  {target:<7} {'met' if ok else 'NOT met':<8} {detail}")

    print("\ntargets (issue 16), judged from this run (promptmill text; worst table of each size):")
    for size in sizes:
        worst: tuple[float, str] | None = None
        for (sz, budget, mode, name), med in res.med.items():
            pm = res.med.get((sz, budget, mode, "promptmill text"))
            if sz != size.name or name.startswith(("promptmill", "pm/")) or pm is None:
                continue
            if worst is None or pm / med > worst[0]:
                worst = (pm / med, f"[{name}, budget {budget:,}, {mode}: {pm:.3f} vs {med:.3f} ms]")
        if worst is None:
            print(f"  {size.name:<7} promptmill / fastest peer: no peer measured")
        else:
            line(size.name, "promptmill / fastest peer", worst[0], "< 1.0", worst[0] < 1.0, worst[1])
    for mode, label, target in (
        ("fresh content", "fresh content / lazy floor", 1.3),
        ("agent loop", "agent loop next turn / lazy floor", 0.4),
    ):
        for size in sizes:
            ratios = [
                (res.med[(size.name, b, mode, "promptmill text")] / res.floor[(size.name, b, mode)], b)
                for b in size.budgets
                if (size.name, b, mode) in res.floor
            ]
            if ratios:
                r, b = max(ratios)
                line(size.name, label, r, f"<= {target}", r <= target, f"[budget {b:,}]")
    exact = res.pm_mismatch == 0 and res.pm_over == 0
    print(
        f"  all     promptmill exact: reported != true count in {res.pm_mismatch} of {res.pm_renders} renders "
        f"(text and openai), over budget in {res.pm_over}: {'met' if exact else 'NOT met'}"
    )


def versions() -> None:
    from importlib.metadata import PackageNotFoundError, version

    found = []
    from promptmill.runtime.tokenizers import get_tokenizer

    backend = getattr(get_tokenizer("o200k_base"), "backend", "tiktoken")
    print(f"promptmill counts o200k_base with {backend} (promptmill[fast] and PROMPTMILL_FAST_TOKENIZER decide)")
    for dist in ("promptmill", "tiktoken", "quicktok-v1", *(d for _, _, _, d in PEERS[1:])):
        try:
            found.append(f"{dist} {version(dist)}")
        except PackageNotFoundError:
            found.append(f"{dist} (not installed)")
    node = shutil.which("node")
    print("versions: " + ", ".join(found) + f"; python {sys.version.split()[0]}; node {'on PATH' if node else 'missing'}")


def chart(path: str, res: Results, sizes: list[Size], adapters: dict[str, Callable[[dict, int], Output]]) -> None:
    """Median render time (fresh content, each size's first budget) against the tokens the state offers,
    one line per library and the lazy floor, as an SVG line chart (bench/charts.py)."""
    from charts import line_chart, machine

    offered = {}  # size -> tokens of the whole state, rendered by promptmill with no budget to speak of
    for size in sizes:
        out = adapters["promptmill text"](workload.state(size.entries, size.tools, seed=0, fresh="chart"), 10_000_000)
        offered[size.name] = out.reported or 0
    series: dict[str, list[tuple[float, float]]] = {}
    for (sz, budget, mode, name), med in res.med.items():
        size = SIZES[sz]
        if mode == "fresh content" and budget == size.budgets[0] and not name.startswith("pm/"):
            series.setdefault(name, []).append((offered[sz], med))
    series["lazy floor (tiktoken)"] = [
        (offered[sz], f) for (sz, budget, mode), f in res.floor.items() if mode == "fresh content" and budget == SIZES[sz].budgets[0]
    ]
    budgets = ", ".join(f"{s.name} {s.budgets[0]:,}" for s in sizes)
    line_chart(
        path,
        series,
        title="Render time against prompt size, fresh content (median of each library)",
        x_label=f"tokens the state offers (sizes {', '.join(s.name for s in sizes)}; budgets {budgets})",
        y_label="ms per render (log)",
        caption=[".peers-venv/bin/python bench/bench_peers.py " + " ".join(sys.argv[1:]), machine()],
        log_x=True,
        log_y=True,
        dashed=["lazy floor (tiktoken)"],
    )
    print(f"\nchart written to {path}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("--quick", action="store_true", help="fewer repetitions")
    ap.add_argument("--sizes", default="small,medium,large", help="comma-separated, of: " + ", ".join(SIZES))
    ap.add_argument("--levers", action="store_true", help="also time promptmill without the fast tokenizer and without plans")
    ap.add_argument("--only-promptmill", action="store_true", help="skip the peers (with --levers: the levers' effect alone)")
    ap.add_argument("--chart", metavar="PATH", help="also draw render time against prompt size as an SVG at PATH")
    args = ap.parse_args()
    names = [n.strip() for n in args.sizes.split(",") if n.strip()]
    unknown = [n for n in names if n not in SIZES]
    if unknown or not names:
        ap.error(f"--sizes: unknown {', '.join(unknown) or '(none given)'}; choose from {', '.join(SIZES)}")
    sizes = [SIZES[n] for n in names]

    versions()
    adapters: dict[str, Callable[[dict, int], Output]] = {}
    for name, make, how, _ in PEERS[:1] if args.only_promptmill else PEERS:
        try:
            adapters.update(make())
        except ImportError as e:
            print(f"{name}: not installed ({e.name}); install with: .peers-venv/bin/{how}")
        if name == "promptmill" and args.levers:
            adapters.update(lever_adapters())
    warm = workload.state(20, 5, seed=1, fresh="w")
    for fn in adapters.values():
        fn(warm, 8000)  # load tokenizers, compile templates
    faithfulness(adapters)

    res = Results()
    for size in sizes:
        runs = max(3, size.runs // 4) if args.quick else size.runs
        for budget in size.budgets:
            for mode in MODES:
                table(size, budget, mode, adapters, runs, res)
    print(NOTES)
    summary(res, sizes)
    if args.chart:
        chart(args.chart, res, sizes, adapters)


NOTES = """
columns: med/p95 ms = render latency; vs pm = median against promptmill's same output kind (text or chat);
  vs floor = median against the lazy floor of the same table: tiktoken (o200k_base, encode_ordinary, one call
  each) encoding the texts that can reach promptmill's prompt (present sections, kept items, and in each list
  section that lost items the first item that does not fit), from promptmill's own render report, timed
  per state as the best of 3 tries;
  reported = tokens the library says the prompt uses (first render); true = o200k_base count of what it
  returns (chat: 3 a message + role + content, + 3); -budget = true minus budget (negative: budget left unused);
  over = renders whose true count exceeds the budget; rep!=true = renders whose reported count is not the
  true count; memory kept (first render) and whether the kept entries were always the most relevant ones;
  tools kept; task state full, cut (truncated) or dropped. A library slower than ~2.5 s a table gets fewer
  renders (at least 3); the agent loop times each library on its own conversation, after its first turn.
notes:
  promptmill truncates the task state as a last resort; prompt-poet, priomptipy, LangChain, banks and poml
    can only keep or drop a whole part/scope/message/paragraph, so their task state is all or nothing.
  prompt-poet counts each part separately and adds the counts (no per-message overhead); it makes one
    message per part, so sent as chat the overhead is uncounted. Truncation removes parts by
    truncation_priority; relevance order comes from a per-entry priority computed in the template.
  priomptipy keeps every scope at or above one priority cutoff (binary search), so it cannot skip a large
    entry to keep a smaller, less relevant one; its chat count is contents + 4 per extra message + 3.
  LangChain: trim_messages(strategy="first") with the tiktoken counter of its trimming how-to (OpenAI's chat
    count per message, o200k_base); one message per part, ordered role, fixed parts, task state, tools,
    entries by relevance, so the prefix it keeps drops entries, then tools, then the task state; kept
    messages are put back in prompt order. It binary-searches the prefix and the counter recounts every
    message of each prefix tried (no cache), and it stops at the first part that does not fit; when everything
    fits (small) it counts every message once and returns. It reports no count; its budget holds for the
    messages (chat overhead included), so the text leaves that overhead unused.
  banks has no token budget or counting of its own (banks 2.x: Jinja templates, chat blocks, a render cache keyed
    on the pickled context): the adapter renders the template without memory and tools and counts it, adds
    tools in order then entries by relevance, counting each item's text (+ the section title with the first)
    until one does not fit, and renders again with the kept items. It reports that sum of separate counts,
    which can differ from the count of the joined text by a few tokens (rep!=true, and over budget when the
    sum is under and the text over).
  poml's tokenLimit/priority are experimental: it drops whole priority levels, counts paragraphs
    separately (short ones as bytes/4), and does not report a count; it renders in a Node.js process
    started per call, so its latency is mostly process start.
"""


if __name__ == "__main__":
    main()
