// Render-state problems as the Python runtime words them (compiler/promptmill/runtime/schema/state_errors.py,
// core/errors.py StateError): `(state path, message)` pairs such as `("state.subtask.id", "is required")`,
// sorted by path (indexes numerically) then message, and the PM810/PM811/PM812 error that lists them.
import { PromptmillError } from "../errors.js";
import { type Json, dumpString, dumps, isObject } from "../pyjson.js";
import { cmpCodePoints } from "./suggest.js";

export type Part = string | number;
export type Problem = [path: string, message: string];

/** core/errors.py StateError: every problem, at most 20 listed. `role` is "" until the engine names it. */
export class StateError extends PromptmillError {
  readonly role: string;
  readonly errors: readonly Problem[];
  constructor(role: string, errors: readonly Problem[], code = "PM810") {
    const lines = errors.slice(0, 20).map(([path, msg]) => `${path}: ${msg}`);
    if (errors.length > 20) lines.push(`... and ${errors.length - 20} more`);
    super(code, `render state for role '${role}' is invalid:\n  ` + lines.join("\n  "));
    this.role = role;
    this.errors = errors;
    this.name = "StateError";
  }

  /** The same error for `role` (the engine's re-raise of an error raised without one). */
  withRole(role: string): StateError {
    return new StateError(role, this.errors, this.code);
  }
}

const NOT_PRINTABLE = /[\p{Cc}\p{Cf}\p{Cs}\p{Co}\p{Cn}\p{Zl}\p{Zp}\p{Zs}]/u;

/** Python's repr() of a str: 'quoted', escapes for what str.isprintable() refuses. */
export function pyRepr(s: string): string {
  const quote = s.includes("'") && !s.includes('"') ? '"' : "'";
  let out = quote;
  for (const ch of s) {
    const c = ch.codePointAt(0) as number;
    if (ch === quote || ch === "\\") out += "\\" + ch;
    else if (ch === "\t") out += "\\t";
    else if (ch === "\n") out += "\\n";
    else if (ch === "\r") out += "\\r";
    else if (c < 0x20 || c === 0x7f) out += "\\x" + c.toString(16).padStart(2, "0");
    else if (c < 0x7f) out += ch;
    else if (!NOT_PRINTABLE.test(ch)) out += ch;
    else if (c <= 0xff) out += "\\x" + c.toString(16).padStart(2, "0");
    else if (c <= 0xffff) out += "\\u" + c.toString(16).padStart(4, "0");
    else out += "\\U" + c.toString(16).padStart(8, "0");
  }
  return out + quote;
}

function sortedKeys(v: Json): Json {
  if (Array.isArray(v)) return v.map(sortedKeys);
  if (isObject(v)) {
    const keys = [...v.keys()].sort(cmpCodePoints);
    return new Map(keys.map((k) => [k, sortedKeys(v.get(k) as Json)]));
  }
  return v;
}

/** A value as a message shows it: strings quoted 'like this', the rest as JSON (keys sorted). */
export function show(value: Json): string {
  if (typeof value === "string") return pyRepr(value);
  return dumps(sortedKeys(value), { ensureAscii: false });
}

/** The word JSON Schema uses for a value's type (core/typenames.py json_type). */
export function jsonType(value: unknown): string {
  if (value === null) return "null";
  if (typeof value === "boolean") return "boolean";
  if (typeof value === "bigint") return "integer";
  if (typeof value === "number") return "number";
  if (typeof value === "string") return "string";
  if (Array.isArray(value)) return "array";
  if (value instanceof Map) return "object";
  return typeof value;
}

const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** `state`, `state.memory[3].summary`, `state["odd key"]`. */
export function formatPath(root: string, parts: readonly Part[]): string {
  let text = root;
  for (const part of parts) {
    if (typeof part === "number") text += `[${part}]`;
    else if (IDENTIFIER.test(part)) text += `.${part}`;
    else text += `[${dumpString(part, false)}]`;
  }
  return text;
}

function comparePaths(a: readonly Part[], b: readonly Part[]): number {
  for (let i = 0; i < a.length && i < b.length; i++) {
    const x = a[i];
    const y = b[i];
    const kx = typeof x === "number" ? 0 : 1;
    const ky = typeof y === "number" ? 0 : 1;
    if (kx !== ky) return kx - ky;
    const d = typeof x === "number" ? x - (y as number) : cmpCodePoints(x, y as string);
    if (d) return d;
  }
  return a.length - b.length;
}

/** Found problems, without duplicates, sorted by path (indexes numerically) then message, as pairs. */
export function explain(found: readonly { parts: readonly Part[]; message: string }[], root: string): Problem[] {
  const seen = new Map<string, { parts: readonly Part[]; message: string }>();
  for (const f of found) seen.set(JSON.stringify([f.parts, f.message]), f);
  const ordered = [...seen.values()].sort((p, q) => comparePaths(p.parts, q.parts) || cmpCodePoints(p.message, q.message));
  return ordered.map((f) => [formatPath(root, f.parts), f.message]);
}
