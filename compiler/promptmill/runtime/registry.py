"""The stages after the render path that a request hands over to, looked up by name.

The render path (this folder) fits a request and never imports what comes after it: the wires
(`promptmill/wires/`, one API dialect each), the account of a render (`promptmill/explain/`) and the
reply reader (`promptmill/replies/`) import the request, never the other way. The request's
convenience methods (`req.to_openai()`, `req.explain()`, `req.parse_reply()`) reach them through
the names below, imported on first use: a plugin lookup, not an import, so the module graph has no
circle (tests/test_layering.py checks both: no circle, and that every name here leads to a later stage).

Adding a wire is one module under `promptmill/wires/` with a `Wire` and one line in `WIRES`; see
docs/providers.md ("Wires") and docs/ARCHITECTURE.md.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any, Protocol

from ..core.errors import ProviderError
from ..core.suggest import did_you_mean, nearest


class Renderer(Protocol):
    """What a request asks of the wire it was fitted for: its name and its payload. The whole
    `Wire` (layout, costs, batch lines) is runtime/wire.py's, which `wire.get_wire` returns."""

    @property
    def name(self) -> str: ...

    def render(self, req: Any, *, model: str | None = None, max_tokens: int | None = None) -> dict[str, Any]: ...


# wire name -> "module:attribute" of its Wire (the one list of wire names)
WIRES: dict[str, str] = {
    "text": "promptmill.wires.text:WIRE",
    "live": "promptmill.wires.live:WIRE",
    "openai": "promptmill.wires.openai_chat:WIRE",
    "anthropic": "promptmill.wires.anthropic:WIRE",
    "gemini": "promptmill.wires.gemini:WIRE",
    "openai-responses": "promptmill.wires.openai_responses:WIRE",
    "bedrock": "promptmill.wires.bedrock:WIRE",
    "anthropic-bedrock": "promptmill.wires.anthropic_bedrock:WIRE",
    "anthropic-vertex": "promptmill.wires.anthropic_vertex:WIRE",
    "gemini-vertex": "promptmill.wires.gemini_vertex:WIRE",
}
WIRE_NAMES = tuple(WIRES)

# the other hand-overs: the account of a render and the reply reader
EXPLAIN = "promptmill.explain.account:explain"
PARSE_REPLY = "promptmill.replies.parse:parse_reply"

_loaded: dict[str, Any] = {}


def _resolve(target: str) -> Any:
    found = _loaded.get(target)
    if found is None:
        module, attr = target.split(":")
        found = _loaded[target] = getattr(importlib.import_module(module), attr)
    return found


def find_wire(name: str) -> Renderer:
    """The wire called `name`; PM840 with a "did you mean" and the valid names when there is none."""
    target = WIRES.get(name) if isinstance(name, str) else None
    if target is None:
        close = nearest(name, WIRE_NAMES) if isinstance(name, str) else []
        raise ProviderError(
            f"unknown provider '{name}'",
            code="PM840",
            hint=(did_you_mean(close) + " " if close else "") + "valid providers: " + ", ".join(WIRE_NAMES),
        )
    wire: Renderer = _resolve(target)
    return wire


def handover(target: str) -> Callable[..., Any]:
    """The function `EXPLAIN` or `PARSE_REPLY` names, imported on first use."""
    fn: Callable[..., Any] = _resolve(target)
    return fn
