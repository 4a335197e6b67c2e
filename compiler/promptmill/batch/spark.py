"""Spark: render a DataFrame's rows with `mapInArrow` (or `mapInPandas`) on the executors.

    from promptmill.batch import BatchRenderer
    from promptmill.batch.spark import OUTPUT_DDL, map_in_arrow

    renderer = BatchRenderer("build", "executor", provider="openai", id_column="id", state_column="state")
    out = df.mapInArrow(map_in_arrow(renderer), OUTPUT_DDL)

The output schema is declared (`OUTPUT_DDL`): the payload and the provider's
batch line are JSON strings, since nested payloads differ in shape from row
to row. The renderer pickles small (its options and the build's path); each
Python worker loads the build once, on its first batch.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from .renderer import BatchRenderer

OUTPUT_DDL = "custom_id string, ok boolean, code string, message string, tokens bigint, payload string, request string"


def map_in_arrow(renderer: BatchRenderer) -> Callable[[Iterator[Any]], Iterator[Any]]:
    """The function for `df.mapInArrow(fn, OUTPUT_DDL)`: Arrow record batches in and out."""

    def render(batches: Iterator[Any]) -> Iterator[Any]:
        for batch in batches:
            yield from renderer(batch).to_batches()

    return render


def map_in_pandas(renderer: BatchRenderer) -> Callable[[Iterator[Any]], Iterator[Any]]:
    """The function for `df.mapInPandas(fn, OUTPUT_DDL)`: pandas DataFrames in and out."""

    def render(frames: Iterator[Any]) -> Iterator[Any]:
        for frame in frames:
            yield renderer(frame)

    return render
