"""What `promptmill watch` does on every save: recompile, re-render, show.

`LivePreview.refresh(changed)` is the callable handed to `promptmill.cli.watch`:
it recompiles the project in memory through a `Workspace` (only what changed
is parsed and compiled again), reads the state file, renders the role and
writes one screen: the pretty render, or the diagnostics of a broken edit, or
the render error, always followed by a status line with the time the refresh
took. It never raises for a user's mistake, so the watcher keeps going while
someone types.
"""

from __future__ import annotations

import io
import os
import time
from collections.abc import Callable, Iterable
from pathlib import Path

from ..compiling.workspace import Workspace
from ..core.errors import PromptmillError
from .preview import pretty

STATUS_MARK = "── "


class LivePreview:
    """Re-render `role` of `workspace` with the state in `state_file` on demand."""

    def __init__(
        self,
        workspace: Workspace,
        role: str,
        state_file: str | os.PathLike[str] | None = None,
        *,
        budget: int | None = None,
        provider: str | None = None,
        write: Callable[[str], None] = print,
        color: bool = False,
    ) -> None:
        self.workspace = workspace
        self.role = role
        self.state_file = Path(state_file) if state_file is not None else None
        self.budget = budget
        self.provider = provider
        self.write = write
        self.color = color
        self.refreshes = 0
        self.ok = False  # the last refresh rendered the role
        self.last_ms = 0.0

    def watch_paths(self) -> list[Path]:
        """What to watch: the project's template folders, promptmill.yaml, the state file."""
        paths = self.workspace.source_paths()
        if self.state_file is not None:
            paths.append(self.state_file)
        return paths

    def refresh(self, changed: Iterable[Path] = ()) -> str:
        """Recompile and re-render; write the screen and return it."""
        start = time.perf_counter()
        self.refreshes += 1
        body, self.ok = self._body()
        self.last_ms = (time.perf_counter() - start) * 1000
        screen = body + "\n" + self._status(changed)
        self.write(screen)
        return screen

    def _body(self) -> tuple[str, bool]:
        runtime, diags = self.workspace.refresh()
        if runtime is None:
            from .reporters import report

            out = io.StringIO()
            report(diags, "text", out, color=self.color)
            errors = sum(d.severity == "error" for d in diags)
            return f"✗ templates have {errors} error(s); fix and save, still watching\n\n{out.getvalue().rstrip()}", False
        try:
            from ..source.statefile import read_state

            runtime.bundle(self.role)  # an unknown role first: it is the likelier mistake
            state = read_state(self.state_file) if self.state_file is not None else {}
            req = runtime.render(self.role, state, budget=self.budget, provider=self.provider)
        except PromptmillError as exc:
            text = f"✗ cannot render '{self.role}': error[{exc.code}]: {exc.message}"
            if exc.hint:
                text += f"\n    hint: {exc.hint}"
            return text + "\n\nfix and save; still watching", False
        return pretty(req, color=self.color), True

    def _status(self, changed: Iterable[Path]) -> str:
        ws = self.workspace
        what = []
        if ws.reparsed:
            what.append("reparsed " + ", ".join(ws.reparsed[:3]) + (f" and {len(ws.reparsed) - 3} more" if len(ws.reparsed) > 3 else ""))
        if ws.removed:
            what.append("removed " + ", ".join(ws.removed[:3]) + (f" and {len(ws.removed) - 3} more" if len(ws.removed) > 3 else ""))
        if ws.recompiled:
            what.append(f"recompiled {len(ws.recompiled)} role(s)")
        if not what and changed:
            what.append("changed " + ", ".join(sorted(p.name for p in changed)[:3]))
        stamp = time.strftime("%H:%M:%S")
        detail = f" · {'; '.join(what)}" if what else ""
        return f"{STATUS_MARK}{self.role} · {'ok' if self.ok else 'failed'} · refreshed {stamp} in {self.last_ms:.0f} ms{detail}"
