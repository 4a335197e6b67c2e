// Run from the repository root: node runtimes/typescript/examples/render.mjs
import { Runtime, parse, requestText } from "promptmill";

const rt = Runtime.load("build"); // a build folder written by `promptmill compile`
const state = parse(`{
  "summary": "Maya's race is in eight weeks; Leo moves to Lisbon next month.",
  "runtime": {"time": "2025-03-15 10:30", "channel": "#friends"},
  "idle_minutes": 840
}`); // states are parsed with parse(), not JSON.parse: it keeps 1 vs 1.0, big integers and key order
const req = rt.render("companion-beat", state, { budget: 420 });

console.log(`${req.tokens} of ${req.budget} tokens (${req.tokenizer})`);
for (const s of req.sections) console.log(`${s.status.padEnd(8)} ${String(s.tokens).padStart(3)}  ${s.id}`);
console.log(requestText(req).split("\n").at(-1));
