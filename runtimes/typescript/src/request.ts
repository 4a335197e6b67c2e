// One fitted prompt (Python runtime/request.py) and its render document: the JSON the Python CLI prints with
// `promptmill render ROLE --format json` (cli/preview.py `request_data`), key for key.

import { type Json, type JsonObject } from "./pyjson.js";
import type { Contract, Origin } from "./bundle.js";

export const RENDER_FORMAT = "promptmill-render";
export const RENDER_FORMAT_VERSION = 1;

export interface RenderedSection {
  id: string;
  kind: string;
  status: string; // kept | trimmed | truncated | dropped | empty | skipped
  reason: string;
  text: string;
  message: string;
  stability: string;
  priority: number;
  trim: string;
  itemsTotal: number | null;
  itemsKept: number[];
  itemsDropped: number[];
  itemsCounted: number;
  fragment: string | null;
  origin: string | null;
  tokens: number;
}

export function isPresent(s: { status: string }): boolean {
  return s.status === "kept" || s.status === "trimmed" || s.status === "truncated";
}

export interface Message {
  role: string; // system | user | assistant | text
  content: string;
  tokens: number;
  sections: string[];
  stable: boolean;
  turn: boolean;
}

export interface PromptRequest {
  role: string;
  provider: string;
  tokenizer: string;
  exact: boolean;
  tokens: number;
  budget: number;
  maxTokens: number;
  reserve: number;
  marginTokens: number;
  budgetOrigins: Map<string, string>;
  separator: string;
  sections: RenderedSection[];
  messages: Message[];
  tools: JsonObject[];
  toolMode: string;
  cache: boolean;
  output: Contract | null;
  events: JsonObject[];
  state: JsonObject;
  model: string | null;
  /** The model's tokens per counted token: a float (Python prints 1.0), or an integer when a bundle wrote one. */
  ratio: number | bigint;
  modelBudget: number | null;
  ratioFor: string | null;
  sourceHash: string;
  cacheBreakpoints: number | null;
}

/** The prompt as one text: present sections in order, joined by the separator. */
export function requestText(req: PromptRequest): string {
  return req.sections
    .filter((s) => isPresent(s) && s.text)
    .map((s) => s.text)
    .join(req.separator);
}

/** The system text: the system messages joined by the separator. */
export function requestSystem(req: PromptRequest): string {
  return req.messages
    .filter((m) => m.role === "system")
    .map((m) => m.content)
    .join(req.separator);
}

const int = (n: number): bigint => BigInt(n);
const intOrNull = (n: number | null): Json => (n === null ? null : BigInt(n));

function originData(o: Origin | null): Json {
  if (o === null) return null;
  return new Map<string, Json>([
    ["file", o.file],
    ["line", int(o.line)],
    ["col", int(o.col)],
    ["role", o.role],
  ]);
}

export function contractData(c: Contract | null): Json {
  if (c === null) return null;
  return new Map<string, Json>([
    ["id", c.id],
    ["style", c.style],
    ["schema", c.schema],
    ["instructions", c.instructions],
    ["return_tool", c.returnTool],
    ["checks", c.checks],
    ["native", c.native],
    ["origin", originData(c.origin)],
  ]);
}

export function sectionData(s: RenderedSection): JsonObject {
  return new Map<string, Json>([
    ["id", s.id],
    ["kind", s.kind],
    ["status", s.status],
    ["reason", s.reason],
    ["text", s.text],
    ["message", s.message],
    ["stability", s.stability],
    ["priority", int(s.priority)],
    ["trim", s.trim],
    ["items_total", intOrNull(s.itemsTotal)],
    ["items_kept", s.itemsKept.map(int)],
    ["items_dropped", s.itemsDropped.map(int)],
    ["items_counted", int(s.itemsCounted)],
    ["fragment", s.fragment],
    ["origin", s.origin],
    ["tokens", int(s.tokens)],
  ]);
}

export function messageData(m: Message): JsonObject {
  return new Map<string, Json>([
    ["role", m.role],
    ["content", m.content],
    ["tokens", int(m.tokens)],
    ["sections", [...m.sections]],
    ["stable", m.stable],
    ["turn", m.turn],
  ]);
}

/** The render document (Python cli/preview.py `request_data`): every field of the request but the state, then `text`. */
export function requestData(req: PromptRequest): JsonObject {
  return new Map<string, Json>([
    ["format", RENDER_FORMAT],
    ["format_version", BigInt(RENDER_FORMAT_VERSION)],
    ["role", req.role],
    ["provider", req.provider],
    ["tokenizer", req.tokenizer],
    ["exact", req.exact],
    ["tokens", int(req.tokens)],
    ["budget", int(req.budget)],
    ["max_tokens", int(req.maxTokens)],
    ["reserve", int(req.reserve)],
    ["margin_tokens", int(req.marginTokens)],
    ["budget_origins", new Map<string, Json>([...req.budgetOrigins])],
    ["separator", req.separator],
    ["sections", req.sections.map(sectionData)],
    ["messages", req.messages.map(messageData)],
    ["tools", [...req.tools]],
    ["tool_mode", req.toolMode],
    ["cache", req.cache],
    ["output", contractData(req.output)],
    ["events", [...req.events]],
    ["model", req.model],
    ["ratio", req.ratio],
    ["model_budget", intOrNull(req.modelBudget)],
    ["ratio_for", req.ratioFor],
    ["source_hash", req.sourceHash],
    ["cache_breakpoints", intOrNull(req.cacheBreakpoints)],
    ["text", requestText(req)],
  ]);
}
