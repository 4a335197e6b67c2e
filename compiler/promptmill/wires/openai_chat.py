"""OpenAI chat completions: `messages` in layout order, native `tools`, `response_format`.

    client.chat.completions.create(**req.to_openai())  # a role that declares `model:`
    client.chat.completions.create(**req.to_openai(model="gpt-4o"))

`model` is the role's (`model:`) unless given; `max_completion_tokens` is the
budget's `reserve` (the tokens kept for the reply) unless `max_tokens` is given.

Messages are the ones the budget was counted on (system first when the role
has a stable prefix; history turns as their own messages). With
`tool_mode: native` the kept tools go in `tools` in function format; a
`return_call` contract adds its structured-return function. A `native`
contract sets `response_format` to a json_schema, strict when the schema can be
expressed in strict mode (see `schemaforms.py`). OpenAI caches the
longest repeated prefix automatically; the stable sections come first.

Tools are counted as the model sees them: a TypeScript-like `namespace functions` block
(docs/providers.md, "Counting model").
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ..runtime.schemaforms import JSON_SCHEMA_STRICT
from ..runtime.wire import BatchLimits, Wire
from ._tools import compact, openai_function_text, openai_tool, response_format

if TYPE_CHECKING:
    from ..runtime.bundle import Contract
    from ..runtime.counting import Counter
    from ..runtime.request import PromptRequest

TOOLS_HEAD = "namespace functions {\n\n"
TOOLS_TAIL = "} // namespace functions"
TOOLS_OVERHEAD = 9
TOOLS_PAD = 1.2  # a safety margin for a format OpenAI does not publish (bench/bench_tool_estimates.py)
BATCH_URL = "/v1/chat/completions"


class OpenAIChatWire(Wire):
    name = "openai"
    provider = "openai"
    # <|start|>{role}<|message|>{content}<|end|> per message (3 markers + the role, one token for
    # system/user/assistant: OpenAI's cookbook counts 3 + the tokens of every value, role included),
    # plus <|start|>assistant<|message|> priming the reply (3 tokens).
    message_overhead = 4
    fixed_overhead = 3
    history_messages = True
    schema_form = JSON_SCHEMA_STRICT
    batch_limits = BatchLimits(50_000, 200 * 1024 * 1024)

    def tool_text(self, decl: Mapping[str, Any]) -> str:
        return openai_function_text(decl)

    def tool_item_cost(self, counter: Counter, text: str) -> int:
        return math.ceil(counter.count(text) * TOOLS_PAD)

    def tool_frame_cost(self, counter: Counter, forced: bool = False) -> int:
        return math.ceil((counter.count_parts([TOOLS_HEAD, TOOLS_TAIL]) + TOOLS_OVERHEAD) * TOOLS_PAD)

    def tool_cost(self, counter: Counter, decls: Sequence[Mapping[str, Any]], forced: bool = False) -> int:
        if not decls:
            return 0
        parts = [TOOLS_HEAD, *(openai_function_text(d) for d in decls), TOOLS_TAIL]
        return math.ceil((counter.count_parts(parts) + TOOLS_OVERHEAD) * TOOLS_PAD)

    def schema_cost(self, counter: Counter, contract: Contract) -> int:
        return math.ceil(counter.count(compact(response_format(contract)["json_schema"])) * TOOLS_PAD)

    def render(self, req: PromptRequest, *, model: str | None = None, max_tokens: int | None = None) -> dict:
        """The keyword arguments of `chat.completions.create` (`model` when known)."""
        model, max_tokens = self.reply_limits(req, model, max_tokens)
        out: dict = {"model": model} if model else {}
        out["messages"] = [{"role": m.role, "content": m.content} for m in req.messages]
        if max_tokens:
            out["max_completion_tokens"] = max_tokens
        decls = [*req.tools, *self.extra_tools(req.output, req.tool_mode)]
        if decls:
            out["tools"] = [openai_tool(d) for d in decls]
        if req.output is not None and req.output.style == "native":
            out["response_format"] = response_format(req.output)
        return out

    metadata_field = "metadata"  # up to 16 string pairs on a chat completion

    def batch_line(self, custom_id: str, payload: dict, model: str | None, max_tokens: int | None) -> dict:
        return {"custom_id": custom_id, "method": "POST", "url": BATCH_URL, "body": {"model": model, **payload}}

    def batch_payload(self, line: dict) -> dict:
        return line["body"]


WIRE = OpenAIChatWire()
