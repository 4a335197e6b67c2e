// Anthropic Messages (Python: wires/anthropic.py): top-level `system` blocks with a cache breakpoint after the
// leading stable run, alternating turns (consecutive messages of one role merged into one turn of several text
// blocks), native tools with `input_schema` (the last stable one with a second breakpoint), a `native` contract
// as a forced tool call. The platform variants (Bedrock, Vertex AI) send the same body with their
// `anthropic_version` first and no `model`.

import type { Json, JsonObject } from "../pyjson.js";
import { type AnthropicPlatformWire, type AnthropicWire, type RenderOptions, type RequestView, Wire, stableTools } from "../wire.js";
import { split } from "./_chat.js";
import { anthropicTool, obj } from "./_tools.js";

const cache = () => obj(["type", "ephemeral"]);

/** The keyword arguments of `messages.create` (`model` when known). */
export function renderAnthropic(wire: AnthropicWire, req: RequestView, options: RenderOptions): JsonObject {
  const [model, maxTokens] = Wire.replyLimits(req, options.model, options.maxTokens);
  const [system, turns] = split(req, wire.name);
  const blocks: JsonObject[] = system.map(([text]) => obj(["type", "text"], ["text", text]));
  const stable: boolean[] = system.map(([, s]) => s);
  const messages: JsonObject[] = [];
  for (const [role, parts] of turns) {
    const content = parts.map(([text]) => obj(["type", "text"], ["text", text]));
    messages.push(obj(["role", role], ["content", content]));
    stable.push(...parts.map(([, s]) => s));
    blocks.push(...content);
  }
  const decls = [...req.tools, ...wire.extraTools(req.output, req.toolMode)];
  const points = wire.cachePoints(req, decls);
  if (points.includes("prefix")) {
    let run = 0;
    while (run < stable.length && stable[run]) run++;
    // Python's blocks[run - 1]: run 0 (the first block not stable) marks the last block
    blocks[(run - 1 + blocks.length) % blocks.length].set("cache_control", cache());
  }
  for (const m of messages) {
    // a single plain block reads better as a string
    const content = m.get("content") as JsonObject[];
    if (content.length === 1 && !content[0].has("cache_control")) m.set("content", content[0].get("text") as Json);
  }
  const out: JsonObject = model ? obj(["model", model]) : new Map();
  if (maxTokens) out.set("max_tokens", maxTokens);
  if (system.length) out.set("system", blocks.slice(0, system.length));
  out.set("messages", messages);
  if (decls.length) {
    const tools = decls.map(anthropicTool);
    out.set("tools", tools);
    if (points.includes("tools")) {
      const k = stableTools(req, decls) - 1;
      tools[(k + tools.length) % tools.length].set("cache_control", cache());
    }
  }
  const forced = wire.forcedTool(req.output);
  if (forced !== null) out.set("tool_choice", obj(["type", "tool"], ["name", forced]));
  return out;
}

/** The platform body: `anthropic_version` first, then the Anthropic body without `model`. */
export function renderAnthropicPlatform(wire: AnthropicPlatformWire, req: RequestView, options: RenderOptions): JsonObject {
  const body = renderAnthropic(wire, req, { maxTokens: options.maxTokens });
  body.delete("model");
  const out: JsonObject = obj(["anthropic_version", wire.anthropicVersion]);
  for (const [k, v] of body) out.set(k, v);
  return out;
}
