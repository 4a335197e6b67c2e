"""`run_batch`: a row file -> provider batch files, report.jsonl and summary.json in a folder.

    out/requests-00001.jsonl ...  the provider's batch input, split before its limits
    out/report.jsonl              one line per row: id, ok, code, message, tokens, budget, dropped, trimmed
    out/summary.json              counts, token totals, the slowest rows, the files (written last)

Request files are published only when the run succeeds (no more failed rows
than `max_error_rate` allows); report.jsonl and summary.json always are.
Every file is written in a private staging folder and renamed at the end, so
an interrupted run leaves no file that looks complete; the folder must be new,
empty or hold only the previous run's files (`promptmill.batch.outdir`: the
manifest, the lock, PM874 to PM876). SIGTERM ends the run like Ctrl-C: the
partial files are removed and the workers stop (exit status 143).
"""

from __future__ import annotations

import contextlib
import itertools
import json
import os
import signal
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

# promptmill internals this module uses (kept together for the package move)
from ..core.errors import ConfigError, PromptmillError
from ..core.suggest import did_you_mean, nearest
from .outdir import OutputFolder
from .renderer import BatchRenderer, render_items
from .rows import read_rows
from .shards import ShardWriter
from .summary import Tally

PREFIX = "requests"


class BatchFailed(PromptmillError):
    """More rows failed than the run's max_error_rate allows (PM872)."""

    code = "PM872"

    def __init__(self, message: str, summary: dict, *, every_row: bool = False):
        hint = (
            "every row failed: fix the cause above (raising --max-error-rate would accept an empty run)"
            if every_row
            else "read report.jsonl for each failed row and its code; raise --max-error-rate to accept them"
        )
        super().__init__(message, hint=hint)
        self.summary = summary


def run_batch(
    role: str,
    input: str | os.PathLike[str],
    out: str | os.PathLike[str],
    *,
    build: Any = "build",
    provider: str | None = None,
    model: str | None = None,
    budget: int | None = None,
    id_column: str | None = None,
    state_column: str | None = None,
    max_tokens: int | None = None,
    workers: int = 1,
    chunk: int = 64,
    max_error_rate: float = 0.0,
    max_requests: int | None = None,
    max_bytes: int | None = None,
    progress: Callable[[int], None] | None = None,
) -> dict:
    """Render every row of `input` (JSONL or Parquet) for `role`; the summary (also in summary.json).

    Raises `BatchFailed` (PM872) after writing the report when more than
    `max_error_rate` (a fraction, 0 to 1) of the rows failed.
    """
    if not 0 <= max_error_rate <= 1:
        raise ConfigError(f"max_error_rate is a fraction from 0 to 1, got {max_error_rate}", code="PM010")
    if workers < 1 or chunk < 1:
        raise ConfigError("workers and chunk must be at least 1", code="PM010")
    start = time.perf_counter()
    items = check_columns(read_rows(Path(input)), input, id_column=id_column, state_column=state_column)  # the input first: cheap
    renderer = BatchRenderer(
        build, role, provider=provider, model=model, budget=budget, id_column=id_column, state_column=state_column, max_tokens=max_tokens
    )
    folder = Path(out)
    with _sigterm_exits(), OutputFolder(folder) as outdir:
        limits = renderer.limits
        shards = ShardWriter(folder, PREFIX, max_requests or limits.requests, max_bytes or limits.bytes, staging=outdir.staging)
        report = outdir.file("report.jsonl")
        tally = Tally()
        first_failure: Any = None  # the first failed row: the cause, when every row fails
        try:
            for r in render_items(renderer, items, workers=workers, chunk=chunk):
                # the request line's bytes, made once by the renderer, are measured, hashed and written as they are
                line = r.line if r.ok else None
                if line is not None and not shards.fits(line):
                    r = r.failed("PM870", f"the request is {len(line)} bytes, more than a batch file may hold ({shards.max_bytes} bytes)")
                    line = None
                if line is not None:
                    shards.write(line)
                report.write(r.report_line())
                tally.add(r)
                if not r.ok and first_failure is None:
                    first_failure = r
                if progress is not None and tally.rows % 256 == 0:
                    progress(tally.rows)
            if progress is not None:
                progress(tally.rows)
            failed = tally.error_rate > max_error_rate
            requests = [] if failed else shards.files
            written = [f.path.name for f in requests]
            seconds = time.perf_counter() - start
            summary = {
                "status": "failed" if failed else "ok",
                "role": role,
                "provider": renderer.provider,
                "model": renderer.model,
                "counting": renderer.runtime.count_note(role, provider=renderer.provider, model=renderer.render_model),
                "build": renderer.build,  # absolute already (BatchRenderer)
                "input": str(input),
                "id_column": id_column,
                "state_column": state_column,
                "budget": budget,
                "max_error_rate": max_error_rate,
                **tally.as_dict(),
                "files": [{"file": name, "requests": n, "bytes": b} for name, (n, b) in zip(written, shards.counts, strict=False)],
                "limits": {"requests": shards.max_requests, "bytes": shards.max_bytes},
                "workers": workers,
                "seconds": round(seconds, 3),
                "rows_per_second": round(tally.rows / seconds, 1) if seconds else None,
            }
            summary_file = outdir.file("summary.json")
            summary_file.write(summary_bytes(summary))
            outdir.publish([*requests, report, summary_file])
        finally:  # closes what is still open; the staging folder goes with OutputFolder
            shards.discard()
            report.discard()
    if failed:
        raise BatchFailed(
            f"{tally.failed} of {tally.rows} rows failed ({tally.error_rate:.1%}), more than the allowed "
            f"{max_error_rate:.1%}; no request files written; see {folder / 'report.jsonl'}" + _cause(tally, first_failure),
            summary,
            every_row=tally.ok == 0,
        )
    return summary


def _cause(tally: Tally, first: Any) -> str:
    """The cause in the error's own words: the first failed row's error, and how many rows share its code."""
    if first is None:
        return ""
    where = f"row {first.index}" + (f" ({first.where})" if first.where else "")
    share = "every row" if tally.ok == 0 and tally.codes.get(first.code) == tally.rows else f"{tally.codes.get(first.code, 1)} row(s)"
    return f"\nfirst failure ({share} failed with {first.code}): {where}: [{first.code}] {first.message}"


SHOWN_COLUMNS = 20  # columns named when --id-column or --state-column names none of them


def check_columns(
    items: Iterator[tuple[int, Any, str | None]], input: Any, *, id_column: str | None, state_column: str | None
) -> Iterator[tuple[int, Any, str | None]]:
    """`items` as they are, after checking that the first row has the columns the command line names.

    A column the first row lacks is nearly always a typo (`--id-column idd`): it
    would fail every row with PM871/PM870 and the run with PM872, the cause only in
    report.jsonl. So the run stops before it writes anything, naming the column and
    the columns the row has. A first row that is not a JSON object is left to the
    row's own error.
    """
    named = [(c, flag, code) for c, flag, code in ((id_column, "--id-column", "PM871"), (state_column, "--state-column", "PM870")) if c]
    if not named:
        return items
    first = next(items, None)
    if first is None:
        return iter(())
    row = first[1]
    if isinstance(row, bytes | str):
        try:
            row = json.loads(row)
        except (ValueError, RecursionError):
            row = None
    if isinstance(row, dict):
        for column, flag, code in named:
            if column not in row:
                raise _no_column(input, first[2], column, flag, code, [str(k) for k in row])
    return itertools.chain([first], items)


def _no_column(input: Any, where: str | None, column: str, flag: str, code: str, columns: list[str]) -> PromptmillError:
    more = f" and {len(columns) - SHOWN_COLUMNS} more" if len(columns) > SHOWN_COLUMNS else ""
    shown = ", ".join(repr(c) for c in columns[:SHOWN_COLUMNS]) + more
    near = nearest(column, columns)
    hint = (did_you_mean(near) + " " if near else "") + f"name a column every row has with {flag}"
    if flag == "--id-column":
        hint += ", or leave it out to number the rows (row-0, row-1, ...)"
    return PromptmillError(
        f"{input}: the first row ({where or 'row 0'}) has no column {column!r} ({flag}); its columns: {shown or 'none'}; nothing written",
        code=code,
        hint=hint,
    )


def summary_bytes(summary: dict) -> bytes:
    """summary.json's bytes; as in `RowResult.report_line`, text UTF-8 cannot hold is written as a JSON escape."""
    try:
        return (json.dumps(summary, ensure_ascii=False, indent=2) + "\n").encode("utf-8")
    except UnicodeEncodeError:
        return (json.dumps(summary, indent=2) + "\n").encode("ascii")


@contextlib.contextmanager
def _sigterm_exits() -> Iterator[None]:
    """SIGTERM raises SystemExit(143) in the main thread, so the run unwinds: partial files go, workers stop.

    Only when SIGTERM still has its default action (a program that handles it keeps its handler).
    """
    if threading.current_thread() is not threading.main_thread() or signal.getsignal(signal.SIGTERM) is not signal.SIG_DFL:
        yield
        return

    def stop(signum: int, frame: object) -> None:
        raise SystemExit(128 + signum)

    signal.signal(signal.SIGTERM, stop)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
