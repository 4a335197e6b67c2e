// Tool declarations, wire-neutral (Python: runtime/tooldecl.py): defaults, and a contract's structured-return
// tool. A declaration is {name, description, parameters} (JSON data) where `parameters` is a JSON Schema of an
// object. How each wire shapes and counts them is in wire.ts and wires/.

import { type Json, type JsonObject, isObject } from "./pyjson.js";

/** A draft 2020-12 check of a JSON Schema: [where (a JSON pointer, "" or "(root)" for the root), message] pairs
 *  (Python: runtime/schema/validate.py check_schema). */
export type SchemaCheck = (schema: Json) => [string, string][];

// The state helper's checker (src/schema/metaschema.ts, TS-state's module) when it is part of the build; looked up
// by a path the compiler does not resolve, so this module builds without it.
const METASCHEMA = "./schema/metaschema.js";
let schemaCheck: SchemaCheck | null = await import(METASCHEMA).then(
  (m: { checkSchema?: SchemaCheck }) => m.checkSchema ?? null,
  () => null,
);

/** Use `check` for the parameters of tool declarations (`problems`). */
export function setSchemaCheck(check: SchemaCheck): void {
  schemaCheck = check;
}

function pyTypeName(v: Json | undefined): string {
  if (v === null || v === undefined) return "NoneType";
  if (typeof v === "boolean") return "bool";
  if (typeof v === "bigint") return "int";
  if (typeof v === "number") return "float";
  if (typeof v === "string") return "str";
  if (Array.isArray(v)) return "list";
  return "dict";
}

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
  if (schemaCheck === null) throw new Error("tooldecl.problems: no JSON Schema checker (src/schema/metaschema.ts, or setSchemaCheck)");
  for (const [where, message] of schemaCheck(params)) {
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
  out.set("description", tool.get("description") ?? "");
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
