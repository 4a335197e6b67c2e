"""Wires: the API dialects a request is fitted and rendered for, one module each, looked up by name.

A wire is an API dialect (`openai` is OpenAI's chat completions); the provider is the vendor
behind it. Adding a wire is one module with a `Wire` and one line in `WIRES`; see
docs/providers.md ("Wires") and docs/ARCHITECTURE.md. Only this package imports a wire module.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

from ...core.errors import ProviderError
from ...core.suggest import did_you_mean, nearest

if TYPE_CHECKING:
    from .base import Wire

# wire name -> "module:attribute" of its Wire, imported on first use (the one list of wire names)
WIRES: dict[str, str] = {
    "text": "text:WIRE",
    "live": "live:WIRE",
    "openai": "openai_chat:WIRE",
    "anthropic": "anthropic:WIRE",
    "gemini": "gemini:WIRE",
    "openai-responses": "openai_responses:WIRE",
    "bedrock": "bedrock:WIRE",
    "anthropic-bedrock": "anthropic_bedrock:WIRE",
    "anthropic-vertex": "anthropic_vertex:WIRE",
    "gemini-vertex": "gemini_vertex:WIRE",
}
WIRE_NAMES = tuple(WIRES)

_loaded: dict[str, Wire] = {}


def get_wire(name: str) -> Wire:
    """The wire called `name`; PM840 with a "did you mean" and the valid names when there is none."""
    wire = _loaded.get(name)
    if wire is not None:
        return wire
    target = WIRES.get(name) if isinstance(name, str) else None
    if target is None:
        close = nearest(name, WIRE_NAMES) if isinstance(name, str) else []
        raise ProviderError(
            f"unknown provider '{name}'",
            code="PM840",
            hint=(did_you_mean(close) + " " if close else "") + "valid providers: " + ", ".join(WIRE_NAMES),
        )
    module, attr = target.split(":")
    wire = getattr(importlib.import_module(f".{module}", __name__), attr)
    _loaded[name] = wire
    return wire


def batch_wires() -> tuple[str, ...]:
    """Names of the wires with a batch file format (`Wire.batch_limits`), in registry order."""
    return tuple(name for name in WIRE_NAMES if get_wire(name).batch_limits is not None)
