"""Lint the explicit cache breakpoints a Claude role's requests carry.

On the Anthropic wires (`anthropic`, `anthropic-vertex`, and the Bedrock variant
built on them) a role with `cache: true` marks the end of its stable prefix with
`cache_control`, and the last declaration of its stable tools with a second one
(wires/anthropic.py). The model table says how many breakpoints a model
takes (`cache.breakpoints`) and the shortest prefix it caches (`cache.min_tokens`):

- PM614: the role needs more breakpoints than its model takes; renders leave out
  the tools breakpoint (the prefix one is granted first), so the tools are cached
  only as part of the prefix.
- PM615 (info): the stable prefix, known at compile time, is shorter than the
  model's minimum cacheable length, so the breakpoint caches nothing.

Both apply to roles whose model (`model:`) is a row of the `anthropic` provider.
"""

from __future__ import annotations

import math
from typing import Any

from ..compose.resolve import ComposedRole
from ..core.diagnostics import Diagnostic
from ..runtime.bundle import Section
from ..runtime.models import ModelInfo
from ..runtime.wire import get_wire
from .context import LintContext


def cache_breakpoints(role: ComposedRole, ctx: LintContext) -> list[Diagnostic]:
    """PM614 and PM615 for a role that sends Claude cache breakpoints."""
    info = ctx.model
    if info is None or info.provider != "anthropic" or not role.setting("cache", True):
        return []
    native = role.setting("tool_mode", "inline") == "native"
    wire = get_wire("anthropic")
    text = [s for s in ctx.sections if not (s.kind == "tools" and native)]
    order = [s for s in text if s.message == "system"] + [s for s in text if s.message != "system"]
    end = next((i for i, s in enumerate(order) if s.stability != "stable"), len(order))
    prefix = order[:end]
    tools = [s for s in ctx.sections if s.kind == "tools" and native]
    extras = wire.extra_tools(ctx.contract, role.setting("tool_mode", "inline"))
    uses = []
    if prefix:
        uses.append(f"the stable prefix, up to section '{prefix[-1].id}'")
    if (tools and tools[0].stability == "stable") or (not tools and extras):
        uses.append(f"the stable tools ({_tools_named(tools, extras)})")
    pos = role.role.pos("id")
    diags = []
    limit = info.cache_breakpoints
    if limit is not None and len(uses) > limit:
        dropped = uses[limit:]
        diags.append(
            Diagnostic.at(
                pos,
                "PM614",
                f"role '{role.role.id}' needs {len(uses)} cache breakpoints on the Anthropic wires ({'; '.join(uses)}), but model "
                f"'{info.model}' takes {limit} (row '{info.pattern}', {_origin(info)}): renders leave out {' and '.join(dropped)}",
                hint=f"if the model takes more, say so in its row (`cache: {{breakpoints: {len(uses)}}}` under `models:` in "
                "promptmill.yaml); otherwise set `cache: false` on the role to send none",
            )
        )
    short = _short_prefix(prefix, tools, native, ctx, info)
    if short is not None:
        diags.append(
            Diagnostic.at(
                pos,
                "PM615",
                f"role '{role.role.id}': its stable prefix is about {short} {info.model} tokens, under the {info.cache_min_tokens} "
                f"that model caches at least (row '{info.pattern}'): the cache breakpoint caches nothing",
                hint="move more stable text (instructions, examples) before the first changing section, or set `cache: false`",
            )
        )
    return diags


def _origin(info: ModelInfo) -> str:
    return "shipped with promptmill" if info.origin == "promptmill" else info.origin


def _tools_named(tools: list[Section], extras: list[dict[str, Any]]) -> str:
    if tools:
        return f"section '{tools[0].id}'"
    return f"the return tool '{extras[-1]['name']}'"


def _short_prefix(prefix: list[Section], tools: list[Section], native: bool, ctx: LintContext, info: ModelInfo) -> int | None:
    """The prefix's size in the model's tokens when compile time knows it and it is under the
    model's `cache.min_tokens`; None otherwise (state-filled sections, state tools, long enough)."""
    if not prefix or not info.cache_min_tokens or any(s.kind != "static" for s in prefix):
        return None
    if native and any(s.path for s in tools):
        return None  # the state's tools are part of the cached prefix: their size is unknown here
    counted = sum(s.tokens + s.title_tokens for s in prefix)
    wire = get_wire("anthropic")
    declared = [d for s in tools for d in s.declared] if native else []
    if declared:
        counted += sum(ctx.counter.count(wire.tool_text(d)) for d in declared)
    size = math.ceil(counted * info.ratio)
    return size if size < info.cache_min_tokens else None
