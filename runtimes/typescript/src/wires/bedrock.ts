// Amazon Bedrock Converse (Python: wires/bedrock.py): `system` blocks, `messages` of content blocks,
// `toolConfig`, and `cachePoint` blocks after the leading stable run (and after the tools when every tools section
// is stable), only for models whose row has cache breakpoints (or no model named: Claude).

import type { Json, JsonObject } from "../pyjson.js";
import { resolveModel } from "../models.js";
import { type BedrockWire, type RenderOptions, type RequestView, Wire, isPresent } from "../wire.js";
import { split } from "./_chat.js";
import { obj } from "./_tools.js";
import { truthy } from "../pyfmt.js";

const cachePoint = () => obj(["cachePoint", obj(["type", "default"])]);

function spec(d: JsonObject): JsonObject {
  const s: JsonObject = obj(["name", d.get("name") as Json]);
  if (truthy(d.get("description"))) s.set("description", d.get("description") as Json);
  s.set("inputSchema", obj(["json", d.get("parameters") as Json]));
  return obj(["toolSpec", s]);
}

/** Whether the payload carries cache points: the role caches, and the model takes them. */
export function caches(req: RequestView, model: string | null): boolean {
  if (!req.cache) return false;
  if (!model) return true;
  const info = resolveModel(model);
  return info !== null && !!info.cacheBreakpoints;
}

/** The keyword arguments of `converse` (`modelId` when known). */
export function renderBedrock(wire: BedrockWire, req: RequestView, options: RenderOptions): JsonObject {
  const [model, maxTokens] = Wire.replyLimits(req, options.model, options.maxTokens);
  const cache = caches(req, model);
  const [systemParts, turns] = split(req, "bedrock");
  const system: JsonObject[] = systemParts.map(([text]) => obj(["text", text]));
  const contents: JsonObject[][] = turns.map(([, parts]) => parts.map(([text]) => obj(["text", text])));
  const messages = turns.map(([role], k) => obj(["role", role], ["content", contents[k]]));
  if (cache) {
    // after the last block of the leading stable run
    const places: [JsonObject[], number][] = [...system.map((_, i) => [system, i] as [JsonObject[], number])];
    for (const c of contents) for (let i = 0; i < c.length; i++) places.push([c, i]);
    const stable = [...systemParts.map(([, s]) => s), ...turns.flatMap(([, parts]) => parts.map(([, s]) => s))];
    let run = 0;
    while (run < stable.length && stable[run]) run++;
    if (run) {
      const [blocks, at] = places[run - 1];
      blocks.splice(at + 1, 0, cachePoint());
    }
  }
  const out: JsonObject = model ? obj(["modelId", model]) : new Map();
  out.set("messages", messages);
  if (system.length) out.set("system", system);
  if (maxTokens) out.set("inferenceConfig", obj(["maxTokens", maxTokens]));
  const decls = [...req.tools, ...wire.extraTools(req.output, req.toolMode)];
  if (decls.length) {
    const tools: JsonObject[] = decls.map(spec);
    if (cache && req.sections.filter((s) => s.kind === "tools" && isPresent(s)).every((s) => s.stability === "stable")) tools.push(cachePoint());
    const config: JsonObject = obj(["tools", tools]);
    const forced = wire.forcedTool(req.output);
    if (forced !== null) config.set("toolChoice", obj(["tool", obj(["name", forced])]));
    out.set("toolConfig", config);
  }
  return out;
}
