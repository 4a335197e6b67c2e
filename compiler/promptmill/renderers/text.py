"""Plain text: the prompt as one string (completion-style models, previews)."""

from __future__ import annotations

from ..request import PromptRequest


def render(req: PromptRequest) -> dict:
    return {"prompt": req.messages[0].content if req.messages else ""}
