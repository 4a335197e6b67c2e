// The value formatting a plan does itself, against what Python gives for the same values
// (test/fixtures/plan-values.json, written by tools/gen_ts_plan_fixtures.py from the Python runtime's functions).
// A case Python refuses (TypeError, ValueError) must throw here too: the plan then defers, never guesses.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parse } from "../dist/pyjson.js";
import { percentFormat, strFormat } from "../dist/pyfmt.js";
import { PLAIN_FILTERS, round, toJson } from "../dist/filters.js";
import { toYaml } from "../dist/yamlemit.js";
import { dumps } from "../dist/pyjson.js";

const here = dirname(fileURLToPath(import.meta.url));
const FIX = JSON.parse(readFileSync(resolve(here, "fixtures", "plan-values.json"), "utf8"));

function check(name, rows, run) {
  const failures = [];
  for (const [label, want, got] of rows.map((row) => run(row))) {
    if (want.error !== undefined) {
      if (got.error === undefined) failures.push(`${label}: Python raises ${want.error}, got ${JSON.stringify(got.ok)}`);
    } else if (got.ok !== want.ok) failures.push(`${label}: want ${JSON.stringify(want.ok)}, got ${got.error ? "an error: " + got.error : JSON.stringify(got.ok)}`);
  }
  assert.deepEqual(failures, [], `${name}: ${failures.length} of ${rows.length} differ`);
}

const attempt = (fn) => {
  try {
    return { ok: fn() };
  } catch (exc) {
    return { error: exc.message || exc.constructor.name };
  }
};

test("'%' formatting as Python's", () => {
  check("printf", FIX.printf, ([fmt, value, want]) => [`${fmt} % ${value}`, want, attempt(() => percentFormat(fmt, [parse(value)]))]);
});

test("str.format specs as Python's", () => {
  check("format", FIX.format, ([fmt, value, want]) => [`${fmt}.format(${value})`, want, attempt(() => strFormat(fmt, [parse(value)]))]);
});

test("round as Jinja's (Python's round, ceil and floor)", () => {
  check("round", FIX.round, ([value, args, want]) => [
    `round(${value}, ${args.join(", ")})`,
    want,
    attempt(() => dumps(round(parse(value), args[0] ?? 0, args[1] ?? "common"))),
  ]);
});

test("string filters as Python's and Jinja's", () => {
  check("strings", FIX.strings, ([name, s, want]) => [`${name}(${JSON.stringify(s)})`, { ok: want }, attempt(() => PLAIN_FILTERS[name](s))]);
});

test("to_yaml as the Python emitter", () => {
  check("yaml", FIX.yaml, ([value, want]) => [`to_yaml(${value})`, want, attempt(() => toYaml(parse(value)))]);
});

test("to_json as Python's", () => {
  check("json", FIX.json, ([value, want]) => [`to_json(${value})`, { ok: want }, attempt(() => toJson(parse(value)))]);
});
