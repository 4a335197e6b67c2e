// A long-lived runner of `promptmill-ts render` for the conformance test (test/conformance.test.mjs): it imports
// the CLI once and runs its `main(argv)` for every case it is sent, from the repository root, capturing what main
// writes to stdout and stderr. The tokenizers and the model table load once instead of once a case; the bytes
// are the CLI's. Protocol: one JSON line in ({id, argv}), one JSON line out ({id, stdout, stderr, exit}, output
// base64). CONFORMANCE_SPAWN=1 in the test runs one process a case instead.
import { createInterface } from "node:readline";
import { dirname, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const REPO = resolve(here, "..", "..", "..");
const CLI = resolve(here, "..", "dist", "cli.js");

const send = process.stdout.write.bind(process.stdout);
let out = [];
let err = [];
const capture = (sink) => (chunk, encoding, done) => {
  sink.push(typeof chunk === "string" ? Buffer.from(chunk, typeof encoding === "string" ? encoding : "utf8") : Buffer.from(chunk));
  const cb = typeof encoding === "function" ? encoding : done;
  if (cb) cb();
  return true;
};
process.stdout.write = capture(out);
process.stderr.write = capture(err);

process.argv = [process.argv[0], CLI]; // the CLI runs main(argv) when imported: with no arguments, a usage error
process.chdir(REPO);
const { main } = await import(pathToFileURL(CLI).href);
process.exitCode = 0;

const lines = createInterface({ input: process.stdin });
for await (const line of lines) {
  if (!line) continue;
  const { id, argv } = JSON.parse(line);
  out.length = 0;
  err.length = 0;
  let exit;
  try {
    exit = await main(argv, { out: (text) => out.push(Buffer.from(text, "utf8")), err: (text) => err.push(Buffer.from(text, "utf8")) });
  } catch (e) {
    err.push(Buffer.from(`conformance worker: main threw ${e?.stack ?? e}\n`));
    exit = "threw";
  }
  process.exitCode = 0;
  send(JSON.stringify({ id, stdout: Buffer.concat(out).toString("base64"), stderr: Buffer.concat(err).toString("base64"), exit }) + "\n");
}
