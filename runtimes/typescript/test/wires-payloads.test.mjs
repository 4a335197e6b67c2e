// Every wire's payload, byte for byte against the Python runtime's: the cases of test/fixtures/wires.jsonl.gz
// (scripts/gen-wire-fixtures.py: the shipped roles with their example states, every wire, two budgets, a few
// models and wire options) each hold the render document Python printed and the payload bytes (or the error) it
// printed for it. The payload here is rendered from the document alone.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { gunzipSync } from "node:zlib";
import { parse } from "../dist/pyjson.js";
import { WIRE_NAMES, getWire, payloadText, renderPayload, requestFromDocument } from "../dist/wire.js";
import { compact } from "../dist/wires/_tools.js";
import { PromptmillError } from "../dist/errors.js";

const cases = gunzipSync(readFileSync(new URL("./fixtures/wires.jsonl.gz", import.meta.url)))
  .toString("utf8")
  .split("\n")
  .filter(Boolean)
  .map((line) => JSON.parse(line));

const label = (c) => `${c.role}${c.derived ? ` [${c.derived}]` : ""} on ${c.wire} (model ${c.model ?? "-"}, budget ${c.budget ?? "-"}${c.options ? `, options ${JSON.stringify(c.options)}` : ""})`;

function run(c) {
  const doc = parse(c.document);
  const options = c.options ? { model: c.options.model ?? null, maxTokens: c.options.max_tokens ?? null } : {};
  try {
    return { payload: payloadText(renderPayload(c.wire, doc, options)) + "\n" };
  } catch (exc) {
    if (!(exc instanceof PromptmillError)) throw exc;
    return { error: { code: exc.code, message: exc.message, hint: exc.hint } };
  }
}

test("the fixtures cover every wire, with payloads and refusals", () => {
  assert.ok(cases.length > 300, `only ${cases.length} cases`);
  for (const wire of WIRE_NAMES) assert.ok(cases.some((c) => c.wire === wire && c.payload), `no payload case for ${wire}`);
  assert.ok(cases.some((c) => c.error), "no refusal case");
});

for (const wire of WIRE_NAMES) {
  test(`${wire}: the payload bytes are Python's`, () => {
    const mine = cases.filter((c) => c.wire === wire);
    const wrong = [];
    for (const c of mine) {
      const got = run(c);
      const expected = c.payload !== undefined ? { payload: c.payload } : { error: c.error };
      try {
        assert.deepEqual(got, expected);
      } catch (e) {
        wrong.push(`${label(c)}: ${e.message.slice(0, 600)}`);
      }
    }
    assert.equal(wrong.length, 0, `${wrong.length} of ${mine.length} cases differ:\n${wrong.slice(0, 3).join("\n\n")}`);
  });
}

test("batch lines are Python's (batch/formats.py: compact JSON of each wire's line around its batch body)", () => {
  const withBatch = cases.filter((c) => c.batch);
  assert.ok(withBatch.length > 100, `${withBatch.length} cases with batch lines`);
  const wrong = [];
  for (const c of withBatch) {
    const wire = getWire(c.wire);
    const req = requestFromDocument(parse(c.document));
    for (const want of c.batch) {
      const maxTokens = want.max_tokens === null ? null : BigInt(want.max_tokens);
      let got;
      try {
        got = { line: compact(wire.batchLine("row-7", wire.batchBody(req, want.model), want.model, maxTokens)) + "\n" };
      } catch (exc) {
        if (!(exc instanceof PromptmillError)) throw exc;
        got = { error: { code: exc.code, message: exc.message, hint: exc.hint } };
      }
      const expected = want.line !== undefined ? { line: want.line } : { error: want.error };
      try {
        assert.deepEqual(got, expected);
      } catch (e) {
        wrong.push(`${label(c)} batch ${want.max_tokens}: ${e.message.slice(0, 400)}`);
      }
    }
  }
  assert.deepEqual(wrong, []);
});
