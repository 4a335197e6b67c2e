// Is the render state JSON data of a sane size? Checked on every render
// (compiler/promptmill/runtime/statelimits.py).
//
// Limits: MAX_STATE_NODES values, MAX_STATE_CHARS characters of text (code points, as Python counts them),
// MAX_STATE_DEPTH levels of nesting. Refusals are StateError PM811 (not JSON data: NaN or an infinity, text
// with a lone surrogate, which no provider accepts) or PM812 (too large or too deep), naming the state path.
// Lists at `skip` paths (the lazy paths) are not walked: their items are checked one at a time, with the same
// function, when they are offered to the budget.
//
// The walk is the Python runtime's exact walk, in its order (a stack: the last key of an object is looked at
// first), so that a state with several problems is refused for the same one.
import { StateError } from "./schema/state_errors.js";
import { pyLen, reprString } from "./pyfmt.js";

export const MAX_STATE_NODES = 1_000_000;
export const MAX_STATE_CHARS = 8_000_000;
export const MAX_STATE_DEPTH = 128;

const LONE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** True when `s` holds a lone surrogate (not valid Unicode: it cannot be sent as UTF-8). */
export function badText(s: string): boolean {
  return LONE.test(s);
}

export { pyLen };

type Part = string | number;

interface Node {
  parent: Node | null;
  part: Part;
  depth: number;
}

function pathOf(node: Node | null): string {
  const parts: Part[] = [];
  for (let n = node; n !== null; n = n.parent) parts.push(n.part);
  let out = "state";
  for (const p of parts.reverse()) out += typeof p === "number" ? `[${p}]` : `.${p}`;
  return out;
}

function typeName(v: unknown): string {
  if (v === undefined) return "undefined";
  if (typeof v === "object") return (v as object).constructor?.name ?? "object";
  return typeof v;
}

/**
 * Refuse state that is not JSON data, is too large or too deep (lists at `skip` paths aside).
 * `at` is where `state` sits in the whole state (for one list item checked lazily).
 */
export function checkStateData(state: unknown, skip: readonly (readonly string[])[] = [], at: readonly Part[] = []): void {
  const skipKeys = new Set(skip.map((p) => JSON.stringify(p)));
  const skipDepth = Math.max(0, ...skip.map((p) => p.length));
  let base: Node | null = null;
  at.forEach((part, i) => {
    base = { parent: base, part, depth: i + 1 };
  });
  const keyOf = (node: Node): string => {
    const parts: Part[] = [];
    for (let n: Node | null = node; n !== null; n = n.parent) parts.push(n.part);
    return JSON.stringify(parts.reverse());
  };
  let nodes = 0;
  let chars = 0;
  const stack: [unknown, Node | null][] = [[state, base]];
  while (stack.length) {
    const [value, path] = stack.pop() as [unknown, Node | null];
    const depth = path?.depth ?? 0;
    nodes++;
    if (nodes > MAX_STATE_NODES) throw new StateError("", [["state", `has more than ${MAX_STATE_NODES} values`]], "PM812");
    if (typeof value === "string") {
      chars += pyLen(value);
      if (chars > MAX_STATE_CHARS) throw new StateError("", [["state", `holds more than ${MAX_STATE_CHARS} characters of text`]], "PM812");
      if (badText(value)) throw new StateError("", [[pathOf(path), "holds a lone surrogate, which is not valid Unicode text"]], "PM811");
    } else if (depth >= MAX_STATE_DEPTH && (value instanceof Map || Array.isArray(value))) {
      throw new StateError("", [[pathOf(path), `is nested more than ${MAX_STATE_DEPTH} levels deep`]], "PM812");
    } else if (value instanceof Map) {
      for (const [k, v] of value) {
        if (typeof k !== "string" || badText(k)) {
          const shown = typeof k === "string" ? reprString(k) : String(k);
          throw new StateError("", [[pathOf(path), `has a key that is not valid text: ${shown}`]], "PM811");
        }
        const child: Node = { parent: path, part: k, depth: depth + 1 };
        if (skipKeys.size && Array.isArray(v) && depth + 1 <= skipDepth && skipKeys.has(keyOf(child))) continue;
        stack.push([v, child]);
      }
    } else if (Array.isArray(value)) {
      value.forEach((v, i) => stack.push([v, { parent: path, part: i, depth: depth + 1 }]));
    } else if (value === null || typeof value === "boolean" || typeof value === "bigint") {
      continue;
    } else if (typeof value === "number") {
      if (!Number.isFinite(value)) throw new StateError("", [[pathOf(path), "is not a finite number"]], "PM811");
    } else {
      throw new StateError("", [[pathOf(path), `is a ${typeName(value)}, not JSON data`]], "PM811");
    }
  }
}

/**
 * (values below `state`, characters of its text values) when `state`, `depth` levels down in the whole state,
 * is plainly fine JSON data within the limits; null means "ask the exact walk" (checkStateData).
 */
export function dataSizes(state: unknown, depth: number): [number, number] | null {
  let nodes = 0;
  let chars = 0;
  const stack: [unknown, number][] = [[state, depth]];
  while (stack.length) {
    const [value, d] = stack.pop() as [unknown, number];
    if (d >= MAX_STATE_DEPTH) return null;
    let children: Iterable<unknown>;
    if (value instanceof Map) {
      nodes += value.size;
      for (const k of value.keys()) if (typeof k !== "string" || badText(k)) return null;
      children = value.values();
    } else if (Array.isArray(value)) {
      nodes += value.length;
      children = value;
    } else return null;
    for (const v of children) {
      if (typeof v === "string") {
        chars += pyLen(v);
        if (badText(v)) return null;
      } else if (v instanceof Map || Array.isArray(v)) stack.push([v, d + 1]);
      else if (typeof v === "number") {
        if (!Number.isFinite(v)) return null;
      } else if (!(typeof v === "bigint" || typeof v === "boolean" || v === null)) return null;
    }
    if (nodes > MAX_STATE_NODES || chars > MAX_STATE_CHARS) return null;
  }
  return [nodes, chars];
}
