"""Lint the cacheable prefix of a compiled role.

Provider prompt caches reuse the longest prefix that is byte-identical to an
earlier request: Anthropic up to a `cache_control` breakpoint (promptmill puts
one at the end of the stable system blocks), OpenAI and Gemini automatically.
Anything that changes between turns ends the prefix. Two warnings:

- PM610: a section that changes with the state sits before a stable section
  inside the system message, so the stable text after it is never cached.
- PM611: a section explicitly placed in `system` changes with the state while
  stable sections follow it in other messages. Every chat provider sends the
  system message first, so for providers with automatic prefix caching the
  stable content after it stops being cacheable (OpenAI, Gemini); move the
  section after the stable ones, into the user message.

Sections whose only condition tests `provider` count as stable: the provider
does not change between the turns of a conversation.
"""

from __future__ import annotations

from .bundle import Origin, Section
from .diagnostics import Diagnostic, Position


def _pos(origin: Origin | None, fallback: Position) -> Position:
    return fallback if origin is None else Position(origin.file, origin.line, origin.col)


def cache_lint(sections: list[Section], role_pos: Position) -> list[Diagnostic]:
    """PM610 and PM611 warnings for sections that cut the cacheable prefix."""
    diags: list[Diagnostic] = []
    system = [s for s in sections if s.message == "system"]
    for i, s in enumerate(system):
        later = next((t for t in system[i + 1 :] if t.stability == "stable"), None)
        if s.stability != "stable" and later is not None:
            diags.append(
                Diagnostic.at(
                    _pos(s.origin, role_pos),
                    "PM610",
                    f"section '{s.id}' changes with the state but sits before stable section '{later.id}' in the "
                    "system message: provider prompt caches stop at it",
                    hint="move it after the stable sections, or into the user message",
                )
            )
            break
    for i, s in enumerate(sections):
        if s.message != "system" or s.stability == "stable" or s.context is not None:
            continue
        if any(t.stability == "stable" and t.message == "system" for t in sections[i + 1 :]):
            continue  # PM610's case
        later = next((t for t in sections[i + 1 :] if t.stability == "stable" and t.message != "system"), None)
        if later is None:
            continue
        diags.append(
            Diagnostic.at(
                _pos(s.origin, role_pos),
                "PM611",
                f"section '{s.id}' is placed in the system message and changes with the state, but stable section "
                f"'{later.id}' follows it in the {later.message} message: the system message is sent first, so "
                "providers with automatic prefix caching (OpenAI, Gemini) cache nothing after it",
                hint=f"drop `message: system` from '{s.id}' or move it after '{later.id}'",
            )
        )
        break
    return diags
