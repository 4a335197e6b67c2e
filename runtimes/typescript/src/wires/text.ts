// Plain text: the prompt as one string (Python: wires/text.py). `{"prompt": text}`.

import type { JsonObject } from "../pyjson.js";
import type { RequestView } from "../wire.js";

export function renderText(req: RequestView): JsonObject {
  return new Map([["prompt", req.messages.length ? req.messages[0].content : ""]]);
}
