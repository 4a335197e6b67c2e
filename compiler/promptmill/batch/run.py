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
from .outdir import OutputFolder
from .renderer import BatchRenderer, render_items
from .rows import read_rows
from .shards import ShardWriter
from .summary import Tally

PREFIX = "requests"


class BatchFailed(PromptmillError):
    """More rows failed than the run's max_error_rate allows (PM872)."""

    code = "PM872"

    def __init__(self, message: str, summary: dict):
        super().__init__(message, hint="read report.jsonl for each failed row and its code; raise --max-error-rate to accept them")
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
    renderer = BatchRenderer(
        build, role, provider=provider, model=model, budget=budget, id_column=id_column, state_column=state_column, max_tokens=max_tokens
    )
    items = read_rows(Path(input))
    folder = Path(out)
    with _sigterm_exits(), OutputFolder(folder) as outdir:
        limits = renderer.limits
        shards = ShardWriter(folder, PREFIX, max_requests or limits.requests, max_bytes or limits.bytes, staging=outdir.staging)
        report = outdir.file("report.jsonl")
        tally = Tally()
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
            f"{max_error_rate:.1%}; no request files written; see {folder / 'report.jsonl'}",
            summary,
        )
    return summary


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
