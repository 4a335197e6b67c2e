"""`BatchRenderer`: renders rows to provider batch requests; small to pickle, loads once per process.

    renderer = BatchRenderer("build", "executor", provider="openai", id_column="id")
    result = renderer.render_row(0, {"id": "a1", "task_state": ..., "subtask": ...})
    result.line        # the batch input line (bytes), None when the row failed
    result.code        # None, or the PM code a single render raises for this state

A pickle holds only the options and the build's path (`Runtime` pickles by
reloading its build), never tiktoken's tables: a worker process, a Ray actor
or a Spark executor loads the build once, offline, on first use. Called on a
batch (`renderer(batch)`, what Ray Data's `map_batches` does) it takes a
pandas DataFrame or a pyarrow Table and returns the same kind with the columns
of `OUTPUT_COLUMNS`.
"""

from __future__ import annotations

import contextlib
import json
import os
import time
from collections.abc import Iterable, Iterator, Mapping
from json.encoder import encode_basestring
from typing import Any, NamedTuple

# promptmill internals this module uses (kept together for the package move)
from ..core.errors import ConfigError, PromptmillError
from ..runtime.engine import Runtime
from ..runtime.models import check_serves
from ..runtime.wire import get_wire
from . import formats, ids
from .lines import Unreadable

OUTPUT_COLUMNS = ("custom_id", "ok", "code", "message", "tokens", "payload", "request")


class RowError(PromptmillError):
    """A row that cannot become a batch request (PM870), or whose custom id cannot be used (PM871)."""

    code = "PM870"


class RowResult(NamedTuple):
    """What became of one row."""

    index: int  # type: ignore[assignment]  # position in the input, 0-based (shadows tuple.index on purpose)
    id: str | None
    ok: bool
    code: str | None
    message: str | None
    tokens: int | None
    budget: int | None
    dropped: tuple[str, ...]  # sections left out to fit the budget
    trimmed: tuple[str, ...]  # sections cut down (items dropped, text truncated)
    line: bytes | None  # the provider's batch input line, newline included
    seconds: float
    where: str | None = None  # where the row came from (`line 7` of a JSONL file)

    def unwrap(self) -> bytes:
        """The request line; the row's error (with its PM code) when it failed."""
        if not self.ok:
            prefix = f"row {self.index}" + (f" ({self.where})" if self.where else "")
            raise PromptmillError(f"{prefix}: {self.message}", code=self.code)
        assert self.line is not None  # a row that rendered has its line
        return self.line

    def failed(self, code: str, message: str) -> RowResult:
        return self._replace(ok=False, code=code, message=message, line=None)

    def report(self) -> dict:
        """The row's line in report.jsonl, as data (`report_line` is its bytes)."""
        out: dict[str, Any] = {"id": self.id, "row": self.index}
        if self.where:
            out["where"] = self.where
        out.update(
            ok=self.ok,
            code=self.code,
            message=self.message,
            tokens=self.tokens,
            budget=self.budget,
            dropped=list(self.dropped),
            trimmed=list(self.trimmed),
        )
        return out

    def report_line(self) -> bytes:
        """The row's line in report.jsonl: `formats.dumps(self.report())`'s bytes, built as text in one go
        (no dict, no encoder made per row). Fields of another type than a row result holds go the dict's way;
        text that UTF-8 cannot hold (a lone surrogate in an id) is written as a JSON escape."""
        try:
            text = (
                f'{{"id":{_text(self.id)},"row":{_int(self.index)},'
                + (f'"where":{_text(self.where)},' if self.where else "")
                + f'"ok":{_bool(self.ok)},"code":{_text(self.code)},"message":{_text(self.message)},'
                f'"tokens":{_int(self.tokens)},"budget":{_int(self.budget)},'
                f'"dropped":{_texts(self.dropped)},"trimmed":{_texts(self.trimmed)}}}\n'
            )
            return text.encode("utf-8")
        except (TypeError, UnicodeEncodeError):
            data = self.report()
            try:
                return formats.dumps(data)
            except UnicodeEncodeError:
                return (json.dumps(data, separators=(",", ":")) + "\n").encode("ascii")


# JSON of the values a RowResult holds, as `json.dumps(..., ensure_ascii=False)` writes them; TypeError for any other value
def _text(value: str | None) -> str:
    if value is None:
        return "null"
    if type(value) is not str:
        raise TypeError(value)
    return encode_basestring(value)


def _int(value: int | None) -> str:
    if value is None:
        return "null"
    if type(value) is not int:
        raise TypeError(value)
    return str(value)


def _bool(value: bool) -> str:
    if value is True:
        return "true"
    if value is False:
        return "false"
    raise TypeError(value)


def _texts(values: tuple[str, ...]) -> str:
    if type(values) is not tuple:
        raise TypeError(values)
    return "[" + ",".join([_text(v) for v in values]) + "]"


class BatchRenderer:
    """Renders rows of one role for one provider's batch API; picklable, small."""

    def __init__(
        self,
        build: Any = "build",
        role: str = "",
        *,
        provider: str | None = None,
        model: str | None = None,
        budget: int | None = None,
        id_column: str | None = None,
        state_column: str | None = None,
        max_tokens: int | None = None,
        runtime: Runtime | None = None,
    ):
        if provider is not None and provider not in formats.PROVIDERS:
            raise ConfigError(f"unknown batch provider '{provider}'; expected one of: {', '.join(formats.PROVIDERS)}", code="PM840")
        self._runtime = runtime
        # absolute: Ray actors and Spark executors do not run in this working folder
        self.build = os.path.abspath(build) if runtime is None else None
        self.role = role
        self.budget = budget
        self.id_column = id_column
        self.state_column = state_column
        self.max_tokens = max_tokens
        bundle = self.runtime.bundle(role)  # PM802 now, not on the first row
        info = None if model is None else self.runtime.models.lookup(model)  # PM502 now, with "did you mean"
        if provider is None and info is not None and info.default_wire in formats.PROVIDERS:
            provider = info.default_wire
        if provider is None and bundle.provider and bundle.provider not in formats.PROVIDERS:
            # never a silent switch of wire: the role is written for one that has no batch files
            raise ConfigError(
                f"role '{role}' is rendered for {bundle.provider}, which has no batch file format",
                code="PM840",
                hint="pass --provider, one of: " + ", ".join(formats.PROVIDERS),
            )
        self.provider = provider or bundle.provider or "openai"
        self.render_model = model  # rows are fitted for it: its encoding, ratio, window and reply limit
        self.model = model or bundle.model
        if self.provider in ("openai", "anthropic", "openai-responses") and not self.model:
            raise ConfigError(
                f"role '{role}' names no model, and a {self.provider} batch request needs one",
                code="PM010",
                hint="pass --model (model= in Python)",
            )
        get_wire(self.provider).batch_check(self.model)
        check_serves(get_wire(self.provider), self.model, self.runtime.models)  # the check `render` makes too
        if self.provider in ("anthropic", "bedrock") and bundle.budget.reserve <= 0 and not max_tokens:
            raise ConfigError(
                f"role '{role}' reserves no tokens for the reply, and Anthropic requires max_tokens",
                code="PM010",
                hint="pass --max-tokens (max_tokens= in Python)",
            )

    # -- pickling: options and the build, never the loaded runtime's caches
    def __getstate__(self) -> dict:
        state = dict(self.__dict__)
        state["_runtime"] = self._runtime if self.build is None else None
        return state

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)

    @property
    def runtime(self) -> Runtime:
        if self._runtime is None:
            assert self.build is not None, "a BatchRenderer made from a runtime keeps it"
            self._runtime = Runtime.load(self.build)
        return self._runtime

    def warm(self) -> None:
        """Load the build, prepare the role and build its tokenizer's tables in this process (`Runtime.warm`);
        a pool that forks its workers from here (`pool.ordered_results`) then starts each with them. A role or
        tokenizer that cannot load is left to the rows, which each report it, as they would in a spawned worker."""
        with contextlib.suppress(PromptmillError):
            self.runtime.warm(self.role, model=self.render_model)

    @property
    def limits(self) -> formats.BatchLimits:
        return formats.LIMITS[self.provider]

    # -- one row
    def state_of(self, row: Mapping[str, Any]) -> Mapping[str, Any]:
        if self.state_column is None:
            if self.id_column is not None and self.id_column in row:
                return {k: v for k, v in row.items() if k != self.id_column}
            return row
        if self.state_column not in row:
            raise RowError(f"row has no column '{self.state_column}' (--state-column)")
        state = row[self.state_column]
        if isinstance(state, str | bytes):
            try:
                state = json.loads(state)
            except ValueError as exc:
                raise RowError(f"column '{self.state_column}' is not JSON: {exc}") from None
        if not isinstance(state, Mapping):
            raise RowError(f"column '{self.state_column}' must hold a JSON object, got {type(state).__name__}")
        return state

    def id_of(self, index: int, row: Mapping[str, Any]) -> str:
        if self.id_column is None:
            return ids.generated(index)
        if self.id_column not in row or row[self.id_column] is None:
            raise RowError(f"row has no id in column '{self.id_column}' (--id-column)", code="PM871")
        value = row[self.id_column]
        problem = ids.problem(value)
        if problem:
            raise RowError(problem, code="PM871")
        return str(value)

    def render_row(self, index: int, row: Any, where: str | None = None) -> RowResult:
        """Render one row (a mapping, or one JSONL line as bytes or text)."""
        return self._render_row(index, row, where)[0]

    def _render_row(self, index: int, row: Any, where: str | None) -> tuple[RowResult, dict | None]:
        """The row's result and its batch line as data (None when it failed), which `records` serialises
        its payload column from instead of parsing the line back."""
        start = time.perf_counter()
        custom_id = ids.generated(index) if self.id_column is None and index >= 0 else None
        try:
            if isinstance(row, Unreadable):
                raise RowError(row.message, code=row.code)
            parsed = isinstance(row, bytes | str)
            if parsed:
                try:
                    row = json.loads(row)
                except ValueError as exc:
                    raise RowError(f"not a JSON object: {_json_problem(row, exc)}") from None
            if not isinstance(row, Mapping):
                raise RowError(f"a row must be a JSON object, got {type(row).__name__}")
            try:
                custom_id = self.id_of(index, row)
            except RowError:
                if self.id_column is not None and isinstance(row.get(self.id_column), str | int):
                    custom_id = str(row[self.id_column])[:200]
                raise
            if parsed and self.state_column is None and self.id_column is not None and isinstance(row, dict):
                row.pop(self.id_column, None)  # a dict of our own: the state is the row without its id, not a copy of it
                state: Mapping[str, Any] = row
            else:
                state = self.state_of(row)
            req = self.runtime.render(self.role, state, budget=self.budget, provider=self.provider, model=self.render_model)
            wire = get_wire(req.provider)
            payload = wire.batch_body(req, self.model)
            field = wire.metadata_field
            if field is not None:  # which prompt made this line, for tracing a batch result back to it
                payload = {**payload, field: {"promptmill_role": req.role, "promptmill_source_hash": req.source_hash}}
            data = formats.line(self.provider, custom_id, payload, self.model, self.max_tokens)
            line = formats.dumps(data)
        except PromptmillError as exc:
            failed = RowResult(index, custom_id, False, exc.code, exc.message, None, None, (), (), None, time.perf_counter() - start, where)
            return failed, None
        except RecursionError:
            return RowResult(
                index,
                custom_id,
                False,
                "PM812",
                "the row is nested too deeply to read",
                None,
                None,
                (),
                (),
                None,
                time.perf_counter() - start,
                where,
            ), None
        dropped: list[str] = []
        trimmed: list[str] = []
        for section in req.sections:  # one pass for both
            if section.status == "dropped":
                dropped.append(section.id)
            elif section.status in ("trimmed", "truncated"):
                trimmed.append(section.id)
        return RowResult(
            index,
            custom_id,
            True,
            None,
            None,
            req.tokens,
            req.budget,
            tuple(dropped),
            tuple(trimmed),
            line,
            time.perf_counter() - start,
            where,
        ), data

    def render_chunk(self, chunk: Iterable[tuple[int, Any, str | None]]) -> list[RowResult]:
        return [self.render_row(index, row, where) for index, row, where in chunk]

    # -- a batch of rows (Ray Data map_batches, Spark mapInArrow/mapInPandas)
    def records(self, rows: Iterable[Mapping[str, Any]]) -> Iterator[dict]:
        """One output record (`OUTPUT_COLUMNS`) for each row; ids come from `id_column`."""
        if self.id_column is None:
            raise ConfigError(
                "rendering on Ray or Spark needs id_column: their rows have no stable global position to number",
                code="PM010",
                hint="add an id column to the dataset and pass id_column=",
            )
        for row in rows:
            r, data = self._render_row(-1, row, None)
            payload = None
            if r.ok and data is not None:  # the payload from the line's data: the line is not parsed back
                payload = json.dumps(formats.payload_of(self.provider, data), ensure_ascii=False, separators=(",", ":"))
            yield {
                "custom_id": r.id,
                "ok": r.ok,
                "code": r.code,
                "message": r.message,
                "tokens": r.tokens,
                "payload": payload,
                "request": None if r.line is None else r.line.decode("utf-8").rstrip("\n"),
            }

    def __call__(self, batch: Any) -> Any:
        """Render a batch: a pyarrow Table -> a pyarrow Table, a pandas DataFrame -> a DataFrame."""
        import pyarrow as pa

        from .arrow import OUTPUT_SCHEMA

        if isinstance(batch, pa.Table | pa.RecordBatch):
            return pa.Table.from_pylist(list(self.records(batch.to_pylist())), schema=OUTPUT_SCHEMA)
        import pandas as pd

        if isinstance(batch, pd.DataFrame):
            rows = pa.Table.from_pandas(batch, preserve_index=False).to_pylist()
            return pa.Table.from_pylist(list(self.records(rows)), schema=OUTPUT_SCHEMA).to_pandas()
        raise TypeError(f"a batch is a pyarrow Table or a pandas DataFrame, not {type(batch).__name__}")


def render_rows(
    rows: Iterable[Any],
    role: str,
    *,
    build: Any = "build",
    workers: int = 1,
    chunk: int = 64,
    **options: Any,
) -> Iterator[RowResult]:
    """Render `rows` (mappings, or JSONL lines) in order; one `RowResult` per row.

    `options` are `BatchRenderer`'s (provider, model, budget, id_column,
    state_column, max_tokens, runtime). With `workers` > 1 rows render in that
    many processes; results come back in input order either way.
    """
    renderer = BatchRenderer(build, role, **options)
    items = ((i, row, None) for i, row in enumerate(rows))
    return render_items(renderer, items, workers=workers, chunk=chunk)


def render_items(
    renderer: BatchRenderer, items: Iterable[tuple[int, Any, str | None]], *, workers: int = 1, chunk: int = 64
) -> Iterator[RowResult]:
    """`(index, row, where)` items -> results in input order, a repeated custom id failed (PM871)."""
    from .pool import ordered_results

    seen = ids.Seen() if renderer.id_column is not None else None
    for result in ordered_results(renderer, items, workers=workers, chunk=chunk):
        if seen is not None and result.ok:
            before = seen.first(result.id, result.index)
            if before is not None:
                result = result.failed("PM871", f"custom id {result.id!r} is already used by row {before}")
        yield result


def _json_problem(row: bytes | str, exc: ValueError) -> str:
    """Why a JSONL line is not JSON, with the position counted in the line as the file shows it:
    the line's own newline, still on it, made a cut row's error 'line 2 column 1'."""
    cut: bytes | str = row.rstrip(b"\r\n") if isinstance(row, bytes) else row.rstrip("\r\n")
    if len(cut) == len(row):
        return str(exc)
    try:
        json.loads(cut)
    except ValueError as again:
        return str(again)
    return str(exc)
