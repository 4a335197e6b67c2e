"""Wires: the API dialects a fitted request is rendered for, one module each.

A wire is an API dialect (`openai` is OpenAI's chat completions); the provider is the vendor
behind it. Each module holds one `Wire` (runtime/wire.py: layout, costs, payload, batch lines).
The wires build on the render path (`promptmill.runtime`) and are found by name through
`promptmill.runtime.registry`, which lists them; nothing in the runtime imports this package.
"""

from __future__ import annotations

from ..runtime.registry import WIRE_NAMES
from ..runtime.wire import batch_wires, get_wire

__all__ = ["WIRE_NAMES", "batch_wires", "get_wire"]
