"""Shared by the Anthropic and Gemini renderers: system blocks and merged turns."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ...core.errors import ProviderError

if TYPE_CHECKING:  # annotations only: request.py imports this module, not the other way
    from ..request import PromptRequest


def split(req: PromptRequest, provider: str) -> tuple[list[tuple[str, bool]], list[tuple[str, list[tuple[str, bool]]]]]:
    """(system blocks, turns): each block is (text, stable); consecutive messages of one role
    become one turn of several blocks, because these APIs expect alternating roles."""
    system = [(m.content, m.stable) for m in req.messages if m.role == "system"]
    turns: list[tuple[str, list[tuple[str, bool]]]] = []
    for m in req.messages:
        if m.role == "system":
            continue
        if turns and turns[-1][0] == m.role:
            turns[-1][1].append((m.content, m.stable))
        else:
            turns.append((m.role, [(m.content, m.stable)]))
    if not turns:
        raise ProviderError(
            f"role '{req.role}' puts everything in the system prompt, but {provider} needs at least one user message",
            code="PM842",
            hint="give the section holding the request `message: user`",
        )
    if turns[0][0] != "user":
        raise ProviderError(
            f"role '{req.role}': the first {provider} message would be from the assistant; it must be from the user",
            code="PM842",
            hint="place a user section before the history, or start the history with a user turn",
        )
    return system, turns
