// Is this value a valid draft 2020-12 JSON Schema, and if not, what is wrong, in the Python runtime's words
// (compiler/promptmill/runtime/schema/{metaschema,validate}.py `check_schema`): tool declarations in the render
// state carry JSON Schema `parameters`, checked when offered. The answer is the metaschema's (the `regex`
// format asserted, other formats not), and local `$ref`s must resolve; the messages are those jsonschema gives
// for the metaschema's keywords (`5 is not of type 'object', 'boolean'`, `'(' is not a 'regex'`).
import { type Json, type JsonObject, isObject } from "../pyjson.js";
import { PatternError, pyRegex } from "./pyregex.js";
import { pyRepr as pyReprValue, reprString as pyRepr } from "../pyfmt.js";
import { cmpCodePoints } from "../suggest.js";
import { Unsupported, resolvePointer } from "./validate.js";

const SIMPLE_TYPES = ["array", "boolean", "integer", "null", "number", "object", "string"];
const SIMPLE_TEXT = "[" + SIMPLE_TYPES.map((t) => `'${t}'`).join(", ") + "]";
const ANCHOR = /^[A-Za-z_][-A-Za-z0-9._]*$/;
const ID = /^[^#]*#?$/;
const SUBSCHEMA = new Set(["items", "contains", "additionalProperties", "propertyNames", "if", "then", "else", "not", "unevaluatedItems", "unevaluatedProperties", "contentSchema"]);
const SCHEMA_MAPS = new Set(["$defs", "properties", "patternProperties", "dependentSchemas", "definitions"]);
const SCHEMA_ARRAYS = new Set(["prefixItems", "allOf", "anyOf", "oneOf"]);
const NUMBERS = new Set(["maximum", "exclusiveMaximum", "minimum", "exclusiveMinimum"]);
const COUNTS = new Set(["maxLength", "minLength", "maxItems", "minItems", "maxContains", "minContains", "maxProperties", "minProperties"]);
const BOOLEANS = new Set(["uniqueItems", "deprecated", "readOnly", "writeOnly"]);
const STRINGS = new Set(["$schema", "$ref", "$dynamicRef", "$recursiveRef", "$comment", "title", "description", "format", "contentEncoding", "contentMediaType"]);
const ANCHORS = new Set(["$anchor", "$dynamicAnchor", "$recursiveAnchor"]);
const DATA_KEYWORDS = new Set(["enum", "const", "default", "examples"]);

/** Python's repr() of JSON data: `{'a': [1, 2.0, True, None]}` (pyfmt.ts `pyRepr`). */
export { pyReprValue };

const regexOk = new Map<string, boolean>();
function compiles(pattern: string): boolean {
  let ok = regexOk.get(pattern);
  if (ok === undefined) {
    try {
      pyRegex(pattern);
      ok = true;
    } catch (err) {
      if (!(err instanceof PatternError)) throw err;
      ok = false;
    }
    if (regexOk.size < 1024) regexOk.set(pattern, ok);
  }
  return ok;
}

const isNumber = (v: Json): boolean => typeof v === "bigint" || typeof v === "number";
const isInteger = (v: Json): boolean => typeof v === "bigint" || (typeof v === "number" && Number.isInteger(v));

function unique(items: Json[]): boolean {
  const seen = new Set<string>();
  for (const x of items) {
    const key = typeof x === "string" ? "s" + x : pyReprValue(x);
    if (seen.has(key)) return false;
    seen.add(key);
  }
  return true;
}

function pointer(parts: readonly (string | number)[]): string {
  return parts.map((p) => "/" + String(p).replace(/~/g, "~0").replace(/\//g, "~1")).join("");
}

type Found = [string, string];

/** jsonschema's `stringArray`: an array of unique strings. */
function stringArray(v: Json, at: (string | number)[], out: Found[]): void {
  if (!Array.isArray(v)) {
    out.push([pointer(at), `${pyReprValue(v)} is not of type 'array'`]);
    return;
  }
  if (!unique(v)) out.push([pointer(at), `${pyReprValue(v)} has non-unique elements`]);
  v.forEach((s, i) => {
    if (typeof s !== "string") out.push([pointer([...at, i]), `${pyReprValue(s)} is not of type 'string'`]);
  });
}

function keyword(key: string, value: Json, at: (string | number)[], out: Found[], walk: (s: Json, at: (string | number)[]) => void): void {
  const here = pointer(at);
  const r = () => pyReprValue(value);
  if (SUBSCHEMA.has(key)) walk(value, at);
  else if (SCHEMA_MAPS.has(key)) {
    if (!isObject(value)) out.push([here, `${r()} is not of type 'object'`]);
    else {
      if (key === "patternProperties") for (const k of value.keys()) if (!compiles(k)) out.push([here, `${pyRepr(k)} is not a 'regex'`]);
      for (const [k, s] of value) walk(s, [...at, k]);
    }
  } else if (SCHEMA_ARRAYS.has(key)) {
    if (!Array.isArray(value)) out.push([here, `${r()} is not of type 'array'`]);
    else if (!value.length) out.push([here, "[] should be non-empty"]);
    else value.forEach((s, i) => walk(s, [...at, i]));
  } else if (key === "type") {
    if (typeof value === "string") {
      if (!SIMPLE_TYPES.includes(value)) out.push([here, `${r()} is not one of ${SIMPLE_TEXT}`]);
    } else if (Array.isArray(value)) {
      // anyOf [simpleTypes, array of unique simpleTypes]: jsonschema's best match is the array branch's
      if (!value.length) out.push([here, "[] should be non-empty"]);
      else if (!unique(value)) out.push([here, `${r()} has non-unique elements`]);
      else {
        const bad = value.findIndex((t) => typeof t !== "string" || !SIMPLE_TYPES.includes(t));
        if (bad >= 0) out.push([pointer([...at, bad]), `${pyReprValue(value[bad])} is not one of ${SIMPLE_TEXT}`]);
      }
    } else out.push([here, `${r()} is not one of ${SIMPLE_TEXT}`]);
  } else if (key === "enum" || key === "examples") {
    if (!Array.isArray(value)) out.push([here, `${r()} is not of type 'array'`]);
  } else if (key === "multipleOf") {
    if (!isNumber(value)) out.push([here, `${r()} is not of type 'number'`]);
    else if ((value as number | bigint) <= 0) out.push([here, `${r()} is less than or equal to the minimum of 0`]);
  } else if (NUMBERS.has(key)) {
    if (!isNumber(value)) out.push([here, `${r()} is not of type 'number'`]);
  } else if (COUNTS.has(key)) {
    if (!isInteger(value)) out.push([here, `${r()} is not of type 'integer'`]);
    if (isNumber(value) && (value as number | bigint) < 0) out.push([here, `${r()} is less than the minimum of 0`]);
  } else if (key === "pattern") {
    if (typeof value !== "string") out.push([here, `${r()} is not of type 'string'`]);
    else if (!compiles(value)) out.push([here, `${r()} is not a 'regex'`]);
  } else if (BOOLEANS.has(key)) {
    if (typeof value !== "boolean") out.push([here, `${r()} is not of type 'boolean'`]);
  } else if (key === "required") stringArray(value, at, out);
  else if (key === "dependentRequired") {
    if (!isObject(value)) out.push([here, `${r()} is not of type 'object'`]);
    else for (const [k, v] of value) stringArray(v, [...at, k], out);
  } else if (key === "dependencies") {
    if (!isObject(value)) out.push([here, `${r()} is not of type 'object'`]);
    else {
      for (const [k, v] of value) {
        if (isObject(v) || typeof v === "boolean") walk(v, [...at, k]);
        else if (!Array.isArray(v) || !unique(v) || !v.every((s) => typeof s === "string")) {
          out.push([pointer([...at, k]), `${pyReprValue(v)} is not valid under any of the given schemas`]);
        }
      }
    }
  } else if (key === "$id") {
    if (typeof value !== "string") out.push([here, `${r()} is not of type 'string'`]);
    else if (!ID.test(value)) out.push([here, `${r()} does not match '^[^#]*#?$'`]);
  } else if (STRINGS.has(key)) {
    if (typeof value !== "string") out.push([here, `${r()} is not of type 'string'`]);
  } else if (ANCHORS.has(key)) {
    if (typeof value !== "string") out.push([here, `${r()} is not of type 'string'`]);
    else if (!ANCHOR.test(value)) out.push([here, `${r()} does not match '^[A-Za-z_][-A-Za-z0-9._]*$'`]);
  } else if (key === "$vocabulary") {
    if (!isObject(value)) out.push([here, `${r()} is not of type 'object'`]);
    else for (const [k, v] of value) if (typeof v !== "boolean") out.push([pointer([...at, k]), `${pyReprValue(v)} is not of type 'boolean'`]);
  }
}

function unresolvedRefs(schema: Json): Found[] {
  const problems: Found[] = [];
  const stack: [Json, (string | number)[]][] = [[schema, []]];
  while (stack.length) {
    const [node, where] = stack.pop() as [Json, (string | number)[]];
    if (isObject(node)) {
      const ref = node.get("$ref");
      if (typeof ref === "string" && ref.startsWith("#/")) {
        try {
          resolvePointer(schema, ref);
        } catch (err) {
          if (!(err instanceof Unsupported)) throw err;
          if (!/enters a nested resource$/.test(err.message)) problems.push([pointer([...where, "$ref"]), `$ref ${pyRepr(ref)} points nowhere`]);
        }
      }
      for (const [k, v] of node) if (!DATA_KEYWORDS.has(k)) stack.push([v, [...where, k]]);
    } else if (Array.isArray(node)) node.forEach((v, i) => stack.push([v, [...where, i]]));
  }
  return problems;
}

/** Problems with `schema` as a draft 2020-12 schema: `[JSON pointer in the schema, message]`, sorted; [] when fine. */
export function checkSchema(schema: Json): [string, string][] {
  const found: Found[] = [];
  const walk = (s: Json, at: (string | number)[]): void => {
    if (typeof s === "boolean") return;
    if (!isObject(s)) {
      found.push([pointer(at), `${pyReprValue(s)} is not of type 'object', 'boolean'`]);
      return;
    }
    for (const [k, v] of s as JsonObject) keyword(k, v, [...at, k], found, walk);
  };
  walk(schema, []);
  found.push(...unresolvedRefs(schema));
  const seen = new Map<string, Found>();
  for (const f of found) seen.set(JSON.stringify(f), f);
  return [...seen.values()].sort((a, b) => cmpCodePoints(a[0], b[0]) || cmpCodePoints(a[1], b[1]));
}
