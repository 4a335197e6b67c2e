// The inputs-schema validator: valid or not, and every problem with the Python runtime's path and message, in
// its order; lazy arrays' items checked one at a time (expected answers: conformance/state-cases.jsonl).
import { test } from "node:test";
import assert from "node:assert/strict";
import { Validator, Unsupported } from "../dist/schema/validate.js";
import { nearest, suggest } from "../dist/suggest.js";
import { pyRepr, formatPath } from "../dist/schema/state_errors.js";
import { stateCases, itemAt } from "./state-cases.mjs";

for (const c of stateCases()) {
  test(`schema: ${c.id}`, () => {
    const make = () => new Validator(c.schemaValue, { lazyPaths: c.lazy });
    if (c.unsupported) {
      assert.throws(make, Unsupported);
      return;
    }
    const v = make();
    if (c.valid === null) return; // a generated state too large to validate twice: the limits test covers it
    assert.equal(v.isValid(c.stateValue), c.valid, "isValid");
    assert.deepEqual(v.errors(c.stateValue), c.errors, "errors");
    for (const item of c.items) {
      if (item.limits !== null) continue;
      const value = itemAt(c.stateValue, item.path, item.index);
      assert.equal(v.itemValid(item.path, value), item.valid, `itemValid ${item.index}`);
      assert.deepEqual(v.itemErrors(item.path, item.index, value), item.errors, `itemErrors ${item.index}`);
    }
  });
}

test("did-you-mean picks what difflib picks", () => {
  // expected: Python's difflib.get_close_matches(word, choices, n=1, cutoff=0.6)
  assert.equal(suggest("nmae", ["name", "kind", "count"]), "name");
  assert.equal(suggest("zzz", ["name", "kind"]), null);
  assert.equal(suggest("summry", ["summary", "type", "relevance"]), "summary");
  // equal ratios: the greater text first, compared by code point as Python compares (by UTF-16 units, U+FF00 would
  // come after U+1F600's high surrogate); python3 -c "import difflib; print(difflib.get_close_matches('ab',
  // ['ab\uff00', 'ab\U0001F600'], n=2))" prints the astral one first
  assert.deepEqual(nearest("ab", ["ab\uff00", "ab\u{1F600}"], 2), ["ab\u{1F600}", "ab\uff00"]);
  assert.deepEqual(nearest("ab", ["ab\u{1F600}", "ab\uff00"], 2), ["ab\u{1F600}", "ab\uff00"]);
});

test("repr and paths as Python writes them", () => {
  assert.equal(pyRepr("it's"), `"it's"`);
  assert.equal(pyRepr("a\n\t\u0000\u00a0\u200b\ud800é😀"), "'a\\n\\t\\x00\\xa0\\u200b\\ud800é😀'");
  assert.equal(formatPath("state", ["a", 3, "odd key", "ключ", "_x1"]), 'state.a[3]["odd key"]["ключ"]._x1');
});
