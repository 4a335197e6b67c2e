"""The Arrow schema of rendered rows, shared by the Ray and Spark adapters (imports pyarrow)."""

from __future__ import annotations

import pyarrow as pa

OUTPUT_SCHEMA = pa.schema(
    [
        ("custom_id", pa.string()),
        ("ok", pa.bool_()),
        ("code", pa.string()),
        ("message", pa.string()),
        ("tokens", pa.int64()),
        ("payload", pa.string()),  # the single-render payload plus the model, as JSON text
        ("request", pa.string()),  # the provider's batch input line, as JSON text
    ]
)
