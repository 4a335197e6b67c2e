// The examples of docs/typescript.md run as the page says: each example file is the page's code block byte for
// byte, examples/render.mjs prints the output block the page shows, and examples/send.mjs sends, through the
// official `openai` and `@anthropic-ai/sdk` clients, exactly the payloads `promptmill-ts render --format WIRE
// --model M` prints (a local node:http server stands in for both providers and records what it got).
import { test } from "node:test";
import assert from "node:assert/strict";
import { createServer } from "node:http";
import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { parse, pyEqual } from "../dist/pyjson.js";

const REPO = fileURLToPath(new URL("../../../", import.meta.url));
const PAGE = readFileSync(new URL("../../../docs/typescript.md", import.meta.url), "utf8");
const example = (name) => readFileSync(new URL(`../examples/${name}`, import.meta.url), "utf8");

/** The fenced block of `lang` that follows the line `<!-- marker -->` on the page. */
function block(marker, lang) {
  const at = PAGE.indexOf(`<!-- ${marker} -->\n`);
  assert.ok(at >= 0, `docs/typescript.md has no <!-- ${marker} --> marker`);
  const open = "```" + lang + "\n";
  const start = PAGE.indexOf(open, at);
  assert.ok(start >= 0, `no \`\`\`${lang} block after <!-- ${marker} -->`);
  const end = PAGE.indexOf("\n```\n", start + open.length);
  return PAGE.slice(start + open.length, end + 1);
}

function run(args, env = {}) {
  return new Promise((resolve) => {
    execFile(process.execPath, args, { cwd: REPO, env: { ...process.env, ...env }, encoding: "utf8" }, (err, stdout, stderr) =>
      resolve({ code: err ? err.code : 0, stdout, stderr }),
    );
  });
}

test("examples/render.mjs is the page's example and prints what the page shows", async () => {
  assert.equal(example("render.mjs"), block("example: render.mjs", "js"));
  const r = await run(["runtimes/typescript/examples/render.mjs"]);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stdout, block("output: render.mjs", "text"));
});

test("examples/send.mjs is the page's example and the SDKs send the CLI's payloads", async () => {
  assert.equal(example("send.mjs"), block("example: send.mjs", "js"));
  const got = [];
  const server = createServer((req, res) => {
    const chunks = [];
    req.on("data", (c) => chunks.push(c));
    req.on("end", () => {
      const raw = Buffer.concat(chunks).toString("utf8");
      got.push({ path: req.url, raw });
      const body = JSON.parse(raw);
      const answer = req.url.endsWith("/chat/completions")
        ? {
            id: "chatcmpl-1",
            object: "chat.completion",
            created: 0,
            model: body.model,
            choices: [{ index: 0, message: { role: "assistant", content: "(openai answers)", refusal: null }, finish_reason: "stop", logprobs: null }],
          }
        : {
            id: "msg_1",
            type: "message",
            role: "assistant",
            model: body.model,
            content: [{ type: "text", text: "(anthropic answers)" }],
            stop_reason: "end_turn",
            stop_sequence: null,
            usage: { input_tokens: 1, output_tokens: 1 },
          };
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify(answer));
    });
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  const url = `http://127.0.0.1:${server.address().port}`;
  try {
    const r = await run(["runtimes/typescript/examples/send.mjs"], {
      OPENAI_BASE_URL: `${url}/v1`,
      ANTHROPIC_BASE_URL: url,
      OPENAI_API_KEY: "test",
      ANTHROPIC_API_KEY: "test",
    });
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout, "(openai answers)\n(anthropic answers)\n");
  } finally {
    server.close();
  }
  assert.deepEqual(
    got.map((g) => g.path),
    ["/v1/chat/completions", "/v1/messages"],
  );
  // the state send.mjs renders, taken from its source, as a file for the CLI
  const literal = /parse\(`([^`]*)`\)/.exec(example("send.mjs"));
  assert.ok(literal, "send.mjs has no parse(`...`) state");
  const state = join(mkdtempSync(join(tmpdir(), "pm-example-")), "state.json");
  writeFileSync(state, literal[1]);
  for (const [sent, wire, model] of [
    [got[0], "openai", "gpt-4o-mini"],
    [got[1], "anthropic", "claude-sonnet-4-5"],
  ]) {
    const cli = await run(["runtimes/typescript/dist/cli.js", "render", "companion-beat", "--build", "build", "--state", state, "--format", wire, "--model", model]);
    assert.equal(cli.code, 0, cli.stderr);
    assert.ok(pyEqual(parse(sent.raw), parse(cli.stdout)), `${wire}: the SDK sent another body than the CLI's payload:\n${sent.raw.slice(0, 400)}`);
  }
});
