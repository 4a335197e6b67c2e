"""OpenAI chat completions: `messages` in layout order, native `tools`, `response_format`.

    client.chat.completions.create(model="gpt-4o", **req.to_openai())

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


def render(req: PromptRequest) -> dict:
    """The keyword arguments of `chat.completions.create` (without `model`)."""
    out: dict = {"messages": [{"role": m.role, "content": m.content} for m in req.messages]}
    decls = [*req.tools, *extra_tools(req.output, "openai", req.tool_mode)]
    if decls:
        out["tools"] = [openai_tool(d) for d in decls]
    if req.output is not None and req.output.style == "native":
        out["response_format"] = response_format(req.output)
    return out
