// The *(run)* examples of docs/bundle-format.md (outputs of the Python runtime, printed in the spec) as unit tests
// of the TypeScript pipeline: the tables are read from the document itself, so the spec and the tests cannot drift.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parse } from "../dist/pyjson.js";
import { evaluate, conditionContext, problems } from "../dist/conditions.js";
import { runPlan, planOk, Deferred } from "../dist/plans.js";

const here = dirname(fileURLToPath(import.meta.url));
const SPEC = readFileSync(resolve(here, "..", "..", "..", "docs", "bundle-format.md"), "utf8");

/** The rows of the first markdown table after `marker`, as arrays of cell texts (`\|` kept as `|`). */
function table(marker) {
  const start = SPEC.indexOf(marker);
  assert.ok(start >= 0, `spec has no ${marker}`);
  const lines = SPEC.slice(start).split("\n");
  const first = lines.findIndex((l) => l.startsWith("|"));
  const rows = [];
  for (const line of lines.slice(first + 2)) {
    if (!line.startsWith("|")) break;
    const cells = line.slice(1, -1).split(/(?<!\\)\|/).map((c) => c.trim().replaceAll("\\|", "|"));
    rows.push(cells);
  }
  return rows;
}

const code = (cell) => {
  const m = /^`(.*)`$/s.exec(cell);
  assert.ok(m, `not a code cell: ${cell}`);
  return m[1];
};

test("conditions: every row of the spec's example table (section 6)", () => {
  const state = parse('{"mode": "quick", "n": 3, "flag": false, "tags": ["a", "b"], "items": [{"k": 1}], "meta": {"x": 1}, "z": null}');
  const ctx = conditionContext("r", "agent", null, state, "text", "start");
  const rows = table("Examples *(run)*, with state `{\"mode\"");
  assert.ok(rows.length >= 20, `only ${rows.length} rows read`);
  for (const [cond, result] of rows) {
    const c = parse(code(cond));
    assert.deepEqual(problems(c), [], cond);
    assert.equal(evaluate(c, ctx), result === "true", cond);
  }
});

test("plans: every row of the spec's plan table runs to the Python output or defers (section 8.1)", () => {
  const rows = table("Examples *(run: each plan is");
  assert.ok(rows.length >= 10, `only ${rows.length} rows read`);
  for (const [template, planCell, stateCell, output] of rows) {
    const plan = parse(code(planCell));
    assert.ok(planOk(plan), template);
    const got = runPlan(plan, parse(code(stateCell)));
    const jinja = /^defers; Jinja gives (`.*`)$/.exec(output);
    if (jinja) {
      // the Python plan defers and Jinja prints the list as Python's str(); this runtime prints the same
      assert.equal(got, code(jinja[1]), template);
      continue;
    }
    if (output.startsWith("defers")) {
      assert.ok(got instanceof Deferred, `${template} should defer, gave ${JSON.stringify(got)}`);
      continue;
    }
    const want = code(output.replace(/ \(then stripped by the section\)$/, "")).replaceAll("␠", " ");
    assert.equal(got, want, template);
  }
});

test("plans: the spec's example values of expressions and filters (8.2, 8.2.1)", () => {
  const cases = [
    ['[["e", ["pf", "%.2f", [["p", ["v"]]]]]]', '{"v": 2.5}', "2.50"],
    ['[["e", ["sf", "{:>4}", [["p", ["n"]]]]]]', '{"n": 7}', "   7"],
    ['[["e", ["cat", [["p", ["a"]], ["c", "-"], ["p", ["n"]]]]]]', '{"a": "x", "n": 2}', "x-2"],
    ['[["if", [[["and", ["is", "defined", ["p", ["x"]]], ["p", ["x"]]], [["t", "yes"]]]], [["t", "no"]]]]', "{}", "no"],
    ['[["e", ["fl", "join", ["p", ["tags"]], [", "]]]]', '{"tags": ["a", 1, "b"]}', "a, 1, b"],
    ['[["e", ["fl", "default", ["p", ["x"]], ["none"]]]]', "{}", "none"],
    ['[["e", ["fl", "default", ["p", ["x"]], ["none", true]]]]', '{"x": ""}', "none"],
    ['[["e", ["fl", "round", ["p", ["v"]], [2]]]]', '{"v": 3.14159}', "3.14"],
    ['[["e", ["fl", "length", ["p", ["items"]], []]]]', '{"items": [1, 2, 3]}', "3"],
    // quirk 3: round keeps the type and rounds ties to even; a float of 2.5 rounds to 2.0
    ['[["e", ["fl", "round", ["p", ["v"]], []]]]', '{"v": 2.5}', "2.0"],
    ['[["e", ["fl", "round", ["p", ["v"]], []]]]', '{"v": 2}', "2"],
    ['[["e", ["fl", "round", ["p", ["v"]], [1, "ceil"]]]]', '{"v": 2.21}', "2.3"],
    // quirk 2: `~` prints null as None, {{ }} prints it as ""
    ['[["e", ["cat", [["p", ["z"]]]]], ["v", ["z"]]]', '{"z": null}', "None"],
    ['[["e", ["cmp", "eq", ["p", ["x"]], ["c", 1]]]]', '{"x": true}', "True"],
    // quirk 1: floats print as Python's repr
    ['[["v", ["a"]], ["t", " "], ["v", ["b"]], ["t", " "], ["v", ["c"]]]', '{"a": 1e-05, "b": 1e16, "c": 3.0}', "1e-05 1e+16 3.0"],
  ];
  for (const [plan, state, want] of cases) {
    const p = parse(plan);
    assert.ok(planOk(p), plan);
    assert.equal(runPlan(p, parse(state)), want, plan);
  }
});

test("conditions: quirks 4 and 5 (deep Python equality, missing paths)", () => {
  const ctx = conditionContext("r", "", null, parse('{"a": [true], "b": false}'), "text", "start");
  const yes = (c) => assert.ok(evaluate(parse(c), ctx), c);
  const no = (c) => assert.ok(!evaluate(parse(c), ctx), c);
  yes('{"path": "state.a", "op": "eq", "value": [1]}');
  no('{"path": "state.b", "op": "eq", "value": 0}');
  yes('{"path": "state.missing", "op": "ne", "value": null}');
  no('{"path": "state.missing", "op": "eq", "value": null}');
  yes('{"path": "state.missing", "op": "exists", "value": false}');
});

test("malformed plans and conditions are refused", () => {
  for (const bad of ['[["x"]]', '[["t"]]', '[["v", []]]', '[["f", ["a"], "upper2"]]', '[["e", ["fl", "join", ["p", ["a"]], [1]]]]', '[["if", [], []]]']) {
    assert.ok(!planOk(parse(bad)), bad);
  }
  for (const bad of ['{"path": "state.a", "op": "eq"}', '{"any": []}', '{"path": "state.a", "op": "eq", "value": 1, "all": []}', '{"path": "state.a", "op": "nope", "value": 1}']) {
    assert.ok(problems(parse(bad)).length > 0, bad);
  }
});
