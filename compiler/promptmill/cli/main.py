"""The `promptmill` command: a thin layer over the public Python functions.

Exit codes: 0 clean, 1 findings or failure, 2 usage error, 3 internal error,
141 when the reader of the output went away (`promptmill ... | head`).
Every `PromptmillError` becomes a message on stderr, never a traceback.
"""

from __future__ import annotations

import errno
import functools
import json
import os
import select
import shlex
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from ..core.boundary import environment_error
from ..core.choices import EVENTS, SCHEMA_NAMES, TEMPLATE_KINDS
from ..core.errors import CompileError, PromptmillError
from ..core.jsontypes import JSON
from ..core.showtext import one_line, visible
from ..core.version import __version__
from ..review import DIFF_FORMATS, TEST_FORMATS
from ..runtime.registry import WIRE_NAMES
from ..runtime.wire import batch_wires
from .reporters import FORMATS

RATIOS_NAME = "promptmill.ratios.json"  # compose/budgets.py RATIOS_FILE, named here without importing the compiler

if TYPE_CHECKING:
    from ..runtime.engine import Runtime
    from ..runtime.request import PromptRequest

PAYLOAD_FORMATS = tuple(p for p in WIRE_NAMES if p != "text")  # --format <wire> prints that payload
RENDER_FORMATS = ("pretty", "text", "json", *PAYLOAD_FORMATS)
EXIT_OUTPUT_CLOSED = 141  # 128 + SIGPIPE: what a shell reports for a tool whose reader went away


def _color(stream: object) -> bool:
    return bool(getattr(stream, "isatty", lambda: False)()) and "NO_COLOR" not in os.environ


def _fail(exc: PromptmillError) -> None:
    if isinstance(exc, CompileError):
        from .reporters import report

        report(exc.diagnostics, "text", sys.stderr, color=_color(sys.stderr))
        return
    # a message quotes what the user gave (a file name, a value): its escapes and reordering characters are shown, not run
    click.echo(f"promptmill: error[{exc.code}]: {visible(exc.message)}", err=True)
    if exc.hint:
        click.echo(f"    hint: {visible(exc.hint)}", err=True)


def _shown(path: Path) -> str:
    """A path as users typed it: relative to the working folder when inside it; one line, escapes shown (`one_line`)."""
    try:
        return one_line(Path(path).resolve().relative_to(Path.cwd().resolve()).as_posix() or ".")
    except ValueError:
        return one_line(Path(path).as_posix())


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


def _reader_gone(stream: Any) -> bool:
    """Has the reader of `stream` (a pipe or socket) gone away? Then point it at os.devnull, so
    nothing else writes to it, not even the interpreter's flush at exit (which would complain)."""
    try:
        fd = stream.fileno()
    except (AttributeError, OSError, ValueError):  # an in-memory stream has no reader to lose
        return False
    try:
        stream.flush()
        poll = select.poll()
        poll.register(fd, select.POLLOUT)
        gone = any(event & (select.POLLERR | select.POLLHUP) for _, event in poll.poll(0))
    except BrokenPipeError:
        gone = True
    except (AttributeError, OSError):  # no poll() here, or a stream that fails otherwise: not a reader gone
        return False
    if gone:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, fd)
        os.close(devnull)
    return gone


def _output_gone() -> bool:
    """Did the reader of standard output or error go away (`promptmill batch ... | head`)?

    Not so for a BrokenPipeError of another pipe (a worker's): that stays a failure.
    """
    gone = [_reader_gone(stream) for stream in (sys.stdout, sys.stderr)]  # both: each dead one goes to devnull
    return any(gone)


def handled(func: Callable[..., Any]) -> Callable[..., Any]:
    """Turn promptmill errors into messages and exit codes."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            try:
                return func(*args, **kwargs)
            finally:
                sys.stdout.flush()  # a reader that went away shows here, not in the interpreter's flush at exit
        except PromptmillError as exc:
            _fail(exc)
            sys.exit(1)
        except (click.exceptions.Exit, click.ClickException, SystemExit, KeyboardInterrupt):
            raise
        except Exception as exc:  # a bug: say so plainly
            if isinstance(exc, BrokenPipeError) and _output_gone():  # an ordinary end: 141, like any Unix tool
                cause: BaseException | None = exc
                while cause is not None and not isinstance(cause, PromptmillError):
                    cause = cause.__context__
                if cause is not None:  # a failure being told when the reader went away is still told
                    _fail(cause)
                raise click.exceptions.Exit(EXIT_OUTPUT_CLOSED) from None
            found = environment_error(exc)  # the environment (git, disk, memory, a provider) is never a bug
            if found is not None:
                _fail(found)
                sys.exit(1)
            if os.environ.get("PROMPTMILL_DEBUG"):
                raise
            click.echo(
                f"promptmill: error[PM000]: internal error: {exc!r} (a bug; rerun with PROMPTMILL_DEBUG=1 for details)",
                err=True,
            )
            sys.exit(3)

    return wrapper


class _Cli(click.Group):
    """The `promptmill` group: where a closed output ends any command, its help or its usage error."""

    def main(self, *args: Any, **kwargs: Any) -> Any:
        for name in ("stdout", "stderr"):
            if getattr(sys, name) is None:  # started with the stream closed (`>&-`): the output is discarded
                setattr(sys, name, open(os.devnull, "w"))  # for the life of the process
        return super().main(*args, **kwargs)

    def make_context(self, *args: Any, **kwargs: Any) -> click.Context:  # --help, --version, usage errors
        try:
            return super().make_context(*args, **kwargs)
        except BrokenPipeError:
            if _output_gone():
                raise click.exceptions.Exit(EXIT_OUTPUT_CLOSED) from None
            raise

    def invoke(self, ctx: click.Context) -> Any:  # a subcommand's help, a failure told while the reader went away
        try:
            return super().invoke(ctx)
        except BrokenPipeError:
            if _output_gone():
                raise click.exceptions.Exit(EXIT_OUTPUT_CLOSED) from None
            raise


def _show_version(ctx: click.Context, param: click.Parameter, value: bool) -> None:
    """`--version`: the version, and whether the runtime's hot modules run compiled (runtime/buildinfo.py)."""
    if not value or ctx.resilient_parsing:
        return
    from ..runtime.buildinfo import build_description

    click.echo(f"promptmill, version {__version__}\nruntime: {build_description()}")
    ctx.exit()


@click.group(cls=_Cli, context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--version", is_flag=True, expose_value=False, is_eager=True, callback=_show_version, help="Show the version and exit.")
def main() -> None:
    """promptmill: compile YAML prompt templates and render them under a token budget."""


@main.command()
@click.argument("path", default=".", type=click.Path())
@click.option("--format", "fmt", type=click.Choice(FORMATS), default="text", show_default=True)
@click.option("--strict", is_flag=True, help="Treat warnings as failures.")
@handled
def lint(path: str, fmt: str, strict: bool) -> None:
    """Check every template of the project at PATH."""
    from ..compiling.api import lint as run_lint
    from .reporters import report

    result = run_lint(path)
    report(result.diagnostics, fmt, sys.stdout, color=_color(sys.stdout), files_checked=result.files)
    sys.exit(0 if result.ok(strict) else 1)


@main.command()
@click.argument("path", default=".", type=click.Path())
@click.option("-o", "--output", type=click.Path(), help="Build folder (default: from promptmill.yaml, or ./build).")
@click.option("--check", is_flag=True, help="Write nothing; exit 1 when the build is not what compiling would produce.")
@click.option("--force", is_flag=True, help="Recompile every role, even unchanged ones.")
@handled
def compile(path: str, output: str | None, check: bool, force: bool) -> None:
    """Compile the project at PATH into its build folder."""
    from ..compiling.api import compile as run_compile
    from .reporters import report

    result = run_compile(path, output=output, check=check, force=force)
    if result.diagnostics:  # warnings; with --check also a stale types module (PM019)
        report(result.diagnostics, "text", sys.stderr, color=_color(sys.stderr))
    if check:
        if result.stale:
            click.echo(f"{_shown(result.build_dir)}/ is stale; `promptmill compile` would change:")
            for rel in result.stale:
                click.echo(f"  {one_line(str(rel))}")
        if result.stale or any(d.severity == "error" for d in result.diagnostics):
            sys.exit(1)
        click.echo(f"{_shown(result.build_dir)}/ is up to date ({_count(len(result.bundles), 'role')})")
        return
    if result.up_to_date:
        click.echo(f"{_shown(result.build_dir)}/ is up to date ({_count(len(result.reused), 'role')}, nothing changed)")
        return
    click.echo(
        f"compiled {_count(len(result.compiled), 'role')}, reused {len(result.reused)} unchanged, "
        f"removed {_count(len(result.removed), 'stale file')} -> {_shown(result.build_dir)}/"
    )


@main.command()
@click.argument("kind", type=click.Choice(SCHEMA_NAMES), required=False)
@click.option(
    "--write", "folder", type=click.Path(file_okay=False), help="Write every schema into this folder instead (e.g. .promptmill/schemas)."
)
@click.option("--force", is_flag=True, help="With --write: overwrite existing files.")
@handled
def schema(kind: str | None, folder: str | None, force: bool) -> None:
    """Print the JSON Schema of a template kind, the project file, or the build format."""
    if folder is not None:
        if kind is not None:
            raise click.UsageError("give a KIND to print, or --write FOLDER, not both")
        from .scaffold import write_schemas

        for path in write_schemas(folder, force=force):
            click.echo(f"wrote {path.as_posix()}")
        return
    if kind is None:
        raise click.UsageError("give a KIND, or --write FOLDER for all of them")
    from ..source.schemacheck import schema_text

    click.echo(schema_text(kind), nl=False)


@main.command()
@click.argument("path", default=".", type=click.Path(file_okay=False))
@click.option("--force", is_flag=True, help="Overwrite files that already exist.")
@handled
def init(path: str, force: bool) -> None:
    """Create a starter project in PATH that lints, compiles and renders as is."""
    from .scaffold import ROLE, SCHEMA_DIR, STATE
    from .scaffold import init as run_init

    written = run_init(path, force=force)
    rels = [p.relative_to(path).as_posix() for p in written]
    click.echo(f"created {len(rels)} files in {path}:")
    for rel in rels:
        if not rel.startswith(SCHEMA_DIR + "/"):
            click.echo(f"  {rel}")
    click.echo(f"  {SCHEMA_DIR}/*.schema.json (for editors)")
    steps = ([f"cd {shlex.quote(path)}"] if Path(path).resolve() != Path.cwd().resolve() else []) + [
        "promptmill lint",
        "promptmill compile",
        f"promptmill render {ROLE} --state {STATE}",
    ]
    click.echo("next:\n" + "".join(f"  {step}\n" for step in steps), nl=False)


@main.command()
@click.argument("path", default=".", type=click.Path())
@click.option(
    "--out", type=click.Path(file_okay=False), help="Snapshots folder (default: `snapshots:` of promptmill.yaml, or ./snapshots)."
)
@handled
def snapshot(path: str, out: str | None) -> None:
    """Render every role with its example states and write one snapshot file per role and state."""
    from ..review.snapshots import snapshot as run_snapshot

    result = run_snapshot(path, folder=out)
    for case in result.errors:
        assert case.error is not None
        click.echo(f"{one_line(case.state)}: error[{case.error.code}] role {case.role}: {visible(case.error.message)}", err=True)
    click.echo(
        f"{_count(len(result.written), 'snapshot')} written, {len(result.unchanged)} unchanged, {len(result.removed)} removed, "
        f"{len(result.errors)} failed -> {_shown(result.folder)}/"
    )
    for rel in result.written:
        click.echo(f"  {one_line(str(rel))}")
    if result.without_examples:
        click.echo(f"roles without an example state (ROLE.state.yaml): {', '.join(map(one_line, result.without_examples))}")
    if result.unmatched:
        click.echo(f"example states named after no role (not snapshotted): {', '.join(map(one_line, result.unmatched))}")
    sys.exit(0 if result.ok else 1)


@main.command("test")
@click.argument("path", default=".", type=click.Path())
@click.option("--update", is_flag=True, help="Rewrite the snapshots to match, then report what changed.")
@click.option("--format", "fmt", type=click.Choice(TEST_FORMATS), default="text", show_default=True)
@click.option(
    "--out", type=click.Path(file_okay=False), help="Snapshots folder (default: `snapshots:` of promptmill.yaml, or ./snapshots)."
)
@handled
def test_cmd(path: str, update: bool, fmt: str, out: str | None) -> None:
    """Render every role with its example states again and compare with the snapshots (calls no model)."""
    from ..review.snapshots import check_snapshots
    from ..review.testreport import format_check

    result = check_snapshots(path, folder=out, update=update)
    click.echo(format_check(result, fmt), nl=False)
    failed = result.count("error") if update else len(result.outcomes) - result.count("pass")
    sys.exit(0 if failed == 0 else 1)


@main.command("diff")
@click.argument("base")
@click.argument("head", required=False)
@click.option(
    "--project", default=".", type=click.Path(file_okay=False), show_default=True, help="The project (in a revision: the same folder)."
)
@click.option("--format", "fmt", type=click.Choice(DIFF_FORMATS), default="text", show_default=True)
@click.option("--fail-on-growth", type=click.FloatRange(0), metavar="PCT", help="Exit 1 when a rendered prompt grew more than PCT percent.")
@click.option("--fail-on-cache-break", is_flag=True, help="Exit 1 when a role's cacheable prefix changed.")
@handled
def diff_cmd(base: str, head: str | None, project: str, fmt: str, fail_on_growth: float | None, fail_on_cache_break: bool) -> None:
    """What a change did to the rendered prompts, from BASE to HEAD (git revisions or folders;
    HEAD omitted: the working tree). The working tree is never modified."""
    from ..review.diff import diff, policy_failures
    from ..review.diffreport import format_diff

    result = diff(base, head, project=project)
    click.echo(format_diff(result, fmt), nl=False)
    failures = policy_failures(result, fail_on_growth=fail_on_growth, fail_on_cache_break=fail_on_cache_break)
    for line in failures:
        click.echo(f"promptmill: policy: {line}", err=True)
    sys.exit(1 if failures or result.errors else 0)


def _runtime(project: str, build: str | None) -> Runtime:
    if build is not None:
        from ..runtime.engine import Runtime

        return Runtime.load(build)
    from ..compiling.api import build_in_memory

    runtime, _ = build_in_memory(project)
    return runtime


def _render_output(req: PromptRequest, fmt: str, color: bool) -> tuple[str, bool]:
    """(text, add a newline) for `render --format fmt`."""
    if fmt == "pretty":
        from .preview import pretty

        return pretty(req, color=color), True
    if fmt == "text":
        return req.text, sys.stdout.isatty()  # exactly the prompt when piped
    if fmt == "json":
        from .preview import request_data

        return json.dumps(request_data(req), ensure_ascii=False, indent=2), True
    return json.dumps(req.to_payload(), ensure_ascii=False, indent=2), True


@main.command()
@click.argument("role")
@click.option("--state", "state_file", type=click.Path(), help="Render state (.yaml, .yml or .json; - reads standard input).")
@click.option("--budget", type=int, help="Tokens the prompt may use (can only lower the role's budget).")
@click.option("--format", "fmt", type=click.Choice(RENDER_FORMATS), default="pretty", show_default=True)
@click.option("--provider", type=click.Choice(WIRE_NAMES), help="Provider to fit for (default: the role's; implied by provider formats).")
@click.option("--project", default=".", type=click.Path(), show_default=True, help="Project to compile in memory.")
@click.option("--build", type=click.Path(), help="Render from this build folder instead of compiling the sources.")
@click.option("--event", type=click.Choice(EVENTS), default="start", show_default=True)
@click.option("--model", help="Render for this model (default: the role's `model:`); see `promptmill models`.")
@handled
def render(
    role: str,
    state_file: str | None,
    budget: int | None,
    fmt: str,
    provider: str | None,
    project: str,
    build: str | None,
    event: str,
    model: str | None,
) -> None:
    """Render ROLE with a state and show the result.

    pretty: sections with token counts and budget bars; text: exactly the
    prompt; json: the whole result; openai|anthropic|gemini|live: the payload.
    """
    from ..source.statefile import read_state

    state = read_state(state_file) if state_file else {}
    if fmt in PAYLOAD_FORMATS:
        if provider is not None and provider != fmt:
            raise click.UsageError(f"--format {fmt} needs --provider {fmt} (or no --provider)")
        provider = fmt
    if fmt == "text" and provider is None and model is None:
        provider = "text"  # the text renderer's payload; --provider X --format text shows X's fit as text
    runtime = _runtime(project, build)
    runtime.check_wire(role, provider=provider, model=model)  # PM010 as in batch: no body for a model its wire does not serve
    req = runtime.render(role, state, budget=budget, provider=provider, event=event, model=model)
    text, newline = _render_output(req, fmt, _color(sys.stdout))
    # click.echo strips ANSI escapes when stdout is not a terminal: `text` is the prompt
    # itself, escapes from the state included (the other formats escape them or are for eyes)
    click.echo(text, nl=newline, color=True if fmt == "text" else None)


@main.command()
@click.argument("template_id", metavar="ID")
@click.argument("path", default=".", type=click.Path())
@click.option("--kind", type=click.Choice(TEMPLATE_KINDS), help="Only this kind.")
@handled
def which(template_id: str, path: str, kind: str | None) -> None:
    """Show where ID resolves along the search path, and what it shadows."""
    from ..compiling.which import format_which
    from ..compiling.which import which as run_which

    click.echo(format_which(run_which(template_id, path, kind=kind)))


@main.command("port-format")
@click.argument("file", type=click.Path())
@click.option("--id", "role_id", help="Role id (default: the file's name without its extension).")
@handled
def port_format(file: str, role_id: str | None) -> None:
    """Print a role skeleton rendering what a str.format template in FILE gives."""
    from ..compiling.porting import port_template_file

    click.echo(port_template_file(file, role_id), nl=False)


@main.command()
@click.argument("path", default=".", type=click.Path())
@click.option("--model", "model_ids", multiple=True, help="Model to count for (repeatable; default: each role's own model).")
@click.option("--write", is_flag=True, help=f"Store the measured ratios in {RATIOS_NAME}, which compile reads.")
@click.option(
    "--timeout",
    type=click.FloatRange(0, 3600, min_open=True),
    help="Seconds to wait for each provider answer (default: PROMPTMILL_PROVIDER_TIMEOUT, else 30); one retry.",
)
@handled
def counts(path: str, model_ids: tuple[str, ...], write: bool, timeout: float | None) -> None:
    """Each role's example state counted by its provider (Anthropic, Gemini: their SDK's count_tokens;
    OpenAI: tiktoken) against promptmill's estimate; exit 1 when an estimate is below the provider's count.
    Only example states inside the project are read and sent (a link out is skipped with a warning)."""
    from ..compiling.counts import counts as measure
    from ..compiling.counts import format_counts, write_ratios

    result = measure(path, models=list(model_ids) or None, timeout=timeout)
    for warning in result.warnings:
        click.echo(f"promptmill: warning: {warning}", err=True)
    click.echo(format_counts(result), nl=False)
    if write:  # after the table, so that a refused ratio is shown with the counts behind it
        click.echo(f"wrote {_shown(write_ratios(Path(result.root or path), result))}")
    if not result.ok:
        sys.exit(1)


@main.command()
@click.argument("path", default=".", type=click.Path())
@handled
def models(path: str) -> None:
    """The model table: provider, counting, context window, reply limit, cache rules, source."""
    from ..compiling.models import format_models
    from ..compiling.models import models as table

    click.echo(format_models(table(path)), nl=False)


@main.command()
@click.argument("path", default=".", type=click.Path())
@click.option(
    "-o",
    "--output",
    type=click.Path(),
    help="The module to write, or a folder (then FOLDER/promptmill_types.py); default: `types: path` of promptmill.yaml.",
)
@handled
def types(path: str, output: str | None) -> None:
    """Write the typed module (TypedDicts per role's inputs and reply, typed render) for application code."""
    from ..compiling.typesfile import configured_path, write_types

    target = output if output is not None else configured_path(path)
    if target is None:
        raise click.UsageError("name the module to write: -o FILE (or `types: {path: FILE}` in promptmill.yaml)")
    click.echo(f"wrote {_shown(write_types(target, path, configured=output is None))}")


@main.command()
@click.argument("path", default=".", type=click.Path())
@click.option("--build", type=click.Path(), help="Read this build folder instead of compiling the sources.")
@handled
def stats(path: str, build: str | None) -> None:
    """A table of roles: sections, static tokens, dynamic sections, budget."""
    from .preview import stats_table

    runtime = _runtime(path, build)
    click.echo(stats_table({r: runtime.bundle(r) for r in runtime.roles}))


@main.command()
@click.argument("path", default=".", type=click.Path(exists=True))
@click.option("--role", required=True, help="Role to re-render after every change.")
@click.option("--state", "state_file", type=click.Path(), help="Render state (.yaml, .yml or .json); watched too.")
@click.option("--budget", type=int, help="Tokens the prompt may use.")
@click.option("--provider", type=click.Choice(WIRE_NAMES), help="Provider to fit for.")
@click.option("--debounce", type=click.FloatRange(0, 10), default=0.05, show_default=True, help="Seconds of quiet before a refresh.")
@handled
def watch(path: str, role: str, state_file: str | None, budget: int | None, provider: str | None, debounce: float) -> None:
    """Re-render ROLE whenever a template of the project at PATH or the state changes.

    A broken edit shows its diagnostics and the watcher keeps going; Ctrl-C stops it.
    """
    from ..compiling.workspace import Workspace
    from ..core.errors import ConfigError
    from ..source.statefile import STDIN
    from ..watch import Watcher
    from .livepreview import LivePreview

    if state_file == STDIN:
        raise ConfigError(
            "watch needs a state file it can watch; '-' (standard input) is read once",
            code="PM010",
            hint="save the state to a .yaml or .json file and pass its path",
        )
    tty = sys.stdout.isatty()
    closed = threading.Event()  # the reader of the output went away: stop watching, exit 141
    preview = LivePreview(
        Workspace(path), role, state_file, budget=budget, provider=provider, write=_writer(tty, closed), color=_color(sys.stdout)
    )
    preview.refresh(set())
    watcher = Watcher(preview.watch_paths(), preview.refresh, debounce=debounce, stop=closed).start(thread=False)
    click.echo(f"watching {len(watcher.roots)} path(s); Ctrl-C to stop", err=True)
    try:
        watcher.run()
    except KeyboardInterrupt:
        click.echo("stopped", err=True)
    finally:
        watcher.stop()
    if closed.is_set():
        raise BrokenPipeError(errno.EPIPE, os.strerror(errno.EPIPE))
    sys.exit(0)


@main.command()
@click.argument("role", required=False)
@click.option("--state", "state_file", type=click.Path(), help="Render state to start with (.yaml, .yml or .json); watched too.")
@click.option("--port", type=click.IntRange(0, 65535), default=8765, show_default=True, help="Port on 127.0.0.1 (0: any free port).")
@click.option("--open", "open_browser", is_flag=True, help="Open the page in a browser.")
@click.option("--project", default=".", type=click.Path(exists=True, file_okay=False), show_default=True, help="Project to preview.")
@handled
def preview(role: str | None, state_file: str | None, port: int, open_browser: bool, project: str) -> None:
    """Serve a live web preview of the project's roles on 127.0.0.1.

    Pick a role and a state, drag the budget, compare provider payloads and
    builds; every save re-renders the page. Ctrl-C stops it.
    """
    from ..core.errors import ConfigError
    from ..source.statefile import STDIN
    from ..web import serve

    if state_file == STDIN:
        raise ConfigError(
            "preview needs a state file it can watch; '-' (standard input) is read once",
            code="PM010",
            hint="save the state to a .yaml or .json file and pass its path",
        )
    serve(project, role=role, state=state_file, port=port, open_browser=open_browser, write=click.echo)


@main.command()
@click.option("--stdio", is_flag=True, help="Talk over stdin/stdout (the default and only transport; editors pass it).")
@handled
def lsp(stdio: bool) -> None:
    """Run the language server for editors (diagnostics as you type; docs/editors.md)."""
    from ..core.errors import ConfigError

    try:
        from ..lsp import serve_stdio
        from ..lsp import server as _server  # noqa: F401 - pygls present?
    except ImportError:
        raise ConfigError("the language server needs pygls", code="PM010", hint="pip install 'promptmill[lsp]'") from None
    serve_stdio()


def _writer(tty: bool, closed: threading.Event) -> Callable[[str], None]:
    def write(text: str) -> None:
        try:
            if tty:
                click.clear()
            click.echo(text)
            sys.stdout.flush()
        except BrokenPipeError:  # on the watcher's thread, which would log it: tell the command instead
            closed.set()

    return write


class _BatchGroup(click.Group):
    """`promptmill batch ROLE ...` renders; `promptmill batch collect ...` collects."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        if args and args[0] not in self.commands and not args[0].startswith("-"):
            args = ["render", *args]
        return super().parse_args(ctx, args)


@main.group(cls=_BatchGroup)
def batch() -> None:
    """Render a row file into provider batch files (`batch ROLE --input ...`), or collect the results.

    \b
    promptmill batch ROLE --input rows.jsonl --out DIR [--provider WIRE]
    promptmill batch collect RESULTS.jsonl --batch DIR
    """


@batch.command("render")
@click.argument("role")
@click.option("--input", "input_path", required=True, type=click.Path(), help="Rows: .jsonl (one JSON object a line) or .parquet.")
@click.option("--out", required=True, type=click.Path(file_okay=False), help="Folder for the request files, report.jsonl and summary.json.")
@click.option("--build", default="build", show_default=True, type=click.Path(), help="Build folder to render from.")
@click.option("--provider", type=click.Choice(batch_wires()), help="Batch format (default: the role's provider).")
@click.option("--model", help="Model each request is fitted for and names (default: the role's model); see `promptmill models`.")
@click.option("--budget", type=int, help="Tokens each prompt may use (can only lower the role's budget).")
@click.option("--max-tokens", type=int, help="Anthropic max_tokens when the role reserves none.")
@click.option("--id-column", help="Column holding each row's custom id (default: generated, row-0, row-1, ...).")
@click.option("--state-column", help="Column holding the render state (an object or JSON text; default: the whole row).")
@click.option(
    "--workers",
    type=click.IntRange(1, 256),
    default=1,
    show_default=True,
    help="Processes rendering rows; the output is the same bytes for any number.",
)
@click.option(
    "--max-error-rate",
    type=click.FloatRange(0, 1),
    default=0.0,
    show_default=True,
    help="Fraction of rows that may fail before the run fails.",
)
@click.option("--max-requests", type=click.IntRange(1), help="Requests per file (default: the provider's limit).")
@click.option("--max-bytes", type=click.IntRange(1), help="Bytes per file (default: the provider's limit).")
@handled
def batch_render(
    role: str,
    input_path: str,
    out: str,
    build: str,
    provider: str | None,
    model: str | None,
    budget: int | None,
    max_tokens: int | None,
    id_column: str | None,
    state_column: str | None,
    workers: int,
    max_error_rate: float,
    max_requests: int | None,
    max_bytes: int | None,
) -> None:
    """Render every row of --input for ROLE into the provider's batch input files."""
    from ..batch.progress import Progress
    from ..batch.run import BatchFailed, run_batch

    bar = Progress(sys.stderr)
    try:
        summary = run_batch(
            role,
            input_path,
            out,
            build=build,
            provider=provider,
            model=model,
            budget=budget,
            max_tokens=max_tokens,
            id_column=id_column,
            state_column=state_column,
            workers=workers,
            max_error_rate=max_error_rate,
            max_requests=max_requests,
            max_bytes=max_bytes,
            progress=bar.update if bar.enabled else None,
        )
    except BatchFailed as exc:
        bar.done()
        click.echo(_batch_line(exc.summary, out))
        raise
    bar.done()
    click.echo(_batch_line(summary, out))
    for f in summary["files"]:
        click.echo(f"  {_shown(Path(out) / f['file'])}  {f['requests']} requests, {f['bytes']} bytes")


def _batch_line(summary: JSON, out: str) -> str:
    codes = ", ".join(f"{code} x{n}" for code, n in summary["codes"].items())
    return (
        f"{summary['rows']} rows: {summary['ok']} ok, {summary['failed']} failed"
        + (f" ({codes})" if codes else "")
        + f"; {summary['tokens']['total']} tokens"
        + (f" ({summary['counting']})" if summary.get("counting") else "")
        + f"; {summary['rows_per_second']} rows/s"
        + f" -> {_shown(Path(out))}/ (report.jsonl, summary.json)"
    )


@batch.command("collect")
@click.argument("results", type=click.Path())
@click.option("--batch", "batch_dir", required=True, type=click.Path(file_okay=False), help="The folder `promptmill batch` wrote.")
@click.option("--out", type=click.Path(file_okay=False), help="Folder for replies.jsonl and failures.jsonl (default: --batch).")
@click.option("--build", type=click.Path(), help="Build folder (default: the one the batch was rendered from).")
@handled
def batch_collect(results: str, batch_dir: str, out: str | None, build: str | None) -> None:
    """Check each reply of a provider's batch RESULTS file against the role's output contract."""
    from ..batch.collect import collect

    counts = collect(results, batch_dir, out=out, build=build)
    where = _shown(Path(out or batch_dir))
    replies = "1 valid reply" if counts["replies"] == 1 else f"{counts['replies']} valid replies"
    click.echo(
        f"{_count(counts['results'], 'result')}: {replies} -> {where}/replies.jsonl, "
        f"{counts['failures']} failures ({counts['missing']} without a result) -> {where}/failures.jsonl"
    )
    sys.exit(0 if counts["failures"] == 0 else 1)


def run() -> None:  # pragma: no cover - console entry for `python -m promptmill`
    main()


if __name__ == "__main__":  # pragma: no cover
    main()
