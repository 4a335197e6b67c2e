// The model table against the Python runtime's answers (test/fixtures/models.json, scripts/gen-token-fixtures.py):
// the row each model id resolves to (dated ids, Vertex `@` ids, Bedrock ids of Claude), the PM502 and PM010
// refusals with their hints, near misses, which wire may carry a request for the model, and ratios by provider.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { parse } from "../dist/pyjson.js";
import { defaultTable, servingProblem } from "../dist/models.js";
import { WIRE_NAMES, getWire } from "../dist/wire.js";
import { PromptmillError } from "../dist/errors.js";

const data = parse(readFileSync(new URL("./fixtures/models.json", import.meta.url), "utf8"));
const plain = (v) => (typeof v === "bigint" ? Number(v) : v instanceof Map ? Object.fromEntries([...v].map(([k, x]) => [k, plain(x)])) : v);

test("every id resolves to Python's row, or is refused with Python's error", () => {
  const table = defaultTable();
  const wrong = [];
  for (const row of data.get("ids")) {
    const model = row.get("model");
    let got;
    try {
      got = { info: { ...table.lookup(model) } };
    } catch (e) {
      if (!(e instanceof PromptmillError)) throw e;
      got = { error: { code: e.code, message: e.message, hint: e.hint } };
    }
    const want = row.has("info") ? { info: plain(row.get("info")) } : { error: plain(row.get("error")) };
    try {
      assert.deepEqual(got, want);
    } catch (e) {
      wrong.push(`${JSON.stringify(model)}: ${e.message.slice(0, 500)}`);
    }
  }
  assert.ok(data.get("ids").length > 90);
  assert.deepEqual(wrong, []);
});

test("near misses and serving problems are Python's", () => {
  const table = defaultTable();
  for (const row of data.get("ids")) {
    const model = row.get("model");
    assert.equal(table.nearMiss(model), row.get("near_miss"), `near miss of ${JSON.stringify(model)}`);
    for (const name of WIRE_NAMES) assert.equal(servingProblem(getWire(name), model), row.get("serving").get(name), `${name} for ${JSON.stringify(model)}`);
  }
});

test("the largest ratio of each provider, and the patterns, are Python's", () => {
  const table = defaultTable();
  for (const [provider, ratio] of data.get("max_ratio")) assert.equal(table.maxRatio(provider), ratio, provider);
  assert.deepEqual(table.patterns, data.get("patterns"));
});
