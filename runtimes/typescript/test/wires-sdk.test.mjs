// The official JavaScript SDKs (`openai`, `@anthropic-ai/sdk`, devDependencies) send this runtime's payloads
// unchanged: a local node:http server answers like the provider, records the body each SDK sent, and the body must
// equal the payload (every key and value), as tests/test_openai_responses.py and tests/test_vertex_sdk.py check
// for the Python SDKs. The payloads are rendered here from the render documents of test/fixtures/wires.jsonl.gz.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { createServer } from "node:http";
import { readFileSync } from "node:fs";
import { gunzipSync } from "node:zlib";
import OpenAI from "openai";
import Anthropic from "@anthropic-ai/sdk";
import { parse, pyEqual } from "../dist/pyjson.js";
import { payloadText, renderPayload } from "../dist/wire.js";

const cases = gunzipSync(readFileSync(new URL("./fixtures/wires.jsonl.gz", import.meta.url)))
  .toString("utf8")
  .split("\n")
  .filter(Boolean)
  .map((line) => JSON.parse(line))
  .filter((c) => c.payload !== undefined && c.options === null && !c.derived);

let server;
let url;
const received = [];
const answers = new Map(); // path -> (body) => answer

before(async () => {
  server = createServer((req, res) => {
    const chunks = [];
    req.on("data", (c) => chunks.push(c));
    req.on("end", () => {
      const raw = Buffer.concat(chunks).toString("utf8");
      received.push({ method: req.method, path: req.url, headers: req.headers, raw });
      const answer = answers.get(req.url.split("?")[0]);
      const [status, body] = answer ? [200, answer(JSON.parse(raw))] : [404, { error: { message: `no answer for ${req.url}` } }];
      const text = JSON.stringify(body);
      res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(text) });
      res.end(text);
    });
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  url = `http://127.0.0.1:${server.address().port}`;
});

after(() => server.close());

answers.set("/v1/chat/completions", (body) => ({
  id: "chatcmpl-1",
  object: "chat.completion",
  created: 0,
  model: body.model ?? "unknown",
  choices: [{ index: 0, message: { role: "assistant", content: "Hello there.", refusal: null }, finish_reason: "stop", logprobs: null }],
  usage: { prompt_tokens: 1, completion_tokens: 2, total_tokens: 3 },
}));
answers.set("/v1/responses", (body) => ({
  id: "resp_1",
  object: "response",
  created_at: 0,
  model: body.model ?? "unknown",
  status: "completed",
  output: [{ type: "message", id: "msg_1", status: "completed", role: "assistant", content: [{ type: "output_text", text: "Hello there.", annotations: [] }] }],
  usage: { input_tokens: 1, output_tokens: 2, total_tokens: 3 },
}));
answers.set("/v1/messages", (body) => ({
  id: "msg_1",
  type: "message",
  role: "assistant",
  model: body.model ?? "unknown",
  content: body.tool_choice
    ? [{ type: "tool_use", id: "toolu_1", name: body.tool_choice.name, input: { ok: true } }]
    : [{ type: "text", text: "Hello there." }],
  stop_reason: body.tool_choice ? "tool_use" : "end_turn",
  stop_sequence: null,
  usage: { input_tokens: 1, output_tokens: 2 },
}));

/** Our payload for a case, as the plain object an SDK takes, and as its pyjson value. */
function payloadOf(c) {
  const text = payloadText(renderPayload(c.wire, parse(c.document)));
  assert.equal(text + "\n", c.payload, "the payload is not Python's");
  return [JSON.parse(text), parse(text)];
}

function sentEquals(path, expected) {
  const sent = received[received.length - 1];
  assert.equal(sent.method, "POST");
  assert.equal(sent.path, path);
  assert.ok(pyEqual(parse(sent.raw), expected), `the SDK sent another body:\n${sent.raw.slice(0, 400)}`);
}

const withModel = (wire) => cases.filter((c) => c.wire === wire && c.model !== null);

test("openai chat.completions.create sends the openai payloads unchanged", async () => {
  const client = new OpenAI({ baseURL: url + "/v1", apiKey: "test", maxRetries: 0 });
  const mine = withModel("openai");
  assert.ok(mine.length >= 10);
  for (const c of mine) {
    const [plain, value] = payloadOf(c);
    const reply = await client.chat.completions.create(plain);
    sentEquals("/v1/chat/completions", value);
    assert.equal(reply.choices[0].message.content, "Hello there.");
  }
});

test("openai responses.create sends the openai-responses payloads unchanged", async () => {
  const client = new OpenAI({ baseURL: url + "/v1", apiKey: "test", maxRetries: 0 });
  const mine = withModel("openai-responses");
  assert.ok(mine.length >= 5);
  for (const c of mine) {
    const [plain, value] = payloadOf(c);
    const reply = await client.responses.create(plain);
    sentEquals("/v1/responses", value);
    assert.equal(reply.output_text, "Hello there.");
  }
});

test("anthropic messages.create sends the anthropic payloads unchanged", async () => {
  const client = new Anthropic({ baseURL: url, apiKey: "test", maxRetries: 0 });
  const mine = withModel("anthropic");
  assert.ok(mine.length >= 10);
  let forced = 0;
  for (const c of mine) {
    const [plain, value] = payloadOf(c);
    const reply = await client.messages.create(plain);
    sentEquals("/v1/messages", value);
    if (plain.tool_choice) {
      forced++;
      assert.equal(reply.content[0].type, "tool_use");
      assert.equal(reply.content[0].name, plain.tool_choice.name);
    } else assert.equal(reply.content[0].text, "Hello there.");
  }
  assert.ok(forced > 0, "no payload with a forced tool");
});
