// The conformance corpus (conformance/cases.jsonl, written by tools/gen_conformance.py from the Python runtime):
// every case runs through `promptmill-ts render` (dist/cli.js) from the repository root with the case's arguments,
// and stdout, stderr and the exit code must be the Python runtime's, byte for byte. A case whose role has
// sections that need Jinja (`fallback`) may instead be refused with PM801 naming one of those sections.
//
// CONFORMANCE_FILTER=<substring> runs the cases whose id contains it; CONFORMANCE_JOBS=<n> processes at once
// (default 2). By default each process is a worker running the CLI's main() for case after case
// (scripts/conformance-worker.mjs: the tokenizers load once); CONFORMANCE_SPAWN=1 starts one `promptmill-ts`
// process a case, exactly as a user runs it. The summary line gives the pass count per --format.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const REPO = resolve(here, "..", "..", "..");
const CLI = resolve(here, "..", "dist", "cli.js");
const CASES = join(REPO, "conformance", "cases.jsonl");

function loadCases() {
  const text = readFileSync(CASES, "utf8");
  // one record a line; lines end at "\n" only (a state's text may hold U+2028)
  const cases = text.split("\n").filter((line) => line !== "").map((line) => JSON.parse(line));
  const filter = process.env.CONFORMANCE_FILTER;
  return filter ? cases.filter((c) => c.id.includes(filter)) : cases;
}

function argv(c) {
  return [CLI, "render", c.role, "--build", c.build, "--state", c.state, ...c.args];
}

/** One process a case: the CLI exactly as a user runs it (CONFORMANCE_SPAWN=1). */
function spawnRun(c) {
  return new Promise((done) => {
    const child = spawn(process.execPath, argv(c), { cwd: REPO, env: { ...process.env, NO_COLOR: "1" } });
    const out = [];
    const err = [];
    child.stdout.on("data", (b) => out.push(b));
    child.stderr.on("data", (b) => err.push(b));
    child.on("close", (code, signal) => done({ stdout: Buffer.concat(out), stderr: Buffer.concat(err), exit: code ?? `signal ${signal}` }));
  });
}

const WORKER = resolve(here, "..", "scripts", "conformance-worker.mjs");

/** A long-lived process running the CLI's main() for one case after another (scripts/conformance-worker.mjs). */
class Worker {
  constructor() {
    this.child = spawn(process.execPath, [WORKER], { cwd: REPO, env: { ...process.env, NO_COLOR: "1" }, stdio: ["pipe", "pipe", "pipe"] });
    this.pending = null;
    this.buffer = "";
    this.errors = "";
    this.child.stdout.on("data", (b) => {
      this.buffer += b.toString("utf8");
      let nl;
      while ((nl = this.buffer.indexOf("\n")) >= 0) {
        const line = this.buffer.slice(0, nl);
        this.buffer = this.buffer.slice(nl + 1);
        const r = JSON.parse(line);
        const p = this.pending;
        this.pending = null;
        p?.resolve({ stdout: Buffer.from(r.stdout, "base64"), stderr: Buffer.from(r.stderr, "base64"), exit: r.exit });
      }
    });
    this.child.stderr.on("data", (b) => (this.errors += b.toString("utf8")));
    this.child.on("exit", (code, signal) => {
      this.dead = true;
      this.pending?.reject(new Error(`the conformance worker ended (${code ?? signal}): ${this.errors.slice(-2000)}`));
      this.pending = null;
    });
  }

  run(c) {
    return new Promise((resolve, reject) => {
      this.pending = { resolve, reject };
      this.child.stdin.write(JSON.stringify({ id: c.id, argv: argv(c).slice(1) }) + "\n");
    });
  }

  close() {
    if (!this.dead) this.child.stdin.end();
  }
}

function formatOf(c) {
  const i = c.args.indexOf("--format");
  return i >= 0 ? c.args[i + 1] : "pretty";
}

/** Where two texts first differ, with a little context of each. */
function shortDiff(what, want, got) {
  let i = 0;
  while (i < want.length && i < got.length && want[i] === got[i]) i++;
  const from = Math.max(0, i - 80);
  return (
    `${what} differs at character ${i} (expected ${want.length} characters, got ${got.length}):\n` +
    `  expected: ${JSON.stringify(want.slice(from, i + 80))}\n` +
    `  actual:   ${JSON.stringify(got.slice(from, i + 80))}`
  );
}

function compare(c, r) {
  const problems = [];
  if (!r.stdout.equals(Buffer.from(c.stdout, "utf8"))) problems.push(shortDiff("stdout", c.stdout, r.stdout.toString("utf8")));
  if (!r.stderr.equals(Buffer.from(c.stderr, "utf8"))) problems.push(shortDiff("stderr", c.stderr, r.stderr.toString("utf8")));
  if (r.exit !== c.exit) problems.push(`exit code: expected ${c.exit}, got ${r.exit}`);
  if (problems.length && c.yaml_syntax) {
    // a YAML state that does not parse: the parser's words differ (PyYAML's, the yaml package's), so the case
    // asks for the same code, file and line, nothing on stdout and the same exit code (docs/typescript.md)
    const at = /^promptmill: error\[PM813\]: ([^\n]*?):(\d+):\d+: /;
    const want = at.exec(c.stderr);
    const got = at.exec(r.stderr.toString("utf8"));
    if (want && got && want[1] === got[1] && want[2] === got[2] && r.exit === c.exit && r.stdout.length === 0) return [];
    return ["a YAML state that does not parse: not PM813 at the same file and line", ...problems];
  }
  if (problems.length && c.fallback) {
    // a role with sections that need Jinja (docs/bundle-format.md 8.4): Python's bytes, or refused with PM801
    // naming one of those sections (a failure found before the section is reached is Python's, byte for byte)
    const err = r.stderr.toString("utf8");
    const named = c.fallback.some((id) => err.includes(`section '${id}'`));
    if (r.exit === 1 && r.stdout.length === 0 && err.startsWith("promptmill: error[PM801]: ") && named) return [];
    return [`a role with fallback sections (${c.fallback.join(", ")}): neither Python's output nor a PM801 refusal naming one`, ...problems];
  }
  return problems;
}

test("conformance corpus: the TypeScript runtime prints the Python runtime's bytes for every case", { timeout: 30 * 60 * 1000 }, async () => {
  assert.ok(existsSync(CASES), `no corpus at ${CASES}: run python tools/gen_conformance.py`);
  assert.ok(existsSync(CLI), `no ${CLI}: the CLI is not built (npm test runs tsc first)`);
  const cases = loadCases();
  assert.ok(cases.length > 0, "no cases selected");
  const jobs = Math.max(1, Number(process.env.CONFORMANCE_JOBS ?? 2));
  const failures = [];
  const perFormat = new Map();
  let next = 0;
  const spawnEach = process.env.CONFORMANCE_SPAWN === "1";
  const worker = async () => {
    let w = spawnEach ? null : new Worker();
    while (next < cases.length) {
      const c = cases[next++];
      let r;
      if (w === null) r = await spawnRun(c);
      else {
        try {
          r = await w.run(c);
        } catch {
          // the CLI ended its process (process.exit) or crashed: this case runs as its own process, then a new worker
          r = await spawnRun(c);
          w = new Worker();
        }
      }
      const problems = compare(c, r);
      const fmt = formatOf(c);
      const tally = perFormat.get(fmt) ?? { pass: 0, total: 0 };
      tally.total++;
      if (problems.length === 0) tally.pass++;
      else failures.push({ c, problems });
      perFormat.set(fmt, tally);
    }
    w?.close();
  };
  await Promise.all(Array.from({ length: jobs }, worker));
  const summary = [...perFormat.entries()]
    .sort(([a], [b]) => (a < b ? -1 : 1))
    .map(([fmt, t]) => `${fmt} ${t.pass}/${t.total}`)
    .join(", ");
  const failedIn = new Map();
  for (const f of failures) {
    const group = f.c.id.split("/")[0];
    failedIn.set(group, (failedIn.get(group) ?? 0) + 1);
  }
  const passed = cases.length - failures.length;
  const refused = cases.filter((c) => c.fallback).length;
  const yamlSyntax = cases.filter((c) => c.yaml_syntax).length;
  console.log(
    `conformance: ${passed}/${cases.length} cases pass (${summary}); ${refused} cases render roles with fallback sections ` +
      `(Python's bytes or a PM801 refusal naming the section pass); ${yamlSyntax} cases are YAML states that do not parse ` +
      "(PM813 at the same file and line passes; the words are the YAML parser's)",
  );
  if (failedIn.size) console.log(`conformance: failing cases by group: ${[...failedIn].map(([g, n]) => `${g} ${n}`).join(", ")}`);
  if (failures.length) {
    const order = new Map(cases.map((c, i) => [c.id, i]));
    failures.sort((a, b) => order.get(a.c.id) - order.get(b.c.id));
    const first = failures[0];
    const command = ["promptmill-ts", ...argv(first.c).slice(1)].join(" ");
    assert.fail(
      `${failures.length} of ${cases.length} cases differ from the Python runtime; the first, ${first.c.id}:\n` +
        `  (cd ${REPO} && ${command})\n` +
        first.problems.join("\n") +
        `\nother failing cases: ${failures.slice(1, 11).map((f) => f.c.id).join(", ")}${failures.length > 11 ? ", ..." : ""}`,
    );
  }
});
