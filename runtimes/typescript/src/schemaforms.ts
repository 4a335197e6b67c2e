// Schema forms a wire sends: JSON Schema in OpenAI's strict mode, and the OpenAPI subset Gemini takes
// (Python: runtime/schemaforms.py). Both conversions are pure functions of a draft 2020-12 schema (JSON data)
// returning the converted schema and [path, problem] pairs for what could not be expressed.

import { type Json, type JsonObject, isObject } from "./pyjson.js";
import { truthy } from "./pyfmt.js";

export type Problems = [string, string][];

export const JSON_SCHEMA_STRICT = "json-schema-strict";
export const OPENAPI_SUBSET = "openapi-subset";
/** where a compiled bundle keeps each form in the contract's `native` */
export const BUNDLE_KEYS: Readonly<Record<string, string>> = { [JSON_SCHEMA_STRICT]: "openai_strict", [OPENAPI_SUBSET]: "gemini" };

/** A deep copy of JSON data (Python's copy.deepcopy). */
export function deepCopy(v: Json): Json {
  if (Array.isArray(v)) return v.map(deepCopy);
  if (isObject(v)) return new Map([...v].map(([k, x]) => [k, deepCopy(x)]));
  return v;
}

/** The contract's schema in `form` as compiled into the bundle, or null (not expressible, or absent).
 *  `contract` is the bundle's (or the render document's) `output` object. */
export function nativeForm(contract: JsonObject, form: string): Json {
  const native = contract.get("native");
  if (!isObject(native)) return null;
  return native.get(BUNDLE_KEYS[form]) ?? null;
}

const OPENAI_DROP = new Set([
  "minLength", "maxLength", "minProperties", "maxProperties", "uniqueItems", "contains", "default", "examples",
  "$schema", "$id", "$comment", "deprecated", "readOnly", "writeOnly",
]);
const OPENAI_IMPOSSIBLE = new Set([
  "allOf", "not", "if", "then", "else", "patternProperties", "dependentSchemas", "dependentRequired",
  "unevaluatedProperties", "propertyNames", "unevaluatedItems",
]);
const GEMINI_KEEP: [string, string][] = [
  ["description", "description"], ["title", "title"], ["format", "format"], ["pattern", "pattern"],
  ["minItems", "min_items"], ["maxItems", "max_items"], ["minimum", "minimum"], ["maximum", "maximum"],
  ["minLength", "min_length"], ["maxLength", "max_length"], ["minProperties", "min_properties"],
  ["maxProperties", "max_properties"], ["default", "default"],
];
const GEMINI_REPORT = ["allOf", "not", "if", "patternProperties", "dependentSchemas", "prefixItems"];
const GEMINI_TYPES: Readonly<Record<string, string>> = {
  string: "STRING", number: "NUMBER", integer: "INTEGER", boolean: "BOOLEAN", array: "ARRAY", object: "OBJECT", null: "NULL",
};
export const MAX_REF_DEPTH = 8;

/** The items of a JSON value as Python iterates them (a list's items, an object's keys, a string's characters). */
function iter(v: Json | undefined): Json[] {
  if (Array.isArray(v)) return v;
  if (isObject(v)) return [...v.keys()];
  if (typeof v === "string") return [...v];
  return [];
}

function isObjectSchema(schema: JsonObject): boolean {
  const kind = schema.get("type");
  return kind === "object" || (Array.isArray(kind) && kind.includes("object")) || schema.has("properties");
}

/** Python's `x in list` for JSON data: null only equals null, strings equal strings. */
function hasNull(values: Json[]): boolean {
  return values.some((v) => v === null);
}

function nullable(schema: JsonObject): JsonObject {
  const out: JsonObject = new Map(schema);
  const kind = out.get("type");
  if (typeof kind === "string") {
    if (kind !== "null") out.set("type", [kind, "null"]);
  } else if (Array.isArray(kind)) {
    if (!kind.includes("null")) out.set("type", [...kind, "null"]);
  } else {
    return new Map<string, Json>([["anyOf", [out, new Map<string, Json>([["type", "null"]])]]]);
  }
  const en = out.get("enum");
  if (out.has("enum") && !hasNull(iter(en))) out.set("enum", [...iter(en), null]);
  return out;
}

/** The schema in the form OpenAI strict structured outputs require. */
export function openaiStrict(schema: Json): [Json, Problems] {
  const problems: Problems = [];
  if (!isObject(schema) || !isObjectSchema(schema)) return [deepCopy(schema), [["reply", "the root must be an object with properties"]]];
  const out = strict(schema, "reply", problems) as JsonObject;
  const defs = schema.get("$defs");
  if (defs !== undefined) {
    const conv: JsonObject = new Map();
    if (isObject(defs)) for (const [k, v] of defs) if (isObject(v)) conv.set(k, strict(v, `$defs.${k}`, problems));
    out.set("$defs", conv);
  }
  return [out, problems];
}

function strict(schema: Json, path: string, problems: Problems): Json {
  if (!isObject(schema)) return schema;
  let out: JsonObject = new Map();
  for (const [key, value] of schema) {
    if (OPENAI_IMPOSSIBLE.has(key)) problems.push([path, `'${key}' is not supported in strict mode`]);
    else if (OPENAI_DROP.has(key) || key === "$defs") continue;
    else if (key === "properties") {
      const props = isObject(value) ? value : new Map<string, Json>();
      const required = new Set(iter(schema.get("required")));
      const conv: JsonObject = new Map();
      for (const [name, sub] of props) {
        const c = strict(sub, `${path}.${name}`, problems);
        conv.set(name, required.has(name) || !isObject(c) ? c : nullable(c));
      }
      out.set("properties", conv);
    } else if (key === "required") continue;
    else if (key === "items") out.set("items", strict(value, `${path}[]`, problems));
    else if (key === "anyOf" || key === "oneOf") out.set("anyOf", iter(value).map((v) => strict(v, path, problems)));
    else if (key === "additionalProperties") {
      if (value !== false) problems.push([path, "an object with free-form keys (additionalProperties) cannot be strict"]);
    } else out.set(key, deepCopy(value));
  }
  const en = out.get("enum");
  if (out.has("enum") && !out.has("type") && truthy(en) && iter(en).every((v) => typeof v === "string")) {
    out = new Map<string, Json>([["type", "string"], ...out]);
  }
  if (isObjectSchema(schema)) {
    if (!schema.has("properties") && !schema.has("additionalProperties")) {
      problems.push([path, "an object without declared properties cannot be strict"]);
    }
    const props = schema.get("properties");
    out.set("required", truthy(props) ? iter(props) : []);
    out.set("additionalProperties", false);
  }
  return out;
}

/** The schema as Gemini's Schema object (snake_case field names). */
export function geminiSchema(schema: Json): [JsonObject, Problems] {
  const problems: Problems = [];
  const defs = isObject(schema) ? (schema.get("$defs") ?? new Map<string, Json>()) : new Map<string, Json>();
  return [gem(schema, "reply", defs, 0, problems), problems];
}

function resolveRef(ref: Json, defs: Json): JsonObject | null {
  const pre = "#/$defs/";
  if (typeof ref === "string" && ref.startsWith(pre) && isObject(defs)) {
    const found = defs.get(ref.slice(pre.length));
    return isObject(found) ? found : null;
  }
  return null;
}

function pyReprJson(v: Json): string {
  // repr() of a $ref value in a problem message (a string, as schemas have)
  if (typeof v === "string") return v.includes("'") && !v.includes('"') ? `"${v}"` : `'${v.replace(/\\/g, "\\\\").replace(/'/g, "\\'")}'`;
  return String(v);
}

function gem(schema: Json, path: string, defs: Json, depth: number, problems: Problems): JsonObject {
  if (!isObject(schema)) return new Map();
  if (schema.has("$ref")) {
    const ref = schema.get("$ref") as Json;
    const target = resolveRef(ref, defs);
    if (target === null) {
      problems.push([path, `reference ${pyReprJson(ref)} cannot be inlined`]);
      return new Map<string, Json>([["type", "OBJECT"]]);
    }
    if (depth >= MAX_REF_DEPTH) {
      problems.push([path, `recursive reference ${pyReprJson(ref)} is cut at depth ${MAX_REF_DEPTH}`]);
      return new Map<string, Json>([["type", "OBJECT"]]);
    }
    const merged: JsonObject = new Map(target);
    for (const [k, v] of schema) if (k !== "$ref") merged.set(k, v);
    return gem(merged, path, defs, depth + 1, problems);
  }
  const out: JsonObject = new Map();
  for (const key of GEMINI_REPORT) if (schema.has(key)) problems.push([path, `'${key}' has no Gemini equivalent and is left out`]);
  let kind: Json | undefined = schema.get("type");
  let variants: JsonObject[] | null = null;
  if (Array.isArray(kind)) {
    const rest = kind.filter((k) => k !== "null");
    if (rest.length < kind.length) out.set("nullable", true);
    if (rest.length === 1) kind = rest[0];
    else {
      variants = rest.map((k) => {
        const v: JsonObject = new Map(schema);
        v.set("type", k);
        return v;
      });
      kind = undefined;
    }
  }
  if (typeof kind === "string" && kind in GEMINI_TYPES && Object.hasOwn(GEMINI_TYPES, kind)) out.set("type", GEMINI_TYPES[kind]);
  else if (schema.has("properties")) out.set("type", "OBJECT");
  for (const [key, name] of GEMINI_KEEP) if (schema.has(key)) out.set(name, deepCopy(schema.get(key) as Json));
  const values = schema.has("const") ? [schema.get("const") as Json] : schema.has("enum") && schema.get("enum") !== null ? iter(schema.get("enum")) : null;
  if (values !== null) {
    if (values.every((v) => typeof v === "string")) {
      out.set("enum", [...values]);
      if (!out.has("type")) out.set("type", "STRING");
    } else if (hasNull(values) && values.every((v) => typeof v === "string" || v === null)) {
      out.set("enum", values.filter((v) => v !== null));
      out.set("nullable", true);
      if (!out.has("type")) out.set("type", "STRING");
    } else {
      problems.push([path, "a non-string enum or const is left out (Gemini enums are strings)"]);
    }
  }
  if (truthy(schema.get("examples"))) out.set("example", deepCopy(iter(schema.get("examples"))[0]));
  const props = schema.get("properties");
  if (isObject(props)) {
    const conv: JsonObject = new Map();
    for (const [k, v] of props) conv.set(k, gem(v, `${path}.${k}`, defs, depth, problems));
    out.set("properties", conv);
    out.set("property_ordering", [...props.keys()]);
    if (truthy(schema.get("required"))) out.set("required", [...iter(schema.get("required"))]);
  }
  const items = schema.get("items");
  if (isObject(items)) out.set("items", gem(items, `${path}[]`, defs, depth, problems));
  let alternatives: Json[] | null = truthy(schema.get("anyOf")) ? iter(schema.get("anyOf")) : truthy(schema.get("oneOf")) ? iter(schema.get("oneOf")) : null;
  if (variants !== null) alternatives = variants;
  if (alternatives !== null && alternatives.length) {
    let options = alternatives.filter(isObject).map((v) => gem(v, path, defs, depth, problems));
    const nulls = options.filter((o) => o.get("type") === "NULL");
    options = options.filter((o) => o.get("type") !== "NULL");
    if (nulls.length) out.set("nullable", true);
    if (options.length === 1) {
      for (const [k, v] of options[0]) if (!out.has(k)) out.set(k, v);
    } else if (options.length) {
      out.set("any_of", options);
      out.delete("type");
    }
  }
  return out;
}
