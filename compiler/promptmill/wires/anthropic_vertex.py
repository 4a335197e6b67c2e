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

from ..runtime.wire import BatchLimits
from .anthropic import AnthropicPlatformWire

VERSION = "vertex-2023-10-16"


class AnthropicVertexWire(AnthropicPlatformWire):
    name = "anthropic-vertex"
    provider = "google"
    anthropic_version = VERSION
    batch_limits: BatchLimits | None = None  # no batch format (module docstring)


WIRE = AnthropicVertexWire()
