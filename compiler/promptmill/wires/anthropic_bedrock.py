"""Claude on Amazon Bedrock through the Anthropic Messages body (InvokeModel, the `anthropic` SDK's
`AnthropicBedrock`, Bedrock batch inference).

    body = req.to_anthropic_bedrock()  # no `model`: Bedrock names it in the URL
    boto3.client("bedrock-runtime").invoke_model(modelId="us.anthropic.claude-sonnet-4-5-20250929-v1:0", body=json.dumps(body))
    AnthropicBedrock().messages.create(model="us.anthropic.claude-...", **anthropic_bedrock_kwargs(body))

Everything is the `anthropic` wire's (system blocks, the `cache_control` breakpoint, tools, a
forced tool for a `native` contract, `max_tokens` from the reserve, the same counting model), but the
body carries `anthropic_version: "bedrock-2023-05-31"` (the value AWS documents for Claude's
InvokeModel body) and no `model`. The `anthropic` SDK's `AnthropicBedrock` adds an
`anthropic_version` of its own when the body has none (its own API version, not Bedrock's);
`anthropic_bedrock_kwargs` passes ours through `extra_body`, so the bytes sent are this body.
"""

from __future__ import annotations

from .anthropic import AnthropicPlatformWire

VERSION = "bedrock-2023-05-31"  # https://docs.aws.amazon.com/bedrock/latest/userguide/model-parameters-anthropic-claude-messages-request-response.html


class AnthropicBedrockWire(AnthropicPlatformWire):
    name = "anthropic-bedrock"
    provider = "aws"
    anthropic_version = VERSION
    batch_limits = None  # Bedrock batch files are the `bedrock` wire's (their lines hold this body)


WIRE = AnthropicBedrockWire()


def anthropic_bedrock_kwargs(body: dict) -> dict:
    """`AnthropicBedrock().messages.create(model=..., **anthropic_bedrock_kwargs(body))`: the body's
    fields as keyword arguments, `anthropic_version` through `extra_body` (the SDK takes no such argument)."""
    out = {k: v for k, v in body.items() if k != "anthropic_version"}
    out["extra_body"] = {"anthropic_version": body["anthropic_version"]}
    return out
