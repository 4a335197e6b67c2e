"""Which message each compiled section goes to.

`infer_messages` fills in message roles a section does not give: the leading
run of stable sections goes to `system` (the cacheable prefix), the rest to
`user`; context fragments placed `before`/`after` the body follow the body's
first/last message when stable, go to `user` when conditional, and never go
back into the system message once the prompt has left it. (The cache-prefix
lint, PM610/PM611, is in `lints/cache.py`.)
"""

from __future__ import annotations

from dataclasses import replace

from ..runtime.bundle import Section


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
