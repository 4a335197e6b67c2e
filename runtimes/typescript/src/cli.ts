#!/usr/bin/env node
// `promptmill-ts render ROLE --build DIR --state FILE [--format text|json|WIRE] [--budget N] [--model M]
// [--provider P] [--event start|continue]`: prints exactly the bytes `promptmill render ... --build DIR` prints
// (Python cli/main.py `render`), and on an error the same stderr text and exit code 1 (2 for a usage error).

import { readSync, realpathSync, existsSync, writeSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { parseDocument, Parser, LineCounter, visit, isAlias, isCollection, isPair, isScalar, YAMLSeq, type Scalar } from "yaml";
import { type Json, type JsonObject, dumps, parse, JsonSyntaxError } from "./pyjson.js";
import { PromptmillError, environmentError } from "./errors.js";
import { Runtime } from "./engine.js";
import { requestData, requestText, type PromptRequest } from "./request.js";
import { payloadFor } from "./payloads.js";
import { pretty } from "./pretty.js";
import { pyPath, readBytes, reason } from "./userfiles.js";
import { lstrip, reprString } from "./pyfmt.js";

const WIRE_NAMES = ["text", "live", "openai", "openai-responses", "anthropic", "anthropic-bedrock", "anthropic-vertex", "gemini", "gemini-vertex", "bedrock"];
const PAYLOAD_FORMATS = WIRE_NAMES.filter((w) => w !== "text");
const RENDER_FORMATS = ["pretty", "text", "json", ...PAYLOAD_FORMATS];
const EVENTS = ["start", "continue"];
const MAX_STATE_FILE_BYTES = 8 * 1024 * 1024;

class UsageError extends Error {}

interface Args {
  role: string;
  state: string | null;
  build: string | null;
  format: string;
  budget: number | null;
  provider: string | null;
  model: string | null;
  event: string;
}

// worded as the Python CLI (`promptmill`) words it, so a usage error prints the same bytes
const USAGE = "Usage: promptmill render [OPTIONS] ROLE";

function choice(name: string, value: string, choices: string[]): string {
  if (!choices.includes(value)) {
    throw new UsageError(`Invalid value for '${name}': '${value}' is not one of ${choices.map((c) => `'${c}'`).join(", ")}.`);
  }
  return value;
}

function parseArgs(argv: string[]): Args {
  if (argv[0] !== "render") throw new UsageError(argv.length ? `No such command '${argv[0]}'.` : "Missing command.");
  const args: Args = { role: "", state: null, build: null, format: "pretty", budget: null, provider: null, model: null, event: "start" };
  const positional: string[] = [];
  for (let i = 1; i < argv.length; i++) {
    let a = argv[i];
    let value: string | undefined;
    if (a.startsWith("--") && a.includes("=")) {
      value = a.slice(a.indexOf("=") + 1);
      a = a.slice(0, a.indexOf("="));
    }
    const take = (): string => {
      if (value !== undefined) return value;
      if (i + 1 >= argv.length) throw new UsageError(`Option '${a}' requires an argument.`);
      return argv[++i];
    };
    switch (a) {
      case "--state":
        args.state = take();
        break;
      case "--build":
        args.build = take();
        break;
      case "--format":
        args.format = choice("--format", take(), RENDER_FORMATS);
        break;
      case "--budget": {
        const v = take();
        if (!/^\s*[-+]?\d+\s*$/.test(v)) throw new UsageError(`Invalid value for '--budget': '${v}' is not a valid integer.`);
        args.budget = Number(v);
        break;
      }
      case "--provider":
        args.provider = choice("--provider", take(), WIRE_NAMES);
        break;
      case "--model":
        args.model = take();
        break;
      case "--event":
        args.event = choice("--event", take(), EVENTS);
        break;
      default:
        if (a.startsWith("-") && a !== "-") throw new UsageError(`No such option: ${a}`);
        positional.push(a);
    }
  }
  if (positional.length !== 1) throw new UsageError(positional.length ? `Got unexpected extra argument (${positional[1]})` : "Missing argument 'ROLE'.");
  args.role = positional[0];
  return args;
}

function stateFail(path: string, problem: string, code = "PM813", hint: string | null = null): PromptmillError {
  return new PromptmillError(code, `state file ${path}: ${problem}`, hint);
}

/** Nothing but blank lines and comments, an empty state (Python: statefile.py `_blank`: the bytes decoded with
 * replacement, split by `str.splitlines`, stripped of what `str.isspace` calls space). */
function blank(raw: Uint8Array): boolean {
  const text = new TextDecoder("utf-8", { ignoreBOM: true }).decode(raw); // a BOM stays: Python's strip() keeps it
  return text.split(/\r\n|[\n\r\v\f\x1c\x1d\x1e\x85\u2028\u2029]/).every((line) => {
    const rest = lstrip(line);
    return rest === "" || rest.startsWith("#");
  });
}

/** YAML 1.1 data as PyYAML's safe loader gives it: integers as bigint, floats as numbers, mappings as Maps. */
function yamlToJson(node: unknown): Json {
  if (node === null || node === undefined) return null;
  if (typeof node === "boolean" || typeof node === "string" || typeof node === "bigint") return node;
  if (typeof node === "number") return node;
  if (Array.isArray(node)) return node.map(yamlToJson);
  if (node instanceof Map) return new Map([...node.entries()].map(([k, v]) => [String(k), yamlToJson(v)]));
  if (node instanceof Date) throw new Error("a timestamp is not JSON data");
  if (typeof node === "object") return new Map(Object.entries(node as Record<string, unknown>).map(([k, v]) => [k, yamlToJson(v)]));
  throw new Error(`not JSON data: ${typeof node}`);
}

/** Python's `PurePath.suffix`: the last part's extension ("" for ".json", "a." or "a"). */
function pySuffix(path: string): string {
  const name = path.slice(path.lastIndexOf("/") + 1);
  const i = name.lastIndexOf(".");
  return i > 0 && i < name.length - 1 ? name.slice(i) : "";
}

const TOO_BIG_HINT = "pass only what the role renders; large lists are trimmed to the budget anyway";
const overLimit = `over the limit of ${(MAX_STATE_FILE_BYTES / 1048576).toFixed(1)} MiB`;

/** The state file: .json through pyjson.parse, .yaml/.yml as YAML 1.1 (an empty file is an empty state); `-` reads
 * standard input (Python: source/statefile.py `read_state`). */
export function readState(pathIn: string): Json {
  if (pathIn === "-") return readStateText(readStdin(), "<stdin>");
  const path = pyPath(pathIn); // as Python's Path shows it
  const suffix = pySuffix(path).toLowerCase();
  if (![".yaml", ".yml", ".json"].includes(suffix)) throw stateFail(path, `unknown file type '${pySuffix(path) || "(none)"}'`, "PM813", "use a .yaml, .yml or .json file");
  const raw = readBounded(pathIn, path);
  if (blank(raw)) return new Map();
  if (suffix === ".json") return loadJson(raw, path);
  return parseYaml(decodeUtf8(raw, path), path);
}

/** The bytes of a state file (Python: statefile.py `read_bounded`): a regular file only (a FIFO, a device, a socket
 * or a folder is PM813, never waited on nor read), over the limit is PM812. The path is the user's choice: a
 * symbolic link is followed wherever it leads, as in Python. */
function readBounded(pathIn: string, path: string): Buffer {
  if (!existsSync(pathIn)) throw stateFail(path, "no such file");
  try {
    return readBytes(pathIn, MAX_STATE_FILE_BYTES, "state file");
  } catch (exc) {
    if (!(exc instanceof PromptmillError)) throw exc;
    if (exc.code === "PM105") throw stateFail(path, `is ${overLimit}`, "PM812", TOO_BIG_HINT);
    const problem = exc.message.startsWith(`${path}: `) ? exc.message.slice(path.length + 2) : exc.message;
    const hint = problem.includes("regular files only") ? "name a regular file, or pipe the state in: --state - (standard input)" : exc.hint;
    throw stateFail(path, problem.replace("the state file is", "is"), "PM813", hint);
  }
}

/** Python source/loader.py `_load_json`: UTF-8 (a BOM dropped), no NaN or infinities, no repeated key; errors are
 * PM813 `<file>:<line>:<col>: <problem>`. */
function loadJson(raw: Buffer, display: string): Json {
  const fail = (line: number, col: number, message: string) => new PromptmillError("PM813", `${display}:${line}:${col}: ${message}`);
  const text = decodeUtf8(raw, display, false); // the JSON reader gives no hint
  let data: Json;
  try {
    data = parse(text);
  } catch (exc) {
    if (exc instanceof JsonSyntaxError) throw fail(exc.line, exc.col, exc.message.replace(/: line \d+ column \d+ \(char \d+\)$/, ""));
    // deeper than the parser's stack: Python's json.loads raises RecursionError, which the loader words so
    if (exc instanceof RangeError && /call stack/.test(exc.message)) throw fail(1, 1, "the JSON is nested too deeply");
    throw exc;
  }
  return refuseConstants(text, data, fail);
}

/** UTF-8 text without a BOM (Python source/textcheck.py `decode`), else PM813 at the bad byte. */
function decodeUtf8(raw: Buffer, display: string, hints = true): string {
  const fail = (line: number, col: number, message: string, hint: string) => new PromptmillError("PM813", `${display}:${line}:${col}: ${message}`, hints ? hint : null);
  if ((raw[0] === 0xff && raw[1] === 0xfe) || (raw[0] === 0xfe && raw[1] === 0xff)) throw fail(1, 1, "the file is UTF-16 text; promptmill reads UTF-8 only", "save the file as UTF-8");
  let bytes = raw;
  if (bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf) bytes = bytes.subarray(3);
  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    let bad = 0;
    for (let end = 1; end <= bytes.length; end++) {
      try {
        new TextDecoder("utf-8", { fatal: true }).decode(bytes.subarray(0, end));
        bad = end;
      } catch {
        // a prefix that ends inside a character: keep going until it is a real error
      }
      if (end - bad > 4) break;
    }
    const lineStart = bytes.lastIndexOf(0x0a, bad - 1) + 1;
    const line = bytes.subarray(0, bad).filter((b) => b === 0x0a).length + 1;
    const col = [...new TextDecoder("utf-8").decode(bytes.subarray(lineStart, bad))].length + 1;
    const binary = bytes.subarray(0, 8192).includes(0);
    if (binary) throw fail(line, col, "this looks like a binary file, not YAML text", "template files must be UTF-8 text");
    throw fail(line, col, `the file is not UTF-8 text: byte 0x${bytes[bad].toString(16).toUpperCase().padStart(2, "0")} is not valid UTF-8`, "save the file as UTF-8 (it may be Latin-1 or Windows-1252)");
  }
  return text;
}

function refuseConstants(text: string, data: Json, fail: (line: number, col: number, message: string) => PromptmillError): Json {
  // what Python's hooks refuse, in the order json.loads meets it: a constant at once, a repeated key when its object closes
  const TOKEN = /"(?:[^"\\]|\\.)*"|NaN|-?Infinity|[{}:,[\]]/gs;
  const keys: (Set<string> | null)[] = [];
  const pending: (string | null)[] = [];
  let lastString: [string, number] | null = null;
  let where: number | null = null;
  let message: string | null = null;
  for (let m = TOKEN.exec(text); m !== null; m = TOKEN.exec(text)) {
    const tok = m[0];
    if (tok === "NaN" || tok === "Infinity" || tok === "-Infinity") {
      where ??= m.index;
      message ??= `${tok} is not valid JSON`;
      break;
    }
    if (tok === "{") {
      keys.push(new Set());
      pending.push(null);
    } else if (tok === "[") {
      keys.push(null);
      pending.push(null);
    } else if (tok === "}" || tok === "]") {
      keys.pop();
      const dup = pending.pop();
      if (dup !== null && dup !== undefined) {
        message ??= `duplicate key '${dup}'`;
        break;
      }
    } else if (tok === ":" && lastString !== null && keys.length && keys[keys.length - 1] !== null) {
      const [key, start] = lastString;
      const seen = keys[keys.length - 1] as Set<string>;
      if (seen.has(key)) {
        where ??= start;
        if (pending[pending.length - 1] === null) pending[pending.length - 1] = key;
      }
      seen.add(key);
    }
    lastString = tok.startsWith('"') ? [parse(tok) as string, m.index] : null;
  }
  if (message !== null) {
    const at = where ?? 0;
    const line = text.slice(0, at).split("\n").length;
    const col = at - (text.lastIndexOf("\n", at - 1) + 1) + 1;
    throw fail(line, col, message);
  }
  return data;
}

function readStdin(): Buffer {
  const chunks: Buffer[] = [];
  const buf = Buffer.alloc(65536);
  let total = 0;
  for (;;) {
    let n: number;
    try {
      n = readSync(0, buf, 0, buf.length, null);
    } catch (exc) {
      const code = (exc as NodeJS.ErrnoException).code;
      if (code === "EAGAIN") {
        Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 10); // a non-blocking stdin: wait, do not spin
        continue;
      }
      if (code === "EOF") break;
      throw new PromptmillError("PM813", `state from <stdin>: cannot read it: ${reason(exc)}`);
    }
    if (n === 0) break;
    chunks.push(Buffer.from(buf.subarray(0, n)));
    total += n;
    if (total > MAX_STATE_FILE_BYTES) throw new PromptmillError("PM812", `state from <stdin>: ${overLimit}`, TOO_BIG_HINT);
  }
  return Buffer.concat(chunks);
}

/** A state read from standard input (Python: statefile.py `read_state_stream`): JSON when it starts with `{` or
 * `[`, else YAML, read by the same loaders as a file (errors at `<stdin>:line:col`). */
function readStateText(raw: Buffer, name: string): Json {
  if (blank(raw)) return new Map();
  const head = new TextDecoder("utf-8").decode(raw).replace(/^[\ufeff \t\r\n]+/, "")[0];
  if (head === "{" || head === "[") return loadJson(raw, name);
  return parseYaml(decodeUtf8(raw, name), name);
}

const ALLOWED_TAGS = new Set(["!", "!!str", "!!int", "!!float", "!!bool", "!!null", "!!map", "!!seq"]);
const TAG_HINT = "remove the tag: templates and render states are plain data (strings, numbers, booleans, null, lists, mappings)";

function phrase(v: unknown): string {
  if (v === null || v === undefined) return "null";
  if (typeof v === "boolean") return "a boolean";
  if (typeof v === "bigint") return "an integer";
  if (typeof v === "number") return "a number";
  if (typeof v === "string") return "a string";
  if (Array.isArray(v) || v instanceof YAMLSeq) return "a list";
  return "a mapping";
}

/** A YAML state as promptmill's loader reads it (source/loader.py, yamlbuild.py, yamlscalars.py): YAML 1.2 core
 * schema scalars, only the core tags, string keys, no merge keys, finite numbers. Errors are PM813
 * `<file>:<line>:<col>: <problem>` for the first problem. */
function parseYaml(text: string, path: string): Json {
  const lines = new LineCounter();
  const problems: [number, string, string | null][] = [];
  // tags, from the concrete syntax tree (where they are written)
  const walk = (node: unknown): void => {
    if (Array.isArray(node)) node.forEach(walk);
    else if (node !== null && typeof node === "object") {
      const t = node as { type?: string; source?: string; offset?: number };
      if (t.type === "tag" && typeof t.source === "string" && !ALLOWED_TAGS.has(t.source)) {
        const tag = t.source;
        const message = tag.includes("python/") ? `the tag '${tag}' would create a Python object; promptmill loads plain data only` : `the YAML tag '${tag}' is not allowed`;
        problems.push([t.offset ?? 0, message, TAG_HINT]);
      }
      for (const [k, v] of Object.entries(node)) if (k !== "source") walk(v);
    }
  };
  let documents = 0;
  let second: number | null = null; // where a second document starts: Python refuses it (yamlbuild.py PM104)
  for (const token of new Parser().parse(text)) {
    if (token.type === "document" && ++documents === 2) second = token.offset;
    walk(token);
  }
  if (documents === 0) {
    // not blank (a byte-order mark and comments, say), yet no document: Python's yamlbuild.py refuses it (PM103)
    throw new PromptmillError("PM813", `${path}:1:1: the file holds no YAML document (it is empty or only comments)`, "write a mapping such as 'kind: role'");
  }
  const doc = parseDocument(second === null ? text : text.slice(0, second), { version: "1.2", schema: "core", intAsBigInt: true, uniqueKeys: false, merge: false, lineCounter: lines });
  if (doc.errors.length) {
    const e = doc.errors[0];
    const at = e.linePos ? `${e.linePos[0].line}:${e.linePos[0].col}` : "1:1";
    throw new PromptmillError("PM813", `${path}:${at}: ${e.message.split("\n")[0].replace(/ at line \d+, column \d+:?$/, "")}`);
  }
  visit(doc, {
    Map(_key, map) {
      const seen = new Map<string, number>();
      for (const pair of map.items) {
        const key = pair.key as Scalar | null;
        if (!isScalar(key) || typeof key.value !== "string") continue;
        const at = key.range?.[0] ?? 0;
        if (key.value === "<<" && key.type === "PLAIN" && !key.tag) {
          problems.push([at, "merge keys (<<) are not supported", "write the keys out, or share text with a fragment"]);
          continue;
        }
        const first = seen.get(key.value);
        if (first !== undefined) {
          const pos = lines.linePos(first);
          problems.push([at, `duplicate key '${key.value}': it is already defined at line ${pos.line}, column ${pos.col}`, "remove or rename one of the two entries"]);
        } else seen.set(key.value, at);
      }
    },
    Pair(_key, pair) {
      const key = pair.key as Scalar | null;
      if (isScalar(key) && typeof key.value !== "string") {
        const raw = key.source ?? (key.range ? text.slice(key.range[0], key.range[1]) : "");
        const shown = raw ? `'${raw}', which YAML reads as ${phrase(key.value)}` : "empty (null)";
        problems.push([key.range?.[0] ?? 0, `mapping keys must be strings; this key is ${shown}`, raw ? `quote the key to make it a string: "${raw}":` : null]);
      } else if (key !== null && !isScalar(key)) {
        problems.push([(key as { range?: number[] }).range?.[0] ?? 0, `mapping keys must be strings; this key is ${phrase(key)}`, null]);
      }
    },
    Scalar(_key, node) {
      if (typeof node.value === "number" && !Number.isFinite(node.value) && node.type === "PLAIN") {
        problems.push([node.range?.[0] ?? 0, `'${node.source}' is not a finite number and cannot be represented in JSON`, "quote it if you mean the text, or use a large finite number"]);
      }
    },
  });
  let fatal = yamlLimits(doc.contents);
  if (fatal === null && second !== null) {
    fatal = [second, "a second YAML document starts here; a file holds exactly one document", "remove the '---' line, or split the documents into separate files"];
  }
  if (fatal !== null) {
    // Python's builder stops at the first node over a limit: the problems it met before it, then that one
    const before = problems.filter((p) => p[0] < fatal[0]);
    problems.length = 0;
    problems.push(...before.sort((a, b) => a[0] - b[0]), fatal);
  } else problems.sort((a, b) => a[0] - b[0]);
  if (problems.length) {
    const [offset, message, hint] = problems[0];
    const pos = lines.linePos(offset);
    const more = problems.length > 1 ? ` (and ${problems.length - 1} more problems)` : "";
    throw new PromptmillError("PM813", `${path}:${pos.line}:${pos.col}: ${message}${more}`, hint);
  }
  const data = yamlToJson(doc.toJS({ mapAsMap: true, maxAliasCount: -1 })); // yamlLimits bounded the aliases
  return data === null ? new Map() : data;
}

// A state file's YAML limits (Python: source/loader.py `_STATE_LIMITS`, checked as source/yamlbuild.py `Builder` does)
const YAML_MAX_DEPTH = 128;
const YAML_MAX_ALIASES = 1_000;
const YAML_MAX_NODES = 2_000_000;

type Problem = [number, string, string | null];

/** The first node over a limit, in document order, as Python's builder refuses it: a collection nested deeper than
 * 128 levels, the 1,001st alias, an alias to a node that contains it, more than 2,000,000 nodes once aliases are
 * expanded (an alias counts the nodes of what it names), or an alias whose expansion nests too deep. */
function yamlLimits(root: unknown): Problem | null {
  type Anchored = { size: number; height: number } | "open";
  const anchors = new Map<string, Anchored>();
  let nodes = 0;
  let aliasCount = 0;
  let depth = 0; // collections open around the node being read
  const over = (at: number): Problem | null =>
    nodes > YAML_MAX_NODES ? [at, `the document has more than ${YAML_MAX_NODES} nodes after expanding aliases`, "split the file, or write out fewer aliased values"] : null;
  // returns the node's height (0 for a scalar, 1 + its deepest child for a collection)
  const walk = (node: unknown): number | Problem => {
    if (node === null || node === undefined) {
      nodes += 1; // an empty value is a null scalar
      return 0;
    }
    const n = node as { range?: number[]; anchor?: string; source?: string; items?: unknown[] };
    const at = n.range?.[0] ?? 0;
    if (isAlias(node)) {
      const name = String(n.source);
      aliasCount += 1;
      if (aliasCount > YAML_MAX_ALIASES) {
        return [at, `the file uses more than ${YAML_MAX_ALIASES} YAML aliases (*name); so many suggest an alias-expansion bomb`, "write the values out, or share text with fragments"];
      }
      const entry = anchors.get(name);
      if (entry === undefined) return [at, `the alias *${name} refers to no anchor; define '&${name}' before using it`, null];
      if (entry === "open") return [at, `the alias *${name} refers to a node that contains it; it would expand forever`, null];
      nodes += entry.size;
      const tooMany = over(at);
      if (tooMany) return tooMany;
      if (entry.height && depth + entry.height > YAML_MAX_DEPTH) {
        return [at, `expanding the alias *${name} nests the data deeper than ${YAML_MAX_DEPTH} levels`, "flatten the structure"];
      }
      return entry.height;
    }
    const first = nodes;
    nodes += 1;
    const tooMany = over(at);
    if (tooMany) return tooMany;
    if (!isCollection(node)) {
      if (n.anchor) anchors.set(n.anchor, { size: 1, height: 0 });
      return 0;
    }
    if (depth >= YAML_MAX_DEPTH) return [at, `the YAML nesting is deeper than ${YAML_MAX_DEPTH} levels of mappings and lists`, "flatten the structure"];
    if (n.anchor) anchors.set(n.anchor, "open");
    depth += 1;
    let height = 1;
    for (const item of n.items ?? []) {
      const parts = isPair(item) ? [item.key, item.value] : [item];
      for (const part of parts) {
        const got = walk(part);
        if (typeof got !== "number") return got;
        if (got && got + 1 > height) height = got + 1;
      }
    }
    depth -= 1;
    if (n.anchor) anchors.set(n.anchor, { size: nodes - first, height });
    return height;
  };
  const found = walk(root);
  return typeof found === "number" ? null : found;
}

function renderOutput(req: PromptRequest, format: string): [string, boolean] {
  if (format === "text") return [requestText(req), Boolean(process.stdout.isTTY)];
  if (format === "json") return [dumps(requestData(req), { indent: 2, ensureAscii: false }), true];
  if (format === "pretty") return [pretty(req), true]; // without colour (Python colours it on a terminal only)
  return [dumps(payloadFor(format, req), { indent: 2, ensureAscii: false }), true];
}

/** Where main writes: the process's standard output and error, or a caller's capture (scripts/conformance-worker.mjs). */
export interface Io {
  out(text: string): void;
  err(text: string): void;
}

/** All of `text` to file descriptor `fd`, synchronously (a non-blocking pipe is waited on, not spun on); an error is
 * thrown to the caller, never left to an 'error' event that would end the process with a Node stack trace. */
function writeAll(fd: number, text: string): void {
  const buf = Buffer.from(text, "utf8");
  let off = 0;
  while (off < buf.length) {
    try {
      off += writeSync(fd, buf, off, buf.length - off);
    } catch (exc) {
      if ((exc as NodeJS.ErrnoException).code !== "EAGAIN") throw exc;
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 5);
    }
  }
}

const PROCESS_IO: Io = {
  out: (text) => writeAll(1, text),
  err: (text) => {
    try {
      writeAll(2, text);
    } catch {
      // standard error is gone too (its reader closed, a full disk): there is no one left to tell
    }
  },
};

/** The exit status when standard output's reader went away (`promptmill-ts render ... | head -c 10`): 128 + SIGPIPE,
 * what a shell reports for any Unix tool, as the Python CLI (cli/main.py EXIT_OUTPUT_CLOSED) exits. */
const EXIT_OUTPUT_CLOSED = 141;

function fail(io: Io, exc: PromptmillError): void {
  io.err(`promptmill: error[${exc.code}]: ${exc.message}\n` + (exc.hint ? `    hint: ${exc.hint}\n` : ""));
}

function usage(io: Io, message: string): number {
  io.err(`${USAGE}\nTry 'promptmill render --help' for help.\n\nError: ${message}\n`);
  return 2;
}

export function main(argv: string[], io: Io = PROCESS_IO): number {
  let args: Args;
  try {
    args = parseArgs(argv);
  } catch (exc) {
    if (exc instanceof UsageError) return usage(io, exc.message);
    throw exc;
  }
  let text: string;
  try {
    const state = args.state ? readState(args.state) : new Map();
    let provider = args.provider;
    if (PAYLOAD_FORMATS.includes(args.format)) {
      if (provider !== null && provider !== args.format) return usage(io, `--format ${args.format} needs --provider ${args.format} (or no --provider)`);
      provider = args.format;
    }
    if (args.format === "text" && provider === null && args.model === null) provider = "text";
    if (args.build === null) throw new PromptmillError("PM010", "promptmill-ts renders from a build folder: name it with --build DIR", "compile the prompts first: promptmill compile");
    const runtime = Runtime.load(args.build);
    runtime.checkWire(args.role, provider, args.model); // PM010 as Python's: no body for a model its wire does not serve
    const req = runtime.render(args.role, state as JsonObject, { budget: args.budget, provider, event: args.event, model: args.model });
    const [body, newline] = renderOutput(req, args.format);
    text = body + (newline ? "\n" : "");
  } catch (exc) {
    return failure(io, exc);
  }
  try {
    io.out(text);
  } catch (exc) {
    if ((exc as NodeJS.ErrnoException).code === "EPIPE") return EXIT_OUTPUT_CLOSED; // an ordinary end, nothing to tell
    return failure(io, exc); // a full disk, say: PM021 as Python's boundary words it
  }
  return 0;
}

/** An error as the Python CLI's `handled` reports it: a PromptmillError or what the environment did (a full disk, too
 * many open files, out of memory: core/boundary.py) with exit 1; anything else is a bug, PM000 with exit 3. */
function failure(io: Io, exc: unknown): number {
  const found = exc instanceof PromptmillError ? exc : environmentError(exc);
  if (found !== null) {
    fail(io, found);
    return 1;
  }
  const shown = exc instanceof Error ? `${exc.name}(${reprString(exc.message)})` : String(exc);
  io.err(`promptmill: error[PM000]: internal error: ${shown} (a bug; rerun with PROMPTMILL_DEBUG=1 for details)\n`);
  if (process.env.PROMPTMILL_DEBUG && exc instanceof Error && exc.stack) io.err(`${exc.stack}\n`);
  return 3;
}

/** Whether this module is the program node runs (directly or through the npm bin link), not an import. */
function isEntryPoint(): boolean {
  const script = process.argv[1];
  if (!script) return false;
  try {
    return realpathSync(script) === realpathSync(fileURLToPath(import.meta.url));
  } catch {
    return false;
  }
}

if (isEntryPoint()) process.exitCode = main(process.argv.slice(2));
