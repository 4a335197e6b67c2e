"""Claude on Google Vertex AI: the Anthropic Messages body for `rawPredict`.

    body = req.to_anthropic_vertex()
    version = body.pop("anthropic_version")
    client = anthropic.AnthropicVertex(region="us-east5", project_id="my-project")
    client.messages.create(model="claude-sonnet-4-5@20250929", **body, extra_body={"anthropic_version": version})

The body is the Anthropic wire's (system blocks, turns, tools, cache breakpoints)
with `anthropic_version: "vertex-2023-10-16"`, the version Google's Vertex AI
documents for Claude, and without `model`: Vertex takes the model in the URL
(`.../publishers/anthropic/models/{model}:rawPredict`). The SDK's `messages.create`
has no `anthropic_version` argument, so it travels in `extra_body`; the bytes the
SDK sends are then this body (tests/test_vertex_sdk.py). Vertex model ids carry a
version after `@` (`claude-sonnet-4-5@20250929`); the model table's `claude-*`
patterns match them, so counting, ratios and breakpoint limits are the Claude rows'.
No batch format: Vertex batch prediction for Claude reads BigQuery tables or GCS
files through its own job API, which promptmill does not write.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .anthropic import AnthropicWire
from .base import BatchLimits

if TYPE_CHECKING:
    from ..request import PromptRequest

VERSION = "vertex-2023-10-16"


class AnthropicVertexWire(AnthropicWire):
    name = "anthropic-vertex"
    provider = "google"
    family = "anthropic"
    batch_limits: BatchLimits | None = None  # no batch format (module docstring)

    def render(self, req: PromptRequest, *, model: str | None = None, max_tokens: int | None = None) -> dict:
        """The `rawPredict` body: the Anthropic body with `anthropic_version`, the model left to the URL."""
        body = super().render(req, max_tokens=max_tokens)
        body.pop("model", None)
        return {"anthropic_version": VERSION, **body}


WIRE = AnthropicVertexWire()
