"""Anthropic Messages: top-level `system` blocks with a cache breakpoint, alternating turns.

    client.messages.create(**req.to_anthropic())  # a role that declares `model:`
    client.messages.create(**req.to_anthropic(model="claude-sonnet-4-5"))

`system` is a list of text blocks: the stable prefix, then the rest. With the
role's `cache: true` the last block of the leading stable run (system blocks,
then message blocks) carries `cache_control: {"type": "ephemeral"}`, so
Anthropic caches tools + stable system text across turns (prompts shorter than
the model's minimum cacheable length are simply not cached). Consecutive
messages of one role are merged into one turn of several text blocks.
`max_tokens` is the role's `reserve` (the tokens kept for the reply). Native
tools go in `tools` with `input_schema`; a `native` contract becomes a forced
tool call (`tool_choice: {type: tool, name}`), a `return_call` contract with
native tools adds its return tool without forcing it.

Tools are counted as the JSON of each declaration plus the tool-use system prompt Anthropic
documents (docs/providers.md, "Counting model").
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ._chat import TurnsWire, split
from ._tools import anthropic_tool, compact
from .base import BatchLimits

if TYPE_CHECKING:
    from ..counting import Counter
    from ..request import PromptRequest

CACHE = {"type": "ephemeral"}
TOOLS_OVERHEAD = 346  # the tool-use system prompt Anthropic documents
FORCED_OVERHEAD = 313  # ...when a tool is forced


class AnthropicWire(TurnsWire):
    name = "anthropic"
    provider = "anthropic"
    contract_as_tool = True
    batch_limits = BatchLimits(100_000, 256 * 1024 * 1024)

    def tool_text(self, decl: Mapping[str, Any]) -> str:
        return compact(anthropic_tool(decl))

    def tool_frame_cost(self, counter: Counter, forced: bool = False) -> int:
        return FORCED_OVERHEAD if forced else TOOLS_OVERHEAD

    def render(self, req: PromptRequest, *, model: str | None = None, max_tokens: int | None = None) -> dict:
        """The keyword arguments of `messages.create` (`model` when known)."""
        model, max_tokens = self.reply_limits(req, model, max_tokens)
        system, turns = split(req, "anthropic")
        blocks: list[dict[str, Any]] = [{"type": "text", "text": text} for text, _ in system]
        stable = [s for _, s in system]
        messages: list[dict[str, Any]] = []
        for role, parts in turns:
            content: list[dict[str, Any]] = [{"type": "text", "text": text} for text, _ in parts]
            messages.append({"role": role, "content": content})
            blocks_stable = [s for _, s in parts]
            stable.extend(blocks_stable)
            blocks.extend(content)
        if req.cache:
            run = 0
            while run < len(stable) and stable[run]:
                run += 1
            if run:
                blocks[run - 1]["cache_control"] = dict(CACHE)
        for m in messages:  # a single plain block reads better as a string
            if len(m["content"]) == 1 and "cache_control" not in m["content"][0]:
                m["content"] = m["content"][0]["text"]
        out: dict = {"model": model} if model else {}
        if max_tokens:
            out["max_tokens"] = max_tokens
        if system:
            out["system"] = blocks[: len(system)]
        out["messages"] = messages
        decls = [*req.tools, *self.extra_tools(req.output, req.tool_mode)]
        if decls:
            out["tools"] = [anthropic_tool(d) for d in decls]
        forced = self.forced_tool(req.output)
        if forced is not None:
            out["tool_choice"] = {"type": "tool", "name": forced}
        return out

    def batch_line(self, custom_id: str, payload: dict, model: str | None, max_tokens: int | None) -> dict:
        params = {"model": model, **payload}
        if "max_tokens" not in params:
            params["max_tokens"] = max_tokens
        return {"custom_id": custom_id, "params": params}

    def batch_payload(self, line: dict) -> dict:
        return line["params"]


WIRE = AnthropicWire()
