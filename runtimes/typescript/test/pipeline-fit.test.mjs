// The fit example of docs/bundle-format.md 9.1 (a run of the Python runtime, printed in the spec), rendered by the
// TypeScript runtime from an in-memory bundle; and the refusals of a build folder (sections 1-3).
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, writeFileSync, mkdirSync, readFileSync } from "node:fs";
import { createHash } from "node:crypto";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parse, dumps } from "../dist/pyjson.js";
import { roleFromDict } from "../dist/bundle.js";
import { Runtime } from "../dist/engine.js";
import { requestText } from "../dist/request.js";

function bundle(maxTokens, titleTokens) {
  const section = (fields) => ({ priority: 0, trim: "drop", message: "system", stability: "stable", ...fields });
  return roleFromDict(
    parse(
      JSON.stringify({
        format: "promptmill-bundle",
        format_version: 1,
        id: "fit",
        tokenizer: "o200k_base",
        budget: { max_tokens: maxTokens, reserve: 0, margin: null, context_window: null, origins: {} },
        separator: "\n\n",
        inputs: {},
        sections: [
          section({ id: "head", kind: "static", trim: "never", text: "You answer briefly." }),
          section({ id: "notes", kind: "each", priority: 20, trim: "items", title: "NOTES:", title_tokens: titleTokens.notes, template: "- {{ n.text }}",
            plan: [["t", "- "], ["v", ["n", "text"]]], path: ["notes"], item_name: "n", order_by: ["score"] }),
          section({ id: "doc", kind: "template", priority: 10, trim: "truncate", title: "DOC:", title_tokens: titleTokens.doc, template: "{{ doc }}",
            plan: [["v", ["doc"]]] }),
        ],
      }),
    ),
  );
}

function runtime(maxTokens) {
  const probe = new Runtime(new Map());
  const counter = probe.counter("o200k_base");
  const b = bundle(maxTokens, { notes: counter.count("NOTES:\n"), doc: counter.count("DOC:\n") });
  return new Runtime(new Map([["fit", b]]));
}

const NOTES = [{ text: "alpha", score: 1 }, { text: "beta", score: 3 }, { text: "gamma", score: 2 }];

test("fit example: budgets 14 and 11 keep the best-scored notes in list order and drop doc unfilled", () => {
  const rt = runtime(1000);
  const state = parse(JSON.stringify({ notes: NOTES, doc: "short doc" }));
  let req = rt.render("fit", state, { budget: 14, provider: "text" });
  assert.equal(requestText(req), "You answer briefly.\n\nNOTES:\n- beta\n- gamma");
  assert.equal(req.tokens, 12);
  assert.equal(req.sections.find((s) => s.id === "doc").status, "dropped");
  assert.equal(req.sections.find((s) => s.id === "doc").reason, "lower priority than content that did not fit");
  req = rt.render("fit", state, { budget: 11, provider: "text" });
  assert.equal(requestText(req), "You answer briefly.\n\nNOTES:\n- beta");
  assert.equal(req.tokens, 9);
});

test("fit example: an 80-word doc with max_tokens 60 is truncated at a token boundary with the marker", () => {
  const rt = runtime(60);
  const doc = Array.from({ length: 80 }, (_, i) => `word${i}`).join(" ");
  const req = rt.render("fit", parse(JSON.stringify({ notes: NOTES, doc })), { provider: "text" });
  const section = req.sections.find((s) => s.id === "doc");
  assert.equal(section.status, "truncated");
  assert.equal(section.text, "DOC:\n" + Array.from({ length: 17 }, (_, i) => `word${i}`).join(" ") + " word\n[…truncated]");
});

test("fit example: without alpha, budgets 16 and 17 still drop doc (the separator counted after every item)", () => {
  const rt = runtime(1000);
  const state = parse(JSON.stringify({ notes: NOTES.slice(1), doc: "x" }));
  for (const budget of [16, 17]) {
    const req = rt.render("fit", state, { budget, provider: "text" });
    assert.equal(req.sections.find((s) => s.id === "doc").status, "dropped", `budget ${budget}`);
  }
  const req = rt.render("fit", state, { budget: 18, provider: "text" });
  assert.equal(requestText(req), "You answer briefly.\n\nNOTES:\n- beta\n- gamma\n\nDOC:\nx");
  assert.equal(req.tokens, 16);
});

/** A build folder with one role, the bundle edited by `edit` (hashes made right unless `hash` is given). */
function build(edit, hash) {
  const dir = mkdtempSync(join(tmpdir(), "pm-ts-build-"));
  mkdirSync(join(dir, "roles"));
  const data = parse(readFileSync(new URL("../../../build/manifest.json", import.meta.url), "utf8"));
  const entry = data.get("roles").get("executor");
  const raw = readFileSync(new URL("../../../build/" + entry.get("file"), import.meta.url), "utf8");
  const b = parse(raw);
  edit(b);
  const text = dumps(b, { ensureAscii: false });
  writeFileSync(join(dir, "roles", "executor.json"), text);
  entry.set("file", "roles/executor.json");
  entry.set("sha256", hash ?? createHash("sha256").update(Buffer.from(text, "utf8")).digest("hex"));
  data.set("roles", new Map([["executor", entry]]));
  writeFileSync(join(dir, "manifest.json"), dumps(data));
  return dir;
}

test("loading refuses what the Python runtime refuses, with its messages (PM801)", () => {
  const refuse = (dir, pattern) => assert.throws(() => Runtime.load(dir), (e) => e.code === "PM801" && pattern.test(e.message), String(pattern));
  refuse(build(() => {}, "0".repeat(64)), /roles\/executor\.json does not match the hash in manifest\.json \(corrupted or edited by hand\)$/);
  refuse(build((b) => b.set("format_version", 3n)), /bundle format 'promptmill-bundle' version 3 is not 'promptmill-bundle' version 1 or 2$/);
  refuse(build((b) => b.set("format_version", true)), /version True is not/);
  refuse(build((b) => b.set("format_version", 2n)), /format version 2 goes with `parents` only in version 2$/);
  refuse(build((b) => b.set("extra", 1n)), /executor\.json: unknown fields \['extra'\] \(written by another promptmill\?\)$/);
  refuse(build((b) => b.get("budget").set("x", 1n)), /executor\.json\.budget: unknown fields \['x'\]/);
  refuse(build((b) => b.get("sections")[0].set("kind", "video")), /sections\[0\]: unknown kind 'video' or trim 'never'$/);
  refuse(build((b) => b.get("sections")[0].set("priority", "high")), /sections\[0\]\.priority: str is not a valid value \('high'\)$/);
  refuse(build((b) => b.get("sections")[4].set("plan", [["zz"]])), /sections\[4\]\.plan: not a well-formed template plan$/);
  refuse(build((b) => b.get("sections")[0].set("when", parse('{"path": "state.a", "op": "eq"}'))), /sections\[0\]\.when: not a well-formed condition$/);
  refuse(build((b) => b.set("id", "other")), /holds role 'other', manifest says 'executor'$/);
  assert.throws(() => Runtime.load("/nonexistent-build"), /no build at \/nonexistent-build: \/nonexistent-build\/manifest\.json does not exist/);
});
