"""Row streams: JSONL (one JSON object a line) or Parquet (with pyarrow), read lazily.

Items are `(index, row, where)`: the 0-based row position, the row (a JSONL
line as bytes, parsed by whoever renders it, or a dict from Parquet) and
where it came from (`line 7`), for the report. Blank JSONL lines are skipped;
a line longer than `max_row_bytes` is not read: its row is a
`lines.Unreadable` (PM812), as is a Parquet row with more bytes of text and
binary values, and a line that does not decode from the UTF-16/UTF-32 its
file's byte order mark names (PM870).
"""

from __future__ import annotations

import stat
from collections.abc import Iterator
from pathlib import Path
from typing import Any

# promptmill internals this module uses (kept together for the package move)
from ..core import userfiles
from ..core.errors import ConfigError
from .lines import MAX_LINE_BYTES, Unreadable, lines

JSONL = (".jsonl", ".ndjson", ".json")
PARQUET = (".parquet", ".pq")
PARQUET_BUFFER = 256 * 1024  # bytes read from a Parquet file at a time


def read_rows(path: str | Path, *, batch_rows: int = 64, max_row_bytes: int = MAX_LINE_BYTES) -> Iterator[tuple[int, Any, str | None]]:
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix not in JSONL + PARQUET:
        raise ConfigError(
            f"{path}: cannot tell the input format from '{suffix or path.name}'",
            code="PM010",
            hint="name the input .jsonl (one JSON object a line) or .parquet",
        )
    try:
        mode = path.stat().st_mode
    except OSError as exc:
        raise ConfigError(f"input {path}: {userfiles.reason(exc)}", code="PM011") from None
    if not stat.S_ISREG(mode):  # a FIFO would block the run, /dev/zero would never end
        raise ConfigError(
            f"input {path} is {userfiles.kind_of(mode)}; promptmill batch reads regular files only",
            code="PM011",
            hint="name a regular file",
        )
    if suffix in PARQUET:
        return _parquet(path, batch_rows, max_row_bytes)
    return _jsonl(path, max_row_bytes)


def _jsonl(path: Path, cap: int) -> Iterator[tuple[int, Any, str | None]]:
    index = 0
    try:
        with path.open("rb") as f:
            for number, line in lines(f, cap=cap):
                yield index, line, f"line {number}"
                index += 1
    except OSError as exc:
        raise ConfigError(f"cannot read {path}: {exc.strerror}", code="PM011") from None


def _parquet(path: Path, batch_rows: int, cap: int) -> Iterator[tuple[int, Any, str | None]]:
    """Rows `batch_rows` at a time, whatever the row groups: pages are read through a small buffer
    (`PARQUET_BUFFER`), never a whole column chunk at once (pyarrow's default, `pre_buffer`).
    A row whose text and binary columns hold more than `cap` bytes is an `Unreadable` (PM812),
    never made into Python objects or sent to a worker."""
    try:
        import pyarrow.parquet as pq
    except ImportError:
        raise ConfigError("reading Parquet needs pyarrow", code="PM010", hint="pip install 'promptmill[parquet]'") from None
    try:
        file = pq.ParquetFile(path, buffer_size=PARQUET_BUFFER, pre_buffer=False)
        groups = file.metadata.num_row_groups
    except Exception as exc:  # pyarrow raises ArrowInvalid, OSError...
        raise ConfigError(f"{path} is not a Parquet file: {exc}", code="PM011") from None
    index = 0
    with file:
        for group in range(groups):
            batches = file.iter_batches(batch_size=batch_rows, row_groups=[group])
            while True:
                try:
                    batch = next(batches, None)
                    rows = [] if batch is None else _rows(batch, cap)
                except Exception as exc:  # a corrupt page: OSError, ArrowInvalid...
                    first = sum(file.metadata.row_group(g).num_rows for g in range(group))
                    raise ConfigError(
                        f"{path}: row group {group} (from row {first}) cannot be read: {_first_line(exc)}",
                        code="PM011",
                        hint="the file is damaged; write it again from its source",
                    ) from None
                if batch is None:
                    break
                for row in rows:
                    yield index, row, None
                    index += 1


def _rows(batch: Any, cap: int) -> list:
    """The rows of a record batch as dicts; an `Unreadable` for a row over `cap` bytes of text and binary values."""
    if batch.nbytes <= cap:  # the usual case: no row can be over the cap
        return batch.to_pylist()
    import pyarrow as pa
    import pyarrow.compute as pc

    sizes = None
    for column in batch.columns:
        if (
            pa.types.is_string(column.type)
            or pa.types.is_large_string(column.type)
            or pa.types.is_binary(column.type)
            or pa.types.is_large_binary(column.type)
        ):
            lengths = pc.fill_null(pc.binary_length(column), 0).cast(pa.int64())
            sizes = lengths if sizes is None else pc.add(sizes, lengths)
    if sizes is None or pc.max(sizes).as_py() <= cap:
        return batch.to_pylist()
    return [
        Unreadable("PM812", f"the row holds {size:,} bytes of text, more than the limit of {cap:,} bytes; it was not read")
        if size > cap
        else batch.slice(i, 1).to_pylist()[0]
        for i, size in enumerate(sizes.to_pylist())
    ]


def _first_line(exc: Exception) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__
