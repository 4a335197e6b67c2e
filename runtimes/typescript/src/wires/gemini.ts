// Gemini generateContent (Python: wires/gemini.py): `system_instruction` (the stable prefix and the rest as two
// parts), `contents` with the roles `user` and `model` (consecutive messages of one role merged into one turn of
// several parts), `tools` as `function_declarations` in Gemini's Schema subset, `generation_config` with
// `max_output_tokens` and, for a `native` contract, `response_mime_type` and `response_schema`. The model goes in
// the URL. Gemini on Vertex AI sends the same body.

import type { Json, JsonObject } from "../pyjson.js";
import { type GeminiWire, type RenderOptions, type RequestView, Wire } from "../wire.js";
import { split } from "./_chat.js";
import { geminiDeclaration, obj, responseSchema } from "./_tools.js";

const ROLES: Readonly<Record<string, string>> = { user: "user", assistant: "model" };

/** The body of `models.generateContent`. */
export function renderGemini(wire: GeminiWire, req: RequestView, options: RenderOptions): JsonObject {
  const maxTokens = Wire.replyLimits(req, null, options.maxTokens)[1];
  const [system, turns] = split(req, "gemini");
  const out: JsonObject = new Map();
  if (system.length) out.set("system_instruction", obj(["parts", system.map(([text]) => obj(["text", text]))]));
  out.set(
    "contents",
    turns.map(([role, parts]) => obj(["role", ROLES[role]], ["parts", parts.map(([text]) => obj(["text", text]))])),
  );
  const decls = [...req.tools, ...wire.extraTools(req.output, req.toolMode)];
  if (decls.length) out.set("tools", [obj(["function_declarations", decls.map(geminiDeclaration)])]);
  const generation: JsonObject = maxTokens ? obj(["max_output_tokens", maxTokens]) : new Map();
  if (req.output !== null && req.output.get("style") === "native") {
    generation.set("response_mime_type", "application/json");
    generation.set("response_schema", responseSchema(req.output));
  }
  if (generation.size) out.set("generation_config", generation);
  return out;
}

/** `generate_content` keyword arguments for the google-genai SDK: `contents` and `config` (and `model`). */
export function genaiKwargs(payload: JsonObject, model: string | null = null): JsonObject {
  const config: JsonObject = new Map();
  for (const [k, v] of payload) if (k === "system_instruction" || k === "tools") config.set(k, v);
  const generation = payload.get("generation_config");
  if (generation instanceof Map) for (const [k, v] of generation) config.set(k, v);
  const out: JsonObject = model ? obj(["model", model]) : new Map();
  out.set("contents", payload.get("contents") as Json);
  if (config.size) out.set("config", config);
  return out;
}
