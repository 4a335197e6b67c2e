"""Anthropic Messages: top-level `system` blocks with a cache breakpoint, alternating turns.

    client.messages.create(**req.to_anthropic())  # a role that declares `model:`
    client.messages.create(**req.to_anthropic(model="claude-sonnet-4-5"))

`system` is a list of text blocks: the stable prefix, then the rest. With the
role's `cache: true` the last block of the leading stable run (system blocks,
then message blocks) carries `cache_control: {"type": "ephemeral"}`, so
Anthropic caches tools + stable system text across turns (prompts shorter than
the model's minimum cacheable length are simply not cached). When every tools
section is stable, the last tool declaration carries a second breakpoint (the
last one of the stable tools sections when a changing one follows them): tools
come first in Anthropic's cache order, so they stay cached when the text after
them changes. `cache_points()` says which breakpoints a request places,
within the model's `cache.breakpoints` (the stable prefix first). Consecutive
messages of one role are merged into one turn of several text blocks.
`max_tokens` is the role's `reserve` (the tokens kept for the reply). Native
tools go in `tools` with `input_schema`; a `native` contract becomes a forced
tool call (`tool_choice: {type: tool, name}`), a `return_call` contract with
native tools adds its return tool without forcing it.

Tools are counted as the JSON of each declaration plus the tool-use system prompt Anthropic
documents (docs/providers.md, "Counting model").
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ..runtime.wire import BatchLimits
from ._chat import TurnsWire, split
from ._tools import anthropic_tool, compact

if TYPE_CHECKING:
    from ..runtime.counting import Counter
    from ..runtime.request import PromptRequest

CACHE = {"type": "ephemeral"}
MAX_BREAKPOINTS = 4  # `cache_control` blocks Anthropic accepts in one request
TOOLS_OVERHEAD = 346  # the tool-use system prompt Anthropic documents
FORCED_OVERHEAD = 313  # ...when a tool is forced


class AnthropicWire(TurnsWire):
    name = "anthropic"
    provider = "anthropic"
    contract_as_tool = True
    explicit_cache = True
    batch_limits: BatchLimits | None = BatchLimits(100_000, 256 * 1024 * 1024)

    def tool_text(self, decl: Mapping[str, Any]) -> str:
        return compact(anthropic_tool(decl))

    def tool_frame_cost(self, counter: Counter, forced: bool = False) -> int:
        return FORCED_OVERHEAD if forced else TOOLS_OVERHEAD

    def cache_points(self, req: PromptRequest, decls: Sequence[Mapping[str, Any]]) -> tuple[str, ...]:
        """The cache breakpoints `req` carries, in the order they are granted: `prefix` (the end of
        the leading stable run of blocks) and `tools` (the last declaration, when every tools section
        is stable), at most the model's `cache.breakpoints` (`req.cache_breakpoints`)."""
        if not req.cache:
            return ()
        wanted = []
        if any(m.stable for m in req.messages[:1]):
            wanted.append("prefix")
        if stable_tools(req, decls):
            wanted.append("tools")
        limit = MAX_BREAKPOINTS if req.cache_breakpoints is None else min(req.cache_breakpoints, MAX_BREAKPOINTS)
        return tuple(wanted[: max(limit, 0)])

    def render(self, req: PromptRequest, *, model: str | None = None, max_tokens: int | None = None) -> dict:
        """The keyword arguments of `messages.create` (`model` when known)."""
        model, max_tokens = self.reply_limits(req, model, max_tokens)
        system, turns = split(req, self.name)
        blocks: list[dict[str, Any]] = [{"type": "text", "text": text} for text, _ in system]
        stable = [s for _, s in system]
        messages: list[dict[str, Any]] = []
        for role, parts in turns:
            content: list[dict[str, Any]] = [{"type": "text", "text": text} for text, _ in parts]
            messages.append({"role": role, "content": content})
            blocks_stable = [s for _, s in parts]
            stable.extend(blocks_stable)
            blocks.extend(content)
        decls = [*req.tools, *self.extra_tools(req.output, req.tool_mode)]
        points = self.cache_points(req, decls)
        if "prefix" in points:
            run = 0
            while run < len(stable) and stable[run]:
                run += 1
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
        if decls:
            out["tools"] = [anthropic_tool(d) for d in decls]
            if "tools" in points:
                out["tools"][stable_tools(req, decls) - 1]["cache_control"] = dict(CACHE)
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


class AnthropicPlatformWire(AnthropicWire):
    """Claude on a cloud platform (Bedrock, Vertex AI): the Anthropic body with the platform's
    `anthropic_version` first and no `model` (the platform names it in the URL)."""

    family = "anthropic"
    anthropic_version = ""  # the value the platform documents

    def render(self, req: PromptRequest, *, model: str | None = None, max_tokens: int | None = None) -> dict:
        body = super().render(req, max_tokens=max_tokens)
        body.pop("model", None)
        return {"anthropic_version": self.anthropic_version, **body}


def stable_tools(req: PromptRequest, decls: Sequence[Mapping[str, Any]]) -> int:
    """How many of the declarations open the payload's stable run: those of the native tools
    sections up to the first one that is not stable (all, with the contract's return tool, when
    every one is)."""
    if req.tool_mode != "native":
        return len(decls)  # only the contract's return tool is declared
    n = 0
    for s in req.sections:
        if s.kind == "tools" and s.present:
            if not s.stable:
                return n
            n += len(s.items_kept)
    return len(decls)


WIRE = AnthropicWire()
