"""Live: one flat instruction string for voice and realtime sessions."""

from __future__ import annotations

from ..request import PromptRequest


def render(req: PromptRequest) -> dict:
    return {"instructions": req.messages[0].content if req.messages else ""}
