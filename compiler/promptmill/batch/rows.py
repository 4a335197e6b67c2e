"""Row streams: JSONL (one JSON object a line) or Parquet (with pyarrow), read lazily.

Items are `(index, row, where)`: the 0-based row position, the row (a JSONL
line as bytes, parsed by whoever renders it, or a dict from Parquet) and
where it came from (`line 7`), for the report. Blank JSONL lines are skipped.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

# promptmill internals this module uses (kept together for the package move)
from ..core.errors import ConfigError

JSONL = (".jsonl", ".ndjson", ".json")
PARQUET = (".parquet", ".pq")


def read_rows(path: str | Path, *, batch_rows: int = 1024) -> Iterator[tuple[int, Any, str | None]]:
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix not in JSONL + PARQUET:
        raise ConfigError(f"{path}: cannot tell the input format from '{suffix or path.name}'",
                          code="PM010", hint="name the input .jsonl (one JSON object a line) or .parquet")
    if not path.is_file():
        raise ConfigError(f"input {path} does not exist or is not a file", code="PM011")
    if suffix in PARQUET:
        return _parquet(path, batch_rows)
    return _jsonl(path)


def _jsonl(path: Path) -> Iterator[tuple[int, Any, str | None]]:
    index = 0
    try:
        with path.open("rb") as f:
            for number, line in enumerate(f, 1):
                if line.strip():
                    yield index, line, f"line {number}"
                    index += 1
    except OSError as exc:
        raise ConfigError(f"cannot read {path}: {exc.strerror}", code="PM011") from None


def _parquet(path: Path, batch_rows: int) -> Iterator[tuple[int, Any, str | None]]:
    try:
        import pyarrow.parquet as pq
    except ImportError:
        raise ConfigError("reading Parquet needs pyarrow", code="PM010",
                          hint="pip install 'promptmill[parquet]'") from None
    try:
        file = pq.ParquetFile(path)
    except Exception as exc:  # pyarrow raises ArrowInvalid, OSError...
        raise ConfigError(f"{path} is not a Parquet file: {exc}", code="PM011") from None
    index = 0
    for batch in file.iter_batches(batch_size=batch_rows):
        for row in batch.to_pylist():
            yield index, row, None
            index += 1
