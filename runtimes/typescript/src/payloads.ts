// The payload of a render for a wire (`promptmill render --format WIRE`): the wire (wire.ts, src/wires/*.ts)
// builds it from the render document, as Python's `req.to_payload()` does from the request.

import type { Json } from "./pyjson.js";
import { requestData, type PromptRequest } from "./request.js";
import { renderPayload } from "./wire.js";

export function payloadFor(wire: string, req: PromptRequest): Json {
  return renderPayload(wire, requestData(req));
}
