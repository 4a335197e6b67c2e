// Schema forms and profiles against the Python runtime's (test/fixtures/tokens.json.gz `schemas`,
// scripts/gen-token-fixtures.py): OpenAI strict mode, Gemini's Schema subset (refs inlined, nullable, any_of),
// and what each structured-output profile loses or removes, for the shipped contracts' schemas, the tools'
// parameters and schemas written to reach the other branches.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { gunzipSync } from "node:zlib";
import { dumps, parse } from "../dist/pyjson.js";
import { geminiSchema, openaiStrict } from "../dist/schemaforms.js";
import { PROFILES, lostKeywords, withoutRejected } from "../dist/schemaprofiles.js";

const data = parse(gunzipSync(readFileSync(new URL("./fixtures/tokens.json.gz", import.meta.url))).toString("utf8"));
const same = (a, b, what) => assert.equal(dumps(a), dumps(b), what);

test("openai_strict, gemini_schema, lost_keywords and without_rejected are Python's", () => {
  const cases = data.get("schemas");
  assert.ok(cases.length >= 20);
  cases.forEach((c, k) => {
    const schema = c.get("schema");
    same(openaiStrict(schema), c.get("openai_strict"), `openai_strict of schema ${k}`);
    if (schema instanceof Map) same(geminiSchema(schema), c.get("gemini"), `gemini_schema of schema ${k}`);
    for (const [name, profile] of PROFILES) {
      same(lostKeywords(schema, profile), c.get("lost").get(name), `${name} lost keywords of schema ${k}`);
      same(withoutRejected(schema, profile), c.get("without_rejected").get(name), `${name} without rejected of schema ${k}`);
    }
  });
});
