"""`run_batch`: a row file -> provider batch files, report.jsonl and summary.json in a folder.

    out/requests-00001.jsonl ...  the provider's batch input, split before its limits
    out/report.jsonl              one line per row: id, ok, code, message, tokens, budget, dropped, trimmed
    out/summary.json              counts, token totals, the slowest rows, the files (written last)

Request files are published only when the run succeeds (no more failed rows
than `max_error_rate` allows); report.jsonl and summary.json always are.
Every file is written under a temporary name and renamed at the end, so an
interrupted run leaves no file that looks complete (see `promptmill.batch.shards`).
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

# promptmill internals this module uses (kept together for the package move)
from ..core.errors import ConfigError, PromptmillError
from . import formats
from .renderer import BatchRenderer, render_items
from .rows import read_rows
from .shards import AtomicFile, ShardWriter, remove_stale
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
    input: str | os.PathLike[str],  # noqa: A002
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
    renderer = BatchRenderer(build, role, provider=provider, model=model, budget=budget, id_column=id_column,
                             state_column=state_column, max_tokens=max_tokens)
    items = read_rows(Path(input))
    folder = Path(out)
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ConfigError(f"cannot create the output folder {folder}: {exc.strerror}", code="PM014") from None
    limits = renderer.limits
    shards = ShardWriter(folder, PREFIX, max_requests or limits.requests, max_bytes or limits.bytes)
    report = AtomicFile(folder / "report.jsonl")
    tally = Tally()
    done = False
    try:
        for r in render_items(renderer, items, workers=workers, chunk=chunk):
            line = r.line if r.ok else None
            if line is not None and not shards.fits(line):
                r = r.failed("PM870", f"the request is {len(line)} bytes, more than a batch file may hold ({shards.max_bytes} bytes)")
                line = None
            if line is not None:
                shards.write(line)
            report.write(formats.dumps(r.report()))
            tally.add(r)
            if progress is not None and tally.rows % 256 == 0:
                progress(tally.rows)
        if progress is not None:
            progress(tally.rows)
        done = True
    finally:
        if not done:
            shards.discard()
            report.discard()
    failed = tally.error_rate > max_error_rate
    if failed:
        shards.discard()
        written = []
    else:
        shards.publish()
        written = shards.names()
    remove_stale(folder, PREFIX, written)
    report.publish()
    seconds = time.perf_counter() - start
    summary = {
        "status": "failed" if failed else "ok",
        "role": role,
        "provider": renderer.provider,
        "model": renderer.model,
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
    summary_file = AtomicFile(folder / "summary.json")
    summary_file.write((json.dumps(summary, ensure_ascii=False, indent=2) + "\n").encode("utf-8"))
    summary_file.publish()
    if failed:
        raise BatchFailed(
            f"{tally.failed} of {tally.rows} rows failed ({tally.error_rate:.1%}), more than the allowed "
            f"{max_error_rate:.1%}; no request files written; see {folder / 'report.jsonl'}",
            summary,
        )
    return summary
