// Fit filled sections into the token budget (docs/bundle-format.md section 9; Python runtime/fit.py, step by step).

import type { Json, JsonObject } from "./pyjson.js";
import { PromptmillError } from "./errors.js";
import type { Contract, RoleBundle } from "./bundle.js";
import { type Candidate, type PreparedRole, checkItem, renderItem, stripText } from "./fill.js";
import { Container, Placed, turnContent } from "./placed.js";
import { strip } from "./pyfmt.js";

/** What the fit needs of a token counter (counting.ts `Counter`). */
export interface CounterLike {
  count(text: string): number;
  countParts(parts: string[]): number;
  joinDelta(left: string, right: string): number;
  readonly tokenizer: { readonly exact: boolean; truncate(text: string, n: number, keep: string): string };
}

/** How a role's sections become messages on one wire (wire.ts `Layout`). */
export interface LayoutLike {
  key(p: Placed): string;
  containers(placed: Placed[]): Container[];
  chatTurns(p: Placed): boolean;
  nativeTools(p: Placed): boolean;
}

/** What the fit needs of a wire (wire.ts `Wire`). */
export interface WireLike {
  readonly name: string;
  readonly single: boolean;
  readonly messageOverhead: number;
  readonly fixedOverhead: number;
  readonly userFirst: boolean;
  readonly estimate: boolean;
  readonly defaultMargin: number;
  readonly explicitCache: boolean;
  readonly models: string;
  layout(bundle: RoleBundle): LayoutLike;
  extraTools(contract: Contract | null, toolMode: string): JsonObject[];
  forcedTool(contract: Contract | null): string | null;
  outputCost(counter: CounterLike, contract: Contract | null): number;
  toolCost(counter: CounterLike, decls: JsonObject[], forced: boolean): number;
  toolFrameCost(counter: CounterLike, forced: boolean): number;
  toolItemCost(counter: CounterLike, text: string): number;
  toolText(decl: JsonObject): string;
}

export function budgetError(message: string, hint: string | null = null, code = "PM830"): PromptmillError {
  return new PromptmillError(code, message, hint);
}

function settle(p: Placed, fitsAll: boolean): void {
  const n = (p.cand.items ?? []).length;
  if (!p.kept.length) {
    p.status = fitsAll ? "empty" : "dropped";
    p.reason = n === 0 ? "no items" : fitsAll ? "all items are empty" : "no item fits the budget left";
  } else if (p.kept.length < n) {
    p.status = "trimmed";
    p.reason = `kept ${p.kept.length} of ${n} items`;
  } else p.status = "kept";
}

export interface FitResult {
  placed: Placed[];
  containers: Container[];
  tokens: number;
  budget: number;
  fitter: Fitter;
}

export class Fitter {
  readonly counter: CounterLike;
  readonly sep: string;
  readonly sepCost: number;
  seq = 0;
  readonly layout: LayoutLike;
  readonly extraTools: JsonObject[];
  readonly forced: boolean;
  readonly outputCost: number;

  constructor(
    readonly p: PreparedRole,
    readonly wire: WireLike,
    readonly counterIn: CounterLike,
    readonly budget: number,
    readonly ctx: JsonObject,
    /** Normalized declaration of a tool item (tooldecl.ts `normalize`). */
    readonly normalize: (item: Json) => JsonObject,
  ) {
    this.counter = counterIn;
    const bundle = p.bundle;
    this.sep = bundle.separator;
    this.sepCost = this.counter.count(this.sep);
    this.layout = wire.layout(bundle);
    this.extraTools = wire.extraTools(bundle.output, bundle.toolMode);
    this.forced = wire.forcedTool(bundle.output) !== null;
    this.outputCost = wire.outputCost(this.counter, bundle.output);
  }

  declarations(placed: Placed[]): JsonObject[] {
    const out: JsonObject[] = [];
    for (const p of placed) {
      if (p.present && this.layout.nativeTools(p)) for (const i of p.sortedKept()) out.push(this.normalize((p.cand.items as Json[])[i]));
    }
    return out;
  }

  containerParts(c: Container): string[] {
    if (c.turn !== null) return [c.turn.get("content") as string];
    const parts: string[] = [];
    c.placed.forEach((p, n) => {
      if (n) parts.push(this.sep);
      parts.push(...p.pieces());
    });
    return parts;
  }

  exactTotal(placed: Placed[]): [number, Container[]] {
    const containers = this.layout.containers(placed);
    let total = containers.length ? this.wire.fixedOverhead : 0;
    for (const c of containers) {
      c.tokens = this.counter.countParts(this.containerParts(c));
      total += this.wire.messageOverhead + c.tokens;
    }
    if (!this.wire.single) {
      const decls = [...this.declarations(placed), ...this.extraTools];
      total += this.wire.toolCost(this.counter, decls, this.forced) + this.outputCost;
    }
    return [total, containers];
  }

  private openCost(p: Placed, openRoles: Set<string>): number {
    const role = this.layout.key(p);
    if (role === "tools") {
      const opened = openRoles.has(role) || this.extraTools.length > 0;
      return opened ? 0 : this.wire.toolFrameCost(this.counter, this.forced);
    }
    const title = p.spec.title ? p.spec.titleTokens : 0;
    if (openRoles.has(role)) return title + this.sepCost;
    return title + this.wire.messageOverhead;
  }

  private itemCost(p: Placed, i: number, text: string): number {
    if (this.layout.nativeTools(p)) return this.wire.toolItemCost(this.counter, text);
    return this.counter.count(p.cand.rendered.get(i) as string) + this.wire.messageOverhead;
  }

  private offerItems(p: Placed, used: number, openRoles: Set<string>, must: boolean): [number, boolean] {
    const chatTurns = this.layout.chatTurns(p);
    const native = this.layout.nativeTools(p);
    let fitsAll: boolean;
    if (!chatTurns && !native) [used, fitsAll] = this.offerPlain(p, used, openRoles, must);
    else [used, fitsAll] = this.offerTurnsOrTools(p, used, openRoles, must, chatTurns);
    if (p.spec.kind === "history" && p.kept.length && (!fitsAll || (this.wire.userFirst && Math.min(...p.kept) > 0))) {
      this.historyStart(p, !fitsAll);
    }
    settle(p, fitsAll);
    if (p.kept.length) openRoles.add(this.layout.key(p));
    return [used, fitsAll];
  }

  private offerTurnsOrTools(p: Placed, used: number, openRoles: Set<string>, must: boolean, chatTurns: boolean): [number, boolean] {
    const cand = p.cand;
    const spec = p.spec;
    let fitsAll = true;
    for (const i of cand.order ?? []) {
      let text: string;
      if (chatTurns) {
        [, text] = turnContent(checkItem(this.p, cand, i), spec.id, i, spec.path);
        cand.rendered.set(i, text);
        cand.units.set(i, text);
      } else {
        text = this.wire.toolText(this.normalize(checkItem(this.p, cand, i)));
      }
      p.offered += 1;
      if (!strip(text)) continue;
      const cost = this.itemCost(p, i, text) + (p.kept.length ? 0 : this.openCost(p, openRoles));
      if (must || used + cost <= this.budget) {
        p.kept.push(i);
        used += cost;
        this.seq += 1;
        p.orderKey = this.seq;
        continue;
      }
      fitsAll = false;
      break;
    }
    return [used, fitsAll];
  }

  private offerPlain(p: Placed, used: number, openRoles: Set<string>, must: boolean): [number, boolean] {
    const cand = p.cand;
    const kept = p.kept;
    const openCost = this.openCost(p, openRoles);
    let offered = 0;
    let fitsAll = true;
    for (const i of cand.order ?? []) {
      const text = renderItem(this.p, cand, i, this.ctx);
      const unit = cand.units.get(i) as string;
      offered += 1;
      if (!text) continue;
      const cost = this.counter.count(unit) + (kept.length ? 0 : openCost);
      if (must || used + cost <= this.budget) {
        kept.push(i);
        used += cost;
        continue;
      }
      fitsAll = false;
      break;
    }
    p.offered += offered;
    if (kept.length) {
      this.seq += kept.length;
      p.orderKey = this.seq;
    }
    return [used, fitsAll];
  }

  /** Drop the oldest kept turns until the history starts on a multiple of `step` (when `align`) and, on
   * user-first wires, on a user turn; none: the history is dropped. */
  private historyStart(p: Placed, align = true): void {
    const step = align ? p.spec.step : 1;
    const items = p.cand.items ?? [];
    const userFirst = this.wire.userFirst;
    const start = p.sortedKept().find((i) => i % step === 0 && (!userFirst || roleOf(items[i]) === "user"));
    p.kept = start === undefined ? [] : p.kept.filter((i) => i >= start);
  }

  private truncate(p: Placed, room: number): boolean {
    const spec = p.spec;
    const marker = spec.truncateMarker;
    const body = p.cand.body ?? "";
    let n = room - this.counter.count(marker) - 1;
    for (let k = 0; k < 8; k++) {
      if (n <= 0) return false;
      const cut = stripText(this.counter.tokenizer.truncate(body, n, spec.truncateKeep));
      const text = spec.truncateKeep === "head" ? `${cut}\n${marker}` : `${marker}\n${cut}`;
      const cost = this.counter.count(text);
      if (cost <= room) {
        p.body = text;
        return true;
      }
      n -= cost - room;
    }
    return false;
  }

  fit(cands: Candidate[]): FitResult {
    const placed = cands.map((c) => new Placed(c));
    const never = placed.filter((p) => p.spec.trim === "never");
    const rest = placed
      .filter((p) => p.spec.trim !== "never")
      .sort((a, b) => b.spec.priority - a.spec.priority || a.cand.index - b.cand.index);
    const openRoles = new Set<string>();
    for (const p of never) {
      if (p.isList) this.offerItems(p, 0, openRoles, true);
      else if (p.cand.body) {
        p.body = p.cand.body;
        p.status = "kept";
      } else {
        p.status = "empty";
        p.reason = "rendered empty";
      }
    }
    let [used] = this.exactTotal(placed);
    if (used > this.budget) {
      let counts = never
        .filter((p) => p.present)
        .map((p) => `${p.spec.id} (${this.tokensOf(p)} tokens)`)
        .join(", ");
      if (this.extraTools.length || this.outputCost) counts += `, and the structured-output declaration of contract '${this.p.bundle.output?.id}'`;
      throw budgetError(
        `sections that are never trimmed need ${used} tokens, over the budget of ${this.budget}: ${counts}`,
        "raise the budget, or let some of these sections be trimmed (trim: drop, items or truncate)",
      );
    }
    for (const p of never) if (p.present) openRoles.add(this.layout.key(p));
    let exhausted = false;
    for (const p of rest) {
      if (exhausted) {
        p.status = "dropped";
        p.reason = "lower priority than content that did not fit";
        continue;
      }
      if (p.isList) {
        let fits: boolean;
        [used, fits] = this.offerItems(p, used, openRoles, false);
        exhausted = !fits;
        continue;
      }
      const body = p.cand.body;
      if (!body) {
        p.status = "empty";
        p.reason = "rendered empty";
        continue;
      }
      let cost = this.openCost(p, openRoles) + this.counter.count(body);
      if (p.spec.title) cost += this.counter.joinDelta(p.spec.title + "\n", body);
      if (used + cost <= this.budget) {
        p.body = body;
        p.status = "kept";
      } else if (p.spec.trim === "truncate" && this.truncate(p, this.budget - used - this.openCost(p, openRoles))) {
        p.status = "truncated";
        p.reason = "cut to fit the budget";
        cost = this.openCost(p, openRoles) + this.counter.count(p.body ?? "");
      } else {
        p.status = "dropped";
        p.reason = "does not fit the budget left";
        exhausted = true;
        continue;
      }
      this.seq += 1;
      p.orderKey = this.seq;
      used += cost;
      openRoles.add(this.layout.key(p));
      if (p.status === "truncated") exhausted = true;
    }
    let [total, containers] = this.exactTotal(placed);
    while (total > this.budget) {
      this.removeLast(rest);
      [total, containers] = this.exactTotal(placed);
    }
    return { placed, containers, tokens: total, budget: this.budget, fitter: this };
  }

  tokensOf(p: Placed): number {
    if (this.layout.nativeTools(p)) return this.wire.toolCost(this.counter, this.declarations([p]), this.forced);
    return this.counter.countParts(p.pieces());
  }

  private removeLast(rest: Placed[]): void {
    const candidates = rest.filter((p) => p.present);
    if (!candidates.length) throw budgetError("cannot fit the budget");
    // Python max(): the first of the highest order_key
    let last = candidates[0];
    for (const p of candidates) if (p.orderKey > last.orderKey) last = p;
    if (last.isList && last.kept.length > 1) {
      last.kept.pop();
      if (last.spec.kind === "history") this.historyStart(last);
      if (!last.kept.length) {
        last.status = "dropped";
        last.reason = "does not fit the budget left";
        return;
      }
      last.status = "trimmed";
      last.reason = `kept ${last.kept.length} of ${(last.cand.items ?? []).length} items`;
    } else {
      last.kept = [];
      last.body = null;
      last.status = "dropped";
      last.reason = "does not fit the budget left";
    }
  }
}

function roleOf(item: Json): Json | undefined {
  return item instanceof Map ? item.get("role") : undefined;
}

