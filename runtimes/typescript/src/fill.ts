// Fill compiled sections with a render state (docs/bundle-format.md sections 5 and 7; Python runtime/fill.py):
// templates through their plans, rule lines through their conditions, list items read and ordered, each item
// rendered only when the fitter offers it.

import { type Json, type JsonObject, isObject } from "./pyjson.js";
import { PromptmillError, buildError } from "./errors.js";
import { evaluate, type ConditionContext } from "./conditions.js";
import type { RoleBundle, RuleLine, Section } from "./bundle.js";
import { runPlan, Deferred } from "./plans.js";
import { typeName, rstrip } from "./pyfmt.js";
import { StateError } from "./schema/state_errors.js";

/** PM810 (or `code`): the state does not fit; `errors` are (state path, message) pairs (TS-state's class). */
export { StateError };

/** A StateError without its role yet (the engine names the role). */
export function stateErrorAt(errors: [string, string][], code = "PM810"): StateError {
  return new StateError("", errors, code);
}

/** Rendered text as placed in a prompt: no leading blank lines, no trailing whitespace. */
export function stripText(text: string): string {
  let start = 0;
  while (start < text.length && text[start] === "\n") start++;
  return rstrip(text.slice(start));
}

/** Rule lines as text: a set's title shows only when one of its rules does. */
export function assembleRules(lines: RuleLine[], included: boolean[]): string {
  const groups = new Map<number, RuleLine[]>();
  const titles = new Map<number, RuleLine>();
  lines.forEach((line, i) => {
    if (line.isTitle) titles.set(line.group, line);
    else if (included[i]) {
      if (!groups.has(line.group)) groups.set(line.group, []);
      (groups.get(line.group) as RuleLine[]).push(line);
    }
  });
  const blocks = [...groups.keys()]
    .sort((a, b) => a - b)
    .map((g) => [...(titles.has(g) ? [(titles.get(g) as RuleLine).text] : []), ...(groups.get(g) as RuleLine[]).map((l) => l.text)].join("\n"));
  return blocks.join(titles.size ? "\n\n" : "\n");
}

export function statePath(path: (string | number)[]): string {
  let out = "state";
  for (const p of path) out += typeof p === "number" ? `[${p}]` : `.${p}`;
  return out;
}

/** The list at `path`; null when absent/null; PM810 when it is not a list. */
export function lookupList(state: JsonObject, path: string[], section: string): Json[] | null {
  let value: Json = state;
  for (const part of path) {
    if (!isObject(value)) return null;
    if (!value.has(part)) return null;
    value = value.get(part) as Json;
    if (value === null) return null;
  }
  if (!Array.isArray(value)) throw stateErrorAt([[statePath(path), `expected a list for section '${section}', got ${typeName(value)}`]]);
  return value;
}

/** What checks an offered item (state limits and the inputs schema of lazy lists, tool declarations). */
export interface ItemChecker {
  /** Check item `index` of the list at `path` (a lazy path); throw a StateError naming what is wrong. */
  lazyItem(path: string[], index: number, item: Json): void;
  /** Problems of a tool declaration, as (sub-path, message) pairs ([] when valid). */
  toolProblems(item: Json): [string, string][];
  /** A tool with its optional fields filled (description "", parameters {type: object, properties: {}}). */
  toolWithDefaults(item: Json): Json;
}

/** A bundle made ready to render (Python PreparedRole, without Jinja). */
export class PreparedRole {
  readonly declaredInputs: string[];
  readonly defaults: Map<string, Json>;
  constructor(
    readonly bundle: RoleBundle,
    readonly checker: ItemChecker,
  ) {
    const props = bundle.inputs.get("properties");
    const entries = isObject(props) ? [...props.entries()] : [];
    this.declaredInputs = entries.map(([k]) => k);
    this.defaults = new Map(entries.map(([k, v]) => [k, isObject(v) && v.has("default") ? (v.get("default") as Json) : null]));
  }

  /** Template variables: declared inputs (absent ones as their default or null), then the state. */
  context(state: JsonObject): JsonObject {
    const ctx = new Map(this.defaults);
    for (const [k, v] of state) ctx.set(k, v);
    for (const name of ["range", "dict"]) if (state.has(name) && !this.declaredInputs.includes(name)) ctx.delete(name);
    return ctx;
  }

  /** Fill a section's template (per item when `item` is given). */
  render(section: Section, ctx: JsonObject, item?: Json, where?: () => string): string {
    if (section.plan === null) {
      throw buildError(
        `role '${this.bundle.id}', section '${section.id}': its template has no plan (a fallback section: it needs Jinja), ` +
          "which the TypeScript runtime does not run",
        "render this role with the Python runtime (promptmill render), or rewrite the template so the compiler can plan it (docs/bundle-format.md 8.4)",
      );
    }
    const text = item === undefined ? runPlan(section.plan, ctx) : runPlan(section.plan, new Map([[section.itemName, item]]), ctx);
    if (text instanceof Deferred) {
      const place = `section '${section.id}'` + (where !== undefined ? `, ${where()}` : "");
      throw new PromptmillError(
        "PM820",
        `role '${this.bundle.id}', ${place}: the template's plan defers to Jinja here (${text.reason}), which the TypeScript runtime does not run`,
        "render this state with the Python runtime (promptmill render) to see the text or the error Jinja gives",
      );
    }
    return text;
  }
}

/** A section being filled for one render. */
export class Candidate {
  body: string | null = null; // static, template and rules sections
  items: Json[] | null = null; // each, tools, history
  order: number[] | null = null; // item indices in the order they are offered
  rendered = new Map<number, string>();
  units = new Map<number, string>(); // rendered text + item separator, counted as one piece
  declared = 0; // tools: items before this index are the section's static declarations
  constructor(
    readonly spec: Section,
    readonly index: number,
    readonly checked = true,
  ) {}

  itemWhere(i: number): string {
    if (i < this.declared) return `declare[${i}]`;
    return statePath([...this.spec.path, i - this.declared]);
  }
}

/** Render a non-list section now; for lists, read the items and their order only. */
export function makeCandidate(prepared: PreparedRole, spec: Section, index: number, state: JsonObject, ctx: JsonObject, condCtx: ConditionContext, checked = true): Candidate {
  const cand = new Candidate(spec, index, checked);
  if (spec.kind === "static") cand.body = spec.text ?? "";
  else if (spec.kind === "template") cand.body = stripText(prepared.render(spec, ctx));
  else if (spec.kind === "rules") {
    const included = spec.rules.map((line) => line.isTitle || evaluate(line.when, condCtx));
    cand.body = assembleRules(spec.rules, included);
  } else {
    let items: Json[] = spec.path.length ? (lookupList(state, spec.path, spec.id) ?? []) : [];
    if (spec.declared.length) {
      items = [...spec.declared, ...items];
      cand.declared = spec.declared.length;
    }
    cand.items = items;
    cand.order = itemOrder(spec, items);
  }
  return cand;
}

/** PM810 when two tools share a name (or take a reserved one: name -> what holds it). */
export function uniqueToolNames(cands: Candidate[], reserved: Map<string, string>): void {
  const seen = new Map<string, [Candidate, number]>();
  for (const cand of cands) {
    if (cand.spec.kind !== "tools") continue;
    (cand.items ?? []).forEach((item, i) => {
      const name = isObject(item) ? item.get("name") : undefined;
      if (typeof name !== "string") return;
      if (!seen.has(name)) seen.set(name, [cand, i]);
      const first = seen.get(name) as [Candidate, number];
      let where: string;
      if (reserved.has(name)) where = reserved.get(name) as string;
      else if (first[0] !== cand || first[1] !== i) {
        where = first[0].itemWhere(first[1]);
        if (first[0] !== cand && first[1] < first[0].declared) where = `section '${first[0].spec.id}' ${where}`;
      } else return;
      throw stateErrorAt([[cand.itemWhere(i) + ".name", `repeats the name '${name}' of ${where}; tool names must be unique`]]);
    });
  }
}

const MISSING = Symbol("missing");
type Score = Json | typeof MISSING;

function scoreOf(item: Json, key: string[]): Score {
  let value: Score = item;
  for (const part of key) value = isObject(value) && value.has(part) ? (value.get(part) as Json) : MISSING;
  return value;
}

const finite = (v: Score): boolean => typeof v === "bigint" || (typeof v === "number" && Number.isFinite(v));

function cmpScore(a: Score, b: Score): number {
  const x = a as bigint | number;
  const y = b as bigint | number;
  return x < y ? -1 : x > y ? 1 : 0;
}

/** Indices in the order items are offered: best score first, or by `keep`. */
export function itemOrder(spec: Section, items: Json[]): number[] {
  const n = items.length;
  const all = [...Array(n).keys()];
  if (spec.orderBy.length) {
    const scores = items.map((item) => scoreOf(item, spec.orderBy));
    // Python's sorted(reverse=True) is stable: equal scores keep their list order
    const sortIdx = (idx: number[]) =>
      idx.sort((i, j) => {
        const c = cmpScore(scores[i], scores[j]);
        return (spec.orderDesc ? -c : c) || i - j;
      });
    if (!scores.every(finite)) {
      badScore(spec, scores);
      const unscored = all.filter((i) => scores[i] === MISSING || scores[i] === null);
      const scored = all.filter((i) => !(scores[i] === MISSING || scores[i] === null));
      return [...sortIdx(scored), ...unscored];
    }
    return sortIdx(all);
  }
  if (spec.keep === "last") return all.reverse();
  return all;
}

function badScore(spec: Section, scores: Score[]): void {
  scores.forEach((value, i) => {
    if (value === MISSING || value === null) return;
    const where = statePath([...spec.path, i, ...spec.orderBy]);
    if (!(typeof value === "bigint" || typeof value === "number")) {
      throw stateErrorAt([[where, `expected a number to order section '${spec.id}' by, got ${typeName(value)}`]]);
    }
    if (typeof value === "number" && !Number.isFinite(value)) throw stateErrorAt([[where, "is not a finite number"]], "PM811");
  });
}

/** Item `i`, checked first when its list is checked lazily (and, for tools, as a declaration). */
export function checkItem(prepared: PreparedRole, cand: Candidate, i: number): Json {
  const spec = cand.spec;
  const item = (cand.items as Json[])[i];
  if (i < cand.declared) return item;
  if (cand.checked && prepared.bundle.lazyPaths.some((p) => p.length === spec.path.length && p.every((x, k) => x === spec.path[k]))) {
    prepared.checker.lazyItem(spec.path, i - cand.declared, item);
  }
  if (spec.kind === "tools") {
    const found = prepared.checker.toolProblems(item);
    if (found.length) {
      const where = cand.itemWhere(i);
      throw stateErrorAt(found.map(([sub, message]) => [where + sub, message]));
    }
    return prepared.checker.toolWithDefaults(item);
  }
  return item;
}

/** Text of item `i` (checked first), remembered with its unit (text + item separator). */
export function renderItem(prepared: PreparedRole, cand: Candidate, i: number, ctx: JsonObject): string {
  const known = cand.rendered.get(i);
  if (known !== undefined) return known;
  const spec = cand.spec;
  const item = checkItem(prepared, cand, i);
  const text = stripText(prepared.render(spec, ctx, item, () => cand.itemWhere(i)));
  cand.rendered.set(i, text);
  cand.units.set(i, text + spec.itemSeparator);
  return text;
}
