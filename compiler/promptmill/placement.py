"""Which message each compiled section goes to, and the cache-prefix lint.

`infer_messages` fills in message roles a section does not give: the leading
run of stable sections goes to `system` (the cacheable prefix), the rest to
`user`; context fragments placed `before`/`after` the body follow the body's
first/last message when stable, go to `user` when conditional, and never go
back into the system message once the prompt has left it. `cache_lint` warns
(PM610) when a section that changes with the state sits before stable ones in
the system message, where provider prompt caches stop at it.
"""

from __future__ import annotations

from dataclasses import replace

from .bundle import Origin, Section
from .diagnostics import Diagnostic, Position


def infer_messages(sections: list[Section], body_start: int, body_end: int) -> list[Section]:
    """Fill in message roles not given: the leading stable run goes to `system`, the
    rest to `user`; stable `before`/`after` fragments follow the first/last body
    section, conditional ones go to `user`, and once the prompt has left the
    system message no inferred fragment goes back into it."""
    msgs = [s.message for s in sections]
    prefix = True
    for i, s in enumerate(sections):
        position = (s.context or {}).get("position")
        if not msgs[i] and position not in ("before", "after"):
            msgs[i] = "system" if prefix and s.stability == "stable" else "user"
        if s.stability != "stable":
            prefix = False
    body = [m for m in msgs[body_start:body_end] if m]
    first, last = (body[0], body[-1]) if body else ("user", "user")
    left_system = False
    for i, s in enumerate(sections):
        if not msgs[i]:
            follow = first if (s.context or {}).get("position") == "before" else last
            msgs[i] = "user" if s.stability != "stable" or left_system else follow
        left_system = left_system or msgs[i] != "system"
    return [replace(s, message=m) for s, m in zip(sections, msgs, strict=True)]


def cache_lint(sections: list[Section], role, diags: list[Diagnostic]) -> None:
    """PM610 for the first state-dependent section followed by a stable one in the system message."""
    system = [s for s in sections if s.message == "system"]
    for i, s in enumerate(system):
        if s.stability != "stable" and any(t.stability == "stable" for t in system[i + 1 :]):
            later = next(t for t in system[i + 1 :] if t.stability == "stable")
            where = s.origin
            pos = role.pos("id") if where is None else None
            diags.append(
                Diagnostic.at(
                    pos or _pos(where),
                    "PM610",
                    f"section '{s.id}' changes with the state but sits before stable section '{later.id}' in the "
                    "system message: provider prompt caches stop at it",
                    hint="move it after the stable sections, or into the user message",
                )
            )
            break


def _pos(origin: Origin) -> Position:
    return Position(origin.file, origin.line, origin.col)
