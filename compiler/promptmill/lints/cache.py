"""Lint the cacheable prefix of a compiled role.

Provider prompt caches reuse the longest prefix that is byte-identical to an
earlier request: Anthropic up to a `cache_control` breakpoint (promptmill puts
one at the end of the stable system blocks), OpenAI and Gemini automatically.
Anything that changes between turns ends the prefix. Two warnings:

- PM610: a section that changes with the state sits before a stable section
  inside the system message, so the stable text after it is never cached.
- PM611: a section explicitly placed in `system` changes with the state while
  stable sections of other messages would otherwise continue the cacheable
  prefix. Anthropic and Gemini send all system text first, so the dynamic
  section lands before that stable content and the cached prefix stops there
  (OpenAI keeps document order and is not affected). Move the section after
  the stable ones, or out of the system message.

Sections whose only condition tests `provider` count as stable: the provider
does not change between the turns of a conversation.
"""

from __future__ import annotations

from ..compose.resolve import ComposedRole
from ..core.diagnostics import Diagnostic, Position
from ..runtime.bundle import Origin, Section
from .context import LintContext


def _pos(origin: Origin | None, fallback: Position) -> Position:
    return fallback if origin is None else Position(origin.file, origin.line, origin.col)


def uncached_prefix(role: ComposedRole, ctx: LintContext) -> list[Diagnostic]:
    """PM610 and PM611 warnings for sections that cut the cacheable prefix."""
    sections, role_pos = ctx.sections, role.role.pos("id")
    diags: list[Diagnostic] = []
    system = [s for s in sections if s.message == "system"]
    first: tuple[Section, Section] | None = None  # the first dynamic system section with a stable one after it
    later: Section | None = None
    for s in reversed(system):  # one pass: a role may have many sections
        if s.stability == "stable":
            later = s
        elif later is not None:
            first = (s, later)
    if first is not None:
        s, stable = first
        diags.append(
            Diagnostic.at(
                _pos(s.origin, role_pos),
                "PM610",
                f"section '{s.id}' changes with the state but sits before stable section '{stable.id}' in the "
                "system message: provider prompt caches stop at it",
                hint="move it after the stable sections, or into the user message",
            )
        )
    hoisted = [s for s in sections if s.message == "system" and s.stability != "stable" and s.context is None]
    if hoisted and not diags:
        skip = {id(s) for s in hoisted}
        rest = [s for s in sections if id(s) not in skip]
        run = []
        for s in rest:
            if s.stability != "stable":
                break
            run.append(s)
        moved = next((s for s in run if s.message != "system"), None)
        if moved is not None:
            s = hoisted[0]
            diags.append(
                Diagnostic.at(
                    _pos(s.origin, role_pos),
                    "PM611",
                    f"section '{s.id}' is placed in the system message and changes with the state; providers that "
                    f"send the system text first (Anthropic, Gemini) put it before stable section '{moved.id}' "
                    f"({moved.message} message), which then drops out of the cached prefix",
                    hint=f"drop `message: system` from '{s.id}', or move it after the stable sections",
                )
            )
    return diags
