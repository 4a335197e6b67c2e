"""Helpers shared by the provider and library tests: the shipped roles, rendered
once per session; the documented counting model; a state ten times larger."""

from __future__ import annotations

import copy
import functools
from pathlib import Path
from typing import Any

import yaml

from promptmill.compiling.api import build_in_memory
from promptmill.runtime.counting import Counter
from promptmill.runtime.tokenizers import get_tokenizer

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "prompts" / "examples"
PROVIDERS = ("text", "openai", "anthropic", "gemini", "live")
PROVIDERS += ("openai-responses",)
PROVIDERS += ("anthropic-vertex", "gemini-vertex")  # Vertex AI variants (issue 24)
# (role, example state file) for every shipped role; test_library checks none is missing
SHIPPED = (
    ("executor", "executor.state.yaml"),
    ("planner", "planner.state.yaml"),
    ("replanner", "replanner.state.yaml"),
    ("extractor", "extractor.state.yaml"),
    ("verifier", "verifier.state.yaml"),
    ("directive", "directive.state.yaml"),
    ("directive-triage", "directive-triage.state.yaml"),
    ("companion-chat", "companion-chat.state.yaml"),
    ("companion-beat", "companion-beat.state.yaml"),
    ("companion-delivery", "companion-delivery.state.yaml"),
    ("companion-live", "companion-live.state.yaml"),
)
TOK = get_tokenizer("o200k_base")


@functools.lru_cache(maxsize=1)
def runtime():
    rt, _ = build_in_memory(ROOT)
    return rt


def state(name: str) -> dict:
    return yaml.safe_load((EXAMPLES / name).read_text(encoding="utf-8"))


def render(role: str, state_file: str, provider: str, **kw):
    return runtime().render(role, state(state_file), provider=provider, **kw)


def documented_total(req) -> int:
    """`req.tokens` by the counting model of docs/providers.md (o200k_base roles)."""
    counter = Counter(TOK)
    if req.provider == "openai":  # OpenAI's cookbook: 3 + the tokens of every value (role and content), + 3
        sent = req.to_openai()["messages"]
        messages = sum(3 + sum(TOK.count(v) for v in m.values()) for m in sent) + (3 if sent else 0)
    elif req.provider == "openai-responses":  # the chat model: `instructions` is the leading system message
        payload = req.to_openai_responses()
        sent = [{"role": "system", "content": payload["instructions"]}] if "instructions" in payload else []
        sent += payload["input"]
        messages = sum(3 + sum(TOK.count(v) for v in m.values()) for m in sent) + (3 if sent else 0)
    else:
        messages = sum(3 + TOK.count(m.content) for m in req.messages) + (3 if req.messages else 0)
    wire = req.wire
    extras = wire.extra_tools(req.output, req.tool_mode)
    forced = wire.forced_tool(req.output) is not None
    tools = wire.tool_cost(counter, [*req.tools, *extras], forced)
    return messages + tools + wire.output_cost(counter, req.output)


def grow(value: Any, factor: int = 10) -> Any:
    """`value` (a render state) with every list `factor` times longer and every
    multi-line text `factor` times repeated; copies of list items get distinct
    `id`s and `name`s (`add-types-2`, `read_file_2`) and strings a ` (2)` suffix.
    Single-line scalars stay as they are, so the state stays valid for its role."""
    if isinstance(value, dict):
        return {k: grow(v, factor) for k, v in value.items()}
    if isinstance(value, list):
        return [_copy(item, n) for n in range(factor) for item in value]
    if isinstance(value, str) and "\n" in value.strip():
        return value * factor
    return value


def _copy(item: Any, n: int) -> Any:
    item = copy.deepcopy(item)
    if n == 0:
        return item
    if isinstance(item, dict):
        if isinstance(item.get("id"), str):
            item["id"] = f"{item['id']}-{n + 1}"
        if isinstance(item.get("name"), str):
            item["name"] = f"{item['name']}_{n + 1}"
        if isinstance(item.get("relevance"), (int, float)):
            item["relevance"] = round(item["relevance"] * (1 - n / 20), 4)  # copies rank a little lower
    elif isinstance(item, str):
        item = f"{item} ({n + 1})"
    return item
