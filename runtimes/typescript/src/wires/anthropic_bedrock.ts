// Claude on Amazon Bedrock through the Anthropic Messages body (Python: wires/anthropic_bedrock.py): the
// `anthropic` wire's body (renderAnthropicPlatform in anthropic.ts) with `anthropic_version: "bedrock-2023-05-31"`
// and no `model`. The wire's class is wire.ts `AnthropicBedrockWire`.

import type { JsonObject } from "../pyjson.js";

// https://docs.aws.amazon.com/bedrock/latest/userguide/model-parameters-anthropic-claude-messages-request-response.html
export const VERSION = "bedrock-2023-05-31";

/** `messages.create` keyword arguments of the Bedrock client from the body: its fields, `anthropic_version`
 *  through `extra_body` (the SDK takes no such argument). */
export function anthropicBedrockKwargs(body: JsonObject): JsonObject {
  const out: JsonObject = new Map([...body].filter(([k]) => k !== "anthropic_version"));
  out.set("extra_body", new Map([["anthropic_version", body.get("anthropic_version") ?? null]]));
  return out;
}
