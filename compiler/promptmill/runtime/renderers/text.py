"""Plain text: the prompt as one string, sections joined by the role's separator.

For completion-style models, previews and logs. Native tools fall back to
inline text on this wire (the tools section's template renders them), and a
`native` output contract falls back to its JSON format description.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # annotations only: request.py imports this module, not the other way
    from ..request import PromptRequest



def render(req: PromptRequest) -> dict:
    """`{"prompt": text}`."""
    return {"prompt": req.messages[0].content if req.messages else ""}
