// `promptmill render --format pretty` (the Python CLI's default format) without colour: Python cli/preview.py
// `pretty`, explain/account.py (budget_sum, items_note, shown_reason, dropped_entry) and core/showtext.py `visible`.

import { type Json, type JsonObject, dumps, floatRepr, isObject } from "./pyjson.js";
import { type PromptRequest, type RenderedSection, isPresent } from "./request.js";
import { describe } from "./conditions.js";
import { fixed, formatSpec, isPrintableChar, pyStr } from "./pyfmt.js";

const BAR = 24;

/** Python's round() of a float to an integer (ties to even). */
function roundHalfEven(x: number): number {
  const f = Math.floor(x);
  const d = x - f;
  if (d > 0.5) return f + 1;
  if (d < 0.5) return f;
  return f % 2 === 0 ? f : f + 1;
}

function bar(tokens: number, budget: number): string {
  if (budget <= 0) return "";
  let filled = Math.min(BAR, roundHalfEven((BAR * tokens) / budget));
  if (tokens > 0 && filled === 0) filled = tokens * BAR * 4 >= budget ? 1 : 0;
  return "█".repeat(filled) + "·".repeat(BAR - filled);
}

function pct(tokens: number, budget: number): string {
  return budget > 0 ? `${fixed((100 * tokens) / budget, 1)}%`.padStart(6) : "     -";
}

const g = (x: number | bigint): string => formatSpec(typeof x === "bigint" ? Number(x) : x, "g");

export function countNote(req: PromptRequest): string {
  if (Number(req.ratio) !== 1) return `estimated, ratio ${g(req.ratio)} for ${req.ratioFor || req.model || req.provider}`;
  return req.exact ? "exact" : "estimate";
}

function budgetSum(req: PromptRequest): string {
  const base = (req.modelBudget === null ? req.budget : req.modelBudget) + req.marginTokens;
  let out = base === req.maxTokens - req.reserve ? `max_tokens ${req.maxTokens} - reserve ${req.reserve}` : `render budget ${base} (below max_tokens ${req.maxTokens} - reserve ${req.reserve})`;
  if (req.marginTokens) out += ` - margin ${req.marginTokens}`;
  if (req.modelBudget !== null) {
    const unit = req.ratioFor && !req.ratioFor.startsWith("any ") ? req.ratioFor : req.provider;
    out += ` = ${req.modelBudget} ${unit} tokens, / ratio ${g(req.ratio)} = ${req.budget} ${req.tokenizer} tokens`;
  }
  return out;
}

function itemsNote(s: RenderedSection): string | null {
  if (s.itemsTotal === null || !s.itemsDropped.length) return null;
  const shown = s.itemsDropped.slice(0, 12).join(", ") + (s.itemsDropped.length > 12 ? ", …" : "");
  const uncounted = s.itemsTotal - s.itemsCounted;
  const note = `kept ${s.itemsKept.length} of ${s.itemsTotal} items; dropped items [${shown}]`;
  return note + (uncounted > 0 ? ` (${uncounted} never rendered)` : "");
}

function shownReason(s: RenderedSection): string | null {
  return s.reason && s.status !== "kept" && (s.itemsTotal === null || s.status === "dropped") ? s.reason : null;
}

function droppedEntry(s: RenderedSection): string | null {
  if (s.status === "dropped") return `${s.id} (whole section)`;
  if (s.status === "truncated") return `${s.id} (truncated)`;
  if (s.itemsTotal !== null && s.itemsDropped.length) return `${s.id} (${s.itemsDropped.length} of ${s.itemsTotal} items)`;
  return null;
}

const INVISIBLE = /[\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180b-\u180f\u200b\u200e\u200f\u202a-\u202e\u2060-\u206f\u3164\ufeff\uffa0\ufff9-\ufffb\u{e0000}-\u{e007f}]/u;
const SELECTOR = /[\ufe00-\ufe0f\u{e0100}-\u{e01ef}]/u;

function escape(ch: string): string {
  const code = ch.codePointAt(0) as number;
  if (code < 0x100) return "\\x" + code.toString(16).padStart(2, "0");
  return code < 0x10000 ? "\\u" + code.toString(16).padStart(4, "0") : "\\U" + code.toString(16).padStart(8, "0");
}

/** `text` with every invisible or reordering character shown as an escape (Python core/showtext.py). */
export function visible(text: string): string {
  const chars = [...text];
  const keep = (i: number): boolean => {
    const ch = chars[i];
    if (ch === "\t" || ch === "\n") return true;
    if (ch === "\u200d") {
      return (
        i > 0 &&
        i < chars.length - 1 &&
        (chars[i - 1].codePointAt(0) as number) >= 0x2000 &&
        (chars[i + 1].codePointAt(0) as number) >= 0x2000 &&
        !(INVISIBLE.test(chars[i - 1]) || INVISIBLE.test(chars[i + 1]))
      );
    }
    if (SELECTOR.test(ch)) return i > 0 && isPrintableChar(chars[i - 1]) && !SELECTOR.test(chars[i - 1]);
    return (isPrintableChar(ch) || /\p{Zs}/u.test(ch)) && !INVISIBLE.test(ch);
  };
  if (chars.every((ch) => isPrintableChar(ch)) && !INVISIBLE.test(text) && !SELECTOR.test(text)) return text;
  return chars.map((ch, i) => (keep(i) ? ch : escape(ch))).join("");
}

/** Python's str.splitlines(). */
export function splitlines(text: string): string[] {
  if (!text) return [];
  const parts = text.split(/\r\n|[\n\r\v\f\x1c\x1d\x1e\x85\u2028\u2029]/);
  if (/(?:\r\n|[\n\r\v\f\x1c\x1d\x1e\x85\u2028\u2029])$/.test(text)) parts.pop();
  return parts;
}

function shownLines(req: PromptRequest, s: RenderedSection): string[] {
  const turns = req.messages.filter((m) => m.turn && m.sections.includes(s.id));
  if (!turns.length) return splitlines(s.text);
  const lines: string[] = [];
  for (const m of turns) {
    const body = splitlines(m.content);
    if (!body.length) body.push("");
    lines.push(`${m.role}: ${body[0]}`, ...body.slice(1));
  }
  return lines;
}

const pad = (text: string, width: number) => text + " ".repeat(Math.max(0, width - [...text].length));

function eventLine(e: JsonObject): string {
  const get = (k: string): Json | undefined => e.get(k);
  const show = (v: Json | undefined): string => (v === undefined ? "None" : pyStr(v));
  const kind = typeof get("type") === "string" ? (get("type") as string) : "?";
  const layer = get("layer") !== null && get("layer") !== undefined ? `layer ${show(get("layer"))}` : "own context";
  const k = pad(kind, 19);
  if (kind === "system_prompt") {
    const sections = get("sections");
    const n = Array.isArray(sections) ? sections.length : 0;
    return `${k} ${show(get("tokens"))} tokens from ${n} section${n === 1 ? "" : "s"}`;
  }
  if (kind === "context_injected") return `${k} ${show(get("id"))}  at ${show(get("position"))}  ${layer}  ${show(get("tokens"))} tokens  by ${show(get("by"))}`;
  if (kind === "context_skipped") return `${k} ${show(get("id"))}  at ${show(get("position"))}  ${layer}  by ${show(get("by"))}  (${show(get("reason"))})`;
  if (kind === "context_suppressed") return `${k} ${show(get("id"))}  at ${show(get("position"))} from ${show(get("from"))}  by ${show(get("by"))}`;
  if (kind === "parent_chosen") {
    const when = get("when");
    const why = isObject(when) && when.size ? `candidate ${show(get("candidate"))}: ${describe(when, (v) => dumps(v, { ensureAscii: false }))}` : "no candidate's condition holds: extends";
    const parent = get("parent");
    return `${k} ${typeof parent === "string" && parent ? parent : "(none)"}  (${why})`;
  }
  return `${k} ` + [...e.entries()].filter(([key, v]) => key !== "type" && v !== null).map(([key, v]) => `${key}=${show(v)}`).join(", ");
}

/** The render, section by section, for a person at a terminal (without colour). */
export function pretty(req: PromptRequest): string {
  const out: string[] = [];
  const share = pct(req.tokens, req.budget).trim();
  out.push(`${req.role} → ${req.provider}   ${req.tokens} / ${req.budget} tokens (${share})   ${req.tokenizer}, ${countNote(req)}`);
  if (Number(req.ratio) !== 1) {
    const estimated = Math.ceil(req.tokens * Number(req.ratio));
    out.push(`about ${estimated} ${req.ratioFor} tokens: ${req.tokens} ${req.tokenizer} tokens x ${g(req.ratio)}`);
  }
  out.push(`[${bar(req.tokens, req.budget)}]`);
  out.push(`budget ${req.budget}: ${budgetSum(req)}`);
  for (const [key, where] of req.budgetOrigins) out.push(`  ${pad(key, 12)} from ${where}`);
  out.push("");
  const width = Math.min(40, Math.max(...req.sections.map((s) => [...s.id].length), 7));
  out.push(`${pad("section", width)}  ${pad("status", 9)}  ${"tokens".padStart(6)}  ${pad("share of budget", BAR + 7)}  message/stability`);
  const dropped: string[] = [];
  for (const s of req.sections) {
    const status = pad(s.status, 9);
    const tokens = isPresent(s) ? String(s.tokens).padStart(6) : "     -";
    const shareText = isPresent(s) ? `${bar(s.tokens, req.budget)} ${pct(s.tokens, req.budget)}` : " ".repeat(BAR + 7);
    let name = s.id;
    if ([...name].length > width) {
      out.push(name);
      name = "";
    }
    out.push(`${pad(name, width)}  ${status}  ${tokens}  ${shareText}  ${s.message}/${s.stability}`);
    const note = itemsNote(s);
    if (note) out.push(`    ${note}`);
    const reason = shownReason(s);
    if (reason) out.push(`    ${reason}`);
    const entry = droppedEntry(s);
    if (entry) dropped.push(entry);
    if (isPresent(s)) for (const line of shownLines(req, s)) out.push("    │ " + visible(line));
  }
  out.push("");
  out.push("dropped: " + (dropped.length ? dropped.join("; ") : "nothing"));
  if (req.events.length) {
    out.push("events:");
    for (const e of req.events) out.push("  " + eventLine(e));
  }
  const left = req.budget - req.tokens;
  out.push(`total: ${req.tokens} of ${req.budget} tokens (${pct(req.tokens, req.budget).trim()}), ${left} left`);
  return out.join("\n");
}

export { floatRepr };
