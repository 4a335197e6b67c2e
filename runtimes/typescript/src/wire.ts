// The `Wire` every API dialect implements: how a request is laid out, what it costs, its payload
// (Python: runtime/wire.py, and the wire classes of compiler/promptmill/wires/*.py with their attributes and
// costs). The counting model is docs/providers.md ("Counting model"). The payload of each wire is built in
// src/wires/<module>.ts; `Wire.render` calls it.
//
// Data crossing this module is JSON data (pyjson values): a contract is the bundle's (or the render document's)
// `output` object, a tool declaration `{name, description, parameters}`. A payload is rendered from a
// `RequestView` (`requestFromDocument(doc)` reads one from the render document `promptmill render --format json`
// prints) and printed with `payloadText` exactly as `promptmill render ... --format <wire>` prints it.

import type { Counter } from "./counting.js";
import { PromptmillError } from "./errors.js";
import { bedrockClaude, resolveModel } from "./models.js";
import { type Json, type JsonObject, dumps, isObject } from "./pyjson.js";
import { JSON_SCHEMA_STRICT, OPENAPI_SUBSET } from "./schemaforms.js";
import { profileFor, withoutRejected } from "./schemaprofiles.js";
import { didYouMean, nearest } from "./suggest.js";
import { returnTool } from "./tooldecl.js";
import { anthropicTool, compact, geminiDeclaration, openaiFunctionText, responseFormat, responseSchema } from "./wires/_tools.js";
import { renderAnthropic, renderAnthropicPlatform } from "./wires/anthropic.js";
import { VERSION as BEDROCK_VERSION } from "./wires/anthropic_bedrock.js";
import { VERSION as VERTEX_VERSION } from "./wires/anthropic_vertex.js";
import { renderBedrock } from "./wires/bedrock.js";
import { renderGemini } from "./wires/gemini.js";
import { renderLive } from "./wires/live.js";
import { renderOpenAIChat } from "./wires/openai_chat.js";
import { renderOpenAIResponses } from "./wires/openai_responses.js";
import { renderText } from "./wires/text.js";

/** A provider's documented limits for one batch input file. */
export interface BatchLimits {
  readonly requests: number;
  readonly bytes: number;
}

// -- contracts ---------------------------------------------------------------------

/** An output contract with camelCase fields (bundle.ts `Contract`), for callers that hold one. */
export interface ContractFields {
  id: string;
  style: string;
  schema: Json;
  returnTool: JsonObject | null;
  native: JsonObject | null;
}

/** A contract as the wires take it: the bundle's `output` JSON object, or an object with ContractFields. */
export type ContractLike = JsonObject | ContractFields;

const contractObjects = new WeakMap<object, JsonObject>();

/** The contract as the JSON object `output` of a bundle or render document (the same object each time). */
export function contractData(c: ContractLike): JsonObject {
  if (isObject(c)) return c;
  let data = contractObjects.get(c);
  if (data === undefined) {
    data = new Map<string, Json>([
      ["id", c.id],
      ["style", c.style],
      ["schema", c.schema],
      ["return_tool", c.returnTool],
      ["native", c.native],
    ]);
    contractObjects.set(c, data);
  }
  return data;
}

const contractOrNull = (c: ContractLike | null | undefined): JsonObject | null => (c === null || c === undefined ? null : contractData(c));

// -- what a payload is made from ------------------------------------------------

/** One message of the request as counted (for `text`, the whole prompt). */
export interface RequestMessage {
  role: string;
  content: string;
  stable: boolean;
}

/** What a payload reads of one rendered section. */
export interface RequestSection {
  id: string;
  kind: string;
  status: string;
  stability: string;
  /** how many items were kept (tools sections: declarations) */
  itemsKept: number;
}

/** What a wire's payload is made from: the fields of Python's PromptRequest a wire reads. */
export interface RequestView {
  role: string;
  model: string | null;
  reserve: bigint;
  messages: RequestMessage[];
  /** native declarations {name, description, parameters} */
  tools: JsonObject[];
  toolMode: string;
  cache: boolean;
  output: JsonObject | null;
  sections: RequestSection[];
  cacheBreakpoints: number | null;
}

export const isPresent = (s: { status: string }) => s.status === "kept" || s.status === "trimmed" || s.status === "truncated";

const field = (doc: JsonObject, key: string): Json => {
  if (!doc.has(key)) throw new PromptmillError("PM801", `the render document has no '${key}'`);
  return doc.get(key) as Json;
};

/** The RequestView of a render document (the JSON `promptmill render ... --format json` prints, read with
 *  pyjson.parse). */
export function requestFromDocument(doc: JsonObject): RequestView {
  const reserve = field(doc, "reserve");
  const breakpoints = doc.get("cache_breakpoints");
  return {
    role: field(doc, "role") as string,
    model: (doc.get("model") ?? null) as string | null,
    reserve: typeof reserve === "bigint" ? reserve : BigInt(Math.trunc(Number(reserve))),
    messages: (field(doc, "messages") as JsonObject[]).map((m) => ({
      role: m.get("role") as string,
      content: m.get("content") as string,
      stable: m.get("stable") === true,
    })),
    tools: (field(doc, "tools") as JsonObject[]) ?? [],
    toolMode: field(doc, "tool_mode") as string,
    cache: field(doc, "cache") === true,
    output: (doc.get("output") ?? null) as JsonObject | null,
    sections: (field(doc, "sections") as JsonObject[]).map((s) => ({
      id: s.get("id") as string,
      kind: s.get("kind") as string,
      status: s.get("status") as string,
      stability: s.get("stability") as string,
      itemsKept: ((s.get("items_kept") as Json[] | null) ?? []).length,
    })),
    cacheBreakpoints: typeof breakpoints === "bigint" ? Number(breakpoints) : typeof breakpoints === "number" ? breakpoints : null,
  };
}

/** What `requestView` reads of a fitted request object (request.ts `PromptRequest`). */
export interface PromptRequestLike {
  role: string;
  model?: string | null;
  reserve: number | bigint;
  messages: readonly { role: string; content: string; stable: boolean }[];
  tools: readonly JsonObject[];
  toolMode: string;
  cache: boolean;
  output: ContractLike | null;
  sections: readonly { id: string; kind: string; status: string; stability: string; itemsKept: readonly number[] | number }[];
  cacheBreakpoints?: number | bigint | null;
}

/** The RequestView of a render document (a JSON object) or of a fitted request object. */
export function requestView(req: JsonObject | PromptRequestLike): RequestView {
  if (isObject(req)) return requestFromDocument(req);
  const bp = req.cacheBreakpoints;
  return {
    role: req.role,
    model: req.model ?? null,
    reserve: BigInt(req.reserve),
    messages: req.messages.map((m) => ({ role: m.role, content: m.content, stable: m.stable })),
    tools: [...req.tools],
    toolMode: req.toolMode,
    cache: req.cache,
    output: contractOrNull(req.output),
    sections: req.sections.map((x) => ({
      id: x.id,
      kind: x.kind,
      status: x.status,
      stability: x.stability,
      itemsKept: typeof x.itemsKept === "number" ? x.itemsKept : x.itemsKept.length,
    })),
    cacheBreakpoints: bp === undefined || bp === null ? null : Number(bp),
  };
}

export interface RenderOptions {
  /** the model the payload names (default: the role's, `RequestView.model`) */
  model?: string | null;
  /** the reply limit (default: the budget's reserve) */
  maxTokens?: bigint | number | null;
}

// -- layouts -------------------------------------------------------------------

/** What a layout reads of a bundle section. */
export interface SectionSpec {
  id: string;
  kind: string;
  message: string;
  stability: string;
}

/** What a layout reads of a placed section (Python's runtime/placed.py Placed). */
export interface PlacedLike {
  readonly spec: SectionSpec;
  readonly present: boolean;
  /** kept item indices (list sections) */
  readonly kept: readonly number[];
}

/** One message (or the whole text) of the final request (Python's placed.Container). */
export interface ContainerOf<P extends PlacedLike> {
  role: string;
  placed: P[];
  /** a history turn (chat wires): the item */
  turn: JsonObject | null;
  turnOf: P | null;
  /** exact tokens of the content (set by the fit's exact total) */
  tokens: number;
}

/** A history turn's role and item: item `i` of the placed section's candidate (`p.cand.items`), whose
 *  `role` the fit has checked (placed.turnContent) before keeping it. */
function defaultTurn(p: PlacedLike, i: number): [string, JsonObject] {
  const items = (p as unknown as { cand?: { items?: readonly Json[] | null } }).cand?.items;
  const item = items ? items[i] : undefined;
  if (!isObject(item)) throw new Error(`history section '${p.spec.id}' has no item ${i}`);
  return [item.get("role") as string, item];
}

/** One role's layout on one wire: which container each section opens or joins, and the messages. */
export class Layout {
  readonly native: boolean;
  /** system sections of the leading stable block (system_blocks wires) */
  readonly stableHead: Set<string>;
  readonly splitAt: string | null;

  constructor(
    readonly wire: Wire,
    bundle: { readonly sections: readonly SectionSpec[]; readonly toolMode: string },
  ) {
    this.native = bundle.toolMode === "native" && !wire.single;
    const head = new Set<string>();
    for (const spec of bundle.sections) {
      if (spec.message === "system") {
        if (spec.stability !== "stable") break;
        head.add(spec.id);
      }
    }
    this.stableHead = head;
    this.splitAt = wire.systemBlocks ? this.stableSplit(bundle.sections) : null;
  }

  /** A history section whose turns are messages of their own. */
  chatTurns(p: PlacedLike): boolean {
    return p.spec.kind === "history" && this.wire.historyMessages;
  }

  /** A tools section whose kept tools travel as declarations, not as text. */
  nativeTools(p: PlacedLike): boolean {
    return p.spec.kind === "tools" && this.native;
  }

  private stableSplit(sections: readonly SectionSpec[]): string | null {
    let order = sections.filter((s) => !(s.kind === "tools" && this.native));
    order = [...order.filter((s) => s.message === "system"), ...order.filter((s) => s.message !== "system")];
    let end = order.findIndex((s) => s.stability !== "stable");
    if (end < 0) end = order.length;
    if (end > 0 && end < order.length) {
      const first = order[end];
      const prev = order[end - 1];
      if (first.message !== "system" && prev.message === first.message && first.kind !== "history") return first.id;
    }
    return null;
  }

  /** Which container a section opens or joins (for cost estimates while filling). */
  key(p: PlacedLike): string {
    const wire = this.wire;
    if (wire.single) return "text";
    if (this.nativeTools(p)) return "tools";
    if (wire.systemFirst && p.spec.message === "system") {
      return !wire.systemBlocks || this.stableHead.has(p.spec.id) ? "system" : "system+";
    }
    if (this.splitAt !== null && p.spec.id === this.splitAt) return p.spec.message + "+";
    return p.spec.message;
  }

  /** The messages (or the one text) of the present sections, in the order they are sent. `turn(p, i)` gives the
   *  role and item of turn `i` of history section `p` (default: `p.cand.items[i]` and its `role`). */
  containers<P extends PlacedLike>(placed: readonly P[], turn: (p: P, index: number) => [string, JsonObject] = defaultTurn): ContainerOf<P>[] {
    const wire = this.wire;
    let kept = placed.filter((p) => p.present && !this.nativeTools(p));
    const container = (role: string, ps: P[], item: JsonObject | null = null, of: P | null = null): ContainerOf<P> => ({
      role,
      placed: ps,
      turn: item,
      turnOf: of,
      tokens: 0,
    });
    if (wire.single) return kept.length ? [container("text", kept)] : [];
    const containers: ContainerOf<P>[] = [];
    if (wire.systemFirst) {
      const system = kept.filter((p) => p.spec.message === "system");
      let split = system.length;
      if (wire.systemBlocks) {
        const k = system.findIndex((p) => p.spec.stability !== "stable");
        split = k < 0 ? system.length : k;
      }
      for (const block of [system.slice(0, split), system.slice(split)]) {
        if (block.length) containers.push(container("system", block));
      }
      kept = kept.filter((p) => p.spec.message !== "system");
    }
    for (const p of kept) {
      if (this.chatTurns(p)) {
        for (const i of [...p.kept].sort((a, b) => a - b)) {
          const [role, item] = turn(p, i);
          containers.push(container(role, [], item, p));
        }
        continue;
      }
      const last = containers[containers.length - 1];
      if (last !== undefined && last.turn === null && last.role === p.spec.message && p.spec.id !== this.splitAt) last.placed.push(p);
      else containers.push(container(p.spec.message, [p]));
    }
    return containers;
  }
}

// -- wires -----------------------------------------------------------------------

const contractTools = new WeakMap<JsonObject, Map<string, JsonObject>>();

/** One API dialect. Instances are shared and immutable: one per wire. */
export class Wire {
  readonly name: string = "";
  readonly provider: string = ""; // the vendor behind the API ("" for text and live)
  readonly family: string = ""; // the model table's `provider` whose rows this wire serves ("": the wire's name)
  readonly messageOverhead: number = 0; // tokens per message (role markers, delimiters)
  readonly fixedOverhead: number = 0; // tokens per request (reply priming)
  readonly single: boolean = false; // everything in one text (text, live)
  readonly systemFirst: boolean = false; // every system section goes into the leading system field
  readonly systemBlocks: boolean = false; // ...as two blocks: the stable prefix, then the rest
  readonly historyMessages: boolean = false; // history turns are separate messages
  readonly userFirst: boolean = false; // the conversation must open with a user turn
  readonly estimate: boolean = false; // the provider's tokenizer is not the counting one
  readonly defaultMargin: number = 0.0; // budget fraction held back when counts are estimates
  readonly contractAsTool: boolean = false; // a native contract is sent as a forced call of its return tool
  readonly schemaForm: string | null = null; // the form of a native contract's schema this wire sends
  readonly batchLimits: BatchLimits | null = null; // null: the wire has no batch file format
  readonly explicitCache: boolean = false; // the payload marks cache breakpoints
  readonly metadataField: string | null = null; // the request field that takes string tags

  /** The model table's `provider` of the models this wire sends to. */
  get models(): string {
    return this.family || this.name;
  }

  toString(): string {
    return `<wire ${this.name}>`;
  }

  /** How `bundle`'s sections become messages on this wire. */
  layout(bundle: { readonly sections: readonly SectionSpec[]; readonly toolMode: string }): Layout {
    return new Layout(this, bundle);
  }

  /** Declarations a payload carries beyond the role's tools: the structured-return tool when the contract is
   *  `return_call` with native tools, or `native` on a `contractAsTool` wire. */
  extraTools(contractIn: ContractLike | null, toolMode: string): JsonObject[] {
    const contract = contractOrNull(contractIn);
    if (contract === null || this.single) return [];
    const style = contract.get("style");
    if (style === "return_call" && toolMode === "native") return [returnTool(contract)];
    if (style === "native" && this.contractAsTool) return [this.contractTool(contract)];
    return [];
  }

  /** The forced tool a native contract becomes on a `contractAsTool` wire: its schema without the keywords the
   *  wire's profile rejects (schemaprofiles.ts). */
  contractTool(contractIn: ContractLike): JsonObject {
    const contract = contractData(contractIn);
    let byWire = contractTools.get(contract);
    if (byWire === undefined) {
      byWire = new Map();
      contractTools.set(contract, byWire);
    }
    let tool = byWire.get(this.name);
    if (tool === undefined) {
      tool = returnTool(contract);
      const profile = profileFor(this);
      if (profile !== null) tool.set("parameters", withoutRejected(contract.get("schema") ?? null, profile));
      byWire.set(this.name, tool);
    }
    return new Map(tool);
  }

  /** Name of the tool the model is forced to call (native contracts on `contractAsTool` wires). */
  forcedTool(contractIn: ContractLike | null): string | null {
    const contract = contractOrNull(contractIn);
    if (contract !== null && contract.get("style") === "native" && this.contractAsTool) {
      return returnTool(contract).get("name") as string;
    }
    return null;
  }

  /** The text whose tokens a declaration costs on this wire. */
  toolText(_decl: JsonObject): string {
    throw new Error(`the ${this.name} wire sends no tool declarations`);
  }

  /** Cost of one more declaration whose toolText is `text` (an estimate while filling). */
  toolItemCost(counter: Counter, text: string): number {
    return counter.count(text);
  }

  /** Cost of declaring any tools at all (the block around them, the tool-use prompt). */
  toolFrameCost(_counter: Counter, _forced = false): number {
    return 0;
  }

  /** Tokens the declarations cost on this wire, by the documented counting model. */
  toolCost(counter: Counter, decls: readonly JsonObject[], forced = false): number {
    if (!decls.length) return 0;
    let total = 0;
    for (const d of decls) total += counter.count(this.toolText(d));
    return total + this.toolFrameCost(counter, forced);
  }

  /** Tokens a native contract's structured-output field costs on this wire (0 without one). */
  outputCost(counter: Counter, contractIn: ContractLike | null): number {
    const contract = contractOrNull(contractIn);
    if (contract === null || contract.get("style") !== "native" || this.schemaForm === null) return 0;
    return this.schemaCost(counter, contract);
  }

  /** Tokens of a native contract's schema as this wire sends it (wires with a schemaForm). */
  schemaCost(_counter: Counter, _contract: ContractLike): number {
    throw new Error("not implemented");
  }

  /** The payload of a request fitted for this wire (JSON data for the provider's SDK). */
  render(_req: RequestView, _options: RenderOptions = {}): JsonObject {
    throw new Error("not implemented");
  }

  /** The model and reply limit a payload carries: the role's (`model:`, `budget.reserve`) unless given. */
  static replyLimits(req: RequestView, model?: string | null, maxTokens?: bigint | number | null): [string | null, bigint | null] {
    const limit = maxTokens === undefined || maxTokens === null ? req.reserve : BigInt(maxTokens);
    return [model || req.model || null, limit && limit > 0n ? limit : null];
  }

  /** The payload one batch line of this wire holds for `req` (default: the wire's payload). */
  batchBody(req: RequestView, _model: string | null): JsonObject {
    return this.render(req);
  }

  /** Throw a PromptmillError when this wire writes no batch lines for `model`. */
  batchCheck(_model: string | null): void {}

  batchLine(_customId: string, _payload: JsonObject, _model: string | null, _maxTokens: bigint | null): JsonObject {
    throw new PromptmillError("PM840", `the ${this.name} wire has no batch format`);
  }

  batchPayload(_line: JsonObject): JsonObject {
    throw new PromptmillError("PM840", `the ${this.name} wire has no batch format`);
  }
}

const GiB = 1024 * 1024 * 1024;
const MiB = 1024 * 1024;

export class TextWire extends Wire {
  override readonly name: string = "text";
  override readonly single = true;
  override readonly batchLimits: BatchLimits | null = { requests: 10 ** 12, bytes: 2 * GiB };
  override render(req: RequestView, _options: RenderOptions = {}): JsonObject {
    return renderText(req);
  }
  override batchLine(customId: string, payload: JsonObject): JsonObject {
    return new Map<string, Json>([
      ["custom_id", customId],
      ["prompt", payload.get("prompt") as Json],
    ]);
  }
  override batchPayload(line: JsonObject): JsonObject {
    return new Map<string, Json>([["prompt", line.get("prompt") as Json]]);
  }
}

export class LiveWire extends Wire {
  override readonly name: string = "live";
  override readonly single = true;
  override render(req: RequestView, _options: RenderOptions = {}): JsonObject {
    return renderLive(req);
  }
}

// OpenAI: the tools block the model sees (docs/providers.md, "Counting model")
export const OPENAI_TOOLS_HEAD = "namespace functions {\n\n";
export const OPENAI_TOOLS_TAIL = "} // namespace functions";
export const OPENAI_TOOLS_OVERHEAD = 9;
export const OPENAI_TOOLS_PAD = 1.2; // a safety margin for a format OpenAI does not publish (bench/bench_tool_estimates.py)

export class OpenAIChatWire extends Wire {
  override readonly name: string = "openai";
  override readonly provider: string = "openai";
  // <|start|>{role}<|message|>{content}<|end|> per message, plus <|start|>assistant<|message|> priming the reply
  override readonly messageOverhead = 4;
  override readonly fixedOverhead = 3;
  override readonly historyMessages = true;
  override readonly schemaForm: string | null = JSON_SCHEMA_STRICT;
  override readonly batchLimits: BatchLimits | null = { requests: 50_000, bytes: 200 * MiB };
  override readonly metadataField: string | null = "metadata";

  override toolText(decl: JsonObject): string {
    return openaiFunctionText(decl);
  }
  override toolItemCost(counter: Counter, text: string): number {
    return Math.ceil(counter.count(text) * OPENAI_TOOLS_PAD);
  }
  override toolFrameCost(counter: Counter, _forced = false): number {
    return Math.ceil((counter.countParts([OPENAI_TOOLS_HEAD, OPENAI_TOOLS_TAIL]) + OPENAI_TOOLS_OVERHEAD) * OPENAI_TOOLS_PAD);
  }
  override toolCost(counter: Counter, decls: readonly JsonObject[], _forced = false): number {
    if (!decls.length) return 0;
    const parts = [OPENAI_TOOLS_HEAD, ...decls.map(openaiFunctionText), OPENAI_TOOLS_TAIL];
    return Math.ceil((counter.countParts(parts) + OPENAI_TOOLS_OVERHEAD) * OPENAI_TOOLS_PAD);
  }
  override schemaCost(counter: Counter, contract: ContractLike): number {
    return Math.ceil(counter.count(compact(responseFormat(contractData(contract)).get("json_schema") as Json)) * OPENAI_TOOLS_PAD);
  }
  override render(req: RequestView, options: RenderOptions = {}): JsonObject {
    return renderOpenAIChat(this, req, options);
  }
  override batchLine(customId: string, payload: JsonObject, model: string | null): JsonObject {
    return openaiBatchLine(customId, "/v1/chat/completions", payload, model);
  }
  override batchPayload(line: JsonObject): JsonObject {
    return line.get("body") as JsonObject;
  }
}

function openaiBatchLine(customId: string, url: string, payload: JsonObject, model: string | null): JsonObject {
  const body = new Map<string, Json>([["model", model]]);
  for (const [k, v] of payload) body.set(k, v);
  return new Map<string, Json>([
    ["custom_id", customId],
    ["method", "POST"],
    ["url", url],
    ["body", body],
  ]);
}

export class OpenAIResponsesWire extends OpenAIChatWire {
  override readonly name: string = "openai-responses";
  override render(req: RequestView, options: RenderOptions = {}): JsonObject {
    return renderOpenAIResponses(this, req, options);
  }
  override batchLine(customId: string, payload: JsonObject, model: string | null): JsonObject {
    return openaiBatchLine(customId, "/v1/responses", payload, model);
  }
}

/** A chat API with a top-level system field (the stable prefix, then the rest) and alternating turns that must
 *  open with the user; its tokenizer is not published: counts are estimates, a 10% margin is held back. */
export class TurnsWire extends Wire {
  override readonly messageOverhead = 3;
  override readonly fixedOverhead = 3;
  override readonly systemFirst = true;
  override readonly systemBlocks = true;
  override readonly historyMessages = true;
  override readonly userFirst = true;
  override readonly estimate = true;
  override readonly defaultMargin = 0.1;
}

export const ANTHROPIC_MAX_BREAKPOINTS = 4; // `cache_control` blocks Anthropic accepts in one request
export const ANTHROPIC_TOOLS_OVERHEAD = 346; // the tool-use system prompt Anthropic documents
export const ANTHROPIC_FORCED_OVERHEAD = 313; // ...when a tool is forced

/** How many of the declarations open the payload's stable run: those of the native tools sections up to the
 *  first one that is not stable (all, with the contract's return tool, when every one is). */
export function stableTools(req: RequestView, decls: readonly JsonObject[]): number {
  if (req.toolMode !== "native") return decls.length;
  let n = 0;
  for (const s of req.sections) {
    if (s.kind === "tools" && isPresent(s)) {
      if (s.stability !== "stable") return n;
      n += s.itemsKept;
    }
  }
  return decls.length;
}

export class AnthropicWire extends TurnsWire {
  override readonly name: string = "anthropic";
  override readonly provider: string = "anthropic";
  override readonly contractAsTool = true;
  override readonly explicitCache = true;
  override readonly batchLimits: BatchLimits | null = { requests: 100_000, bytes: 256 * MiB };

  override toolText(decl: JsonObject): string {
    return compact(anthropicTool(decl));
  }
  override toolFrameCost(_counter: Counter, forced = false): number {
    return forced ? ANTHROPIC_FORCED_OVERHEAD : ANTHROPIC_TOOLS_OVERHEAD;
  }

  /** The cache breakpoints `req` carries, in the order they are granted: `prefix` and `tools`, at most the
   *  model's `cache.breakpoints` (`req.cacheBreakpoints`) and the provider's limit. */
  cachePoints(req: RequestView, decls: readonly JsonObject[]): string[] {
    if (!req.cache) return [];
    const wanted: string[] = [];
    if (req.messages.slice(0, 1).some((m) => m.stable)) wanted.push("prefix");
    if (stableTools(req, decls)) wanted.push("tools");
    const limit = req.cacheBreakpoints === null ? ANTHROPIC_MAX_BREAKPOINTS : Math.min(req.cacheBreakpoints, ANTHROPIC_MAX_BREAKPOINTS);
    return wanted.slice(0, Math.max(limit, 0));
  }

  override render(req: RequestView, options: RenderOptions = {}): JsonObject {
    return renderAnthropic(this, req, options);
  }
  override batchLine(customId: string, payload: JsonObject, model: string | null, maxTokens: bigint | null): JsonObject {
    const params = new Map<string, Json>([["model", model]]);
    for (const [k, v] of payload) params.set(k, v);
    if (!params.has("max_tokens")) params.set("max_tokens", maxTokens);
    return new Map<string, Json>([
      ["custom_id", customId],
      ["params", params],
    ]);
  }
  override batchPayload(line: JsonObject): JsonObject {
    return line.get("params") as JsonObject;
  }
}

/** Claude on a cloud platform (Bedrock, Vertex AI): the Anthropic body with the platform's `anthropic_version`
 *  first and no `model` (the platform names it in the URL). */
export class AnthropicPlatformWire extends AnthropicWire {
  override readonly family: string = "anthropic";
  readonly anthropicVersion: string = "";
  override render(req: RequestView, options: RenderOptions = {}): JsonObject {
    return renderAnthropicPlatform(this, req, options);
  }
}

export class AnthropicBedrockWire extends AnthropicPlatformWire {
  override readonly name: string = "anthropic-bedrock";
  override readonly provider: string = "aws";
  override readonly anthropicVersion: string = BEDROCK_VERSION;
  override readonly batchLimits: BatchLimits | null = null; // Bedrock batch files are the `bedrock` wire's
}

export class AnthropicVertexWire extends AnthropicPlatformWire {
  override readonly name: string = "anthropic-vertex";
  override readonly provider: string = "google";
  override readonly anthropicVersion: string = VERTEX_VERSION; // the version Vertex AI documents for Claude
  override readonly batchLimits: BatchLimits | null = null;
}

export const GEMINI_TOOLS_OVERHEAD = 10;

export class GeminiWire extends TurnsWire {
  override readonly name: string = "gemini";
  override readonly provider: string = "google";
  override readonly schemaForm: string | null = OPENAPI_SUBSET;
  override readonly batchLimits: BatchLimits | null = { requests: 10 ** 12, bytes: 2 * GiB };

  override toolText(decl: JsonObject): string {
    return compact(geminiDeclaration(decl));
  }
  override toolFrameCost(_counter: Counter, _forced = false): number {
    return GEMINI_TOOLS_OVERHEAD;
  }
  override schemaCost(counter: Counter, contract: ContractLike): number {
    return counter.count(compact(responseSchema(contractData(contract))));
  }
  override render(req: RequestView, options: RenderOptions = {}): JsonObject {
    return renderGemini(this, req, options);
  }
  override batchLine(customId: string, payload: JsonObject): JsonObject {
    return new Map<string, Json>([
      ["key", customId],
      ["request", payload],
    ]);
  }
  override batchPayload(line: JsonObject): JsonObject {
    return line.get("request") as JsonObject;
  }
}

export class GeminiVertexWire extends GeminiWire {
  override readonly name: string = "gemini-vertex";
  override readonly family: string = "gemini";
  override readonly batchLimits: BatchLimits | null = null;
}

export class BedrockWire extends AnthropicWire {
  override readonly name: string = "bedrock";
  override readonly provider: string = "aws";
  override readonly family: string = "anthropic";
  // Amazon Bedrock service quotas (https://docs.aws.amazon.com/general/latest/gr/bedrock.html#limits_bedrock):
  // 50,000 records and 1 GB per batch inference input file
  override readonly batchLimits: BatchLimits | null = { requests: 50_000, bytes: GiB };
  override render(req: RequestView, options: RenderOptions = {}): JsonObject {
    return renderBedrock(this, req, options);
  }

  /** A batch line's `modelInput`: the model's InvokeModel body (Claude's: `anthropic-bedrock`). */
  override batchBody(req: RequestView, model: string | null): JsonObject {
    this.batchCheck(model);
    return getWire("anthropic-bedrock").render(req);
  }

  /** PM010 unless `model` is a model whose InvokeModel body promptmill writes (Claude). */
  override batchCheck(model: string | null): void {
    const info = model === null ? null : resolveModel(model);
    if (model === null || info === null || info.provider !== "anthropic" || bedrockClaude(model) === null) {
      const named = model ? `model '${model}'` : "no model";
      throw new PromptmillError(
        "PM010",
        `a Bedrock batch line holds the model's own request body; promptmill writes Claude's, and the batch names ${named}`,
        "pass --model a Bedrock id of Claude, such as us.anthropic.claude-sonnet-4-5-20250929-v1:0",
      );
    }
  }
  override batchLine(customId: string, payload: JsonObject, _model: string | null, maxTokens: bigint | null): JsonObject {
    const body = new Map(payload);
    if (!body.has("max_tokens")) body.set("max_tokens", maxTokens);
    return new Map<string, Json>([
      ["recordId", customId],
      ["modelInput", body],
    ]);
  }
  override batchPayload(line: JsonObject): JsonObject {
    return line.get("modelInput") as JsonObject;
  }
}

// -- the registry (Python: runtime/registry.py) ---------------------------------

const WIRES: ReadonlyMap<string, Wire> = new Map<string, Wire>([
  ["text", new TextWire()],
  ["live", new LiveWire()],
  ["openai", new OpenAIChatWire()],
  ["anthropic", new AnthropicWire()],
  ["gemini", new GeminiWire()],
  ["openai-responses", new OpenAIResponsesWire()],
  ["bedrock", new BedrockWire()],
  ["anthropic-bedrock", new AnthropicBedrockWire()],
  ["anthropic-vertex", new AnthropicVertexWire()],
  ["gemini-vertex", new GeminiVertexWire()],
]);
export const WIRE_NAMES: readonly string[] = [...WIRES.keys()];

/** The wire called `name`; PM840 with a "did you mean" and the valid names when there is none. */
export function getWire(name: string): Wire {
  const wire = typeof name === "string" ? WIRES.get(name) : undefined;
  if (wire === undefined) {
    const close = typeof name === "string" ? nearest(name, WIRE_NAMES) : [];
    throw new PromptmillError(
      "PM840",
      `unknown provider '${name}'`,
      (close.length ? didYouMean(close) + " " : "") + "valid providers: " + WIRE_NAMES.join(", "),
    );
  }
  return wire;
}

/** Names of the wires with a batch file format, in registry order. */
export function batchWires(): string[] {
  return WIRE_NAMES.filter((n) => getWire(n).batchLimits !== null);
}

/** The payload `promptmill render ... --format <wire>` prints for a fitted request (`req.to_payload()`): the
 *  wire's render of a render document or of a request object (see requestView). */
export function payloadFor(wire: string | Wire, req: JsonObject | PromptRequestLike, options: RenderOptions = {}): JsonObject {
  const w = typeof wire === "string" ? getWire(wire) : wire;
  return w.render(requestView(req), options);
}

/** The payload of `wire` for a render document, as JSON data. */
export function renderPayload(wire: string | Wire, doc: JsonObject, options: RenderOptions = {}): JsonObject {
  const w = typeof wire === "string" ? getWire(wire) : wire;
  return w.render(requestFromDocument(doc), options);
}

/** The payload text `promptmill render ... --format <wire>` prints (without its final newline). */
export function payloadText(payload: JsonObject): string {
  return dumps(payload, { indent: 2, ensureAscii: false });
}

/** Whether `v` is a JSON object (re-exported for the wires). */
export { isObject };
