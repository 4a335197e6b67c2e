"""Plain text: the prompt as one string, sections joined by the role's separator.

For completion-style models, previews and logs. Native tools fall back to inline text on this
wire (the tools section's template renders them), and a `native` output contract falls back to
its JSON format description. Its batch file has one `{"custom_id", "prompt"}` a line.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..runtime.wire import BatchLimits, Wire

if TYPE_CHECKING:
    from ..runtime.request import PromptRequest


class TextWire(Wire):
    name = "text"
    single = True
    batch_limits = BatchLimits(10**12, 2 * 1024 * 1024 * 1024)

    def render(self, req: PromptRequest, *, model: str | None = None, max_tokens: int | None = None) -> dict:
        """`{"prompt": text}`."""
        return {"prompt": req.messages[0].content if req.messages else ""}

    def batch_line(self, custom_id: str, payload: dict, model: str | None, max_tokens: int | None) -> dict:
        return {"custom_id": custom_id, "prompt": payload["prompt"]}

    def batch_payload(self, line: dict) -> dict:
        return {"prompt": line["prompt"]}


WIRE = TextWire()
