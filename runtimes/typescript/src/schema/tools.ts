// Tool declarations offered from the state, checked as the Python runtime checks them
// (compiler/promptmill/runtime/tooldecl.py `problems`, `with_defaults`): `{name, description, parameters}`,
// `parameters` a JSON Schema with `type: object` at the top, `description` and `parameters` optional.
import { type Json, type JsonObject, isObject } from "../pyjson.js";
import { checkSchema } from "./metaschema.js";

/** The `parameters` of a tool that takes no arguments (a new object each time). */
export function noParameters(): JsonObject {
  return new Map<string, Json>([
    ["type", "object"],
    ["properties", new Map()],
  ]);
}

// Python's `$` also matches before a final newline: "name\n" passes there, so it passes here
const NAME = /^[A-Za-z0-9_-]{1,64}\n?$/;

/** Python's type(value).__name__ for JSON data. */
function pyTypeName(v: Json): string {
  if (v === null) return "NoneType";
  if (typeof v === "boolean") return "bool";
  if (typeof v === "bigint") return "int";
  if (typeof v === "number") return "float";
  if (typeof v === "string") return "str";
  if (Array.isArray(v)) return "list";
  return "dict";
}

/** What is wrong with a declaration, as `[sub-path, message]` pairs ("" is the tool itself); [] when fine. */
export function toolProblems(tool: Json): [string, string][] {
  if (!isObject(tool)) return [["", `a tool declaration must be a mapping, got ${pyTypeName(tool)}`]];
  const out: [string, string][] = [];
  const name = tool.get("name");
  if (typeof name !== "string" || !NAME.test(name)) out.push([".name", "must be 1-64 letters, digits, '_' or '-'"]);
  if (tool.has("description") && typeof tool.get("description") !== "string") out.push([".description", "must be a string"]);
  const params = tool.has("parameters") ? (tool.get("parameters") as Json) : noParameters();
  if (!isObject(params)) {
    out.push([".parameters", "must be a JSON Schema object"]);
    return out;
  }
  if (params.get("type") !== "object") out.push([".parameters", "must be a JSON Schema with type: object at the top"]);
  for (const [where, message] of checkSchema(params)) {
    const sub = where === "" || where === "(root)" ? "" : where.replace(/\//g, ".");
    out.push([`.parameters${sub}`, `is not a valid JSON Schema: ${message}`]);
  }
  return out;
}

/** `tool` with the optional `description` ("") and `parameters` (no arguments) filled in, other keys kept. */
export function toolWithDefaults(tool: JsonObject): JsonObject {
  if (tool.has("description") && tool.has("parameters")) return tool;
  const out = new Map(tool);
  out.set("description", tool.has("description") ? (tool.get("description") as Json) : "");
  out.set("parameters", tool.has("parameters") ? (tool.get("parameters") as Json) : noParameters());
  return out;
}
