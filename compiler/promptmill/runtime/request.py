"""PromptRequest: one fitted prompt, ready to render for its wire.

Parts are kept apart by stability (`parts`): stable sections (system
instruction, tool declarations: the cacheable prefix), semi-stable ones
(context summary, memory) and dynamic ones (history, current input, runtime
context, attachment metadata). `messages` is the exact layout the budget was
counted on for its wire (`provider` names it, `wire` is it), `tools` the native tool
declarations sent beside it; `to_payload()` and the `to_<wire>()` methods turn it into a
plain dict for the provider's SDK through the wire. `parse_reply()` checks a model reply
against the output contract. `explain()` says what was kept and trimmed, and why.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Mapping
from dataclasses import MISSING, dataclass, field, fields
from functools import cached_property
from typing import Any

from ..core.errors import ProviderError
from .bundle import Contract
from .registry import EXPLAIN, PARSE_REPLY, Renderer, find_wire, handover


@dataclass(frozen=True)
class RenderedSection:
    """What happened to one section in a render."""

    id: str
    kind: str
    status: str  # kept | trimmed | truncated | dropped | empty | skipped
    reason: str
    text: str  # as placed: title line and body; "" when not present
    message: str
    stability: str
    priority: int
    trim: str
    items_total: int | None = None
    items_kept: tuple[int, ...] = ()  # indices into the state list, in prompt order
    items_dropped: tuple[int, ...] = ()
    items_counted: int = 0  # items rendered and counted (the rest were dropped uncounted)
    fragment: str | None = None
    origin: str | None = None
    _count: Any = field(default=None, repr=False, compare=False)  # counts `text` on demand

    @classmethod
    def create(cls, fixed: Mapping[str, Any], **fields: Any) -> RenderedSection:
        """Build a RenderedSection from the section's fixed fields and this render's, without the
        dataclass `__init__` and its per-field `object.__setattr__` calls (hot path: one per section)."""
        obj = cls.__new__(cls)
        values = dict(_SECTION_DEFAULTS)
        values.update(fixed)
        values.update(fields)
        if len(values) != len(_SECTION_FIELDS):
            raise TypeError(f"RenderedSection.create: missing {sorted(_SECTION_FIELDS.difference(values))}")
        obj.__dict__.update(values)
        return obj

    @cached_property
    def tokens(self) -> int:
        """Tokens of `text` on its own (the prompt total also counts joins and overhead)."""
        return self._count(self.text) if self._count is not None and self.present else 0

    def as_dict(self) -> dict:
        out = {f.name: getattr(self, f.name) for f in fields(self) if not f.name.startswith("_")}
        out["tokens"] = self.tokens
        return out

    @property
    def present(self) -> bool:
        return self.status in ("kept", "trimmed", "truncated")

    @property
    def stable(self) -> bool:
        return self.stability == "stable"


_SECTION_FIELDS = frozenset(f.name for f in fields(RenderedSection))
_SECTION_DEFAULTS = {f.name: f.default for f in fields(RenderedSection) if f.default is not MISSING}


@dataclass(frozen=True)
class Message:
    """One message of the request as counted (for `text`, the whole prompt)."""

    role: str  # system | user | assistant | text
    content: str
    tokens: int  # tokens of content (overhead not included)
    sections: tuple[str, ...] = ()
    stable: bool = False  # every section in it is stable: a cacheable prefix
    turn: bool = False  # a history turn


# wire -> the `gen_ai.provider.name` OpenTelemetry's GenAI semantic conventions give its provider
_OTEL_PROVIDERS = {"openai": "openai", "anthropic": "anthropic", "gemini": "gcp.gemini"}
_OTEL_PROVIDERS["openai-responses"] = "openai"
_OTEL_PROVIDERS.update({"bedrock": "aws.bedrock", "anthropic-bedrock": "aws.bedrock"})
_OTEL_PROVIDERS.update({"anthropic-vertex": "gcp.vertex_ai", "gemini-vertex": "gcp.vertex_ai"})  # Vertex AI serves both


@dataclass(frozen=True)
class PromptRequest:
    role: str
    provider: str
    tokenizer: str
    exact: bool  # False when counts are estimates (approx tokenizer, or a provider whose tokenizer differs)
    tokens: int  # total on the wire for `provider`, counted exactly with the tokenizer
    budget: int  # tokens the prompt may use
    max_tokens: int
    reserve: int
    margin_tokens: int
    budget_origins: Mapping[str, str]
    separator: str
    sections: tuple[RenderedSection, ...]
    messages: tuple[Message, ...]
    tools: tuple[dict, ...] = ()  # native declarations {name, description, parameters} (tool_mode native, chat wires)
    tool_mode: str = "inline"
    cache: bool = True
    output: Contract | None = None
    events: tuple[dict, ...] = ()
    state: Any = field(default=None, repr=False, compare=False)
    model: str | None = None  # the model rendered for (`render(model=...)`, else the role's `model:`), sent in payloads
    ratio: float = 1.0  # the model's tokens per counted token where its provider publishes no tokenizer (1: exact count)
    model_budget: int | None = None  # with a ratio: the budget in the model's tokens, which `budget` is this divided by
    ratio_for: str | None = None  # whose ratio: a model id, or `any <provider> model` when the render names none of its
    source_hash: str = ""  # the role's source hash (its bundle's): which version of the prompt this is
    cache_breakpoints: int | None = None  # explicit cache breakpoints the model takes (its row's `cache.breakpoints`; None: unknown)

    @property
    def trace_attributes(self) -> dict[str, Any]:
        """Which prompt made this request, as span attributes: OpenTelemetry GenAI semantic conventions
        where they have a name (`gen_ai.provider.name`, `gen_ai.request.model`, `gen_ai.request.max_tokens`),
        `promptmill.*` for the rest. Values are strings, numbers, booleans or lists of strings."""
        from ..core.version import __version__

        out: dict[str, Any] = {}
        provider = _OTEL_PROVIDERS.get(self.provider)
        if provider:
            out["gen_ai.provider.name"] = provider
        if self.model:
            out["gen_ai.request.model"] = self.model
        if self.reserve > 0:
            out["gen_ai.request.max_tokens"] = self.reserve
        out.update(
            {
                "promptmill.role.id": self.role,
                "promptmill.role.source_hash": self.source_hash,
                "promptmill.version": __version__,
                "promptmill.wire": self.provider,
                "promptmill.budget": self.budget,
                "promptmill.tokens": self.tokens,
                "promptmill.tokens.estimated": self.estimated_tokens,
                "promptmill.tokens.exact": self.exact,
                "promptmill.ratio": self.ratio,
                "promptmill.sections.dropped": [s.id for s in self.sections if s.status == "dropped"],
                "promptmill.sections.trimmed": [s.id for s in self.sections if s.status in ("trimmed", "truncated")],
            }
        )
        return out

    @property
    def estimated_tokens(self) -> int:
        """`tokens` in the model's own tokens: the count times `ratio`, rounded up (equal to `tokens` when exact)."""
        return self.tokens if self.ratio == 1 else math.ceil(self.tokens * self.ratio)

    @property
    def count_note(self) -> str:
        """How the counts relate to the provider's: `exact`, `estimate`, or `estimated, ratio R for MODEL`."""
        if self.ratio != 1:
            return f"estimated, ratio {self.ratio:g} for {self.ratio_for or self.model or self.provider}"
        return "exact" if self.exact else "estimate"

    @property
    def wire(self) -> Renderer:
        """The wire this request was fitted for: `provider` is its name (not a field, so the
        request's data, its JSON and its pickle are what they were)."""
        return find_wire(self.provider)

    @property
    def text(self) -> str:
        """The prompt as one text: present sections in order, joined by the separator."""
        return self.separator.join(s.text for s in self.sections if s.present and s.text)

    @property
    def parts(self) -> dict[str, tuple[RenderedSection, ...]]:
        """Present sections by stability: `stable`, `semi` and `dynamic` (native tools sit in
        `tools`, which is stable when its section is)."""
        out: dict[str, tuple[RenderedSection, ...]] = {}
        for key in ("stable", "semi", "dynamic"):
            out[key] = tuple(s for s in self.sections if s.present and s.stability == key)
        return out

    @property
    def system(self) -> str:
        return self.separator.join(m.content for m in self.messages if m.role == "system")

    def section(self, section_id: str) -> RenderedSection:
        for s in self.sections:
            if s.id == section_id:
                return s
        raise KeyError(section_id)

    def _check_provider(self, name: str) -> None:
        if name != self.provider and not (name in ("text", "live") and self.provider in ("text", "live")):
            raise ProviderError(
                f"this request was fitted for provider '{self.provider}', not '{name}': its token count would not hold",
                code="PM841",
                hint=f"render again with provider='{name}'",
            )

    def _render_as(self, name: str, model: str | None = None, max_tokens: int | None = None) -> dict:
        self._check_provider(name)
        return find_wire(name).render(self, model=model, max_tokens=max_tokens)

    def to_payload(self) -> dict:
        """The request for the wire it was fitted for."""
        return self.wire.render(self)

    def to_text(self) -> dict:
        """`{"prompt": str}`: the prompt as one string."""
        return self._render_as("text")

    def to_live(self) -> dict:
        """`{"instructions": str}`: one flat instruction string for live/voice sessions."""
        return self._render_as("live")

    def to_openai(self, *, model: str | None = None, max_tokens: int | None = None) -> dict:
        """keyword arguments of OpenAI `chat.completions.create`: with the role's `model` (when it
        declares one) and reply limit (`max_completion_tokens`, the budget's reserve); both overridable."""
        return self._render_as("openai", model, max_tokens)

    def to_anthropic(self, *, model: str | None = None, max_tokens: int | None = None) -> dict:
        """keyword arguments of Anthropic `messages.create`: with the role's `model` (when it
        declares one) and `max_tokens` (the budget's reserve); both overridable."""
        return self._render_as("anthropic", model, max_tokens)

    def to_openai_responses(self, *, model: str | None = None, max_tokens: int | None = None) -> dict:
        """keyword arguments of OpenAI `responses.create`: `instructions`, `input` items, with the role's
        `model` (when it declares one) and reply limit (`max_output_tokens`, the budget's reserve); both overridable."""
        return self._render_as("openai-responses", model, max_tokens)

    def to_gemini(self, *, max_tokens: int | None = None) -> dict:
        """the Gemini `generateContent` body, with the reply limit (`max_output_tokens`, the budget's
        reserve; overridable). The model goes in the URL, or to `promptmill.genai_kwargs`."""
        return self._render_as("gemini", None, max_tokens)

    def to_bedrock(self, *, model: str | None = None, max_tokens: int | None = None) -> dict:
        """keyword arguments of boto3 `bedrock-runtime` `converse`: `modelId` (the role's `model`, when
        it declares one), `inferenceConfig.maxTokens` (the budget's reserve); both overridable."""
        return self._render_as("bedrock", model, max_tokens)

    def to_anthropic_bedrock(self, *, max_tokens: int | None = None) -> dict:
        """the InvokeModel body of Claude on Bedrock: the Anthropic Messages body with
        `anthropic_version: bedrock-2023-05-31` and no `model` (Bedrock names it in the URL)."""
        return self._render_as("anthropic-bedrock", None, max_tokens)

    def to_anthropic_vertex(self, *, max_tokens: int | None = None) -> dict:
        """the body of Claude's `rawPredict` on Vertex AI: the Anthropic body with `anthropic_version`
        and without `model` (it goes in the URL); `max_tokens` the budget's reserve, overridable."""
        return self._render_as("anthropic-vertex", None, max_tokens)

    def to_gemini_vertex(self, *, max_tokens: int | None = None) -> dict:
        """the `generateContent` body of Gemini on Vertex AI (as `to_gemini()`; the model goes in the URL)."""
        return self._render_as("gemini-vertex", None, max_tokens)

    def parse_reply(self, reply: str | Mapping[str, Any] | list, *, state: Mapping[str, Any] | None = None) -> Any:
        """Data of a model reply checked against the role's output contract (see promptmill.replies.parse).

        `reply` is the reply text, or the arguments of a structured-return tool call as a
        dict (Anthropic `tool_use.input`) or JSON text (OpenAI `tool_call.function.arguments`).
        Raises `ReplyError` (PM860-PM864) with `repair_message()` for the model."""
        return handover(PARSE_REPLY)(self, reply, state=state)

    def explain(self) -> str:
        """A human-readable account of the render: totals, then one line per section."""
        return handover(EXPLAIN)(self)

    def report(self) -> str:
        """Deprecated alias of `explain()` (removed in the next release)."""
        warnings.warn("PromptRequest.report() is deprecated; use explain()", DeprecationWarning, stacklevel=2)
        return handover(EXPLAIN)(self)
