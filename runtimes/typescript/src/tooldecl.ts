// Tool declarations, wire-neutral (Python: runtime/tooldecl.py): defaults, and a contract's structured-return
// tool. A declaration is {name, description, parameters} (JSON data) where `parameters` is a JSON Schema of an
// object. How each wire shapes and counts them is in wire.ts and wires/.

import { type Json, type JsonObject, isObject } from "./pyjson.js";

/** The `parameters` of a tool that takes no arguments (a new object). */
export function noParameters(): JsonObject {
  return new Map<string, Json>([
    ["type", "object"],
    ["properties", new Map()],
  ]);
}

export const NAME = /^[A-Za-z0-9_-]{1,64}$/;

/** `tool` with the optional `description` and `parameters` filled in (other keys kept). */
export function withDefaults(tool: JsonObject): JsonObject {
  if (tool.has("description") && tool.has("parameters")) return tool;
  const out: JsonObject = new Map(tool);
  out.set("description", tool.get("description") ?? "");
  out.set("parameters", tool.has("parameters") ? (tool.get("parameters") as Json) : noParameters());
  return out;
}

/** {name, description, parameters} of a checked declaration (other keys dropped). */
export function normalize(tool: JsonObject): JsonObject {
  const full = withDefaults(tool);
  return new Map<string, Json>([
    ["name", full.get("name") as Json],
    ["description", full.get("description") as Json],
    ["parameters", full.get("parameters") as Json],
  ]);
}

/** The structured-return tool of an output contract (the bundle's or render document's `output` object). */
export function returnTool(contract: JsonObject): JsonObject {
  const rt = contract.get("return_tool");
  const tool = isObject(rt) ? rt : new Map<string, Json>();
  return new Map<string, Json>([
    ["name", tool.has("name") ? (tool.get("name") as Json) : "return_result"],
    ["description", tool.has("description") ? (tool.get("description") as Json) : ""],
    ["parameters", contract.get("schema") ?? null],
  ]);
}
