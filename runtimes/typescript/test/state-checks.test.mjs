// The render's state checks on the shipped bundles (build/roles, with their lazy paths and item proofs) and
// tool declarations: the Python runtime's answers (conformance/state-cases.jsonl, schema-checks.jsonl).
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync, readdirSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parse } from "../dist/pyjson.js";
import { checkState, checkLazyItem, toolProblems, toolWithDefaults } from "../dist/statechecks.js";
import { StateError } from "../dist/schema/state_errors.js";
import { stateCases, itemAt } from "./state-cases.mjs";

const REPO = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..", "..");
const ROLES = join(REPO, "build", "roles");
const bundles = new Map();
for (const name of readdirSync(ROLES)) {
  const b = parse(readFileSync(join(ROLES, name), "utf8"));
  bundles.set(b.get("id"), { id: b.get("id"), inputs: b.get("inputs"), lazyPaths: b.get("lazy_paths") ?? [], itemProofs: b.get("item_proofs") ?? [] });
}

function outcome(fn) {
  try {
    fn();
  } catch (err) {
    if (!(err instanceof StateError)) throw err;
    return { code: err.code, errors: err.errors.map((e) => [...e]) };
  }
  return null;
}

for (const c of stateCases().filter((c) => c.id.startsWith("shipped/"))) {
  test(`state checks: ${c.id}`, () => {
    const bundle = bundles.get(c.id.split("/")[1]);
    assert.ok(bundle, "a shipped bundle");
    const want = c.limits ?? (c.valid ? null : { code: "PM810", errors: c.errors });
    assert.deepEqual(outcome(() => checkState(bundle, c.stateValue)), want);
    for (const item of c.items) {
      const value = itemAt(c.stateValue, item.path, item.index);
      const wantItem = item.limits ?? (item.valid ? null : { code: "PM810", errors: item.errors });
      assert.deepEqual(outcome(() => checkLazyItem(bundle, item.path, item.index, value)), wantItem, `item ${item.path}[${item.index}]`);
    }
  });
}

const toolRecords = readFileSync(join(REPO, "conformance", "schema-checks.jsonl"), "utf8")
  .split("\n")
  .filter((line) => line !== "")
  .map((line) => JSON.parse(line))
  .filter((r) => r.tool !== undefined);

for (const r of toolRecords) {
  test(`tool declaration: ${r.id} ${r.tool.slice(0, 60)}`, () => {
    assert.deepEqual(toolProblems(parse(r.tool)), r.problems);
  });
}

test("a tool's optional fields filled in, other keys kept in place", () => {
  const t = toolWithDefaults(parse('{"x": 1, "name": "a", "description": "d"}'));
  assert.deepEqual([...t.keys()], ["x", "name", "description", "parameters"]);
  assert.equal(t.get("description"), "d");
  const full = parse('{"name": "a", "description": "", "parameters": {"type": "object"}}');
  assert.equal(toolWithDefaults(full), full);
});

test("stateChecks throws the engine's own error class when given a factory", async () => {
  const { stateChecks } = await import("../dist/statechecks.js");
  class EngineError extends Error {
    constructor(errors, code) {
      super(code);
      this.errors = errors;
      this.code = code;
    }
  }
  const checks = stateChecks((errors, code) => new EngineError(errors, code));
  const bundle = bundles.get("executor");
  const state = parse('{"task_state": 1, "subtask": {"id": "a", "description": "d"}}');
  const plain = outcome(() => checkState(bundle, state)); // the same problems as StateError
  assert.equal(plain.code, "PM810");
  assert.throws(() => checks.state(bundle, state), (err) => {
    assert.ok(err instanceof EngineError);
    assert.deepEqual(err.errors, plain.errors);
    assert.equal(err.code, plain.code);
    return true;
  });
  assert.throws(() => checks.lazyItem(bundle, ["memory"], 4, parse('{"type": "x", "summary": "s"}')), EngineError);
  assert.doesNotThrow(() => checks.lazyItem(bundle, ["memory"], 0, parse('{"type": "error", "summary": "s"}')));
});
