"""Snapshots of every rendered prompt: `promptmill snapshot` writes them, `promptmill test` compares.

Each role is rendered with each of its example states (`source/examples.py`:
`ROLE.state.yaml` or `ROLE.VARIANT.state.yaml` anywhere in the project, and the
files the role's `examples:` key lists) for
each wire it targets (the role's provider, and text), and the result is one
plain-text file per role and state, `SNAPSHOTS/ROLE/STEM.txt`: per wire the
account `explain()` gives (sections, status, tokens, budget), what was
dropped, the cacheable prefix, the output contract, then the messages line by
line. The bytes depend only on the templates and the states, so the committed
files show a template change as an ordinary diff in code review.

The project is compiled in memory as `promptmill compile` would (no user rules
file), nothing calls a model, and a state that no longer matches its role is
an error for that case only: the other cases are still rendered.
"""

from __future__ import annotations

import difflib
import hashlib
import json
import os
from dataclasses import dataclass, field
from pathlib import Path

from ..compiling.api import abstract_roles, compile_bundles, load_project
from ..core.diagnostics import has_errors, sort_diagnostics
from ..core.errors import CompileError, ConfigError, PromptmillError
from ..core.showtext import one_line, visible
from ..explain.account import dropped_entry, explain
from ..runtime.engine import Runtime
from ..runtime.request import PromptRequest
from ..source.examples import example_stem, examples_for, find_examples
from ..source.statefile import read_state
from . import snapshotfiles as files
from .snapshotfiles import MARK, SNAPSHOT_LIMIT, SUFFIX, Existing

DEFAULT_FOLDER = "snapshots"
TEXT_WIRE = "text"


@dataclass(frozen=True)
class Case:
    """One role rendered with one example state: the snapshot text, or the error that stopped it."""

    role: str
    state: str  # the state file, relative to the project root
    file: str  # the snapshot file, relative to the project root
    text: str | None
    error: PromptmillError | None = None
    requests: tuple[PromptRequest, ...] = field(default=(), repr=False, compare=False)  # one per wire

    @property
    def name(self) -> str:
        return f"{self.role} with {self.state}"


@dataclass(frozen=True)
class Rendered:
    """Every case of a project, and what they are rendered from."""

    root: Path
    folder: Path  # the snapshots folder
    cases: tuple[Case, ...]
    without_examples: tuple[str, ...]  # roles no example state is named after
    runtime: Runtime = field(repr=False)
    unmatched: tuple[str, ...] = ()  # example states named after no role
    guard: Path | None = None  # where snapshots may be read and written: the project, or the folder --out names


def load_runtime(project: str | os.PathLike[str] = ".") -> tuple[Runtime, Path, dict, dict[str, tuple[str, ...]]]:
    """The project compiled in memory as `promptmill compile` compiles it (the user rules file unread):
    (runtime, project root, promptmill.yaml's settings, each role's `examples:` files). Raises CompileError on errors."""
    loaded = load_project(project, user_rules=False)
    bundles, _, diags = compile_bundles(loaded)
    all_diags = sort_diagnostics(loaded.diagnostics + diags)
    if has_errors(all_diags):
        raise CompileError(all_diags)
    runtime = Runtime(bundles, base_dir=loaded.project.root, abstract=abstract_roles(loaded))
    return runtime, loaded.project.root.resolve(), dict(loaded.project.config), loaded.examples


def snapshot_folder(root: Path, config: dict, folder: str | os.PathLike[str] | None = None) -> Path:
    """`folder`, else `snapshots:` of promptmill.yaml, else `snapshots/`, under the project root."""
    chosen = folder if folder is not None else config.get("snapshots", DEFAULT_FOLDER)
    if not isinstance(chosen, str | os.PathLike) or "\0" in os.fspath(chosen) or not os.fspath(chosen).strip():
        raise ConfigError(
            f"promptmill.yaml: snapshots: {chosen!r} is not a folder name",
            code="PM010",
            hint="name a folder inside the project, e.g. `snapshots: snapshots`",
        )
    path = Path(chosen)
    return files.key(path if path.is_absolute() else root / path)


def wires_of(runtime: Runtime, role: str) -> tuple[str, ...]:
    """The wires a role's snapshot shows: its provider, and text."""
    provider = runtime.bundle(role).provider
    return (provider, TEXT_WIRE) if provider != TEXT_WIRE else (TEXT_WIRE,)


def render_all(project: str | os.PathLike[str] = ".", *, folder: str | os.PathLike[str] | None = None) -> Rendered:
    """Render every role with each of its example states for each of its wires (nothing is written)."""
    runtime, root, config, listed = load_runtime(project)
    out = snapshot_folder(root, config, folder)
    build = Path(config.get("build", "build"))
    examples = find_examples(root, skip=[root / build, out])
    cases: list[Case] = []
    without: list[str] = []
    for role in sorted(runtime.roles):
        states = sorted(set(examples_for(role, examples)) | set(listed.get(role, ())))
        if not states:
            without.append(role)
            continue
        seen: dict[str, str] = {}
        for state in states:
            stem = example_stem(state)
            if stem in seen:
                raise ConfigError(
                    f"{state} and {seen[stem]}: two example states of role '{role}' share the name {stem}; their snapshots would collide",
                    code="PM010",
                    hint="rename one: ROLE.VARIANT.state.yaml",
                )
            seen[stem] = state
            file = out / role / f"{stem}{SUFFIX}"
            rel = file.relative_to(root).as_posix() if file.is_relative_to(root) else file.as_posix()
            cases.append(_case(runtime, root, role, state, rel))
    used = {c.state for c in cases} | {p for files in listed.values() for p in files}
    unmatched = tuple(
        p for p in examples if p not in used and not any(example_stem(p) == r or example_stem(p).startswith(r + ".") for r in runtime.roles)
    )
    guard = out if folder is not None else root  # --out is the user's own choice; promptmill.yaml's stays inside
    return Rendered(root, out, tuple(cases), tuple(without), runtime, unmatched, guard)


def _case(runtime: Runtime, root: Path, role: str, state_file: str, file: str) -> Case:
    try:
        state = read_state(root / state_file)
        requests = [runtime.render(role, state, provider=wire) for wire in wires_of(runtime, role)]
    except PromptmillError as exc:
        return Case(role, state_file, file, None, exc)
    text = snapshot_text(role, state_file, requests)
    if len(text.encode("utf-8", "surrogatepass")) > SNAPSHOT_LIMIT:
        too_big = PromptmillError(
            f"{file}: the snapshot would be {len(text.encode('utf-8', 'surrogatepass')):,} bytes; the limit is {SNAPSHOT_LIMIT:,} bytes",
            code="PM105",
            hint="a smaller example state: a snapshot is read in review, and promptmill reads snapshot files up to that size",
        )
        return Case(role, state_file, file, None, too_big, requests=tuple(requests))
    return Case(role, state_file, file, text, requests=tuple(requests))


def snapshot_text(role: str, state_file: str, requests: list[PromptRequest]) -> str:
    """The snapshot file of one role and state: a header, then one block per wire."""
    lines = [
        f"{MARK} of role {role} with {one_line(state_file)}",  # one line whatever the name holds
        "# written by `promptmill snapshot`, compared by `promptmill test`; do not edit",
    ]
    for req in requests:
        lines += ["", f"=== {role} → {req.provider}", *wire_block(req)]
    return "\n".join(lines) + "\n"


def cache_prefix(req: PromptRequest) -> tuple[tuple[str, ...], int, str]:
    """The cacheable prefix: the sections of the leading run of stable messages, their tokens and
    a digest of their text and of the native tool declarations, which providers cache ahead of
    the messages (empty when the role does not cache)."""
    if not req.cache:
        return (), 0, ""
    sections: list[str] = []
    tokens = 0
    digest = hashlib.sha256(json.dumps(list(req.tools), sort_keys=True, ensure_ascii=False, default=str).encode())
    for m in req.messages:
        if not m.stable:
            break
        sections.extend(m.sections)
        tokens += m.tokens
        digest.update(f"{m.role}\0{m.content}\0".encode())
    return tuple(sections), tokens, digest.hexdigest()[:16] if sections else ""


def wire_block(req: PromptRequest) -> list[str]:
    """One wire's part of a snapshot: explain(), dropped, cache prefix, contract, tools, messages."""
    lines = explain(req).splitlines()
    dropped = [e for e in (dropped_entry(s) for s in req.sections) if e]
    lines.append("dropped: " + ("; ".join(dropped) if dropped else "nothing"))
    sections, tokens, digest = cache_prefix(req)
    if sections:
        lines.append(f"cache prefix: {tokens} tokens, sha256 {digest}, sections {', '.join(sections)}")
    else:
        lines.append("cache prefix: none")
    if req.output is not None:
        schema = hashlib.sha256(repr(sorted(_flat(req.output.schema))).encode()).hexdigest()[:16]
        lines.append(f"output contract: {req.output.id} ({req.output.style}), schema sha256 {schema}")
    if req.tools:
        lines.append("tools: " + ", ".join(str(t.get("name")) for t in req.tools))
    return lines + message_lines(req)


def message_lines(req: PromptRequest) -> list[str]:
    """The messages as sent, a head line each, then their text line by line behind `| `
    (control and invisible characters shown as escapes)."""
    lines = []
    for n, m in enumerate(req.messages, 1):
        flags = ", ".join(x for x in ("stable" if m.stable else "", "turn" if m.turn else "") if x)
        head = f"[message {n}] {m.role}, {m.tokens} tokens{', ' + flags if flags else ''}; sections {', '.join(m.sections) or '-'}"
        lines.append(head)
        lines += [f"| {visible(line)}".rstrip() for line in m.content.split("\n")]
    return lines


def _flat(value: object, path: str = "") -> list[tuple[str, str]]:
    """A JSON value as sorted (path, scalar) pairs: a digest of it does not depend on key order."""
    if isinstance(value, dict):
        return [p for k in sorted(value) for p in _flat(value[k], f"{path}/{k}")]
    if isinstance(value, list | tuple):
        return [p for i, v in enumerate(value) for p in _flat(v, f"{path}/{i}")]
    return [(path, repr(value))]


# -- writing and comparing ------------------------------------------------------------


@dataclass(frozen=True)
class SnapshotResult:
    """What `snapshot()` did: files written, unchanged, removed (relative paths), and failed cases."""

    folder: Path
    written: tuple[str, ...]
    unchanged: tuple[str, ...]
    removed: tuple[str, ...]
    errors: tuple[Case, ...]
    without_examples: tuple[str, ...]
    unmatched: tuple[str, ...] = ()  # example states named after no role

    @property
    def ok(self) -> bool:
        return not self.errors


def _paths(rendered: Rendered) -> list[Path]:
    return [files.key(rendered.root / c.file) for c in rendered.cases]


def _guard(rendered: Rendered) -> Path:
    """The guard root, after PM017 for a snapshots folder that a link takes out of it."""
    guard = rendered.guard or rendered.root
    problem = files.folder_problem(rendered.folder, guard, rendered.root)
    if problem is not None:
        raise problem
    return guard


def snapshot(project: str | os.PathLike[str] = ".", *, folder: str | os.PathLike[str] | None = None) -> SnapshotResult:
    """Render every role with its example states and write one snapshot file per role and state.

    Files whose text did not change are left alone; snapshot files of cases that no longer exist
    are removed (only files promptmill wrote, which start with its mark). A damaged snapshot of
    promptmill's is rewritten. A case that fails keeps its old file and is returned in `errors`;
    the other cases are written. Everything is checked before anything is written or removed:
    a link out of the project (PM017) or a file promptmill did not write where a snapshot goes
    (PM010) stops the command with nothing changed.
    """
    rendered = render_all(project, folder=folder)
    guard = _guard(rendered)
    at_cases, others = files.scan(rendered.folder, _paths(rendered), guard, rendered.root)
    writes: list[tuple[Path, Case]] = []
    unchanged = []
    for case in rendered.cases:
        path = files.key(rendered.root / case.file)
        found = at_cases.get(path)
        if case.text is None:
            continue
        if found is not None and found.problem is not None and not found.ours:
            raise found.problem  # a link, a FIFO, a file of the user's: never written through or over
        if found is not None and found.text == case.text:
            unchanged.append(case.file)
            continue
        problem = files.folder_problem(path.parent, guard, rendered.root, "folder of the snapshot")
        if problem is not None:
            raise problem
        writes.append((path, case))
    for path, case in writes:
        assert case.text is not None
        files.write(path, case.text, guard, case.file)
    for path, found in others.items():
        files.remove(path, guard, found.shown)
    return SnapshotResult(
        rendered.folder,
        tuple(case.file for _, case in writes),
        tuple(unchanged),
        tuple(sorted(found.shown for found in others.values())),
        tuple(c for c in rendered.cases if c.error is not None),
        rendered.without_examples,
        rendered.unmatched,
    )


@dataclass(frozen=True)
class Outcome:
    """One case compared with its snapshot: `pass`, `fail` (differs), `new` (no snapshot yet),
    `error` (the render failed), `obsolete` (a snapshot no case produces), `damaged` (the
    snapshot is promptmill's but cannot be read as one: `test --update` rewrites it) or
    `blocked` (a file promptmill did not write, or a link, is where the snapshot goes:
    `test --update` will not touch it). `error` holds what is wrong for the last three."""

    name: str
    role: str
    state: str
    file: str
    status: str
    diff: tuple[str, ...] = ()
    error: PromptmillError | None = None


STATUSES = ("pass", "fail", "new", "obsolete", "damaged", "blocked", "error")
REPAIRABLE = ("fail", "new", "obsolete", "damaged")  # what `test --update` rewrites or removes


@dataclass(frozen=True)
class SnapshotCheck:
    """What `check_snapshots()` found, case by case, and the files `update=True` rewrote."""

    folder: str
    outcomes: tuple[Outcome, ...]
    updated: tuple[str, ...] = ()

    @property
    def ok(self) -> bool:
        return all(o.status == "pass" for o in self.outcomes)

    def count(self, status: str) -> int:
        return sum(o.status == status for o in self.outcomes)


def check_snapshots(
    project: str | os.PathLike[str] = ".", *, folder: str | os.PathLike[str] | None = None, update: bool = False
) -> SnapshotCheck:
    """Render every case again and compare it with its committed snapshot (no model is called).

    With `update=True` the snapshots are rewritten first (`snapshot()`) and the result says which
    files changed; a case whose render fails is an error either way.
    """
    updated: tuple[str, ...] = ()
    if update:
        done = snapshot(project, folder=folder)
        updated = done.written + done.removed
    rendered = render_all(project, folder=folder)
    guard = _guard(rendered)
    at_cases, others = files.scan(rendered.folder, _paths(rendered), guard, rendered.root)
    outcomes = [_outcome(case, at_cases.get(files.key(rendered.root / case.file))) for case in rendered.cases]
    for found in sorted(others.values(), key=lambda f: f.shown):
        diff = tuple(_diff(found.before, None, found.shown))
        outcomes.append(Outcome(f"obsolete snapshot {found.shown}", "", "", found.shown, "obsolete", diff))
    return SnapshotCheck(files.shown_path(rendered.folder, rendered.root), tuple(outcomes), updated)


def _outcome(case: Case, found: Existing | None) -> Outcome:
    def made(status: str, diff: list[str] | None = None, error: PromptmillError | None = None) -> Outcome:
        return Outcome(case.name, case.role, case.state, case.file, status, tuple(diff or ()), error)

    if case.error is not None:
        return made("error", error=case.error)
    after = case.text or ""
    if found is None:
        return made("new", _diff(None, after, case.file))
    if found.problem is not None:
        if found.ours:
            return made("damaged", _diff(found.before, after, case.file), found.problem)
        return made("blocked", error=found.problem)
    if found.text != after:
        return made("fail", _diff(found.text, after, case.file))
    return made("pass")


def _diff(before: str | None, after: str | None, file: str) -> list[str]:
    """A unified diff, `a/FILE` (the snapshot) against `b/FILE` (the render now)."""
    a = before.splitlines() if before is not None else []
    b = after.splitlines() if after is not None else []
    return list(
        difflib.unified_diff(
            a,
            b,
            fromfile=f"a/{one_line(file)}" if before is not None else "/dev/null",
            tofile=f"b/{one_line(file)}" if after is not None else "/dev/null",
            lineterm="",
        )
    )
