// Runtime.loadBundle: one role bundle file shipped without its build renders what the whole build renders.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync, readdirSync, writeFileSync, mkdtempSync } from "node:fs";
import { join } from "node:path";
import { tmpdir } from "node:os";
import { Runtime, parse, requestText, requestData, dumps, PromptmillError } from "../dist/index.js";

const REPO = new URL("../../../", import.meta.url).pathname;
const BUILD = join(REPO, "build");

test("a lone bundle renders the bytes the build renders", () => {
  const manifest = parse(readFileSync(join(BUILD, "manifest.json"), "utf8"));
  const file = manifest.get("roles").get("executor").get("file");
  const state = parse(JSON.stringify({ task_state: "step 2 of 5", subtask: { id: "s2", description: "write the parser" } }));
  const whole = Runtime.load(BUILD).render("executor", state, { budget: 900 });
  const lone = Runtime.loadBundle(join(BUILD, file));
  assert.deepEqual(lone.roles, ["executor"]);
  const one = lone.render("executor", state, { budget: 900 });
  assert.equal(requestText(one), requestText(whole));
  assert.equal(dumps(requestData(one)), dumps(requestData(whole)));
});

test("a lone bundle is checked as a listed one: a missing file or an unknown field is PM801", () => {
  const dir = mkdtempSync(join(tmpdir(), "pm-bundle-"));
  assert.throws(() => Runtime.loadBundle(join(dir, "none.json")), (e) => e instanceof PromptmillError && e.code === "PM801" && /no bundle at/.test(e.message));
  const name = readdirSync(join(BUILD, "roles")).find((f) => f.startsWith("planner."));
  const data = parse(readFileSync(join(BUILD, "roles", name), "utf8"));
  data.set("surprise", true);
  const edited = join(dir, "planner.json");
  writeFileSync(edited, dumps(data));
  assert.throws(() => Runtime.loadBundle(edited), (e) => e instanceof PromptmillError && e.code === "PM801" && /unknown fields/.test(e.message));
});
