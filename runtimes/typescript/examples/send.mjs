// Run from the repository root with OPENAI_API_KEY and ANTHROPIC_API_KEY set:
//   node runtimes/typescript/examples/send.mjs
import OpenAI from "openai";
import Anthropic from "@anthropic-ai/sdk";
import { Runtime, dumps, parse, payloadFor } from "promptmill";

const rt = Runtime.load("build");
const state = parse(`{"runtime": {"time": "2025-03-15 10:30", "channel": "#friends"}, "idle_minutes": 840}`);
// the payload `promptmill render --format WIRE` prints, as the plain object an SDK takes
const body = (wire, req) => JSON.parse(dumps(payloadFor(wire, req)));

const openai = new OpenAI(); // reads OPENAI_API_KEY
const chat = await openai.chat.completions.create(
  body("openai", rt.render("companion-beat", state, { model: "gpt-4o-mini" })),
);
console.log(chat.choices[0].message.content);

const anthropic = new Anthropic(); // reads ANTHROPIC_API_KEY
const message = await anthropic.messages.create(
  body("anthropic", rt.render("companion-beat", state, { model: "claude-sonnet-4-5" })),
);
console.log(message.content[0].text);
