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

from .collect import collect
from .outdir import OutputFolder
from .renderer import BatchRenderer, RowResult, render_rows
from .run import BatchFailed, run_batch

__all__ = ["BatchFailed", "BatchRenderer", "OutputFolder", "RowResult", "collect", "render_rows", "run_batch"]
