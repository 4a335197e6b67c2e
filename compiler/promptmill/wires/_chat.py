"""Shared by the Anthropic and Gemini wires: system blocks and merged turns."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..core.errors import ProviderError
from ..runtime.wire import Wire

if TYPE_CHECKING:
    from ..runtime.request import PromptRequest


def split(req: PromptRequest, wire: str) -> tuple[list[tuple[str, bool]], list[tuple[str, list[tuple[str, bool]]]]]:
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
            f"role '{req.role}' puts everything in the system prompt, but {wire} needs at least one user message",
            code="PM842",
            hint="give the section holding the request `message: user`",
        )
    if turns[0][0] != "user":
        raise ProviderError(
            f"role '{req.role}': the first {wire} message would be from the assistant; it must be from the user",
            code="PM842",
            hint="place a user section before the history, or start the history with a user turn",
        )
    return system, turns


class TurnsWire(Wire):
    """A chat API with a top-level system field (the stable prefix, then the rest) and alternating
    turns that must open with the user. Its provider does not publish the tokenizer: counts use the
    role's, are estimates, and a default 10% margin is held back."""

    message_overhead = 3
    fixed_overhead = 3
    system_first = True
    system_blocks = True
    history_messages = True
    user_first = True
    estimate = True
    default_margin = 0.1
