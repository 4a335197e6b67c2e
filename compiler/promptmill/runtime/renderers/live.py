"""Live: one flat instruction string for voice and realtime sessions.

Realtime APIs take a single instruction text for the session (OpenAI Realtime
`session.instructions`, Gemini Live `system_instruction`); conversation turns
arrive as audio, so a live role usually has no history section. Like text,
native tools and native contracts fall back to inline text.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # annotations only: request.py imports this module, not the other way
    from ..request import PromptRequest



def render(req: PromptRequest) -> dict:
    """`{"instructions": text}`."""
    return {"instructions": req.messages[0].content if req.messages else ""}
