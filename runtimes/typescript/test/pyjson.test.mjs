// The value model and Python-compatible JSON every part of the runtime relies on.
// Expected strings are what CPython 3.11 prints for the same values (json.dumps / repr).
import { test } from "node:test";
import assert from "node:assert/strict";
import { parse, dumps, floatRepr, pyEqual } from "../dist/pyjson.js";

test("integers and floats stay apart, integers keep every digit", () => {
  const v = parse('{"i": 3, "f": 3.0, "big": 18446744073709551616, "e": 1E5, "neg": -0}');
  assert.equal(v.get("i"), 3n);
  assert.equal(v.get("f"), 3);
  assert.equal(v.get("big"), 18446744073709551616n);
  assert.equal(dumps(v, { ensureAscii: false }), '{"i": 3, "f": 3.0, "big": 18446744073709551616, "e": 100000.0, "neg": 0}');
});

test("keys keep document order, numeric-looking ones too; a later duplicate replaces in place", () => {
  const v = parse('{"b": 1, "1": 2, "a": 3, "b": 4}');
  assert.deepEqual([...v.keys()], ["b", "1", "a"]);
  assert.equal(v.get("b"), 4n);
});

test("float repr follows Python", () => {
  const cases = [[0.5, "0.5"], [1e-5, "1e-05"], [1e16, "1e+16"], [1e15, "1000000000000000.0"], [0.0001, "0.0001"],
    [123.456, "123.456"], [-2.5, "-2.5"], [1.5e300, "1.5e+300"], [5e-324, "5e-324"], [0.1 + 0.2, "0.30000000000000004"],
    [-0, "-0.0"], [Infinity, "inf"], [NaN, "nan"], [12345678901234567890, "1.2345678901234567e+19"]];
  for (const [x, want] of cases) assert.equal(floatRepr(x), want, String(x));
});

test("dumps with indent and ensure_ascii as Python", () => {
  const v = parse('{"a": [], "b": {}, "c": [1, "é\\u2028\\u0000\\ud800"], "d": NaN}');
  assert.equal(dumps(v, { indent: 2, ensureAscii: false }),
    '{\n  "a": [],\n  "b": {},\n  "c": [\n    1,\n    "é\u2028\\u0000\ud800"\n  ],\n  "d": NaN\n}');
  assert.equal(dumps(parse('"é😀"')), '"\\u00e9\\ud83d\\ude00"');
  assert.throws(() => dumps(parse("[Infinity]"), { allowNan: false }), RangeError);
});

test("Python equality: 1 == 1.0 == True, deep, order-free for objects", () => {
  assert.ok(pyEqual(1n, 1));
  assert.ok(pyEqual(true, 1n));
  assert.ok(pyEqual(parse('[true, {"a": 1, "b": 2}]'), parse('[1, {"b": 2.0, "a": 1}]')));
  assert.ok(!pyEqual("1", 1n));
  assert.ok(!pyEqual(null, false));
  assert.ok(!pyEqual(NaN, NaN));
});

test("syntax errors say where, as Python does", () => {
  assert.throws(() => parse('{"a": 1,}'), /Expecting property name enclosed in double quotes: line 1 column 9 \(char 8\)/);
});
