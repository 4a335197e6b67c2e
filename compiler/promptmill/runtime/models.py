"""The model table: what promptmill knows about each model family.

A row (see `data/models.json`) matches model ids by a pattern ending in `*` (a
prefix); the most specific pattern, the longest before its `*`, wins. A row
says which provider serves the model, how its tokens are counted (an encoding
promptmill ships, times a calibration `ratio` where the provider publishes no
tokenizer), its context window and reply limit, its prompt-cache rules and
whether it takes native structured output, and names its source. A project
adds or overrides rows (`models:` in promptmill.yaml; compile validates them
against the project schema); `ModelTable.with_rows` lays them over the
shipped table, a row with the same pattern replacing the shipped one.

Claude on Amazon Bedrock has ids of its own (`anthropic.claude-sonnet-4-5-20250929-v1:0`,
`us.anthropic.claude-opus-4-1-20250805-v1:0` through a cross-region inference
profile): `bedrock_claude` reads the Claude id inside one, so it finds the Claude row
(its `wire` is `bedrock`, where a render for it fits by default). Other Bedrock models
(`amazon.nova-*`, `meta.llama*`) have no row: they are PM502 unless a project adds one.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from functools import lru_cache
from importlib import resources
from typing import Any

from ..core.errors import TokenizerError

PROVIDERS = ("openai", "anthropic", "gemini")

# A calibration ratio (the model's tokens per token of the shipped encoding) outside these bounds is a typo or a
# broken measurement, not a tokenizer: the shipped rows' ratios are 1.2 and 1.53 (data/models.json names their
# sources), and a tenfold difference either way would mean a different unit, not a different vocabulary. The
# same bound (0 < ratio <= 10) stood in compose/budgets.py for promptmill.ratios.json; here it gains a floor
# so that 5e-324 cannot overflow a budget. One bound for model rows, promptmill.ratios.json and
# `promptmill counts --write`, so nothing writes what compile refuses.
RATIO_MIN = 0.1
RATIO_MAX = 10.0


def ratio_problem(value: object) -> str | None:
    """Why `value` cannot be a token ratio, or None when it can."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return f"a ratio is a number, not {type(value).__name__}"
    if not RATIO_MIN <= value <= RATIO_MAX:  # also refuses nan (every comparison is false) and the infinities
        return f"the ratio {value!r} is outside {RATIO_MIN}-{RATIO_MAX}"
    return None


# a Bedrock model id of Claude: an optional inference-profile region (`us.`, `eu.`, `apac.`, `us-gov.`,
# `global.`...), `anthropic.`, the Claude id, a version suffix (`-v1:0`, `-v2`); AWS lists them on
# https://docs.aws.amazon.com/bedrock/latest/userguide/models-supported.html and .../inference-profiles-support.html
_BEDROCK_CLAUDE = re.compile(r"(?:[a-z]{2,6}(?:-[a-z]{2,4})?\.)?anthropic\.(claude[^:]*?)(?:-v\d+(?::\d+)?)?")
# any Bedrock-style id `vendor.model` (an optional region first): said in the PM502 hint
_BEDROCK_ID = re.compile(
    r"(?:[a-z]{2,6}(?:-[a-z]{2,4})?\.)?(amazon|meta|mistral|cohere|ai21|deepseek|openai|qwen|writer|twelvelabs|stability)\.\S+"
)


def bedrock_claude(model: str) -> str | None:
    """The Claude model id inside a Bedrock model id (`us.anthropic.claude-opus-4-1-20250805-v1:0` ->
    `claude-opus-4-1-20250805`), or None when `model` is not a Bedrock id of Claude."""
    match = _BEDROCK_CLAUDE.fullmatch(model)
    return match.group(1) if match else None


@dataclass(frozen=True)
class ModelInfo:
    """One model as the table describes it (`model` is the id asked for, `pattern` the row that matched)."""

    model: str
    tokenizer: str  # the encoding that counts its tokens
    context_window: int
    estimate: bool  # True when the encoding is not the provider's own tokenizer
    pattern: str = ""
    provider: str = ""
    ratio: float = 1.0  # the provider's tokens per counted token (1 where the count is exact)
    max_output_tokens: int | None = None
    cache_min_tokens: int | None = None
    cache_breakpoints: int | None = None
    structured_output: bool = False
    source: str = ""
    origin: str = "promptmill"  # "promptmill" (shipped) or where the project row is
    wire: str = ""  # the wire a render for this id fits for unless one is given ("" : `provider`'s)

    @property
    def default_wire(self) -> str:
        """The wire a render for this model fits for unless one is given: its own (`bedrock` for a
        Bedrock id), else its provider's."""
        return self.wire or self.provider


def _prefix(pattern: str) -> str:
    return pattern[:-1] if pattern.endswith("*") else pattern


def _matches(pattern: str, model: str) -> bool:
    return model.startswith(pattern[:-1]) if pattern.endswith("*") else model == pattern


def _specificity(pattern: str) -> tuple[int, int]:
    return len(_prefix(pattern)), 0 if pattern.endswith("*") else 1  # an exact id beats a pattern of its length


class ModelTable:
    """Rows by pattern; immutable. `default_table()` is the shipped one."""

    def __init__(self, rows: Mapping[str, Mapping[str, Any]], origins: Mapping[str, str] | None = None) -> None:
        self._rows = dict(rows)
        self._origins = dict(origins or {})

    def with_rows(self, rows: Iterable[Mapping[str, Any]], origin: str = "project") -> ModelTable:
        """This table with `rows` (project rows) added; a row whose pattern exists replaces it."""
        merged, origins = dict(self._rows), dict(self._origins)
        for row in rows:
            merged[row["pattern"]] = row
            origins[row["pattern"]] = origin
        return ModelTable(merged, origins)

    @property
    def patterns(self) -> list[str]:
        return sorted(self._rows)

    def rows(self) -> list[ModelInfo]:
        """Every row, as the `ModelInfo` its pattern resolves to, by provider then pattern."""
        infos = [self._info(p, _prefix(p)) for p in self._rows]
        return sorted(infos, key=lambda i: (i.provider, i.pattern))

    def max_ratio(self, provider: str) -> float:
        """The largest ratio of `provider`'s rows (1 when it has none): the conservative count for a
        request to that provider that names none of its models."""
        return max((self._info(p, _prefix(p)).ratio for p, row in self._rows.items() if row.get("provider") == provider), default=1.0)

    def resolve(self, model: str) -> ModelInfo | None:
        """The row for `model` (the most specific matching pattern), or None. A Bedrock id of Claude
        that no row matches as it is gets the row of the Claude id inside it (`bedrock_claude`)."""
        best = max((p for p in self._rows if _matches(p, model)), key=_specificity, default=None)
        if best is None:
            claude = bedrock_claude(model)
            inner = None if claude is None else self.resolve(claude)
            return None if inner is None else replace(inner, model=model, wire="bedrock")
        return self._info(best, model)

    def lookup(self, model: str) -> ModelInfo:
        """`resolve`, or TokenizerError PM502 naming the nearest patterns."""
        info = self.resolve(model)
        if info is None:
            raise TokenizerError(f"unknown model '{model}': not in the model table", code="PM502", hint=self.hint(model))
        return info

    def hint(self, model: str) -> str:
        """'did you mean ...?' for an unknown model, else how to add it."""
        from ..core.suggest import ID_CUTOFF, did_you_mean, nearest

        close = nearest(model, [_prefix(p) for p in self._rows], n=2, cutoff=ID_CUTOFF)
        add = "add a row under `models:` in promptmill.yaml (see `promptmill models`)"
        if _BEDROCK_ID.fullmatch(model):
            return f"on Bedrock promptmill knows Claude (`anthropic.claude-*`) only; {add}"
        return f"{did_you_mean(p + '*' for p in close)} or {add}" if close else add

    def _info(self, pattern: str, model: str) -> ModelInfo:
        row = self._rows[pattern]
        counting = row.get("counting") or {}
        ratio = float(counting.get("ratio", 1.0))
        cache = row.get("cache") or {}
        return ModelInfo(
            model=model,
            tokenizer=counting.get("encoding", "o200k_base"),
            context_window=int(row["context_window"]),
            estimate=bool(counting.get("estimate", "ratio" in counting or row.get("provider") != "openai")),
            pattern=pattern,
            provider=row.get("provider", ""),
            ratio=ratio,
            max_output_tokens=row.get("max_output_tokens"),
            cache_min_tokens=cache.get("min_tokens"),
            cache_breakpoints=cache.get("breakpoints"),
            structured_output=bool(row.get("structured_output", False)),
            source=row.get("source", ""),
            origin=self._origins.get(pattern, "promptmill"),
        )


@lru_cache(maxsize=1)
def default_table() -> ModelTable:
    """The table shipped in `promptmill/data/models.json`."""
    raw = resources.files("promptmill").joinpath("data", "models.json").read_bytes()
    return ModelTable({row["pattern"]: row for row in json.loads(raw)["models"]})


def resolve_model(model: str, table: ModelTable | None = None) -> ModelInfo | None:
    """The table's row for a model id (the shipped table unless given), or None."""
    return (table or default_table()).resolve(model)
