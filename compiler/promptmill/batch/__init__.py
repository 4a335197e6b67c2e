"""Batch rendering at dataset scale: provider batch files, a process pool, Ray Data and Spark.

    from promptmill.batch import render_rows, run_batch, BatchRenderer, collect

`run_batch` is `promptmill batch`, `collect` is `promptmill batch collect`.
`OutputFolder` is their output-folder guard (manifest, lock, staged files), for
code that writes its own files beside theirs.
Ray and Spark adapters: `promptmill.batch.ray`, `promptmill.batch.spark`.
Nothing here imports yaml, jsonschema or click; pyarrow, pandas, ray and
pyspark are imported only by the functions that need them.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .collect import collect
    from .outdir import OutputFolder
    from .renderer import BatchRenderer, RowResult, render_rows
    from .run import BatchFailed, run_batch

# Each name is imported on first use: a pool worker unpickles a BatchRenderer, which imports this package,
# and should not pay for `collect` and the reply parsers (about 0.1 s of a worker's start) it never runs.
_HOMES = {
    "BatchFailed": "run",
    "BatchRenderer": "renderer",
    "OutputFolder": "outdir",
    "RowResult": "renderer",
    "collect": "collect",
    "render_rows": "renderer",
    "run_batch": "run",
}
__all__ = ["BatchFailed", "BatchRenderer", "OutputFolder", "RowResult", "collect", "render_rows", "run_batch"]  # = _HOMES


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{home}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_HOMES})
