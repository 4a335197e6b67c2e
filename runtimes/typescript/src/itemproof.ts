// One-pass checks of list items, from the record proofs the compiler wrote (`item_proofs`;
// compiler/promptmill/runtime/itemproof.py). An item of a lazily checked list is checked when the fit offers
// it: as JSON data of a sane size (statelimits checkStateData) and against the item schema (Validator
// itemValid). Where the compiler proved the item schema a plain record, `recordCheck` answers both in one pass:
// true only for an item both checks accept; false means "run the two checks", which name what is wrong.
// A proof changes how fast an item is accepted, never what a render gives.
import { type Json, isObject } from "./pyjson.js";
import { MAX_STATE_CHARS, MAX_STATE_DEPTH, MAX_STATE_NODES, badText, dataSizes, pyLen } from "./statelimits.js";

export type ItemCheck = (item: Json, depth: number) => boolean;

export const PROOF_KINDS = new Set(["string", "number", "integer", "boolean", "null", "object", "array", "any"]);

/** True when `proof` has the shape the compiler writes (a bundle read from disk is checked). */
export function proofOk(proof: Json): boolean {
  if (!isObject(proof)) return false;
  const keys = [...proof.keys()].sort();
  if (keys.join(",") !== "fields,others,path,required") return false;
  const path = proof.get("path") as Json;
  const fields = proof.get("fields") as Json;
  const required = proof.get("required") as Json;
  if (!Array.isArray(path) || !path.length || !path.every((p) => typeof p === "string")) return false;
  if (!Array.isArray(required) || !required.every((r) => typeof r === "string") || typeof proof.get("others") !== "boolean") return false;
  if (!isObject(fields)) return false;
  for (const kind of fields.values()) {
    if (isObject(kind) && kind.has("enum")) {
      const values = kind.get("enum") as Json;
      if (kind.size !== 1 || !Array.isArray(values) || !values.length || !values.every((v) => typeof v === "string")) return false;
    } else if (isObject(kind)) {
      if (!kind.size || ![...kind.keys()].every((k) => k === "minLength" || k === "maxLength")) return false;
      if (![...kind.values()].every((n) => typeof n === "bigint" && n >= 0n)) return false;
    } else if (typeof kind !== "string" || !PROOF_KINDS.has(kind)) return false;
  }
  return true;
}

type Kind = string | Set<string> | [number, number];

function kindOf(kind: Json): Kind {
  if (isObject(kind) && kind.has("enum")) return new Set(kind.get("enum") as string[]);
  if (isObject(kind)) {
    const lo = kind.get("minLength");
    const hi = kind.get("maxLength");
    return [lo === undefined ? 0 : Number(lo), hi === undefined ? MAX_STATE_CHARS : Number(hi)];
  }
  return kind as string;
}

const STR = new Set(["string", "any"]);
const INT = new Set(["number", "integer", "any"]);
const FLOAT = new Set(["number", "any"]);
const BOOL = new Set(["boolean", "any"]);
const NULL = new Set(["null", "any"]);
const OBJ = new Set(["object", "any"]);
const ARR = new Set(["array", "any"]);

/** `check(item, depth)`: true when `item` (at `depth` levels in the state) is JSON data within the limits and a
 * record of the proof's shape; false means "run the generic checks". */
export function recordCheck(proof: Map<string, Json>): ItemCheck {
  const kinds = new Map<string, Kind>();
  for (const [name, kind] of proof.get("fields") as Map<string, Json>) kinds.set(name, kindOf(kind));
  const required = proof.get("required") as string[];
  const others: Kind | null = proof.get("others") ? "any" : null;
  return (item, depth) => {
    if (!isObject(item) || depth >= MAX_STATE_DEPTH) return false;
    for (const name of required) if (!item.has(name)) return false;
    let nodes = item.size;
    let chars = 0;
    for (const [key, value] of item) {
      if (badText(key)) return false;
      const kind = kinds.has(key) ? (kinds.get(key) as Kind) : others;
      if (kind === null) return false;
      if (typeof value === "string") {
        if (kind instanceof Set) {
          if (!kind.has(value)) return false;
        } else if (Array.isArray(kind)) {
          const n = pyLen(value);
          if (!(kind[0] <= n && n <= kind[1])) return false;
        } else if (!STR.has(kind)) return false;
        chars += pyLen(value);
        if (badText(value)) return false;
      } else if (typeof kind !== "string") return false;
      else if (typeof value === "bigint") {
        if (!INT.has(kind)) return false;
      } else if (typeof value === "number") {
        if (!FLOAT.has(kind) || !Number.isFinite(value)) return false;
      } else if (typeof value === "boolean") {
        if (!BOOL.has(kind)) return false;
      } else if (value === null) {
        if (!NULL.has(kind)) return false;
      } else if (isObject(value) || Array.isArray(value)) {
        if (!(isObject(value) ? OBJ : ARR).has(kind)) return false;
        const sizes = dataSizes(value, depth + 1);
        if (sizes === null) return false;
        nodes += sizes[0];
        chars += sizes[1];
      } else return false;
    }
    return nodes <= MAX_STATE_NODES && chars <= MAX_STATE_CHARS;
  };
}

/** The one-pass check of each lazily checked list path a proof covers (keys: JSON.stringify(path)). */
export function itemChecks(proofs: readonly Map<string, Json>[], lazyPaths: readonly (readonly string[])[]): Map<string, ItemCheck> {
  const lazy = new Set(lazyPaths.map((p) => JSON.stringify(p)));
  const out = new Map<string, ItemCheck>();
  for (const p of proofs) {
    const key = JSON.stringify(p.get("path"));
    if (lazy.has(key)) out.set(key, recordCheck(p));
  }
  return out;
}
