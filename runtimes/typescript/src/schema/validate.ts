// JSON Schema (draft 2020-12) validation of render state, answering as the Python runtime does
// (compiler/promptmill/runtime/schema/{validate,closures,state_errors}.py): `isValid` is jsonschema's
// `Draft202012Validator(schema).is_valid` (formats not asserted), and `errors` lists every failure as the
// `(state path, message)` pairs the Python runtime derives from jsonschema's `iter_errors`, in its order.
//
// The Python runtime has two validators: closures for the schemas they decide exactly, and jsonschema itself
// for the rest (unevaluatedProperties/Items, $dynamicRef, $recursiveRef, refs that are not local JSON pointers,
// a nested $id, keyword values of the wrong shape, patterns Python cannot compile). This one implements the
// first set only: a schema outside it throws `Unsupported` from the constructor, naming what, and the caller
// refuses the role (a build error) instead of answering differently from Python.
//
// Lazy paths name arrays (by property names from the root) whose items the root checks skip; callers check
// each item with `itemValid` (and `itemErrors`) when it is offered.
import { type Json, type JsonObject, isObject, pyEqual } from "../pyjson.js";
import { equal, TYPE_TESTS, uniq } from "./json_values.js";
import { PatternError, pyRegex } from "./pyregex.js";
import { type Part, type Problem, explain, jsonType, show } from "./state_errors.js";
import { suggest } from "../suggest.js";
import { pyLen } from "../pyfmt.js";

/** The schema needs something this validator cannot decide exactly as the Python runtime does. */
export class Unsupported extends Error {
  constructor(message: string) {
    super(message);
    this.name = "Unsupported";
  }
}

const UNSUPPORTED = ["unevaluatedProperties", "unevaluatedItems", "$dynamicRef", "$recursiveRef"];

type Num = bigint | number;
type Found = { parts: Part[]; message: string };

/** A keyword's number as Python's closures take it (booleans are integers there), or Unsupported. */
function num(node: JsonObject, key: string): Num | undefined {
  if (!node.has(key)) return undefined;
  const v = node.get(key) as Json;
  if (typeof v === "boolean") return v ? 1n : 0n;
  if (typeof v === "bigint") return v;
  if (typeof v === "number" && !Number.isNaN(v)) return v;
  throw new Unsupported(`${key} must be a number`);
}

function strings(v: Json | undefined, what: string): string[] {
  if (v === undefined) return [];
  if (!Array.isArray(v) || !v.every((s) => typeof s === "string")) throw new Unsupported(`${what}: expected a list of strings`);
  return v as string[];
}

/** The target of `ref` ("#" or "#/json/pointer") in `document`, walked as Python's `referencing` walks it. */
export function resolvePointer(document: Json, ref: string): Json {
  if (ref === "#") return document;
  let contents: Json = document;
  let segments: string[];
  try {
    segments = decodeURIComponent(ref.slice(2)).split("/");
  } catch {
    segments = ref.slice(2).split("/");
  }
  for (const segment of segments) {
    let next: Json | undefined;
    if (Array.isArray(contents)) {
      next = /^[-+]?\d+$/.test(segment.trim()) ? contents.at(Number(segment)) : undefined;
    } else if (isObject(contents)) {
      next = contents.get(segment.replace(/~1/g, "/").replace(/~0/g, "~"));
    }
    if (next === undefined) throw new Unsupported(`$ref '${ref}' points nowhere`);
    contents = next;
    if (isObject(contents) && contents.has("$id")) throw new Unsupported(`$ref '${ref}' enters a nested resource`);
  }
  return contents;
}

function toFraction(x: Num): [bigint, bigint] {
  if (typeof x === "bigint") return [x, 1n];
  let m = x;
  let d = 1n;
  while (!Number.isInteger(m)) {
    m *= 2;
    d *= 2n;
  }
  return [BigInt(m), d];
}

/** multipleOf exactly as jsonschema computes it (float division, exact fractions on overflow). */
function multipleOk(x: Num, step: Num): boolean {
  if (typeof step === "number") {
    const q = Number(x) / step;
    if (Number.isFinite(q)) return Number.isInteger(q);
    if (typeof x === "number" && !Number.isFinite(x)) return false;
    const [xn, xd] = toFraction(x);
    const [sn, sd] = toFraction(step);
    return (xn * sd) % (xd * sn) === 0n;
  }
  if (typeof x === "bigint") return x % step === 0n;
  return x % Number(step) === 0;
}

/** Python's bool() of a JSON value. */
function truthy(v: Json): boolean {
  if (v === null || v === false || v === "") return false;
  if (typeof v === "bigint" || typeof v === "number") return !pyEqual(v, 0n);
  if (Array.isArray(v)) return v.length > 0;
  if (isObject(v)) return v.size > 0;
  return true;
}

function either(words: string[]): string {
  return words.length === 1 ? words[0] : words.slice(0, -1).join(", ") + " or " + words[words.length - 1];
}

function plural(n: Num, word: string): string {
  return `${show(n)} ${word}` + (pyEqual(n, 1n) ? "" : "s");
}

const BOUNDS: Record<string, (v: Num) => string> = {
  minLength: (v) => `must be at least ${plural(v, "character")}`,
  maxLength: (v) => `must be at most ${plural(v, "character")}`,
  minItems: (v) => `must have at least ${plural(v, "item")}`,
  maxItems: (v) => `must have at most ${plural(v, "item")}`,
  minProperties: (v) => `must have at least ${plural(v, "key")}`,
  maxProperties: (v) => `must have at most ${plural(v, "key")}`,
  minimum: (v) => `must be >= ${show(v)}`,
  maximum: (v) => `must be <= ${show(v)}`,
  exclusiveMinimum: (v) => `must be > ${show(v)}`,
  exclusiveMaximum: (v) => `must be < ${show(v)}`,
  multipleOf: (v) => `must be a multiple of ${show(v)}`,
  minContains: (v) => `must contain at least ${plural(v, "matching item")}`,
  maxContains: (v) => `must contain at most ${plural(v, "matching item")}`,
};

const KINDS = ["string", "number", "object", "array"] as const;
type Kind = (typeof KINDS)[number];

/** The schema at `path` (plain `properties` steps) of a lazy array, or an Error as Python's ValueError. */
function lazyArray(schema: Json, path: readonly string[]): JsonObject {
  const repr = "(" + path.map((p) => `'${p}'`).join(", ") + (path.length === 1 ? ",)" : ")");
  let node: Json = schema;
  path.forEach((name, depth) => {
    const props = isObject(node) ? node.get("properties") : undefined;
    if (!isObject(props) || !props.has(name)) {
      const where = path.slice(0, depth).join(".") || "the root";
      throw new Error(`lazy path ${repr}: ${where} declares no property '${name}'`);
    }
    node = props.get(name) as Json;
    if (isObject(node) && node.has("$id")) throw new Error(`lazy path ${repr} passes through a nested $id`);
  });
  const kinds0 = isObject(node) ? node.get("type") : undefined;
  const kinds = typeof kinds0 === "string" ? [kinds0] : kinds0;
  const isArray =
    isObject(node) && ((Array.isArray(kinds) && kinds.includes("array")) || (kinds === undefined && node.has("items")));
  if (!isArray) throw new Error(`lazy path ${repr} does not lead to an array schema`);
  const arr = node as JsonObject;
  if (arr.has("prefixItems")) throw new Error(`lazy path ${repr}: arrays with prefixItems cannot be lazy`);
  const items = arr.has("items") ? arr.get("items") : true;
  if (isObject(items) && items.has("$id")) throw new Error(`lazy path ${repr}: items with a $id cannot be lazy`);
  return arr;
}

/** A copy of `schema` whose lazy arrays have `items: true`; the rest is shared. */
function skipItems(schema: Json, paths: readonly (readonly string[])[]): Json {
  const copies = new Map<string, JsonObject>();
  const copyAt = (path: readonly string[]): JsonObject => {
    const key = JSON.stringify(path);
    const done = copies.get(key);
    if (done) return done;
    let node: JsonObject;
    if (!path.length) node = new Map(schema as JsonObject);
    else {
      const parent = copyAt(path.slice(0, -1));
      const props = new Map(parent.get("properties") as JsonObject);
      parent.set("properties", props);
      node = new Map(props.get(path[path.length - 1]) as JsonObject);
      props.set(path[path.length - 1], node);
    }
    copies.set(key, node);
    return node;
  };
  for (const path of paths) copyAt(path).set("items", true);
  return copies.get("[]") ?? schema;
}

/** A compiled validator for one schema (a role's `inputs`). */
export class Validator {
  readonly schema: Json;
  private readonly root: Json;
  private readonly items = new Map<string, Json>();
  private readonly roots = new Set<Json>();
  private readonly checked = new Set<Json>();
  private readonly refs = new Map<string, Json>();
  private readonly patterns = new Map<string, RegExp>();

  constructor(schema: Json, options: { lazyPaths?: readonly (readonly string[])[] } = {}) {
    this.schema = schema;
    const lazy = options.lazyPaths ?? [];
    for (const path of lazy) {
      const arr = lazyArray(schema, path);
      this.items.set(JSON.stringify(path), arr.has("items") ? (arr.get("items") as Json) : true);
    }
    this.root = skipItems(schema, lazy);
    this.roots = new Set([schema, this.root]);
    this.prepare(this.root);
    for (const s of this.items.values()) this.prepare(s);
  }

  /** Always true: a schema this validator cannot decide exactly throws Unsupported instead. */
  get fast(): boolean {
    return true;
  }

  /** Whether `instance` is valid, not looking inside lazy arrays' items. */
  isValid(instance: Json): boolean {
    return this.check(this.root, instance, [], false, null);
  }

  /** Every failure as `[path, message]`, e.g. `["state.subtask.id", "is required"]`, sorted by path then message. */
  errors(instance: Json, root = "state"): Problem[] {
    const found: Found[] = [];
    this.check(this.root, instance, [], false, found);
    return explain(found, root);
  }

  /** Whether one item of the lazy array at `lazyPath` is valid. */
  itemValid(lazyPath: readonly string[], item: Json): boolean {
    return this.check(this.itemSchema(lazyPath), item, [], false, null);
  }

  /** The schema each item of the lazy array at `lazyPath` is checked against. */
  itemSchema(lazyPath: readonly string[]): Json {
    const s = this.items.get(JSON.stringify(lazyPath));
    if (s === undefined) throw new Error(`${JSON.stringify(lazyPath)} is not one of this validator's lazy paths`);
    return s;
  }

  /** The failures of item `index` of the lazy array, e.g. `["state.memory[7].type", ...]`. */
  itemErrors(lazyPath: readonly string[], index: number, item: Json, root = "state"): Problem[] {
    const found: Found[] = [];
    this.check(this.itemSchema(lazyPath), item, [...lazyPath, index], false, found);
    return explain(found, root);
  }

  // -- preparing: refuse what the Python closures refuse (they then leave it to jsonschema) --------------

  private regex(pattern: Json): RegExp {
    if (typeof pattern !== "string") throw new Unsupported("pattern must be a string");
    let rx = this.patterns.get(pattern);
    if (rx === undefined) {
      try {
        rx = pyRegex(pattern);
      } catch (err) {
        if (err instanceof PatternError) throw new Unsupported(err.message);
        throw err;
      }
      this.patterns.set(pattern, rx);
    }
    return rx;
  }

  private resolve(ref: Json): Json {
    if (typeof ref !== "string" || !(ref === "#" || ref.startsWith("#/"))) {
      throw new Unsupported(`$ref ${typeof ref === "string" ? `'${ref}'` : String(ref)} is not a local JSON pointer`);
    }
    let target = this.refs.get(ref);
    if (target === undefined) {
      target = resolvePointer(this.schema, ref);
      this.refs.set(ref, target);
    }
    return target;
  }

  private subschemas(node: JsonObject, key: string): Json[] {
    const v = node.get(key) as Json;
    if (!Array.isArray(v)) throw new Unsupported(`${key} must be a list`);
    return v;
  }

  private prepare(node: Json): void {
    if (node === true || node === false) return;
    if (!isObject(node)) throw new Unsupported(`a schema must be an object or a boolean, not ${show(node)}`);
    if (this.checked.has(node)) return;
    this.checked.add(node);
    for (const word of UNSUPPORTED) if (node.has(word)) throw new Unsupported(`${word} is not implemented`);
    if (node.has("$id") && (!this.roots.has(node) || typeof node.get("$id") !== "string")) throw new Unsupported("nested $id");
    for (const kind of this.kinds(node)) this.prepareKind(node, kind);
    if (node.has("$ref")) this.prepare(this.resolve(node.get("$ref") as Json));
    if (node.has("enum") && !Array.isArray(node.get("enum"))) throw new Unsupported("enum must be a list");
    for (const key of ["allOf", "anyOf", "oneOf"]) if (node.has(key)) this.subschemas(node, key).forEach((s) => this.prepare(s));
    if (node.has("not")) this.prepare(node.get("not") as Json);
    if (node.has("if")) {
      this.prepare(node.get("if") as Json);
      if (node.has("then")) this.prepare(node.get("then") as Json);
      if (node.has("else")) this.prepare(node.get("else") as Json);
    }
  }

  /** The instance kinds whose keywords the Python closures compile for this node (all when no `type`). */
  private kinds(node: JsonObject): Kind[] {
    if (!node.has("type")) return [...KINDS];
    const t = node.get("type") as Json;
    const names = typeof t === "string" ? [t] : t;
    if (!Array.isArray(names) || !names.every((n) => typeof n === "string" && n in TYPE_TESTS)) {
      throw new Unsupported(`unknown type ${show(t)}`);
    }
    const out = new Set<Kind>();
    for (const n of names as string[]) {
      if (n === "string") out.add("string");
      else if (n === "number" || n === "integer") out.add("number");
      else if (n === "object") out.add("object");
      else if (n === "array") out.add("array");
    }
    return [...out];
  }

  private prepareKind(node: JsonObject, kind: Kind): void {
    if (kind === "string") {
      num(node, "minLength");
      num(node, "maxLength");
      if (node.has("pattern")) this.regex(node.get("pattern") as Json);
    } else if (kind === "number") {
      for (const k of ["minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"]) num(node, k);
      const step = num(node, "multipleOf");
      if (step !== undefined && pyEqual(step, 0n)) throw new Unsupported("multipleOf 0");
    } else if (kind === "object") {
      const props = node.has("properties") ? node.get("properties") : new Map();
      if (!isObject(props)) throw new Unsupported("properties must be an object");
      for (const s of props.values()) this.prepare(s);
      strings(node.get("required"), "required");
      const patterns = node.has("patternProperties") ? node.get("patternProperties") : new Map();
      if (!isObject(patterns)) throw new Unsupported("patternProperties must be an object");
      for (const [p, s] of patterns) {
        this.prepare(s);
        this.regex(p);
      }
      if (node.has("additionalProperties") && node.get("additionalProperties") !== true) {
        const joined = [...patterns.keys()].join("|");
        if (joined) this.regex(joined);
        this.prepare(node.get("additionalProperties") as Json);
      }
      if (node.has("propertyNames")) this.prepare(node.get("propertyNames") as Json);
      num(node, "minProperties");
      num(node, "maxProperties");
      const needs = node.has("dependentRequired") ? node.get("dependentRequired") : new Map();
      if (!isObject(needs)) throw new Unsupported("dependentRequired must be an object");
      for (const v of needs.values()) strings(v, "dependentRequired");
      const deps = node.has("dependentSchemas") ? node.get("dependentSchemas") : new Map();
      if (!isObject(deps)) throw new Unsupported("dependentSchemas must be an object");
      for (const s of deps.values()) this.prepare(s);
    } else {
      if (node.has("prefixItems")) this.subschemas(node, "prefixItems").forEach((s) => this.prepare(s));
      if (node.has("items")) this.prepare(node.get("items") as Json);
      num(node, "minItems");
      num(node, "maxItems");
      if (node.has("contains")) {
        this.prepare(node.get("contains") as Json);
        num(node, "minContains");
        num(node, "maxContains");
      }
    }
  }

  // -- checking -------------------------------------------------------------------------------------------

  /**
   * Whether `x` is valid against `s`. With `out`, every failure jsonschema reports is added to it (its
   * instance path and the Python runtime's message); without, the first failure answers.
   * `pn`: the schema path passed through a `propertyNames` (messages then name the key).
   */
  private check(s: Json, x: Json, path: Part[], pn: boolean, out: Found[] | null): boolean {
    if (s === true || !(s === false || isObject(s))) return true; // jsonschema ignores what is not a schema
    if (s === false) {
      out?.push({ parts: path, message: pn ? `key ${show(x)} is not allowed` : "is not allowed" });
      return false;
    }
    const node = s as JsonObject;
    let ok = true;
    const fail = (message: string): void => {
      ok = false;
      out?.push({ parts: path, message: pn ? `key ${show(x)} ${message}` : message });
    };
    const sub = (schema: Json, inst: Json, extra: Part | null, through: boolean): void => {
      if (!this.check(schema, inst, out && extra !== null ? [...path, extra] : path, pn || through, out)) ok = false;
    };
    for (const [key, value] of node) {
      switch (key) {
        case "$ref":
          sub(this.resolve(value), x, null, false);
          break;
        case "type": {
          const names = typeof value === "string" ? [value] : (value as string[]);
          if (!names.some((n) => TYPE_TESTS[n]?.(x))) fail(`expected ${names.length ? either(names) : "nothing"}, got ${jsonType(x)}`);
          break;
        }
        case "enum": {
          const values = value as Json[];
          if (!values.some((v) => equal(v, x))) fail("must be one of: " + values.map(show).join(", "));
          break;
        }
        case "const":
          if (!equal(value, x)) fail(`must be ${show(value)}`);
          break;
        case "minLength":
        case "maxLength":
          if (typeof x === "string") {
            const n = pyLen(x);
            const v = num(node, key) as Num;
            if (key === "minLength" ? n < v : n > v) fail(BOUNDS[key](v));
          }
          break;
        case "pattern":
          if (typeof x === "string" && !this.regex(value).test(x)) fail(`must match pattern ${show(value)}`);
          break;
        case "minimum":
        case "maximum":
        case "exclusiveMinimum":
        case "exclusiveMaximum":
        case "multipleOf":
          if (typeof x === "bigint" || typeof x === "number") {
            const v = num(node, key) as Num;
            const bad =
              key === "minimum" ? x < v : key === "maximum" ? x > v : key === "exclusiveMinimum" ? x <= v : key === "exclusiveMaximum" ? x >= v : !multipleOk(x, v);
            if (bad) fail(BOUNDS[key](v));
          }
          break;
        case "required":
          if (isObject(x)) {
            for (const name of value as string[]) {
              if (!x.has(name)) {
                ok = false;
                out?.push({ parts: [...path, name], message: "is required" });
              }
            }
          }
          break;
        case "dependentRequired":
          if (isObject(x)) {
            for (const [k, needs] of value as JsonObject) {
              if (!x.has(k)) continue;
              for (const need of needs as string[]) {
                if (!x.has(need)) {
                  ok = false;
                  out?.push({ parts: [...path, need], message: `is required when ${show(k)} is present` });
                }
              }
            }
          }
          break;
        case "properties":
          if (isObject(x)) for (const [k, sch] of value as JsonObject) if (x.has(k)) sub(sch, x.get(k) as Json, k, k === "propertyNames");
          break;
        case "patternProperties":
          if (isObject(x)) {
            for (const [p, sch] of value as JsonObject) {
              const rx = this.regex(p);
              for (const [k, v] of x) if (rx.test(k)) sub(sch, v, k, p === "propertyNames");
            }
          }
          break;
        case "additionalProperties":
          if (isObject(x) && value !== true) {
            const props = (node.get("properties") as JsonObject | undefined) ?? new Map<string, Json>();
            const patterns = (node.get("patternProperties") as JsonObject | undefined) ?? new Map<string, Json>();
            const joined = [...patterns.keys()].join("|");
            const rx = joined ? this.regex(joined) : null;
            const extras = [...x.keys()].filter((k) => !props.has(k) && !(rx && rx.test(k)));
            if (isObject(value)) {
              for (const k of extras) sub(value, x.get(k) as Json, k, false);
            } else if (extras.length) {
              ok = false;
              if (out) {
                const known = [...props.keys()];
                for (const k of extras) {
                  const close = suggest(k, known);
                  out.push({ parts: path, message: `unexpected key ${show(k)}` + (close ? ` (did you mean ${show(close)}?)` : "") });
                }
              }
            }
          }
          break;
        case "propertyNames":
          if (isObject(x)) for (const k of x.keys()) sub(value, k, null, true);
          break;
        case "minProperties":
        case "maxProperties":
          if (isObject(x)) {
            const v = num(node, key) as Num;
            if (key === "minProperties" ? x.size < v : x.size > v) fail(BOUNDS[key](v));
          }
          break;
        case "dependentSchemas":
          if (isObject(x)) for (const [k, sch] of value as JsonObject) if (x.has(k)) sub(sch, x, null, k === "propertyNames");
          break;
        case "prefixItems":
          if (Array.isArray(x)) (value as Json[]).forEach((sch, i) => i < x.length && sub(sch, x[i], i, false));
          break;
        case "items":
          if (Array.isArray(x)) {
            const prefix = Array.isArray(node.get("prefixItems")) ? (node.get("prefixItems") as Json[]).length : 0;
            if (x.length > prefix) {
              if (value === false) fail(`must have at most ${plural(BigInt(prefix), "item")}`);
              else for (let i = prefix; i < x.length; i++) sub(value, x[i], i, false);
            }
          }
          break;
        case "minItems":
        case "maxItems":
          if (Array.isArray(x)) {
            const v = num(node, key) as Num;
            if (key === "minItems" ? x.length < v : x.length > v) fail(BOUNDS[key](v));
          }
          break;
        case "uniqueItems":
          if (Array.isArray(x) && truthy(value) && !uniq(x)) fail("must not contain duplicate items");
          break;
        case "contains":
          if (Array.isArray(x)) {
            const least = num(node, "minContains") ?? 1n;
            const most = num(node, "maxContains") ?? BigInt(x.length);
            let matches = 0;
            let tooMany = false;
            for (const each of x) {
              if (this.check(value, each, path, false, null)) {
                matches++;
                if (matches > most) {
                  tooMany = true;
                  break;
                }
              }
            }
            if (tooMany) fail(BOUNDS.maxContains(most));
            else if (matches < least) fail(matches === 0 ? `must contain at least ${plural(least, "matching item")}` : BOUNDS.minContains(least));
          }
          break;
        case "allOf":
          (value as Json[]).forEach((sch) => sub(sch, x, null, false));
          break;
        case "anyOf":
          if (!(value as Json[]).some((sch) => this.check(sch, x, path, false, null))) fail("must match at least one of the allowed schemas");
          break;
        case "oneOf": {
          let valid = 0;
          for (const sch of value as Json[]) if (this.check(sch, x, path, false, null) && ++valid > 1) break;
          if (valid !== 1) fail(`must match exactly one of the allowed schemas (matches ${valid === 0 ? "none" : "several"})`);
          break;
        }
        case "not":
          if (this.check(value, x, path, false, null)) fail(isObject(value) && value.size === 0 ? "is not allowed" : "must not match the excluded schema");
          break;
        case "if":
          if (this.check(value, x, path, false, null)) {
            if (node.has("then")) sub(node.get("then") as Json, x, null, false);
          } else if (node.has("else")) sub(node.get("else") as Json, x, null, false);
          break;
        default:
          break;
      }
      if (!ok && !out) return false;
    }
    return ok;
  }
}
