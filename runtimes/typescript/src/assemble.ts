// Assemble a fit into a PromptRequest: sections, messages, events (Python runtime/assemble.py).

import type { Json, JsonObject } from "./pyjson.js";
import { isObject } from "./pyjson.js";
import { originText, type RoleBundle, type Section } from "./bundle.js";
import type { PreparedRole } from "./fill.js";
import type { CounterLike, FitResult, WireLike } from "./fit.js";
import type { Placed } from "./placed.js";
import { type Message, type PromptRequest, type RenderedSection, isPresent } from "./request.js";

function fixed(spec: Section) {
  return {
    id: spec.id,
    kind: spec.kind,
    message: spec.message,
    stability: spec.stability,
    priority: spec.priority,
    trim: spec.trim,
    fragment: spec.fragment,
    origin: spec.origin !== null ? originText(spec.origin) : null,
  };
}

function section(p: Placed, counter: CounterLike, wire: WireLike, normalize: (item: Json) => JsonObject, native: boolean, text: string): RenderedSection {
  const items = p.cand.items;
  let itemsTotal: number | null = null;
  let kept: number[] = [];
  let dropped: number[] = [];
  if (items !== null) {
    itemsTotal = items.length;
    kept = p.sortedKept();
    if (kept.length !== itemsTotal) {
      const set = new Set(kept);
      dropped = [...Array(itemsTotal).keys()].filter((i) => !set.has(i));
    }
  }
  let tokens = 0;
  if (isPresent(p)) {
    if (native) tokens = p.kept.reduce((n, i) => n + counter.count(wire.toolText(normalize((items as Json[])[i]))), 0);
    else tokens = counter.countParts(p.pieces());
  }
  return {
    ...fixed(p.spec),
    status: p.status,
    reason: p.reason,
    text,
    itemsTotal,
    itemsKept: kept,
    itemsDropped: dropped,
    itemsCounted: p.offered,
    tokens,
  };
}

function skipped(spec: Section): RenderedSection {
  const yields = spec.context?.get("yields_to");
  const names = Array.isArray(yields) && yields.length ? (yields as string[]) : null;
  const reason = "its `when` condition is false" + (names ? `, or ${names.join(", ")} placed the fragment first` : "");
  return { ...fixed(spec), status: "skipped", reason, text: "", itemsTotal: null, itemsKept: [], itemsDropped: [], itemsCounted: 0, tokens: 0 };
}

/** How a render's counts relate to its model's tokens (Python `Counted`). */
export interface Counted {
  ratio: number | bigint;
  origin: string;
  model: string | null;
  maxTokens: number;
  reserve: number;
  limit: number;
  ratioFor: string | null;
  breakpoints: number | null;
}

export function assemble(
  prepared: PreparedRole,
  wire: WireLike,
  counter: CounterLike,
  normalize: (item: Json) => JsonObject,
  result: FitResult,
  skippedSpecs: Section[],
  limit: number,
  origins: Map<string, string>,
  marginTokens: number,
  state: JsonObject,
  counted: Counted | null,
): PromptRequest {
  const bundle = prepared.bundle;
  const fitter = result.fitter;
  const byId = new Map(result.placed.map((p) => [p.spec.id, p]));
  const skippedIds = new Set(skippedSpecs.map((s) => s.id));
  const texts = new Map<Placed, string>();
  const sections: RenderedSection[] = [];
  for (const spec of bundle.sections) {
    if (skippedIds.has(spec.id)) sections.push(skipped(spec));
    else {
      const placed = byId.get(spec.id) as Placed;
      const native = fitter.layout.nativeTools(placed);
      const text = placed.present && !native ? placed.text() : "";
      texts.set(placed, text);
      sections.push(section(placed, counter, wire, normalize, native, text));
    }
  }
  const messages: Message[] = result.containers.map((c) => {
    let content: string;
    let ids: string[];
    if (c.turn === null) {
      content = c.placed.map((p) => texts.get(p) as string).join(fitter.sep);
      ids = c.placed.map((p) => p.spec.id);
    } else {
      content = c.turn.get("content") as string;
      ids = [(c.turnOf as Placed).spec.id];
    }
    const stable = c.turn === null && c.placed.every((p) => p.spec.stability === "stable");
    return { role: c.role, content, tokens: c.tokens, sections: ids, stable, turn: c.turn !== null };
  });
  const events = makeEvents(bundle, sections, messages, counter);
  const tools = fitter.declarations(result.placed);
  const estimated = tools.length > 0 || fitter.extraTools.length > 0 || fitter.outputCost > 0;
  const b = bundle.budget;
  const ratioIsOne = counted === null || Number(counted.ratio) === 1;
  return {
    role: bundle.id,
    provider: wire.name,
    tokenizer: bundle.tokenizer,
    exact: counter.tokenizer.exact && !wire.estimate && !estimated,
    tokens: result.tokens,
    budget: limit,
    maxTokens: counted === null ? b.maxTokens : counted.maxTokens,
    reserve: counted === null ? b.reserve : counted.reserve,
    marginTokens,
    budgetOrigins: origins,
    separator: bundle.separator,
    sections,
    messages,
    tools,
    toolMode: bundle.toolMode,
    cache: bundle.cache,
    output: bundle.output,
    events,
    state,
    model: counted === null || counted.model === null ? bundle.model : counted.model,
    ratio: counted === null ? 1.0 : counted.ratio,
    modelBudget: ratioIsOne ? null : (counted as Counted).limit,
    ratioFor: ratioIsOne ? null : (counted as Counted).ratioFor,
    sourceHash: bundle.sourceHash,
    cacheBreakpoints: counted === null ? null : counted.breakpoints,
  };
}

function makeEvents(bundle: RoleBundle, sections: RenderedSection[], messages: Message[], counter: CounterLike): JsonObject[] {
  const events: JsonObject[] = bundle.events.map((e) => new Map(e));
  sections.forEach((s, k) => {
    const spec = bundle.sections[k];
    if (!spec.fragment || !(isPresent(s) || s.status === "skipped")) return;
    const ctx = spec.context ?? new Map<string, Json>();
    const get = (key: string): Json => (ctx.has(key) ? (ctx.get(key) as Json) : null);
    const event = new Map<string, Json>([
      ["type", isPresent(s) ? "context_injected" : "context_skipped"],
      ["id", spec.fragment],
      ["section", spec.id],
      ["position", get("position")],
      ["layer", get("layer")],
      ["by", get("by")],
    ]);
    if (isPresent(s)) event.set("tokens", BigInt(s.tokens));
    else {
      const yields = get("yields_to");
      const names = Array.isArray(yields) && yields.length ? (yields as string[]) : null;
      event.set("reason", "condition false" + (names ? ` or placed first by ${names.join(", ")}` : ""));
    }
    events.push(event);
  });
  const system = sections.filter((s) => isPresent(s) && s.message === "system");
  let tokens: number;
  if (messages.some((m) => m.role === "system")) tokens = messages.filter((m) => m.role === "system").reduce((n, m) => n + m.tokens, 0);
  else {
    const parts: string[] = [];
    for (const s of system) {
      if (parts.length) parts.push(bundle.separator, s.text);
      else parts.push(s.text);
    }
    tokens = parts.length ? counter.countParts(parts) : 0;
  }
  events.push(
    new Map<string, Json>([
      ["type", "system_prompt"],
      ["tokens", BigInt(tokens)],
      ["sections", system.map((s) => s.id)],
    ]),
  );
  return events;
}

export { isObject };
