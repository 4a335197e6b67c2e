"""OpenAI Responses: `instructions`, `input` items in layout order, flat function `tools`, `text.format`.

    client.responses.create(**req.to_openai_responses())  # a role that declares `model:`
    client.responses.create(**req.to_openai_responses(model="gpt-5"))

`model` is the role's (`model:`) unless given; `max_output_tokens` is the
budget's `reserve` unless `max_tokens` is given (the API takes 16 or more: a
smaller limit is PM842).

The messages are the ones the budget was counted on, as on the chat wire: the
leading system message becomes `instructions`, every later message is an
`input` item `{"role", "content"}` in layout order (a system message after the
conversation has started stays a `system` item where it is; history turns are
items of their own). A role whose whole prompt is system text sends it as one
`system` input item instead, since a response needs input. With
`tool_mode: native` the kept tools go in `tools` in the Responses function
shape (`{"type": "function", "name", "description", "parameters", "strict":
false}`, flat; `strict` is sent because the Responses API makes functions
strict when it is left out, and a tool schema is sent as written); a
`return_call` contract adds its structured-return function. A `native`
contract sets `text: {"format": {"type": "json_schema", "name", "schema",
"strict"}}`, strict under the same rules as the chat wire (`schemaforms.py`).

Caching: OpenAI caches the longest repeated prefix automatically (from 1024
tokens); the stable sections come first. `prompt_cache_key` routes requests
with the same prefix to the same cache: `pm-<role id, cut to 40 characters>-<16
hex digits>` (at most 60 characters; the API takes 64), the digits a SHA-256 of
the role id and the role and text of the leading stable messages, so two
renders of one role with the same stable prefix share it, different roles (or a
changed prefix) do not. A role with `cache: false` sends none. No explicit
cache breakpoint is sent: the model table gives OpenAI models none.

Counting is the chat wire's (docs/providers.md, "Counting model"): the
instructions are one message at the head of the same token stream, the tools the
same `namespace functions` block, the schema the same JSON.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ..core.errors import ProviderError
from ..runtime.wire import BatchLimits
from ._tools import response_format
from .openai_chat import OpenAIChatWire

if TYPE_CHECKING:
    from ..runtime.request import PromptRequest

# OpenAI's API reference, "Create batch" (https://platform.openai.com/docs/api-reference/batch/create,
# also the openai SDK's `batches.create` docstring): `/v1/responses` is one of the endpoints a batch
# takes, and an input file "can contain up to 50,000 requests, and can be up to 200 MB in size",
# whatever the endpoint: the chat wire's limits
BATCH_URL = "/v1/responses"
MIN_OUTPUT_TOKENS = 16  # the API refuses a smaller max_output_tokens ("Expected a value >= 16")
# the API refuses a prompt_cache_key longer than 64 characters; a key is "pm-", at most 40
# characters of the role id (ASCII), "-" and 16 hex digits: at most 60
ROLE_IN_KEY = 40


def responses_tool(d: Mapping[str, Any]) -> dict:
    """One declaration in the Responses function shape (flat, `strict` always sent)."""
    out: dict[str, Any] = {"type": "function", "name": d["name"]}
    if d.get("description"):
        out["description"] = d["description"]
    out["parameters"] = d["parameters"]
    out["strict"] = False
    return out


def text_format(req: PromptRequest) -> dict:
    """`text.format` of a native contract: the chat wire's json_schema, flattened."""
    assert req.output is not None
    return {"format": {"type": "json_schema", **response_format(req.output)["json_schema"]}}


def prompt_cache_key(req: PromptRequest) -> str:
    """A key shared by the renders of one role with the same stable prefix (see the module doc)."""
    digest = hashlib.sha256(req.role.encode("utf-8"))
    for m in req.messages:
        if not m.stable:
            break
        digest.update(b"\0" + m.role.encode("utf-8") + b"\0" + m.content.encode("utf-8"))
    return f"pm-{req.role[:ROLE_IN_KEY]}-{digest.hexdigest()[:16]}"


class OpenAIResponsesWire(OpenAIChatWire):
    """The chat wire's layout and counting model, sent in the Responses API's shape."""

    name = "openai-responses"
    provider = "openai"
    batch_limits = BatchLimits(50_000, 200 * 1024 * 1024)  # see BATCH_URL
    metadata_field = "metadata"  # up to 16 string pairs on a response, as on a chat completion

    def render(self, req: PromptRequest, *, model: str | None = None, max_tokens: int | None = None) -> dict:
        """The keyword arguments of `responses.create` (`model` when known)."""
        model, max_tokens = self.reply_limits(req, model, max_tokens)
        if max_tokens is not None and max_tokens < MIN_OUTPUT_TOKENS:
            raise ProviderError(
                f"role '{req.role}': a reply limit of {max_tokens} tokens is below the {MIN_OUTPUT_TOKENS}"
                " the OpenAI Responses API accepts",
                code="PM842",
                hint=f"reserve at least {MIN_OUTPUT_TOKENS} tokens for the reply (budget.reserve), or pass max_tokens=",
            )
        messages = list(req.messages)
        out: dict = {"model": model} if model else {}
        if len(messages) > 1 and messages[0].role == "system":
            out["instructions"] = messages.pop(0).content
        out["input"] = [{"role": m.role, "content": m.content} for m in messages]
        if max_tokens:
            out["max_output_tokens"] = max_tokens
        decls = [*req.tools, *self.extra_tools(req.output, req.tool_mode)]
        if decls:
            out["tools"] = [responses_tool(d) for d in decls]
        if req.output is not None and req.output.style == "native":
            out["text"] = text_format(req)
        if req.cache:
            out["prompt_cache_key"] = prompt_cache_key(req)
        return out

    def batch_line(self, custom_id: str, payload: dict, model: str | None, max_tokens: int | None) -> dict:
        return {"custom_id": custom_id, "method": "POST", "url": BATCH_URL, "body": {"model": model, **payload}}


WIRE = OpenAIResponsesWire()
