"""Counting models: how each provider's request is laid out and what it costs.

The budget is counted on what is sent. For plain text that is the text. For
chat providers the sections are grouped into messages (consecutive sections
with the same message role share one message; history turns are messages of
their own) and each message costs its content plus a fixed overhead. The
numbers and their accuracy are documented in docs/providers.md ("Counting
model"); native tool declarations and structured-output schemas are counted by
`promptmill.runtime.tooldecl`.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..core.errors import ProviderError


@dataclass(frozen=True)
class Wire:
    name: str
    message_overhead: int = 0  # tokens per message (role markers, delimiters)
    fixed_overhead: int = 0  # tokens per request (reply priming)
    single: bool = False  # everything in one text (text, live)
    system_first: bool = False  # every system section goes into the leading system field
    system_blocks: bool = False  # ...as two blocks: the stable prefix, then the rest (each counted as a message)
    history_messages: bool = False  # history turns are separate messages
    user_first: bool = False  # the conversation must open with a user turn (a trimmed history starts on one)
    estimate: bool = False  # the provider's tokenizer is not the counting one
    default_margin: float = 0.0  # budget fraction held back when counts are estimates


WIRES: dict[str, Wire] = {
    "text": Wire("text", single=True),
    "live": Wire("live", single=True),
    # OpenAI chat completions: <|start|>{role}<|message|>{content}<|end|> per message
    # (3 markers + the role, one token for system/user/assistant: OpenAI's cookbook
    # counts 3 + the tokens of every value, role included), plus
    # <|start|>assistant<|message|> priming the reply (3 tokens).
    "openai": Wire("openai", message_overhead=4, fixed_overhead=3, history_messages=True),
    # Anthropic and Gemini do not publish their tokenizers: counts use the role's
    # tokenizer and are estimates; a default 10% margin is held back.
    "anthropic": Wire(
        "anthropic", message_overhead=3, fixed_overhead=3, system_first=True, system_blocks=True, history_messages=True,
        user_first=True, estimate=True, default_margin=0.1,
    ),
    "gemini": Wire(
        "gemini", message_overhead=3, fixed_overhead=3, system_first=True, system_blocks=True, history_messages=True,
        user_first=True, estimate=True, default_margin=0.1,
    ),
}

PROVIDERS = tuple(WIRES)


def get_wire(name: str) -> Wire:
    """The counting model of provider `name`; PM840 (listing the valid names) when unknown."""
    wire = WIRES.get(name)
    if wire is None:
        raise ProviderError(
            f"unknown provider '{name}'",
            code="PM840",
            hint="valid providers: " + ", ".join(PROVIDERS),
        )
    return wire
