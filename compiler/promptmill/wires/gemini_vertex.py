"""Gemini on Google Vertex AI: the `generateContent` body of the Vertex AI API.

    from google import genai
    client = genai.Client(vertexai=True, project="my-project", location="us-central1")
    client.models.generate_content(**genai_kwargs(req.to_gemini_vertex(), "gemini-2.5-flash"))

Vertex AI's `generateContent` takes the Gemini API's body (`contents`,
`system_instruction`, `tools`, `generation_config` with `response_schema`, the
same OpenAPI subset); the model goes in the URL
(`.../publishers/google/models/{model}:generateContent`). Vertex requires a
`role` on every content, which the Gemini wire already sends (`user`, `model`).
Caching is implicit, as on the Gemini API: the stable parts come first. No batch
format: Vertex batch prediction reads `{"request": {...}}` lines from Cloud
Storage or BigQuery through its own job API, and its output lines carry no key
(a result is matched by the request it echoes), which `batch collect` does not read.
"""

from __future__ import annotations

from ..runtime.wire import BatchLimits
from .gemini import GeminiWire


class GeminiVertexWire(GeminiWire):
    name = "gemini-vertex"
    family = "gemini"
    batch_limits: BatchLimits | None = None  # no batch format (module docstring)


WIRE = GeminiVertexWire()
