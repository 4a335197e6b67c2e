// Conditions (docs/bundle-format.md section 6; Python runtime/conditions.py): `when` of sections, rule lines and
// parent choices. Comparisons never raise on the state: a missing path or mismatched types make them false.

import { type Json, type JsonObject, isObject, pyEqual } from "./pyjson.js";
import { PromptmillError } from "./errors.js";
import { pyRepr } from "./pyfmt.js";

export const OPERATORS = ["eq", "ne", "gt", "gte", "lt", "lte", "in", "contains", "regex", "exists"];
export const ROOTS = ["state", "role", "model", "provider", "event"];
const ROLE_FIELDS = ["id", "category"];
export const EVENTS = ["start", "continue"];

const MISSING = Symbol("missing");
type Found = Json | typeof MISSING;

/** The render context a condition reads: {state, role: {id, category}, model, provider, event}. */
export type ConditionContext = JsonObject;

export function lookup(context: JsonObject, path: string): Found {
  let value: Found = context;
  for (const part of path.split(".")) {
    if (isObject(value)) {
      value = value.has(part) ? (value.get(part) as Json) : MISSING;
    } else if (Array.isArray(value) && /^[0-9]+$/.test(part)) {
      // Python's str.isdigit also takes other Unicode digits; the compiler writes ASCII paths
      const index = Number(part);
      value = index < value.length ? value[index] : MISSING;
    } else return MISSING;
    if (value === MISSING) return MISSING;
  }
  return value;
}

const isNumber = (x: Found): x is bigint | number => typeof x === "bigint" || typeof x === "number";

function equal(a: Json, b: Json): boolean {
  if (typeof a === "boolean" || typeof b === "boolean") return typeof a === typeof b && a === b;
  return pyEqual(a, b);
}

function codepointCompare(a: string, b: string): number {
  if (a === b) return 0;
  const x = [...a];
  const y = [...b];
  for (let i = 0; i < Math.min(x.length, y.length); i++) {
    const d = (x[i].codePointAt(0) as number) - (y[i].codePointAt(0) as number);
    if (d) return d;
  }
  return x.length - y.length;
}

function numCompare(a: bigint | number, b: bigint | number): number {
  // JavaScript compares bigint and number by exact value, as Python does int and float
  if (Number.isNaN(a) || Number.isNaN(b)) return NaN;
  return a < b ? -1 : a > b ? 1 : 0;
}

const REGEX_CACHE = new Map<string, RegExp>();

/** A Python `re` pattern as a JavaScript RegExp (the common syntax; named groups translated). */
export function pythonRegex(pattern: string): RegExp {
  let re = REGEX_CACHE.get(pattern);
  if (re !== undefined) return re;
  let src = pattern;
  let flags = "u";
  const inline = /^\(\?([aiLmsux]+)\)/.exec(src);
  if (inline) {
    src = src.slice(inline[0].length);
    for (const f of inline[1]) {
      if (f === "i" || f === "m" || f === "s") flags += f;
      else if (f !== "u") throw new PromptmillError("PM801", `the regex ${pyRepr(pattern)} uses the inline flag '${f}', which this runtime does not support`);
    }
  }
  src = src.replace(/\(\?P</g, "(?<").replace(/\(\?P=(\w+)\)/g, "\\k<$1>").replace(/\\Z/g, "$(?![\\s\\S])").replace(/\\A/g, "^");
  try {
    re = new RegExp(src, flags);
  } catch {
    try {
      re = new RegExp(src, flags.replace("u", ""));
    } catch (exc) {
      throw new PromptmillError("PM801", `the regex ${pyRepr(pattern)} cannot run in this runtime: ${(exc as Error).message}`);
    }
  }
  if (REGEX_CACHE.size >= 512) REGEX_CACHE.clear();
  REGEX_CACHE.set(pattern, re);
  return re;
}

function compare(op: string, actual: Found, value: Json): boolean {
  if (op === "exists") {
    const want = value === null ? true : truthy(value);
    return (actual !== MISSING && actual !== null) === want;
  }
  if (actual === MISSING) return op === "ne";
  if (op === "eq") return equal(actual, value);
  if (op === "ne") return !equal(actual, value);
  if (op === "gt" || op === "gte" || op === "lt" || op === "lte") {
    let c: number;
    if (isNumber(actual) && isNumber(value)) c = numCompare(actual, value);
    else if (typeof actual === "string" && typeof value === "string") c = codepointCompare(actual, value);
    else return false;
    if (Number.isNaN(c)) return false;
    return op === "gt" ? c > 0 : op === "gte" ? c >= 0 : op === "lt" ? c < 0 : c <= 0;
  }
  if (op === "in") return Array.isArray(value) && value.some((v) => equal(actual, v));
  if (op === "contains") {
    if (typeof actual === "string") return typeof value === "string" && actual.includes(value);
    if (Array.isArray(actual)) return actual.some((item) => equal(item, value));
    if (isObject(actual)) return typeof value === "string" && actual.has(value);
    return false;
  }
  if (op === "regex") return typeof actual === "string" && typeof value === "string" && pythonRegex(value).test(actual);
  return false;
}

function truthy(v: Json): boolean {
  if (v === null || v === false) return false;
  if (typeof v === "string") return v.length > 0;
  if (typeof v === "bigint") return v !== 0n;
  if (typeof v === "number") return v !== 0;
  if (Array.isArray(v)) return v.length > 0;
  if (isObject(v)) return v.size > 0;
  return true;
}

/** True when `condition` holds in `context` (null always holds). */
export function evaluate(condition: JsonObject | null | undefined, context: ConditionContext): boolean {
  if (condition === null || condition === undefined) return true;
  if (condition.has("any")) return (condition.get("any") as Json[]).some((c) => evaluate(c as JsonObject, context));
  if (condition.has("all")) return (condition.get("all") as Json[]).every((c) => evaluate(c as JsonObject, context));
  if (condition.has("not")) return !evaluate(condition.get("not") as JsonObject, context);
  const path = condition.get("path") as string;
  return compare(condition.get("op") as string, lookup(context, path), condition.has("value") ? (condition.get("value") as Json) : null);
}

/** The condition context of a render (Python engine._condition_context). */
export function conditionContext(id: string, category: string, model: string | null, state: JsonObject, wire: string, event: string): ConditionContext {
  return new Map<string, Json>([
    ["state", state],
    ["role", new Map<string, Json>([["id", id], ["category", category]])],
    ["model", model],
    ["provider", wire],
    ["event", event],
  ]);
}

function pathProblem(path: string): string | null {
  const dot = path.indexOf(".");
  const root = dot < 0 ? path : path.slice(0, dot);
  const rest = dot < 0 ? "" : path.slice(dot + 1);
  if (!ROOTS.includes(root)) return `path '${path}' must start with one of: ${ROOTS.join(", ")}`;
  if (root === "role" && !ROLE_FIELDS.includes(rest)) return `path '${path}': the role has only role.id, role.category`;
  if (["model", "provider", "event"].includes(root) && rest) return `path '${path}': '${root}' is a plain value and has no fields`;
  if (root === "state" && (!rest || rest.split(".").includes(""))) return `path '${path}' must name a field of the state, e.g. state.subtask.id`;
  return null;
}

/** Shape problems of a condition (Python `problems`); [] when it is well formed. A regex is checked when it runs. */
export function problems(condition: Json, roots = false): string[] {
  if (!isObject(condition)) return ["a condition must be a mapping"];
  const forms = ["path", "any", "all", "not"].filter((k) => condition.has(k));
  if (forms.length !== 1) return ["a condition needs exactly one of: path (with op), any, all, not"];
  const form = forms[0];
  const out: string[] = [];
  if (form === "any" || form === "all") {
    if (condition.size > 1) out.push(`'${form}' cannot be combined with other keys`);
    const subs = condition.get(form);
    if (!Array.isArray(subs) || !subs.length) return [...out, `'${form}' needs a non-empty list of conditions`];
    for (const sub of subs) out.push(...problems(sub, roots));
    return out;
  }
  if (form === "not") {
    if (condition.size > 1) out.push("'not' cannot be combined with other keys");
    return [...out, ...problems(condition.get("not") as Json, roots)];
  }
  const op = condition.get("op");
  if (typeof op !== "string" || !OPERATORS.includes(op)) return [`unknown operator ${pyRepr(op ?? null)}`];
  const path = condition.get("path");
  if (typeof path !== "string" || !path) return ["'path' must be a dotted path such as state.subtask.id"];
  const bad = roots ? pathProblem(path) : null;
  if (bad) out.push(bad);
  if (op !== "exists" && !condition.has("value")) out.push(`operator '${op}' needs a value`);
  const value = condition.has("value") ? (condition.get("value") as Json) : null;
  if (op === "in" && !Array.isArray(value)) out.push("operator 'in' needs a list value");
  if (["gt", "gte", "lt", "lte"].includes(op) && !(isNumber(value) || typeof value === "string")) out.push(`operator '${op}' needs a number or string value`);
  if (op === "regex" && typeof value !== "string") out.push("operator 'regex' needs a string pattern");
  if (op === "exists" && value !== null && typeof value !== "boolean") out.push("operator 'exists' takes true or false");
  if (roots && path === "event" && ["eq", "ne", "in"].includes(op)) {
    for (const v of Array.isArray(value) ? value : [value]) if (typeof v !== "string" || !EVENTS.includes(v)) out.push(`event ${pyRepr(v)} never happens`);
  }
  return out;
}

/** A condition on one line (Python `describe`). */
export function describe(condition: JsonObject, dumps: (v: Json) => string): string {
  if (condition.has("any") || condition.has("all")) {
    const key = condition.has("any") ? "any" : "all";
    return `${key}(` + (condition.get(key) as JsonObject[]).map((c) => describe(c, dumps)).join(", ") + ")";
  }
  if (condition.has("not")) return `not(${describe(condition.get("not") as JsonObject, dumps)})`;
  if (!condition.has("value")) return `${condition.get("path")} ${condition.get("op")}`;
  return `${condition.get("path")} ${condition.get("op")} ${dumps(condition.get("value") as Json)}`;
}
