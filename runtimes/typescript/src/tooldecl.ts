// Tool declarations, wire-neutral (Python: runtime/tooldecl.py): the checks of a declaration offered from the
// state (`problems`, the parameters' schema checked by schema/metaschema.ts), defaults, and a contract's
// structured-return tool. A declaration is {name, description, parameters} (JSON data) where `parameters` is a JSON Schema of an
// object. How each wire shapes and counts them is in wire.ts and wires/.

import { type Json, type JsonObject, isObject } from "./pyjson.js";
import { checkSchema } from "./schema/metaschema.js";
import { typeName } from "./pyfmt.js";

/** The `parameters` of a tool that takes no arguments (a new object). */
export function noParameters(): JsonObject {
  return new Map<string, Json>([
    ["type", "object"],
    ["properties", new Map()],
  ]);
}

// Python's `re.match(r"^[A-Za-z0-9_-]{1,64}$", name)`: its `$` also matches before a final newline
export const NAME = /^[A-Za-z0-9_-]{1,64}\n?$/;

/** What is wrong with a declaration, as [sub-path, message] pairs ("" is the tool itself). */
export function problems(tool: Json): [string, string][] {
  if (!isObject(tool)) return [["", `a tool declaration must be a mapping, got ${typeName(tool)}`]];
  const out: [string, string][] = [];
  const name = tool.get("name");
  if (!tool.has("name")) out.push([".name", "is required"]);
  else if (typeof name !== "string" || !NAME.test(name)) out.push([".name", "must be 1-64 letters, digits, '_' or '-'"]);
  if (tool.has("description") && typeof tool.get("description") !== "string") out.push([".description", "must be a string"]);
  const params = tool.has("parameters") ? (tool.get("parameters") as Json) : noParameters();
  if (!isObject(params)) {
    out.push([".parameters", "must be a JSON Schema object"]);
    return out;
  }
  if (params.get("type") !== "object") out.push([".parameters", "must be a JSON Schema with type: object at the top"]);
  for (const [where, message] of checkSchema(params)) {
    const sub = where === "" || where === "(root)" ? "" : where.replaceAll("/", ".");
    out.push([`.parameters${sub}`, `is not a valid JSON Schema: ${message}`]);
  }
  return out;
}

/** `tool` with the optional `description` and `parameters` filled in (other keys kept). */
export function withDefaults(toolIn: Json): JsonObject {
  const tool = toolIn as JsonObject;
  if (tool.has("description") && tool.has("parameters")) return tool;
  const out: JsonObject = new Map(tool);
  out.set("description", tool.has("description") ? (tool.get("description") as Json) : ""); // a null one stays null
  out.set("parameters", tool.has("parameters") ? (tool.get("parameters") as Json) : noParameters());
  return out;
}

/** {name, description, parameters} of a checked declaration (other keys dropped). */
export function normalize(tool: Json): JsonObject {
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
