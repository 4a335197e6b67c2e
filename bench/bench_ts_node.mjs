// The TypeScript side of bench/bench_ts.py (run by it; not meant to be run by hand).
//
//   node bench/bench_ts_node.mjs serve DIST        one long-lived process: JSON commands on stdin, one JSON reply a line
//   node bench/bench_ts_node.mjs cold DIST BUILD STATE BUDGET FORMAT
//                                                  a cold start: import, load, first render, then exit
//
// DIST is runtimes/typescript/dist. Times are taken inside Node with process.hrtime.bigint(), around exactly the
// work the Python side times: `rt.render(...)` and, for a wire format, the payload (payloadFor); the state's JSON is
// parsed and the output serialized outside the timed part.

import { readFileSync } from "node:fs";
import { createInterface } from "node:readline";
import { pathToFileURL } from "node:url";
import { join } from "node:path";

const [mode, dist, ...rest] = process.argv.slice(2);

async function runtime() {
  const t0 = process.hrtime.bigint();
  const index = await import(pathToFileURL(join(dist, "index.js")).href); // the package's public API
  return { ...index, importNs: process.hrtime.bigint() - t0 };
}

function renderer(pm, rt) {
  // (state, budget, format) -> [ns, output bytes as a string, tokens]
  return (state, budget, format) => {
    const provider = format === "text" ? null : format;
    const t0 = process.hrtime.bigint();
    const req = rt.render("executor", state, { budget, provider });
    const out = format === "text" ? pm.requestText(req) : pm.payloadFor(format, req);
    const ns = process.hrtime.bigint() - t0;
    const bytes = format === "text" ? out : pm.dumps(out, { indent: 2, ensureAscii: false });
    return [ns, bytes, req.tokens];
  };
}

async function serve() {
  const pm = await runtime();
  let render = null;
  const lines = createInterface({ input: process.stdin, crlfDelay: Infinity });
  for await (const line of lines) {
    const cmd = JSON.parse(line);
    let reply;
    try {
      if (cmd.op === "load") {
        const t0 = process.hrtime.bigint();
        const rt = pm.Runtime.load(cmd.build);
        reply = { ns: String(process.hrtime.bigint() - t0) };
        render = renderer(pm, rt);
      } else if (cmd.op === "render") {
        const [ns, out, tokens] = render(pm.parse(cmd.state), cmd.budget, cmd.format);
        reply = { ns: String(ns), out, tokens };
      } else {
        reply = { error: `unknown op ${cmd.op}` };
      }
    } catch (exc) {
      reply = { error: String(exc?.stack ?? exc) };
    }
    process.stdout.write(JSON.stringify(reply) + "\n");
  }
}

async function cold() {
  const [build, statePath, budget, format] = rest;
  const pm = await runtime();
  const state = pm.parse(readFileSync(statePath, "utf-8"));
  const t0 = process.hrtime.bigint();
  const rt = pm.Runtime.load(build);
  const loadNs = process.hrtime.bigint() - t0;
  const [renderNs, out] = renderer(pm, rt)(state, Number(budget), format);
  // performance.now(): ms since this process's time origin (its start)
  const sinceStart = performance.now();
  process.stdout.write(JSON.stringify({ import_ns: String(pm.importNs), load_ns: String(loadNs), render_ns: String(renderNs), since_start_ms: sinceStart, out }) + "\n");
}

if (mode === "serve") await serve();
else if (mode === "cold") await cold();
else {
  process.stderr.write("usage: node bench/bench_ts_node.mjs serve DIST | cold DIST BUILD STATE BUDGET FORMAT\n");
  process.exitCode = 2;
}
