// OpenAI Responses (Python: wires/openai_responses.py): `instructions`, `input` items in layout order, flat
// function `tools`, `text.format`, and a `prompt_cache_key` shared by the renders of one role with the same
// stable prefix.

import { createHash } from "node:crypto";
import { PromptmillError } from "../errors.js";
import type { Json, JsonObject } from "../pyjson.js";
import { type RenderOptions, type RequestView, Wire } from "../wire.js";
import { obj, responseFormat } from "./_tools.js";
import { truthy } from "../pyfmt.js";

export const MIN_OUTPUT_TOKENS = 16n; // the API refuses a smaller max_output_tokens ("Expected a value >= 16")
export const ROLE_IN_KEY = 40; // a key is "pm-", at most 40 characters of the role id, "-" and 16 hex digits

/** One declaration in the Responses function shape (flat, `strict` always sent). */
export function responsesTool(d: JsonObject): JsonObject {
  const out: JsonObject = obj(["type", "function"], ["name", d.get("name") as Json]);
  if (truthy(d.get("description"))) out.set("description", d.get("description") as Json);
  out.set("parameters", d.get("parameters") as Json);
  out.set("strict", false);
  return out;
}

/** `text.format` of a native contract: the chat wire's json_schema, flattened. */
export function textFormat(contract: JsonObject): JsonObject {
  const format: JsonObject = obj(["type", "json_schema"]);
  for (const [k, v] of responseFormat(contract).get("json_schema") as JsonObject) format.set(k, v);
  return obj(["format", format]);
}

/** A key shared by the renders of one role with the same stable prefix. */
export function promptCacheKey(req: RequestView): string {
  const digest = createHash("sha256").update(Buffer.from(req.role, "utf8"));
  for (const m of req.messages) {
    if (!m.stable) break;
    digest.update(Buffer.concat([Buffer.from([0]), Buffer.from(m.role, "utf8"), Buffer.from([0]), Buffer.from(m.content, "utf8")]));
  }
  const role = [...req.role].slice(0, ROLE_IN_KEY).join("");
  return `pm-${role}-${digest.digest("hex").slice(0, 16)}`;
}

/** The keyword arguments of `responses.create` (`model` when known). */
export function renderOpenAIResponses(wire: Wire, req: RequestView, options: RenderOptions): JsonObject {
  const [model, maxTokens] = Wire.replyLimits(req, options.model, options.maxTokens);
  if (maxTokens !== null && maxTokens < MIN_OUTPUT_TOKENS) {
    throw new PromptmillError(
      "PM842",
      `role '${req.role}': a reply limit of ${maxTokens} tokens is below the ${MIN_OUTPUT_TOKENS} the OpenAI Responses API accepts`,
      `reserve at least ${MIN_OUTPUT_TOKENS} tokens for the reply (budget.reserve), or pass max_tokens=`,
    );
  }
  const messages = [...req.messages];
  const out: JsonObject = model ? obj(["model", model]) : new Map();
  if (messages.length > 1 && messages[0].role === "system") out.set("instructions", (messages.shift() as { content: string }).content);
  out.set(
    "input",
    messages.map((m) => obj(["role", m.role], ["content", m.content])),
  );
  if (maxTokens) out.set("max_output_tokens", maxTokens);
  const decls = [...req.tools, ...wire.extraTools(req.output, req.toolMode)];
  if (decls.length) out.set("tools", decls.map(responsesTool) as Json[]);
  if (req.output !== null && req.output.get("style") === "native") out.set("text", textFormat(req.output));
  if (req.cache) out.set("prompt_cache_key", promptCacheKey(req));
  return out;
}
