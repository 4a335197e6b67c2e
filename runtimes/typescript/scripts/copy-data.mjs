// Copies the data files the Python package ships (compiler/promptmill/data/) into this package's data/:
// the tiktoken encodings (hash-checked again when loaded, src/tokenizers.ts) and the model table
// (src/models.ts). Run by `npm run build` and `npm test` (prebuild, pretest); data/ is not committed.
// It also empties dist/ before tsc writes it: a module deleted from src/ must not linger there, where the
// package would ship it and a test importing it would still pass.
import { copyFileSync, mkdirSync, rmSync, statSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const from = join(here, "..", "..", "..", "compiler", "promptmill", "data");
const to = join(here, "..", "data");
const FILES = ["o200k_base.tiktoken", "cl100k_base.tiktoken", "models.json"];

mkdirSync(to, { recursive: true });
for (const name of FILES) {
  const src = join(from, name);
  const dst = join(to, name);
  let fresh = false;
  try {
    const a = statSync(src);
    const b = statSync(dst);
    fresh = a.size === b.size && b.mtimeMs >= a.mtimeMs;
  } catch {
    fresh = false;
  }
  if (!fresh) copyFileSync(src, dst);
}

rmSync(join(here, "..", "dist"), { recursive: true, force: true });
