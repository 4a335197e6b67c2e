// Every wire's counting model against the Python runtime's (test/fixtures/tokens.json.gz, written by
// scripts/gen-token-fixtures.py): tool texts and costs, structured-output costs, extra and forced tools for the
// contracts of the shipped roles (also as native and return_call contracts), and each bundle's layout keys.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { gunzipSync } from "node:zlib";
import { dumps, parse } from "../dist/pyjson.js";
import { Counter } from "../dist/counting.js";
import { getTokenizer } from "../dist/tokenizers.js";
import { WIRE_NAMES, getWire } from "../dist/wire.js";
import { PromptmillError } from "../dist/errors.js";

const data = parse(gunzipSync(readFileSync(new URL("./fixtures/tokens.json.gz", import.meta.url))).toString("utf8"));
const decls = data.get("decls");
const contracts = data.get("contracts");
const nums = (xs) => xs.map(Number);

test("a wire name that does not exist is PM840 with a did-you-mean", () => {
  assert.throws(
    () => getWire("antropic"),
    (e) =>
      e instanceof PromptmillError &&
      e.code === "PM840" &&
      e.message === "unknown provider 'antropic'" &&
      e.hint === "did you mean 'anthropic'? valid providers: text, live, openai, anthropic, gemini, openai-responses, bedrock, anthropic-bedrock, anthropic-vertex, gemini-vertex",
  );
});

for (const name of WIRE_NAMES) {
  test(`${name}: tool and output costs, extra and forced tools, layouts are Python's`, () => {
    const wire = getWire(name);
    const want = data.get("wires").get(name);
    const counter = new Counter(getTokenizer("o200k_base"));
    if (want.has("tool_text")) {
      const texts = decls.map((d) => wire.toolText(d));
      assert.deepEqual(texts, want.get("tool_text"));
      assert.deepEqual(texts.map((t) => wire.toolItemCost(counter, t)), nums(want.get("tool_item_cost")));
      assert.deepEqual([wire.toolFrameCost(counter, false), wire.toolFrameCost(counter, true)], nums(want.get("tool_frame_cost")));
      const costs = [];
      for (let k = 0; k <= decls.length; k++) for (const forced of [false, true]) costs.push(wire.toolCost(counter, decls.slice(0, k), forced));
      assert.deepEqual(costs, nums(want.get("tool_cost")));
    }
    assert.deepEqual(contracts.map((c) => wire.outputCost(counter, c)), nums(want.get("output_cost")));
    const extra = contracts.map((c) => ["inline", "native"].map((mode) => wire.extraTools(c, mode)));
    assert.equal(dumps(extra), dumps(want.get("extra_tools")));
    assert.deepEqual(contracts.map((c) => wire.forcedTool(c)), want.get("forced_tool"));
    for (const layout of want.get("layouts")) {
      const role = layout.get("role");
      const bundle = data.get("bundles").get(role);
      const sections = bundle.get("sections").map((s) => Object.fromEntries(s));
      const mine = wire.layout({ sections, toolMode: bundle.get("tool_mode") });
      assert.deepEqual([...mine.stableHead].sort(), layout.get("stable_head"), `${role} stable head`);
      assert.equal(mine.splitAt, layout.get("split_at"), `${role} split`);
      assert.deepEqual(sections.map((spec) => mine.key({ spec, present: true, kept: [] })), layout.get("keys"), `${role} keys`);
    }
  });
}
