"""The project behind `promptmill preview`, kept in memory, and what the page shows.

`Session(project)` recompiles the project through an `api.Workspace` on every
`refresh()` (only what changed is parsed and compiled again) and keeps the
last runtime that compiled: a broken edit yields diagnostics while renders go
on with the last good templates. `render()` and `compare()` return plain JSON
data; a user's mistake (a state that does not parse, an unknown role, a budget
that cannot be met) is data too, `{"error": {...}}`, never an exception.

The figures are the CLI's: a section's tokens and share are those of
`render --format pretty`, a provider's payload is `render --format PROVIDER`
(`--format text` for the text tab) and its token count the request's total.
"""

from __future__ import annotations

import difflib
import io
import json
import os
import re
import secrets
import threading
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

# promptmill internals this module uses (kept together for the subpackage move)
from ..compiling.workspace import Workspace
from ..core.diagnostics import Diagnostic
from ..core.errors import PromptmillError
from ..runtime.engine import Runtime
from ..runtime.explain import budget_sum, dropped_entry, items_note, shown_reason
from ..runtime.request import PromptRequest
from ..runtime.wires import WIRE_NAMES
from ..source.examples import MAX_EXAMPLES, find_examples
from ..source.statefile import MAX_STATE_FILE_BYTES, read_bounded, read_state, read_state_stream

STATE_NAME = "state"  # how the page's state is named in error messages: state:LINE:COL
_POSITION = re.compile(r"^(?P<name>[^:\n]*):(?P<line>\d+):(?P<col>\d+): ")


def error_data(exc: PromptmillError) -> dict[str, Any]:
    """A promptmill error as data; `line`/`col` when the message starts with `name:line:col:`."""
    out: dict[str, Any] = {"code": exc.code, "message": exc.message, "hint": exc.hint}
    m = _POSITION.match(exc.message)
    if m:
        out["line"], out["col"] = int(m["line"]), int(m["col"])
    return out


def parse_state(text: str) -> Any:
    """The page's state text as data: JSON when it starts with `{` or `[`, else YAML (as `--state -`)."""
    return read_state_stream(io.BytesIO(text.encode("utf-8")), name=STATE_NAME, max_bytes=MAX_STATE_FILE_BYTES)


def _share(tokens: int, budget: int) -> float:
    return round(100 * tokens / budget, 1) if budget > 0 else 0.0


def _cached_sections(req: PromptRequest) -> list[str]:
    """Sections of the cacheable prefix: those of the leading run of stable messages."""
    if not req.cache:
        return []
    out: list[str] = []
    for m in req.messages:
        if not m.stable:
            break
        out.extend(m.sections)
    return out


def payload_text(req: PromptRequest) -> str:
    """Exactly what `promptmill render --format PROVIDER` prints (`--format text` for text)."""
    if req.provider == "text":
        return req.text
    return json.dumps(req.to_payload(), ensure_ascii=False, indent=2)


def view(req: PromptRequest) -> dict[str, Any]:
    """One render as the page shows it: the head, budget lines, sections, dropped items, payload."""
    cached = _cached_sections(req)
    breakpoint_after = cached[-1] if cached else None
    sections = []
    dropped = []
    for s in req.sections:
        note = items_note(s)
        reason = shown_reason(s)
        sections.append(
            {
                "id": s.id,
                "status": s.status,
                "present": s.present,
                "tokens": s.tokens if s.present else None,
                "share": _share(s.tokens, req.budget) if s.present else None,
                "message": s.message,
                "stability": s.stability,
                "priority": s.priority,
                "reason": reason,
                "items": note,
                "text": s.text,
                "cached": s.id in cached,
                "breakpoint": s.id == breakpoint_after,
            }
        )
        entry = dropped_entry(s)
        if entry:
            dropped.append(entry)
    share = _share(req.tokens, req.budget)
    return {
        "role": req.role,
        "provider": req.provider,
        "tokenizer": req.tokenizer,
        "exact": req.exact,
        "tokens": req.tokens,
        "budget": req.budget,
        "share": share,
        "role_budget": req.max_tokens - req.reserve,
        "model": req.model,
        "ratio": req.ratio,
        "count_note": req.count_note,
        "head": f"{req.role} → {req.provider}   {req.tokens} / {req.budget} tokens ({share:.1f}%)   {req.tokenizer}, {req.count_note}",
        "budget_line": f"budget {req.budget}: {budget_sum(req)}",
        "origins": [[key, where] for key, where in req.budget_origins.items()],
        "sections": sections,
        "dropped": dropped,
        "cache": {"enabled": req.cache, "sections": cached, "breakpoint_after": breakpoint_after},
        "messages": [{"role": m.role, "tokens": m.tokens, "sections": list(m.sections), "stable": m.stable} for m in req.messages],
        "payload": payload_text(req),
        "total": f"total: {req.tokens} of {req.budget} tokens ({share:.1f}%), {req.budget - req.tokens} left",
    }


class Session:
    """A project recompiled in memory on demand; renders with the last runtime that compiled."""

    def __init__(self, project: str | os.PathLike[str] = ".", *, state_file: str | os.PathLike[str] | None = None) -> None:
        self.workspace = Workspace(project)
        self.root = Path(project).resolve()
        self.state_file = Path(state_file).resolve() if state_file is not None else None
        self.runtime: Runtime | None = None  # the last runtime that compiled
        self.ok = False  # the last refresh compiled
        self._diags: list[Diagnostic] = []  # of the last refresh
        self.version = 0
        self.last_ms = 0.0
        self._lock = threading.Lock()
        self._build: tuple[tuple[int, int], Runtime] | None = None
        self.instance = secrets.token_hex(4)  # a page that reconnects to a restarted server starts over
        self.refresh()
        if self.workspace.project is not None:  # PROJECT may be any folder inside the project
            self.root = self.workspace.project.root.resolve()

    # -- the project ----------------------------------------------------------
    def refresh(self, changed: Iterable[Path] = ()) -> dict[str, Any]:
        """Recompile what changed; the status the page is told about (`event`)."""
        with self._lock:
            start = time.perf_counter()
            runtime, diags = self.workspace.refresh()
            if runtime is not None:
                self.runtime = runtime
            self.ok = runtime is not None
            self._diags = diags
            self.version += 1
            self.last_ms = (time.perf_counter() - start) * 1000
            return self.status(changed)

    def _diag_data(self, d: Diagnostic) -> dict[str, Any]:
        """A diagnostic as data, its file named relative to the project root."""
        file = self.shown(Path(d.file)) if d.file and not d.file.startswith("<") else d.file
        return {"code": d.code, "severity": d.severity, "file": file, "line": d.line, "col": d.col, "message": d.message, "hint": d.hint}

    @property
    def diagnostics(self) -> list[dict[str, Any]]:
        return [self._diag_data(d) for d in self._diags]

    def status(self, changed: Iterable[Path] = ()) -> dict[str, Any]:
        return {
            "instance": self.instance,
            "version": self.version,
            "ok": self.ok,
            "diagnostics": self.diagnostics,
            "changed": sorted({self.shown(p) for p in changed}),
            "ms": round(self.last_ms, 1),
        }

    def shown(self, path: Path) -> str:
        """A path relative to the project root (posix), or absolute when outside it."""
        absolute = Path(os.path.abspath(path))
        try:
            return absolute.relative_to(self.root).as_posix()
        except ValueError:
            return absolute.as_posix()

    def roles(self) -> list[str]:
        return sorted(self.runtime.roles) if self.runtime is not None else []

    def watch_paths(self) -> list[Path]:
        """The template folders, promptmill.yaml, the example states and the `--state` file."""
        paths = self.workspace.source_paths()
        paths += [self.root / p for p in self.examples()]
        if self.state_file is not None:
            paths.append(self.state_file)
        return paths

    def examples(self) -> list[str]:
        """Example state files (`*.state.yaml|yml|json`) under the project, relative, sorted
        (`source/examples.py` finds them); the `--state` file, the user's own choice, is listed wherever it is."""
        project = self.workspace.project
        found = find_examples(self.root, skip=[project.build_dir] if project is not None else [])
        if self.state_file is not None:
            found = sorted({*found, self.shown(self.state_file)})
        return found[:MAX_EXAMPLES]

    def read_example(self, name: str) -> dict[str, Any]:
        """The text of a listed example state file (nothing else is served)."""
        if name not in self.examples():
            return {"error": {"code": "PM813", "message": f"state file {name}: not one of the project's example states", "hint": None}}
        path = self.root / name if not os.path.isabs(name) else Path(name)
        try:
            read_state(path)  # the file's own checks: size, encoding, syntax (errors are shown, text too)
            problem = None
        except PromptmillError as exc:
            problem = error_data(exc)
        try:  # bounded, and without waiting for a writer: the file may be huge, a FIFO or a device
            text = read_bounded(path, MAX_STATE_FILE_BYTES)[:MAX_STATE_FILE_BYTES].decode("utf-8", errors="replace")
        except PromptmillError as exc:
            return {"error": error_data(exc)}
        return {"path": name, "text": text, "problem": problem}

    # -- renders ----------------------------------------------------------------
    def _runtime(self) -> Runtime:
        if self.runtime is None:
            errors = sum(d["severity"] == "error" for d in self.diagnostics)
            raise PromptmillError(f"the templates have {errors} error(s) and nothing compiled yet; fix and save", code="PM001")
        return self.runtime

    def models(self) -> list[str]:
        """The model ids the page offers: each row of the model table, its pattern without the `*`."""
        runtime = self.runtime
        table = runtime.models if runtime is not None else None
        if table is None:
            from ..runtime.models import default_table

            table = default_table()
        return [info.pattern.rstrip("*") for info in table.rows()]

    def render(
        self, role: str, state_text: str, *, budget: int | None = None, provider: str | None = None, model: str | None = None
    ) -> dict[str, Any]:
        """Every provider's render of `role` with the state text: views, or errors as data. With
        `model`, the model's provider is rendered for that model and the others for the role's."""
        out: dict[str, Any] = {"status": self.status()}
        try:
            runtime = self._runtime()
            state = parse_state(state_text)
            runtime.bundle(role)  # an unknown role first: it is the likelier mistake
            main = runtime.render(role, state, budget=budget, provider=provider, model=model)
        except PromptmillError as exc:
            out["error"] = error_data(exc)
            return out
        out["provider"] = main.provider
        out["model"] = main.model
        views: dict[str, Any] = {}
        for name in WIRE_NAMES:
            try:
                req = main if name == main.provider else runtime.render(role, state, budget=budget, provider=name)
                views[name] = view(req)
            except PromptmillError as exc:
                views[name] = {"error": error_data(exc)}
        out["views"] = views
        return out

    def _build_runtime(self) -> Runtime:
        """The committed build, loaded again only when its manifest changed."""
        project = self.workspace.project
        build = project.build_dir if project is not None else self.root / "build"
        try:
            st = (build / "manifest.json").stat()
            key = (st.st_mtime_ns, st.st_size)
        except OSError:
            key = (0, 0)
        if self._build is None or self._build[0] != key:
            self._build = (key, Runtime.load(build))
        return self._build[1]

    def compare(
        self,
        role: str,
        state_text: str,
        *,
        budget: int | None = None,
        provider: str | None = None,
        against: str = "build",
        other_state: str | None = None,
        model: str | None = None,
    ) -> dict[str, Any]:
        """The current render against the committed build or another state: text diff, token deltas."""
        try:
            runtime = self._runtime()
            state = parse_state(state_text)
            after = runtime.render(role, state, budget=budget, provider=provider, model=model)
            if against == "build":
                before = self._build_runtime().render(role, state, budget=budget, provider=after.provider, model=model)
                label = "committed build"
            else:
                other = parse_state(other_state or "")
                before = runtime.render(role, other, budget=budget, provider=after.provider, model=model)
                label = "other state"
        except PromptmillError as exc:
            return {"error": error_data(exc)}
        return compare_data(before, after, label)


def compare_data(before: PromptRequest, after: PromptRequest, label: str) -> dict[str, Any]:
    """A unified diff of the two prompts' text and the tokens of each section, before and after."""
    diff = list(difflib.unified_diff(before.text.splitlines(), after.text.splitlines(), fromfile=label, tofile="current", lineterm="", n=2))
    old = {s.id: s for s in before.sections}
    new = {s.id: s for s in after.sections}
    order = [s.id for s in after.sections] + [s.id for s in before.sections if s.id not in new]
    rows = []
    for sid in order:
        a, b = old.get(sid), new.get(sid)
        ta = a.tokens if a is not None and a.present else 0
        tb = b.tokens if b is not None and b.present else 0
        rows.append(
            {
                "id": sid,
                "before": {"status": a.status, "tokens": ta} if a is not None else None,
                "after": {"status": b.status, "tokens": tb} if b is not None else None,
                "delta": tb - ta,
            }
        )
    return {
        "label": label,
        "provider": after.provider,
        "same": before.text == after.text,
        "diff": diff,
        "sections": rows,
        "total": {"before": before.tokens, "after": after.tokens, "delta": after.tokens - before.tokens},
    }
