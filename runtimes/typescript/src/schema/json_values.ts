// jsonschema's rules for JSON values (compiler/promptmill/runtime/schema/json_values.py): type tests
// (`integer` accepts 3.0 and refuses true; booleans are not numbers), equality (1 == 1.0 but 1 != true,
// recursively) and uniqueness.
import { type Json, isObject } from "../pyjson.js";

export const TYPE_TESTS: Record<string, (x: Json) => boolean> = {
  string: (x) => typeof x === "string",
  object: (x) => isObject(x),
  array: (x) => Array.isArray(x),
  boolean: (x) => typeof x === "boolean",
  null: (x) => x === null,
  number: (x) => typeof x === "bigint" || typeof x === "number",
  integer: (x) => typeof x === "bigint" || (typeof x === "number" && Number.isInteger(x)),
};

/** JSON Schema equality exactly as jsonschema computes it: 1 == 1.0, 1 != true, NaN != NaN. */
export function equal(one: Json, two: Json): boolean {
  if (typeof one === "string" || typeof two === "string") return one === two;
  if (Array.isArray(one) && Array.isArray(two)) return one.length === two.length && one.every((x, i) => equal(x, two[i]));
  if (isObject(one) && isObject(two)) {
    if (one.size !== two.size) return false;
    for (const [k, v] of one) if (!two.has(k) || !equal(v, two.get(k) as Json)) return false;
    return true;
  }
  if (typeof one === "boolean" || typeof two === "boolean") return one === two;
  if ((typeof one === "bigint" || typeof one === "number") && (typeof two === "bigint" || typeof two === "number")) {
    return one == two; // eslint-disable-line eqeqeq -- exact across bigint and number
  }
  return one === two; // null, or values of different kinds
}

/** True when no two items are equal (jsonschema's `uniq`). */
export function uniq(items: readonly Json[]): boolean {
  for (let i = 0; i < items.length; i++) for (let j = 0; j < i; j++) if (equal(items[j], items[i])) return false;
  return true;
}
