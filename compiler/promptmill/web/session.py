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
The words are the page's own where the CLI's leave a number unexplained: the
head names its budget the usable one, and `budget_figures` lists each number
between the budget set and the usable budget with what it is. There is one
view per wire of the registry (`wire_names()`).
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
from ..core.errors import PromptmillError, StateError
from ..core.userfiles import read_bytes as read_user_file
from ..explain.account import budget_sum, dropped_entry, shown_reason
from ..runtime import registry
from ..runtime.bundle import RoleBundle
from ..runtime.engine import Runtime
from ..runtime.request import PromptRequest, RenderedSection
from ..source.examples import MAX_EXAMPLES, find_examples
from ..source.loader import load_data_bytes
from ..source.statefile import MAX_STATE_FILE_BYTES, read_state_stream
from .itemlabels import dropped_items
from .statepos import MAX_PLACES, state_places

NOTE_ITEMS = 3  # dropped items a section's note names; the dropped list names them all
STATE_NAME = "state"  # how the page's state is named in error messages: state:LINE:COL
_POSITION = re.compile(r"^(?P<name>[^:\n]*):(?P<line>\d+):(?P<col>\d+): ")


def error_data(exc: PromptmillError, state_text: str | None = None) -> dict[str, Any]:
    """A promptmill error as data; `line`/`col` when the message starts with `name:line:col:`,
    or, for a state that parsed but does not fit the role's inputs (a `StateError`), where in
    `state_text` its first state path stands (`path`, and `places`: each path with its line:col)."""
    out: dict[str, Any] = {"code": exc.code, "message": exc.message, "hint": exc.hint}
    m = _POSITION.match(exc.message)
    if m:
        out["line"], out["col"] = int(m["line"]), int(m["col"])
    elif isinstance(exc, StateError) and exc.errors and state_text is not None:
        places = state_places(state_text, [path for path, _ in exc.errors[:MAX_PLACES]], name=STATE_NAME)
        first = places[0]
        out["path"] = first["path"]
        if first.get("line"):
            out["line"], out["col"] = first["line"], first["col"]
        out["places"] = places
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


def wire_names() -> tuple[str, ...]:
    """The page's tabs: every wire of the registry, in its order (read on each call, so a wire
    listed in `runtime/registry.py` is a tab with no change here)."""
    return tuple(registry.WIRE_NAMES)


def budget_figures(req: PromptRequest) -> dict[str, Any]:
    """The budget's numbers, each with what it is: the budget set (the slider's value), the margin
    held back when counts are estimates, the ratio to the model's tokens, and the usable budget in
    counted tokens (the head's, the bars' and the total's)."""
    usable_model = req.budget if req.model_budget is None else req.model_budget
    budget_set = usable_model + req.margin_tokens
    role = req.max_tokens - req.reserve
    whose = f"max_tokens {req.max_tokens} − reserve {req.reserve}"
    if budget_set == role:
        rows = [[str(budget_set), f"the budget you set: the role's, {whose}"]]
    else:
        rows = [[str(budget_set), f"the budget you set (the role's is {whose} = {role})"]]
    if req.margin_tokens:
        pct = 100 * req.margin_tokens / budget_set if budget_set else 0.0
        rows.append([f"− {req.margin_tokens}", f"margin held back ({pct:.0f}%): {req.provider}'s token counts are estimates"])
    if req.model_budget is not None:
        # whose tokens: the model the ratio is for, else the provider's (`req.model` may be the role's
        # model of another provider, rendered for this one)
        model = req.ratio_for if req.ratio_for and not req.ratio_for.startswith("any ") else req.provider
        rows.append([str(usable_model), f"usable, in {model} tokens"])
        whose = f" ({req.ratio_for})" if req.ratio_for and req.ratio_for != model else ""
        rows.append([f"÷ {req.ratio:g}", f"ratio: {model} tokens per {req.tokenizer} token{whose}"])
    rows.append([str(req.budget), f"usable, in {req.tokenizer} tokens: what the head, the bars and the total count against"])
    return {"set": budget_set, "usable": req.budget, "role": role, "rows": rows}


def _items_note(s: RenderedSection, named: list[dict[str, str]]) -> str | None:
    """Which list items a section kept and dropped, the dropped ones by what they are (all of
    them, with their state paths, in the view's `dropped`)."""
    if s.items_total is None or not s.items_dropped:
        return None
    uncounted = s.items_total - s.items_counted
    never = f" ({uncounted} never rendered)" if uncounted > 0 else ""
    if not s.items_kept:
        return f"all {s.items_total} items dropped{never}, listed below"
    shown = [d["what"] for d in named[:NOTE_ITEMS]]
    more = len(s.items_dropped) - len(shown)
    note = f"kept {len(s.items_kept)} of {s.items_total} items{never}; dropped " + ", ".join(shown)
    return note + (f" and {more} more, listed below" if more > 0 else "")


def view(req: PromptRequest, bundle: RoleBundle | None = None) -> dict[str, Any]:
    """One render as the page shows it: the head, the budget's figures, sections, dropped items
    (named by what they are when `bundle`, the role's, is given), payload."""
    cached = _cached_sections(req)
    breakpoint_after = cached[-1] if cached else None
    specs = {spec.id: spec for spec in bundle.sections} if bundle is not None else {}
    sections = []
    dropped = []
    for s in req.sections:
        named = dropped_items(specs.get(s.id), s.items_dropped, req.state)
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
                "reason": shown_reason(s),
                "items": _items_note(s, named),
                "text": s.text,
                "cached": s.id in cached,
                "breakpoint": s.id == breakpoint_after,
            }
        )
        entry = dropped_entry(s)
        if entry:
            dropped.append({"section": s.id, "entry": entry, "items": named, "more": len(s.items_dropped) - len(named)})
    share = _share(req.tokens, req.budget)
    counting = f"{req.tokenizer}, {req.count_note}"
    return {
        "role": req.role,
        "provider": req.provider,
        "tokenizer": req.tokenizer,
        "exact": req.exact,
        "tokens": req.tokens,
        "budget": req.budget,
        "share": share,
        "role_budget": req.max_tokens - req.reserve,
        "budget_figures": budget_figures(req),
        "model": req.model,
        "ratio": req.ratio,
        "count_note": req.count_note,
        "head": f"{req.role} → {req.provider}   {req.tokens} / {req.budget} usable tokens ({share:.1f}%)   {counting}",
        "budget_line": f"budget {req.budget}: {budget_sum(req)}",
        "origins": [[key, where] for key, where in req.budget_origins.items()],
        "sections": sections,
        "dropped": dropped,
        "cache": {"enabled": req.cache, "sections": cached, "breakpoint_after": breakpoint_after},
        "messages": [{"role": m.role, "tokens": m.tokens, "sections": list(m.sections), "stable": m.stable} for m in req.messages],
        "payload": payload_text(req),
        "total": f"total: {req.tokens} of {req.budget} usable tokens ({share:.1f}%), {req.budget - req.tokens} left",
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
        """The text of a listed example state file (nothing else is served), read through the
        file guard (`core/userfiles`): a regular file only (a FIFO or a device is refused at once,
        never waited on), at most `MAX_STATE_FILE_BYTES`, and, for an example found in the
        project, not through a link out of it (the `--state` file is the user's own choice)."""
        if name not in self.examples():
            return {"error": {"code": "PM813", "message": f"state file {name}: not one of the project's example states", "hint": None}}
        path = self.root / name if not os.path.isabs(name) else Path(name)
        chosen = self.state_file is not None and path.resolve() == self.state_file
        try:
            raw = read_user_file(path, limit=MAX_STATE_FILE_BYTES, root=None if chosen else self.root, what="state file")
        except PromptmillError as exc:
            return {"error": error_data(exc)}
        try:  # the file's own checks, on the bytes read: encoding, syntax (errors are shown, the text too)
            if raw.strip():
                load_data_bytes(raw, name, json_text=path.suffix.lower() == ".json", max_bytes=MAX_STATE_FILE_BYTES)
            problem = None
        except PromptmillError as exc:
            problem = error_data(exc)
        return {"path": name, "text": raw.decode("utf-8", errors="replace"), "problem": problem}

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
        self,
        role: str,
        state: str,
        *,
        budget: int | None = None,
        provider: str | None = None,
        model: str | None = None,
        wires: Iterable[str] | None = None,
    ) -> dict[str, Any]:
        """The views of `role` rendered with the state text for each of `wires` (default: the
        provider rendered, the role's or `provider`/`model`'s): the page asks for the tab it
        shows, not every wire on every keystroke. With `model`, the model's provider is
        rendered for that model and the others for the role's. Errors are data."""
        out: dict[str, Any] = {"status": self.status()}
        try:
            runtime = self._runtime()
            data = parse_state(state)
            runtime.bundle(role)  # an unknown role first: it is the likelier mistake
            main = runtime.render(role, data, budget=budget, provider=provider, model=model)
        except PromptmillError as exc:
            out["error"] = error_data(exc, state)
            return out
        out["provider"] = main.provider
        out["model"] = main.model
        bundle = runtime.bundle(role)
        views: dict[str, Any] = {}
        asked = [main.provider] if wires is None else list(wires)
        for name in wire_names():  # in the registry's order
            if name not in asked:
                continue
            try:
                req = main if name == main.provider else runtime.render(role, data, budget=budget, provider=name)
                views[name] = view(req, bundle)
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
        state: str,
        *,
        budget: int | None = None,
        provider: str | None = None,
        against: str = "build",
        other_state: str | None = None,
        model: str | None = None,
    ) -> dict[str, Any]:
        """The current render against the committed build or another state: text diff, token deltas."""
        text = state  # the state text an error is positioned in
        try:
            runtime = self._runtime()
            data = parse_state(state)
            after = runtime.render(role, data, budget=budget, provider=provider, model=model)
            if against == "build":
                before = self._build_runtime().render(role, data, budget=budget, provider=after.provider, model=model)
                label = "committed build"
            else:
                text = other_state or ""
                other = parse_state(text)
                before = runtime.render(role, other, budget=budget, provider=after.provider, model=model)
                label = "other state"
        except PromptmillError as exc:
            return {"error": error_data(exc, text)}
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
