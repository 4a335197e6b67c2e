// statelimits: JSON data of a sane size, refused with the Python runtime's code, path and message
// (expected answers: conformance/state-cases.jsonl, from the Python runtime).
import { test } from "node:test";
import assert from "node:assert/strict";
import { checkStateData, badText, pyLen } from "../dist/statelimits.js";
import { StateError } from "../dist/schema/state_errors.js";
import { stateCases, itemAt } from "./state-cases.mjs";

function limits(fn) {
  try {
    fn();
  } catch (err) {
    if (!(err instanceof StateError)) throw err;
    return { code: err.code, errors: err.errors.map((e) => [...e]) };
  }
  return null;
}

for (const c of stateCases()) {
  test(`limits: ${c.id}`, () => {
    assert.deepEqual(limits(() => checkStateData(c.stateValue, c.lazy)), c.limits);
    for (const item of c.items) {
      const value = itemAt(c.stateValue, item.path, item.index);
      assert.deepEqual(limits(() => checkStateData(value, [], [...item.path, item.index])), item.limits, `item ${item.index}`);
    }
  });
}

test("lone surrogates and lengths count as Python counts them", () => {
  assert.ok(badText("a\ud800"));
  assert.ok(badText("\udc00b"));
  assert.ok(!badText("\ud83d\ude00"));
  assert.equal(pyLen("\ud83d\ude00e\u0301"), 3);
  assert.equal(pyLen("\ud800\ud800"), 2);
});

test("the error message lists the problems as the Python CLI prints them", () => {
  const err = new StateError("r", [["state.a", "is required"]]).withRole("executor");
  assert.equal(err.message, "render state for role 'executor' is invalid:\n  state.a: is required");
  assert.equal(err.code, "PM810");
  const many = new StateError("r", Array.from({ length: 22 }, (_, i) => [`state.k${i}`, "is required"]));
  assert.match(many.message, /\n  \.\.\. and 2 more$/);
});
