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
expressed in strict mode (see `promptmill.runtime.schemaconv`). OpenAI caches the
longest repeated prefix automatically; the stable sections come first.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..tooldecl import extra_tools, openai_tool, response_format

if TYPE_CHECKING:  # annotations only: request.py imports this module, not the other way
    from ..request import PromptRequest


def render(req: PromptRequest, model: str | None = None, max_tokens: int | None = None) -> dict:
    """The keyword arguments of `chat.completions.create` (`model` when known)."""
    out: dict = {"model": model} if model else {}
    out["messages"] = [{"role": m.role, "content": m.content} for m in req.messages]
    if max_tokens:
        out["max_completion_tokens"] = max_tokens
    decls = [*req.tools, *extra_tools(req.output, "openai", req.tool_mode)]
    if decls:
        out["tools"] = [openai_tool(d) for d in decls]
    if req.output is not None and req.output.style == "native":
        out["response_format"] = response_format(req.output)
    return out
