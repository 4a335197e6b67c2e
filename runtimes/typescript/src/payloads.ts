// The payload of a render for a wire (`promptmill render --format WIRE`): the wires' own modules (src/wires/*.ts)
// build it from the render document.

import type { Json } from "./pyjson.js";
import { PromptmillError } from "./errors.js";
import type { PromptRequest } from "./request.js";

export function payloadFor(wire: string, _req: PromptRequest): Json {
  throw new PromptmillError("PM840", `the ${wire} payload is not available in promptmill-ts yet; use --format json or text`);
}
