// The state-check cases the Python runtime answered (conformance/state-cases.jsonl, written by
// tools/gen_conformance.py with tools/state_cases.py): shared by the state-*.test.mjs files.
import { readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parse } from "../dist/pyjson.js";

const REPO = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..", "..");

/** The JSON text of a generated state, built as tools/state_cases.py make_state builds it. */
export function makeState(spec) {
  const n = spec.n;
  if (spec.make === "wide") return '{"x": [' + Array(n).fill("0").join(",") + "]}";
  if (spec.make === "long") return '{"x": "' + "a".repeat(n) + '"}';
  if (spec.make === "deep-list") return '{"x": ' + "[".repeat(n) + "]".repeat(n) + "}";
  if (spec.make === "deep-object") return '{"x": ' + '{"a": '.repeat(n) + "0" + "}".repeat(n) + "}";
  throw new Error(`unknown generated state ${spec.make}`);
}

export function stateCases() {
  const text = readFileSync(join(REPO, "conformance", "state-cases.jsonl"), "utf8");
  return text
    .split("\n")
    .filter((line) => line !== "")
    .map((line) => {
      const c = JSON.parse(line);
      c.schemaValue = parse(c.schema);
      c.stateValue = parse(typeof c.state === "string" ? c.state : makeState(c.state));
      return c;
    });
}

/** The item at `path` then `index` of a state, as the Python generator found it. */
export function itemAt(state, path, index) {
  let v = state;
  for (const key of path) v = v instanceof Map ? v.get(key) : undefined;
  return v[index];
}
