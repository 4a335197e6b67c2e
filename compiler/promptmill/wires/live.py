"""Live: one flat instruction string for voice and realtime sessions.

Realtime APIs take a single instruction text for the session (OpenAI Realtime
`session.instructions`, Gemini Live `system_instruction`); conversation turns
arrive as audio, so a live role usually has no history section. Like text,
native tools and native contracts fall back to inline text. It has no batch format.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..runtime.wire import Wire

if TYPE_CHECKING:
    from ..runtime.request import PromptRequest


class LiveWire(Wire):
    name = "live"
    single = True

    def render(self, req: PromptRequest, *, model: str | None = None, max_tokens: int | None = None) -> dict:
        """`{"instructions": text}`."""
        return {"instructions": req.messages[0].content if req.messages else ""}


WIRE = LiveWire()
