// The files part of the conformance corpus (conformance/files-cases.jsonl, written by tools/gen_conformance.py from
// the Python CLI): states that are a FIFO, a device, a folder, a socket, a symbolic link (dangling, looping, out of
// the repository), an oversized or sparse file, or bytes on standard input; build folders missing or half-written;
// standard output that is a full disk or a pipe whose reader went away. Such files cannot live in git: each
// case's `setup` makes them in a new temporary folder (`{tmp}`), then `promptmill-ts render` runs as a real process
// from the repository root, and stdout, stderr and the exit code must be Python's, byte for byte, with `{tmp}`
// standing for the folder. A FIFO must be refused at once (never waited on), /dev/zero never read: every case
// has a time limit.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn, spawnSync } from "node:child_process";
import {
  closeSync,
  cpSync,
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readFileSync,
  realpathSync,
  rmSync,
  symlinkSync,
  truncateSync,
  unlinkSync,
  writeFileSync,
} from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const REPO = resolve(here, "..", "..", "..");
const CLI = resolve(here, "..", "dist", "cli.js");
const CASES = join(REPO, "conformance", "files-cases.jsonl");
const LIMIT_MS = 20_000; // a CLI that blocks on a FIFO or reads /dev/zero to the end fails here, not in CI's timeout

function loadCases() {
  return readFileSync(CASES, "utf8")
    .split("\n")
    .filter((line) => line !== "")
    .map((line) => JSON.parse(line));
}

/** Run the case's setup steps in `tmp` (tools/gen_conformance.py `make_setup`); the servers to close after. */
async function makeSetup(steps, tmp) {
  const servers = [];
  for (const step of steps) {
    const path = step.path.replaceAll("{tmp}", tmp);
    // a step only ever makes or removes a name inside `tmp`, whose folder lies inside `tmp` after every link
    assert.ok(path.startsWith(tmp + "/") && realpathSync(dirname(path)).startsWith(tmp), `setup outside ${tmp}: ${path}`);
    if (step.make === "fifo") {
      const made = spawnSync("mkfifo", [path]); // Node has no mkfifo of its own
      assert.equal(made.status, 0, `mkfifo ${path}: ${made.stderr}`);
      assert.ok(lstatSync(path).isFIFO());
    } else if (step.make === "folder") mkdirSync(path);
    else if (step.make === "socket") {
      const server = createServer();
      await new Promise((done, fail) => server.once("error", fail).listen(path, done));
      servers.push(server);
    } else if (step.make === "link") symlinkSync(step.to.replaceAll("{tmp}", tmp), path);
    else if (step.make === "copy") cpSync(join(REPO, step.from), path, { recursive: true, dereference: true }); // files, never links to the repository's
    else if (step.make === "remove") unlinkSync(path);
    else if (step.make === "file") {
      if (step.sparse) {
        writeFileSync(path, "");
        truncateSync(path, step.size); // a hole: fstat says `size`, nothing is on disk
      } else if ("text" in step) writeFileSync(path, step.text, "utf8");
      else if ("base64" in step) writeFileSync(path, Buffer.from(step.base64, "base64"));
      else if ("pieces" in step) writeFileSync(path, step.pieces.map(([text, count]) => text.repeat(count)).join(""), "utf8");
      else writeFileSync(path, Buffer.alloc(step.size, step.fill));
    } else throw new Error(`unknown setup step ${step.make}`);
  }
  return servers;
}

function commandLine(c, tmp) {
  return ["render", c.role, "--build", c.build.replaceAll("{tmp}", tmp), "--state", c.state.replaceAll("{tmp}", tmp), ...c.args];
}

function run(c, tmp) {
  const argv = [CLI, ...commandLine(c, tmp)];
  const fds = [];
  const stdio = ["pipe", "pipe", "pipe"];
  if (c.stdin && c.stdin.file) stdio[0] = fds[fds.push(openSync(c.stdin.file, "r")) - 1];
  if (c.output === "/dev/full") stdio[1] = fds[fds.push(openSync("/dev/full", "w")) - 1];
  return new Promise((done) => {
    const child = spawn(process.execPath, argv, { cwd: REPO, env: { ...process.env, NO_COLOR: "1" }, stdio });
    const timer = setTimeout(() => child.kill("SIGKILL"), LIMIT_MS);
    const out = [];
    const err = [];
    // the reader of standard output goes away before the CLI writes (`promptmill-ts render ... | head -c 10`)
    if (c.output === "closed-pipe") child.stdout.destroy();
    else child.stdout?.on("data", (b) => out.push(b));
    child.stderr.on("data", (b) => err.push(b));
    if (!(c.stdin && c.stdin.file)) {
      child.stdin.on("error", () => {}); // the CLI may exit before reading all of it
      child.stdin.end(c.stdin && c.stdin.base64 ? Buffer.from(c.stdin.base64, "base64") : Buffer.alloc(0));
    }
    child.on("close", (code, signal) => {
      clearTimeout(timer);
      for (const fd of fds) closeSync(fd);
      done({ stdout: Buffer.concat(out).toString("utf8"), stderr: Buffer.concat(err).toString("utf8"), exit: code ?? `signal ${signal} (over ${LIMIT_MS} ms?)` });
    });
  });
}

test("conformance files corpus: exists and covers FIFOs, devices, folders, sockets, links, sizes and stdin", () => {
  assert.ok(existsSync(CASES), `no ${CASES}: run python tools/gen_conformance.py`);
  const kinds = new Set(loadCases().flatMap((c) => c.setup.map((s) => s.make)));
  for (const kind of ["fifo", "folder", "socket", "link", "file", "copy"]) assert.ok(kinds.has(kind), `no case makes a ${kind}`);
  assert.ok(loadCases().some((c) => c.stdin && c.stdin.file === "/dev/zero"));
  const outputs = new Set(loadCases().map((c) => c.output));
  assert.ok(outputs.has("/dev/full") && outputs.has("closed-pipe"));
});

for (const c of existsSync(CASES) ? loadCases() : []) {
  test(`conformance files: ${c.id}`, { timeout: LIMIT_MS + 10_000 }, async () => {
    assert.ok(existsSync(CLI), `no ${CLI}: the CLI is not built (npm test runs tsc first)`);
    const tmp = realpathSync(mkdtempSync(join(tmpdir(), "pm-files-")));
    let servers = [];
    try {
      servers = await makeSetup(c.setup, tmp);
      const r = await run(c, tmp);
      const want = { stdout: c.stdout.replaceAll("{tmp}", tmp), stderr: c.stderr.replaceAll("{tmp}", tmp), exit: c.exit };
      assert.deepEqual(r, want, `(cd ${REPO} && promptmill-ts ${commandLine(c, tmp).join(" ")})`);
    } finally {
      for (const s of servers) s.close();
      rmSync(tmp, { recursive: true, force: true });
    }
  });
}
