// checkSchema: a tool declaration's `parameters` as a draft 2020-12 JSON Schema, with the Python runtime's
// problems (JSON pointer, message) in its order (expected answers: conformance/schema-checks.jsonl, written by
// tools/gen_conformance.py from the Python runtime's check_schema).
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parse } from "../dist/pyjson.js";
import { checkSchema, pyReprValue } from "../dist/schema/metaschema.js";

const REPO = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..", "..");
const records = readFileSync(join(REPO, "conformance", "schema-checks.jsonl"), "utf8")
  .split("\n")
  .filter((line) => line !== "")
  .map((line) => JSON.parse(line));

for (const r of records.filter((r) => r.schema !== undefined)) {
  test(`checkSchema: ${r.id} ${r.schema.slice(0, 60)}`, () => {
    assert.deepEqual(checkSchema(parse(r.schema)), r.problems);
  });
}

test("Python's repr of JSON data", () => {
  // expected: repr() in CPython 3.11 of the same values
  assert.equal(pyReprValue(parse('{"a": [1, 2.0, true, null, "it\'s"], "b": {}}')), `{'a': [1, 2.0, True, None, "it's"], 'b': {}}`);
});
