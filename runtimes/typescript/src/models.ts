// The model table: what promptmill knows about each model family (Python: runtime/models.py).
//
// A row (data/models.json, copied from compiler/promptmill/data/models.json by scripts/copy-data.mjs) matches
// model ids by a pattern ending in `*` (a prefix); the most specific pattern, the longest before its `*`, wins
// (an exact id beats a pattern of its length). A row says which provider serves the model, how its tokens are
// counted (an encoding times a calibration `ratio`), its context window and reply limit, its prompt-cache rules
// and whether it takes native structured output. A project adds or overrides rows (`withRows`). A Bedrock id of
// Claude (`us.anthropic.claude-opus-4-1-20250805-v1:0`) finds the row of the Claude id inside it.

import { PromptmillError } from "./errors.js";
import { type Json, type JsonObject, isObject, parse } from "./pyjson.js";
import { ID_CUTOFF, didYouMean, editDistance, nearest } from "./suggest.js";
import { isPrintableChar, isSpace, reprString, truthy, typeName } from "./pyfmt.js";
import { dataFile } from "./tokenizers.js";

export const PROVIDERS = ["openai", "anthropic", "gemini"] as const;
export const RATIO_MIN = 0.1;
export const RATIO_MAX = 10.0;
export const MAX_LIMIT_TOKENS = 100_000_000;
export const MAX_MODEL_ID = 256;

/** Python's repr() of a string (pyfmt.ts `reprString`). */
export const pyStrRepr = reprString;

function named(ch: string): string {
  const names: Record<string, string> = { " ": "a space", "\n": "a newline", "\t": "a tab", "\r": "a carriage return" };
  return names[ch] ?? `the character U+${(ch.codePointAt(0) as number).toString(16).toUpperCase().padStart(4, "0")}`;
}

/** Why `model` cannot be a model id (it goes into request bodies as it is written), or null. */
export function idProblem(model: unknown): string | null {
  if (typeof model !== "string") return `a model id is text, not ${typeName(model as Json)}`;
  if (!model) return "a model id cannot be empty";
  const len = [...model].length;
  if (len > MAX_MODEL_ID) return `a model id is at most ${MAX_MODEL_ID} characters; this one has ${len}`;
  const bad = [...model].find((ch) => isSpace(ch.codePointAt(0) as number) || !isPrintableChar(ch));
  if (bad !== undefined) {
    return `model id ${pyStrRepr(model)} holds ${named(bad)}: a model id has no whitespace or control characters`;
  }
  return null;
}

// a Bedrock model id of Claude: an optional inference-profile region, `anthropic.`, the Claude id, a version
// suffix; AWS lists them on https://docs.aws.amazon.com/bedrock/latest/userguide/models-supported.html
const BEDROCK_CLAUDE = /^(?:[a-z]{2,6}(?:-[a-z]{2,4})?\.)?anthropic\.(claude[^:]*?)(?:-v\d+(?::\d+)?)?$/u;
const BEDROCK_ID =
  /^(?:[a-z]{2,6}(?:-[a-z]{2,4})?\.)?(amazon|meta|mistral|cohere|ai21|deepseek|openai|qwen|writer|twelvelabs|stability)\.[^\t\n\u000b\f\r\u001c-\u001f \u0085\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]+$/u;

/** The Claude model id inside a Bedrock model id (`us.anthropic.claude-opus-4-1-20250805-v1:0` ->
 *  `claude-opus-4-1-20250805`), or null. */
export function bedrockClaude(model: string): string | null {
  const m = BEDROCK_CLAUDE.exec(model);
  return m ? m[1] : null;
}

/** One model as the table describes it (`model` is the id asked for, `pattern` the row that matched). */
export interface ModelInfo {
  model: string;
  tokenizer: string;
  contextWindow: number;
  estimate: boolean;
  pattern: string;
  provider: string;
  ratio: number;
  maxOutputTokens: number | null;
  cacheMinTokens: number | null;
  cacheBreakpoints: number | null;
  structuredOutput: boolean;
  source: string;
  origin: string;
  wire: string;
  /** the wire a render for this model fits for unless one is given: its own (`bedrock`), else its provider's */
  defaultWire: string;
}

const prefix = (p: string) => (p.endsWith("*") ? p.slice(0, -1) : p);
const matches = (p: string, model: string) => (p.endsWith("*") ? model.startsWith(p.slice(0, -1)) : model === p);
const specificity = (p: string): [number, number] => [[...prefix(p)].length, p.endsWith("*") ? 0 : 1];

const num = (v: Json | undefined): number | null => (typeof v === "bigint" ? Number(v) : typeof v === "number" ? v : null);
const str = (v: Json | undefined, d = ""): string => (typeof v === "string" ? v : d);

/** Rows by pattern; immutable. `defaultTable()` is the shipped one. */
export class ModelTable {
  private readonly rowsByPattern: Map<string, JsonObject>;
  private readonly origins: Map<string, string>;
  private readonly known: readonly string[];

  constructor(rows: Map<string, JsonObject>, origins?: Map<string, string>, known: Iterable<string> = []) {
    this.rowsByPattern = new Map(rows);
    this.origins = new Map(origins ?? []);
    this.known = [...known];
  }

  /** This table with `rows` (project rows, JSON objects) added; a row whose pattern exists replaces it. */
  withRows(rows: Iterable<JsonObject>, origin = "project"): ModelTable {
    const merged = new Map(this.rowsByPattern);
    const origins = new Map(this.origins);
    for (const row of rows) {
      const p = row.get("pattern") as string;
      merged.set(p, row);
      origins.set(p, origin);
    }
    return new ModelTable(merged, origins, this.known);
  }

  /** The concrete model ids the table knows: the shipped list, and every row that is an exact id. */
  get knownIds(): Set<string> {
    return new Set([...this.known, ...[...this.rowsByPattern.keys()].filter((p) => !p.endsWith("*"))]);
  }

  /** A known model id `model` is likely a typo of, or null (see models.py near_miss). */
  nearMiss(model: string): string | null {
    const known = this.knownIds;
    if (known.has(model)) return null;
    const shape = (m: string) => m.replace(/\d+/g, "#");
    const s = shape(model);
    for (const k of known) if (shape(k) === s) return null;
    const limit = [...model].length <= 5 ? 1 : 2;
    const scored = [...known].map((k) => [editDistance(model, k, limit), k] as [number, string]);
    scored.sort((a, b) => a[0] - b[0] || (a[1] < b[1] ? -1 : a[1] > b[1] ? 1 : 0));
    const best = scored[0];
    return best !== undefined && best[0] <= limit ? best[1] : null;
  }

  /** The patterns, sorted (Python's sorted(): by code point). */
  get patterns(): string[] {
    return [...this.rowsByPattern.keys()].sort(cmp);
  }

  /** Every row, as the ModelInfo its pattern resolves to, by provider then pattern. */
  rows(): ModelInfo[] {
    const infos = [...this.rowsByPattern.keys()].map((p) => this.info(p, prefix(p)));
    return infos.sort((a, b) => cmp(a.provider, b.provider) || cmp(a.pattern, b.pattern));
  }

  /** The largest ratio of `provider`'s rows (1 when it has none). */
  maxRatio(provider: string): number {
    let best: number | null = null;
    for (const [p, row] of this.rowsByPattern) {
      if (row.get("provider") !== provider) continue;
      const r = this.info(p, prefix(p)).ratio;
      if (best === null || r > best) best = r;
    }
    return best ?? 1.0;
  }

  /** The row for `model` (the most specific matching pattern), or null; a Bedrock id of Claude that no row
   *  matches as it is gets the row of the Claude id inside it. */
  resolve(model: string): ModelInfo | null {
    let best: string | null = null;
    let bestKey: [number, number] = [-1, -1];
    for (const p of this.rowsByPattern.keys()) {
      if (!matches(p, model)) continue;
      const k = specificity(p);
      if (k[0] > bestKey[0] || (k[0] === bestKey[0] && k[1] > bestKey[1])) {
        best = p;
        bestKey = k;
      }
    }
    if (best === null) {
      const claude = bedrockClaude(model);
      const inner = claude === null ? null : this.resolve(claude);
      return inner === null ? null : { ...inner, model, wire: "bedrock", defaultWire: "bedrock" };
    }
    return this.info(best, model);
  }

  /** `resolve`, or PM502 naming the nearest patterns; PM010 when `model` is not a model id at all. */
  lookup(model: string): ModelInfo {
    const problem = idProblem(model);
    if (problem !== null) {
      throw new PromptmillError("PM010", problem, "pass the id as the provider lists it (see `promptmill models`)");
    }
    const info = this.resolve(model);
    if (info === null) throw new PromptmillError("PM502", `unknown model '${model}': not in the model table`, this.hint(model));
    return info;
  }

  /** 'did you mean ...?' for an unknown model, else how to add it. */
  hint(model: string): string {
    const close = nearest(model, [...this.rowsByPattern.keys()].map(prefix), 2, ID_CUTOFF);
    const add = "add a row under `models:` in promptmill.yaml (see `promptmill models`)";
    if (BEDROCK_ID.test(model)) return `on Bedrock promptmill knows Claude (\`anthropic.claude-*\`) only; ${add}`;
    return close.length ? `${didYouMean(close.map((p) => p + "*"))} or ${add}` : add;
  }

  private info(pattern: string, model: string): ModelInfo {
    const row = this.rowsByPattern.get(pattern) as JsonObject;
    const counting = isObject(row.get("counting")) ? (row.get("counting") as JsonObject) : new Map<string, Json>();
    const cache = isObject(row.get("cache")) ? (row.get("cache") as JsonObject) : new Map<string, Json>();
    const provider = str(row.get("provider"));
    const estimate = counting.has("estimate") ? truthy(counting.get("estimate") as Json) : counting.has("ratio") || provider !== "openai";
    const wire = "";
    return {
      model,
      tokenizer: str(counting.get("encoding"), "o200k_base"),
      contextWindow: num(row.get("context_window")) as number,
      estimate,
      pattern,
      provider,
      ratio: num(counting.get("ratio")) ?? 1.0,
      maxOutputTokens: num(row.get("max_output_tokens")),
      cacheMinTokens: num(cache.get("min_tokens")),
      cacheBreakpoints: num(cache.get("breakpoints")),
      structuredOutput: truthy(row.get("structured_output") ?? false),
      source: str(row.get("source")),
      origin: this.origins.get(pattern) ?? "promptmill",
      wire,
      defaultWire: wire || provider,
    };
  }
}

function cmp(a: string, b: string): number {
  // Python compares strings by code point; JavaScript's < by UTF-16 unit (the same outside astral characters)
  return a < b ? -1 : a > b ? 1 : 0;
}

let shipped: ModelTable | null = null;

/** The table shipped in promptmill's data/models.json. */
export function defaultTable(): ModelTable {
  if (shipped === null) {
    const data = parse(dataFile("models.json").toString("utf8")) as JsonObject;
    const rows = new Map<string, JsonObject>();
    for (const row of data.get("models") as JsonObject[]) rows.set(row.get("pattern") as string, row);
    shipped = new ModelTable(rows, undefined, (data.get("known_ids") as string[] | undefined) ?? []);
  }
  return shipped;
}

/** The table's row for a model id (the shipped table unless given), or null. */
export function resolveModel(model: string, table?: ModelTable): ModelInfo | null {
  return (table ?? defaultTable()).resolve(model);
}

/** What wire-related code reads of a wire to decide its model family. */
export interface WireNames {
  readonly name: string;
  readonly provider: string;
  readonly models: string;
}

/** The model table's `provider` whose models `wire` sends requests to, or null (text, live). */
export function wireFamily(wire: WireNames): string | null {
  for (const name of [wire.models, wire.provider]) if ((PROVIDERS as readonly string[]).includes(name)) return name;
  return null;
}

/** Why `wire` cannot carry a request for `model` (its row is another provider's), or null. */
export function servingProblem(wire: WireNames, model: string | null | undefined, table?: ModelTable): string | null {
  const family = wireFamily(wire);
  const info = family === null || !model ? null : (table ?? defaultTable()).resolve(model);
  if (info === null || info.provider === family) return null;
  return (
    `the ${wire.name} wire sends requests to ${family} models, and '${model}' is served by ${info.provider} ` +
    `(row ${info.pattern}): its request body would name a model ${wire.name} does not serve`
  );
}

/** PM010 when `wire` cannot carry a request for `model` (`servingProblem`). */
export function checkServes(wire: WireNames, model: string | null | undefined, table?: ModelTable, option = "--model"): void {
  const problem = servingProblem(wire, model, table);
  if (problem === null) return;
  const info = (table ?? defaultTable()).resolve(model ?? "");
  const own = info !== null ? info.defaultWire : "";
  throw new PromptmillError(
    "PM010",
    problem,
    `render for ${own}, the wire of its provider (--provider ${own}), or pass ${option} one of ${wireFamily(wire)}'s models`,
  );
}
