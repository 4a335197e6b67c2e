// Tool declarations and structured-output fields in each wire's own shape (Python: wires/_tools.py,
// docs/providers.md). Declarations and contracts are JSON data (pyjson values).

import { type Json, type JsonObject, dumpString, dumps, floatRepr, isObject } from "../pyjson.js";
import { JSON_SCHEMA_STRICT, OPENAPI_SUBSET, geminiSchema, nativeForm } from "../schemaforms.js";
import { pyStr, truthy } from "../pyfmt.js";

/** A JSON object from [key, value] pairs, in order. */
export function obj(...entries: [string, Json][]): JsonObject {
  return new Map(entries);
}

/** json.dumps(data, ensure_ascii=False, separators=(",", ":")). */
export function compact(data: Json): string {
  if (data === null) return "null";
  if (data === true) return "true";
  if (data === false) return "false";
  if (typeof data === "string") return dumpString(data, false);
  if (typeof data === "bigint") return data.toString();
  if (typeof data === "number") {
    if (Number.isNaN(data)) return "NaN";
    if (!Number.isFinite(data)) return data > 0 ? "Infinity" : "-Infinity";
    return floatRepr(data);
  }
  if (Array.isArray(data)) return "[" + data.map(compact).join(",") + "]";
  return "{" + [...data].map(([k, v]) => dumpString(k, false) + ":" + compact(v)).join(",") + "}";
}

// -- wire shapes -------------------------------------------------------------
export function openaiTool(d: JsonObject): JsonObject {
  const fn: JsonObject = obj(["name", d.get("name") as Json]);
  if (truthy(d.get("description"))) fn.set("description", d.get("description") as Json);
  fn.set("parameters", d.get("parameters") as Json);
  return obj(["type", "function"], ["function", fn]);
}

export function anthropicTool(d: JsonObject): JsonObject {
  const out: JsonObject = obj(["name", d.get("name") as Json]);
  if (truthy(d.get("description"))) out.set("description", d.get("description") as Json);
  out.set("input_schema", d.get("parameters") as Json);
  return out;
}

export function geminiDeclaration(d: JsonObject): JsonObject {
  const out: JsonObject = obj(["name", d.get("name") as Json]);
  if (truthy(d.get("description"))) out.set("description", d.get("description") as Json);
  const params = d.get("parameters");
  if (isObject(params) && truthy(params.get("properties"))) out.set("parameters", geminiSchema(new Map(params))[0]);
  return out;
}

// -- the OpenAI rendering ----------------------------------------------------------
const dumpsPy = (v: Json) => dumps(v, { ensureAscii: false });

function tsType(schema: Json | undefined, indent: string): string {
  if (!isObject(schema)) return "any";
  if (schema.has("const")) return dumpsPy(schema.get("const") as Json);
  if (schema.has("enum")) {
    const en = schema.get("enum");
    const items = Array.isArray(en) ? en : isObject(en) ? [...en.keys()] : typeof en === "string" ? [...en] : [];
    return items.map(dumpsPy).join(" | ") || "never";
  }
  const options = truthy(schema.get("anyOf")) ? schema.get("anyOf") : schema.get("oneOf");
  if (truthy(options) && Array.isArray(options)) return options.map((o) => tsType(o, indent)).join(" | ");
  const kind = schema.get("type");
  if (Array.isArray(kind)) {
    return kind
      .map((k) => {
        const s: JsonObject = new Map(schema);
        s.set("type", k);
        return tsType(s, indent);
      })
      .join(" | ");
  }
  if (kind === "array") {
    const inner = tsType(schema.has("items") ? schema.get("items") : new Map(), indent);
    return inner.includes(" | ") ? `(${inner})[]` : `${inner}[]`;
  }
  if (kind === "object" || schema.has("properties")) {
    if (!truthy(schema.get("properties"))) return "object";
    return "{\n" + tsProps(schema, indent + "  ") + indent + "}";
  }
  const names: Record<string, string> = { string: "string", number: "number", integer: "number", boolean: "boolean", null: "null" };
  return typeof kind === "string" && Object.hasOwn(names, kind) ? names[kind] : "any";
}

function tsProps(schema: JsonObject, indent: string): string {
  const req = schema.get("required");
  const required = new Set<Json>(Array.isArray(req) ? req : []);
  const props = schema.get("properties");
  let out = "";
  if (!isObject(props)) return out;
  for (const [name, sub] of props) {
    if (isObject(sub) && truthy(sub.get("description"))) out += `${indent}// ${pyStr(sub.get("description"))}\n`;
    const mark = required.has(name) ? "" : "?";
    out += `${indent}${name}${mark}: ${tsType(sub, indent)},\n`;
  }
  return out;
}

/** One function as OpenAI's models see it inside `namespace functions { ... }`. */
export function openaiFunctionText(d: JsonObject): string {
  const head = truthy(d.get("description")) ? `// ${pyStr(d.get("description"))}\n` : "";
  const p = d.get("parameters");
  const params = truthy(p) && isObject(p) ? p : new Map<string, Json>();
  const name = pyStr(d.get("name"));
  if (truthy(params.get("properties"))) return `${head}type ${name} = (_: {\n${tsProps(params, "")}}) => any;\n\n`;
  return `${head}type ${name} = () => any;\n\n`;
}

/** OpenAI `response_format` of a native contract (strict when the schema allows it). */
export function responseFormat(contract: JsonObject): JsonObject {
  const strict = nativeForm(contract, JSON_SCHEMA_STRICT);
  const schema = strict !== null ? strict : (contract.get("schema") ?? null);
  const name = pyStr(contract.get("id")).replace(/[^A-Za-z0-9_-]/gu, "_").slice(0, 64);
  return obj(["type", "json_schema"], ["json_schema", obj(["name", name], ["schema", schema], ["strict", strict !== null])]);
}

/** Gemini `response_schema` of a native contract. */
export function responseSchema(contract: JsonObject): Json {
  const form = nativeForm(contract, OPENAPI_SUBSET);
  return form !== null ? form : geminiSchema(contract.get("schema") ?? null)[0];
}
