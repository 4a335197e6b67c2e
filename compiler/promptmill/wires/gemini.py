"""Gemini generateContent: `system_instruction`, `contents`, `tools`, `generation_config`.

The payload is the request body of the REST `generateContent` call (snake_case
field names, which the API accepts). For the google-genai SDK, `genai_kwargs`
moves everything but `contents` into `config`:

    client.models.generate_content(model="gemini-2.5-flash", **genai_kwargs(req.to_gemini()))
    client.models.generate_content(**genai_kwargs(req.to_gemini(), req.model))  # the role's `model:`

`generation_config.max_output_tokens` is the budget's `reserve` (the tokens kept
for the reply) unless `to_gemini(max_tokens=...)` says otherwise.

`system_instruction` holds the stable prefix and the rest as two parts; turns
use the roles `user` and `model`, consecutive messages of one role merged into
one turn of several parts. Gemini caches repeated prefixes implicitly, so the
stable parts come first. Native tools become `function_declarations` with
parameters converted to Gemini's Schema subset; a `native` contract sets
`response_mime_type: application/json` and `response_schema` (see
`schemaforms.py`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ..runtime.schemaforms import OPENAPI_SUBSET
from ..runtime.wire import BatchLimits
from ._chat import TurnsWire, split
from ._tools import compact, gemini_declaration, response_schema

if TYPE_CHECKING:
    from ..runtime.bundle import Contract
    from ..runtime.counting import Counter
    from ..runtime.request import PromptRequest

ROLES = {"user": "user", "assistant": "model"}
TOOLS_OVERHEAD = 10


class GeminiWire(TurnsWire):
    name = "gemini"
    provider = "google"
    schema_form = OPENAPI_SUBSET
    batch_limits: BatchLimits | None = BatchLimits(10**12, 2 * 1024 * 1024 * 1024)

    def tool_text(self, decl: Mapping[str, Any]) -> str:
        return compact(gemini_declaration(decl))

    def tool_frame_cost(self, counter: Counter, forced: bool = False) -> int:
        return TOOLS_OVERHEAD

    def schema_cost(self, counter: Counter, contract: Contract) -> int:
        return counter.count(compact(response_schema(contract)))

    def render(self, req: PromptRequest, *, model: str | None = None, max_tokens: int | None = None) -> dict:
        """The body of `models.generateContent` (`max_output_tokens`: the reply limit). The model
        goes in the URL, or to `genai_kwargs`."""
        max_tokens = self.reply_limits(req, None, max_tokens)[1]
        system, turns = split(req, "gemini")
        out: dict = {}
        if system:
            out["system_instruction"] = {"parts": [{"text": text} for text, _ in system]}
        out["contents"] = [{"role": ROLES[role], "parts": [{"text": text} for text, _ in parts]} for role, parts in turns]
        decls = [*req.tools, *self.extra_tools(req.output, req.tool_mode)]
        if decls:
            out["tools"] = [{"function_declarations": [gemini_declaration(d) for d in decls]}]
        generation: dict = {"max_output_tokens": max_tokens} if max_tokens else {}
        if req.output is not None and req.output.style == "native":
            generation.update({"response_mime_type": "application/json", "response_schema": response_schema(req.output)})
        if generation:
            out["generation_config"] = generation
        return out

    def batch_line(self, custom_id: str, payload: dict, model: str | None, max_tokens: int | None) -> dict:
        return {"key": custom_id, "request": payload}

    def batch_payload(self, line: dict) -> dict:
        return line["request"]


WIRE = GeminiWire()


def genai_kwargs(payload: dict, model: str | None = None) -> dict:
    """`generate_content` keyword arguments for the google-genai SDK: `contents` and `config`
    (and `model` when given: `genai_kwargs(req.to_gemini(), req.model)`)."""
    config = {k: v for k, v in payload.items() if k in ("system_instruction", "tools")}
    config.update(payload.get("generation_config", {}))
    out: dict = {"model": model} if model else {}
    out["contents"] = payload["contents"]
    if config:
        out["config"] = config
    return out
