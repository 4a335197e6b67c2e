// Render-state problems as the Python runtime words them (compiler/promptmill/runtime/schema/state_errors.py,
// core/errors.py StateError): `(state path, message)` pairs such as `("state.subtask.id", "is required")`,
// sorted by path (indexes numerically) then message, and the PM810/PM811/PM812 error that lists them.
import { PromptmillError } from "../errors.js";
import { type Json, dumpString, dumps, isObject } from "../pyjson.js";
import { cmpCodePoints } from "../suggest.js";
import { reprString } from "../pyfmt.js";

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

/** Python's repr() of a str (pyfmt.ts `reprString`). */
export { reprString as pyRepr };

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
  if (typeof value === "string") return reprString(value);
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
