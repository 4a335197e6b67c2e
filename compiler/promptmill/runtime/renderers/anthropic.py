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
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..tooldecl import anthropic_tool, extra_tools, forced_tool
from .chat import split

if TYPE_CHECKING:  # annotations only: request.py imports this module, not the other way
    from ..request import PromptRequest

CACHE = {"type": "ephemeral"}


def render(req: PromptRequest, model: str | None = None, max_tokens: int | None = None) -> dict:
    """The keyword arguments of `messages.create` (`model` when known)."""
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
    decls = [*req.tools, *extra_tools(req.output, "anthropic", req.tool_mode)]
    if decls:
        out["tools"] = [anthropic_tool(d) for d in decls]
    forced = forced_tool(req.output, "anthropic")
    if forced is not None:
        out["tool_choice"] = {"type": "tool", "name": forced}
    return out
