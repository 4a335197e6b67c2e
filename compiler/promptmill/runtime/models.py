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

from ..core.errors import ConfigError, TokenizerError

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


# The largest context window or reply limit a row may give: 100M tokens. The largest windows published
# are 10M tokens (Meta's Llama 4 Scout; the shipped rows top out at 1,048,576 for Gemini), so this leaves
# tenfold room for growth while a typo of a few extra zeros, or 1e308, is refused before it reaches a
# budget; it is the `maximum` the project schema already gave `context_window` and `max_output_tokens`.
MAX_LIMIT_TOKENS = 100_000_000
# the longest model id taken: Bedrock's inference-profile ARNs are the longest real ones (about 100 characters)
MAX_MODEL_ID = 256


def limit_problem(value: object, what: str = "a limit") -> str | None:
    """Why `value` cannot be a context window or reply limit (a whole number of tokens, 1 to
    MAX_LIMIT_TOKENS), or None when it can."""
    if isinstance(value, bool) or not isinstance(value, int):
        return f"{what} is a whole number of tokens, not {type(value).__name__} {value!r}"
    if not 1 <= value <= MAX_LIMIT_TOKENS:
        return f"{what} of {value} tokens is outside 1-{MAX_LIMIT_TOKENS:,}"
    return None


def id_problem(model: object) -> str | None:
    """Why `model` cannot be a model id (it goes into request bodies as it is written), or None."""
    if not isinstance(model, str):
        return f"a model id is text, not {type(model).__name__}"
    if not model:
        return "a model id cannot be empty"
    if len(model) > MAX_MODEL_ID:
        return f"a model id is at most {MAX_MODEL_ID} characters; this one has {len(model)}"
    bad = next((ch for ch in model if ch.isspace() or not ch.isprintable()), None)
    if bad is not None:
        return f"model id {model!r} holds {_named(bad)}: a model id has no whitespace or control characters"
    return None


def _named(ch: str) -> str:
    names = {" ": "a space", "\n": "a newline", "\t": "a tab", "\r": "a carriage return"}
    return names.get(ch, f"the character U+{ord(ch):04X}")


def row_problems(row: Mapping[str, Any]) -> list[tuple[tuple[str, ...], str]]:
    """What is wrong with one model-table row beyond its schema, as (key path inside the row, why):
    a pattern with whitespace or a control character, a ratio outside RATIO_MIN-RATIO_MAX, a context
    window, reply limit or cache figure outside 1-MAX_LIMIT_TOKENS (cache figures: 0 allowed)."""
    out: list[tuple[tuple[str, ...], str]] = []
    pattern = row.get("pattern")
    problem = id_problem(pattern[:-1] if isinstance(pattern, str) and pattern.endswith("*") else pattern)
    if problem is not None:
        out.append((("pattern",), problem.replace("model id", "pattern", 1) if isinstance(pattern, str) else problem))
    counting = row.get("counting")
    if isinstance(counting, Mapping) and "ratio" in counting:
        problem = ratio_problem(counting["ratio"])
        if problem is not None:
            out.append((("counting", "ratio"), problem))
    for key, what in (("context_window", "a context window"), ("max_output_tokens", "a reply limit")):
        if key in row or key == "context_window":
            problem = limit_problem(row.get(key), what)
            if problem is not None:
                out.append(((key,), problem))
    cache = row.get("cache")
    if isinstance(cache, Mapping):
        for key in ("min_tokens", "breakpoints"):
            value = cache.get(key)
            if value is not None and (isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_LIMIT_TOKENS):
                out.append((("cache", key), f"cache.{key} is a whole number from 0 to {MAX_LIMIT_TOKENS:,}, not {value!r}"))
    return out


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

    def __init__(self, rows: Mapping[str, Mapping[str, Any]], origins: Mapping[str, str] | None = None, known: Iterable[str] = ()) -> None:
        self._rows = dict(rows)
        self._origins = dict(origins or {})
        self._known = tuple(known)  # concrete model ids the table's sources list (data/models.json `known_ids`)

    def with_rows(self, rows: Iterable[Mapping[str, Any]], origin: str = "project") -> ModelTable:
        """This table with `rows` (project rows) added; a row whose pattern exists replaces it."""
        merged, origins = dict(self._rows), dict(self._origins)
        for row in rows:
            merged[row["pattern"]] = row
            origins[row["pattern"]] = origin
        return ModelTable(merged, origins, self._known)

    @property
    def known_ids(self) -> frozenset[str]:
        """The concrete model ids the table knows: the shipped list, and every row that is an exact id."""
        return frozenset(self._known) | {p for p in self._rows if not p.endswith("*")}

    def near_miss(self, model: str) -> str | None:
        """A known model id `model` is likely a typo of (`claude-sonet-4-5` -> `claude-sonnet-4-5`), or None.

        None for a known id, and for an id that differs from known ones only in its digits (a version
        or date the table does not list: `claude-sonnet-4-6`, `gpt-6`): a new model, not a typo. Close
        is an edit distance of at most 2 (1 for ids of 5 characters or fewer)."""
        from ..core.suggest import edit_distance

        known = self.known_ids
        if model in known:
            return None
        shape = _shape(model)
        if any(_shape(k) == shape for k in known):
            return None
        limit = 1 if len(model) <= 5 else 2
        scored = sorted((edit_distance(model, k, limit), k) for k in known)
        best = scored[0] if scored else None
        return best[1] if best is not None and best[0] <= limit else None

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
        """`resolve`, or TokenizerError PM502 naming the nearest patterns; ConfigError PM010 when `model`
        is not a model id at all (whitespace, a control character: it would go into request bodies)."""
        problem = id_problem(model)
        if problem is not None:
            raise ConfigError(problem, code="PM010", hint="pass the id as the provider lists it (see `promptmill models`)")
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
    data = json.loads(resources.files("promptmill").joinpath("data", "models.json").read_bytes())
    return ModelTable({row["pattern"]: row for row in data["models"]}, known=data.get("known_ids", ()))


def _shape(model: str) -> str:
    """A model id with each run of digits as `#`: ids of one shape differ only in version or date."""
    return re.sub(r"\d+", "#", model)


def wire_family(wire: Any) -> str | None:
    """The model table's `provider` whose models `wire` sends requests to (`anthropic` for the
    anthropic, bedrock and Vertex wires of Claude), or None for a wire that names no model (text, live)."""
    for name in (wire.models, wire.provider):
        if name in PROVIDERS:
            return str(name)
    return None


def serving_problem(wire: Any, model: str | None, table: ModelTable | None = None) -> str | None:
    """Why `wire` cannot carry a request for `model` (its row is another provider's), or None: a wire
    of no provider (text, live), no model, or a model the table does not know are not refused."""
    family = wire_family(wire)
    info = None if family is None or not model else (table or default_table()).resolve(model)
    if info is None or info.provider == family:
        return None
    return (
        f"the {wire.name} wire sends requests to {family} models, and '{model}' is served by {info.provider} "
        f"(row {info.pattern}): its request body would name a model {wire.name} does not serve"
    )


def check_serves(wire: Any, model: str | None, table: ModelTable | None = None, *, option: str = "--model") -> None:
    """ConfigError PM010 when `wire` cannot carry a request for `model` (`serving_problem`): the one check
    `render` and `batch` share, so neither writes a body for a model its wire does not serve."""
    problem = serving_problem(wire, model, table)
    if problem is None:
        return
    info = (table or default_table()).resolve(model or "")
    own = info.default_wire if info is not None else ""
    raise ConfigError(
        problem,
        code="PM010",
        hint=f"render for {own}, the wire of its provider (--provider {own}), or pass {option} one of {wire_family(wire)}'s models",
    )


def resolve_model(model: str, table: ModelTable | None = None) -> ModelInfo | None:
    """The table's row for a model id (the shipped table unless given), or None."""
    return (table or default_table()).resolve(model)
