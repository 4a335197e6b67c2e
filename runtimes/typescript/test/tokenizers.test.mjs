// Token counts, ids and cuts against the Python runtime's (tiktoken 0.14.0 itself): test/fixtures/tokens.json.gz,
// written by scripts/gen-token-fixtures.py from a varied corpus (scripts, emoji sequences, combining marks, long
// runs of letters and whitespace, code, prose, lone surrogates), and joins counted exactly from pieces.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { gunzipSync } from "node:zlib";
import { Tiktoken } from "js-tiktoken/lite";
import { parse } from "../dist/pyjson.js";
import { Counter } from "../dist/counting.js";
import { SHIPPED_ENCODINGS, dataFile, getTokenizer } from "../dist/tokenizers.js";
import { PromptmillError } from "../dist/errors.js";

const data = parse(gunzipSync(readFileSync(new URL("./fixtures/tokens.json.gz", import.meta.url))).toString("utf8"));
const texts = data.get("texts");
const ENCODINGS = ["o200k_base", "cl100k_base", "approx"];
const show = (s) => JSON.stringify(s.length > 80 ? s.slice(0, 80) + "…" : s);

test("the corpus is varied", () => {
  assert.ok(texts.length >= 200);
  const all = texts.map((t) => t.get("text")).join("");
  for (const probe of ["\u200d", "\u0301", "\ud83c\uddeb", " ".repeat(1000), "def ", "\ud800"]) assert.ok(all.includes(probe), `no ${show(probe)}`);
});

for (const name of ENCODINGS) {
  test(`${name}: counts and ids are tiktoken's`, () => {
    const tok = getTokenizer(name);
    const wrong = [];
    for (const row of texts) {
      const text = row.get("text");
      const want = row.get(name);
      if (tok.count(text) !== Number(want.get("count"))) wrong.push(`${show(text)}: count ${tok.count(text)}, Python ${want.get("count")}`);
      if (want.has("ids")) {
        const ids = tok.encode(text).join(",");
        if (ids !== want.get("ids").join(",")) wrong.push(`${show(text)}: other ids`);
      }
    }
    assert.deepEqual(wrong, []);
  });

  test(`${name}: truncation cuts where Python cuts`, () => {
    const tok = getTokenizer(name);
    const wrong = [];
    let n = 0;
    for (const row of texts) {
      const text = row.get("text");
      for (const [k, keep, cut] of row.get(name).get("truncate")) {
        n++;
        const got = tok.truncate(text, Number(k), keep);
        if (got !== cut) wrong.push(`${show(text)} ${keep} ${k}: ${show(got)}, Python ${show(cut)}`);
      }
    }
    assert.ok(n > 300, `${n} cuts`);
    assert.deepEqual(wrong, []);
  });

  test(`${name}: countParts equals the count of the joined text, as in Python`, () => {
    const counter = new Counter(getTokenizer(name));
    const wrong = [];
    for (const row of data.get("parts")) {
      const pieces = row.get("pieces");
      const got = counter.countParts(pieces);
      if (got !== Number(row.get(name))) wrong.push(`${show(pieces.join("|"))}: ${got}, Python ${row.get(name)}`);
      if (got !== getTokenizer(name).count(pieces.join(""))) wrong.push(`${show(pieces.join("|"))}: not the whole count`);
    }
    assert.deepEqual(wrong, []);
  });
}

test("js-tiktoken 1.0.21 built from the same files encodes the same ids (short texts: its merge is quadratic)", () => {
  for (const name of ["o200k_base", "cl100k_base"]) {
    const ours = getTokenizer(name);
    const lines = [];
    const fields = dataFile(`${name}.tiktoken`).toString("latin1").split(/\s+/).filter(Boolean);
    for (let k = 0; k < fields.length; k += 2) lines.push(`! ${fields[k + 1]} ${fields[k]}`);
    // js-tiktoken's own patterns for JavaScript; no special tokens (promptmill counts them as ordinary text)
    const enc = new Tiktoken({ pat_str: jsTiktokenPattern(name), special_tokens: {}, bpe_ranks: lines.join("\n") });
    for (const row of texts) {
      const text = row.get("text");
      if (text.length > 400 || /[\u0085\ufeff\u017f]|[\ud800-\udfff]/.test(text) || text.includes("<|")) continue; // where js-tiktoken's patterns differ from tiktoken's
      assert.deepEqual(ours.encode(text), enc.encode(text, [], []), `${name}: ${show(text)}`);
    }
  }
});

// js-tiktoken 1.0.21's pat_str (dist/ranks/<name>.js), copied: the older tiktoken patterns, with JavaScript's \s
function jsTiktokenPattern(name) {
  return name === "o200k_base"
    ? "[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]*[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]+('s|'S|'t|'T|'re|'rE|'Re|'RE|'ve|'vE|'Ve|'VE|'m|'M|'ll|'lL|'Ll|'LL|'d|'D)?|[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]+[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]*('s|'S|'t|'T|'re|'rE|'Re|'RE|'ve|'vE|'Ve|'VE|'m|'M|'ll|'lL|'Ll|'LL|'d|'D)?|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"
    : "('s|'S|'t|'T|'re|'rE|'Re|'RE|'ve|'vE|'Ve|'VE|'m|'M|'ll|'lL|'Ll|'LL|'d|'D)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
}

test("the encoding files are the ones tiktoken expects (SHA-256)", () => {
  assert.equal(SHIPPED_ENCODINGS.o200k_base, "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d");
  assert.equal(SHIPPED_ENCODINGS.cl100k_base, "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7");
});

test("an unknown tokenizer is PM502, a Hugging Face one PM850 naming it", () => {
  assert.throws(() => getTokenizer("o300k"), (e) => e instanceof PromptmillError && e.code === "PM502" && e.message === "unknown tokenizer 'o300k'");
  assert.throws(() => getTokenizer("hf:models/tok.json"), (e) => e instanceof PromptmillError && e.code === "PM850" && e.message.includes("'hf:models/tok.json'"));
});

test("a long run counts in linear time", () => {
  const t0 = Date.now();
  assert.equal(getTokenizer("o200k_base").count("a".repeat(200_000)), 25_000);
  assert.ok(Date.now() - t0 < 20_000, `${Date.now() - t0} ms`);
});
