// Live: one flat instruction string for voice and realtime sessions (Python: wires/live.py). `{"instructions": text}`.

import type { JsonObject } from "../pyjson.js";
import type { RequestView } from "../wire.js";

export function renderLive(req: RequestView): JsonObject {
  return new Map([["instructions", req.messages.length ? req.messages[0].content : ""]]);
}
