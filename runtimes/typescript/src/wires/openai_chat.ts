// OpenAI chat completions (Python: wires/openai_chat.py): `messages` in layout order, native `tools`,
// `response_format`; `model` is the role's unless given, `max_completion_tokens` the budget's reserve unless given.

import type { Json, JsonObject } from "../pyjson.js";
import { type RenderOptions, type RequestView, Wire } from "../wire.js";
import { obj, openaiTool, responseFormat } from "./_tools.js";

/** The keyword arguments of `chat.completions.create` (`model` when known). */
export function renderOpenAIChat(wire: Wire, req: RequestView, options: RenderOptions): JsonObject {
  const [model, maxTokens] = Wire.replyLimits(req, options.model, options.maxTokens);
  const out: JsonObject = model ? obj(["model", model]) : new Map();
  out.set(
    "messages",
    req.messages.map((m) => obj(["role", m.role], ["content", m.content])),
  );
  if (maxTokens) out.set("max_completion_tokens", maxTokens);
  const decls = [...req.tools, ...wire.extraTools(req.output, req.toolMode)];
  if (decls.length) out.set("tools", decls.map(openaiTool) as Json[]);
  if (req.output !== null && req.output.get("style") === "native") out.set("response_format", responseFormat(req.output));
  return out;
}
