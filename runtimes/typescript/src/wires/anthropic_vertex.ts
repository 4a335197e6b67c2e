// Claude on Google Vertex AI (Python: wires/anthropic_vertex.py): the `anthropic` wire's body
// (renderAnthropicPlatform in anthropic.ts) with the version Vertex AI documents for Claude and without `model`
// (it goes in the URL). The wire's class is wire.ts `AnthropicVertexWire`; it has no batch format.

export const VERSION = "vertex-2023-10-16";
