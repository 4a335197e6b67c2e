"""Batch rendering at dataset scale: provider batch files, a process pool, Ray Data and Spark.

    from promptmill.batch import render_rows, run_batch, BatchRenderer, collect

`run_batch` is `promptmill batch`, `collect` is `promptmill batch collect`.
Ray and Spark adapters: `promptmill.batch.ray`, `promptmill.batch.spark`.
Nothing here imports yaml, jsonschema or click; pyarrow, pandas, ray and
pyspark are imported only by the functions that need them.
"""

from __future__ import annotations

from .collect import collect
from .renderer import BatchRenderer, RowResult, render_rows
from .run import BatchFailed, run_batch

__all__ = ["BatchFailed", "BatchRenderer", "RowResult", "collect", "render_rows", "run_batch"]
