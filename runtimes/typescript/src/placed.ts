// What the fitter places (Python runtime/placed.py): a section's candidate with its status (`Placed`), and the
// messages they end up in (`Container`). Shared by the fitter (fit.ts) and the wires' layouts (wire.ts).

import { type Json, type JsonObject, isObject } from "./pyjson.js";
import type { Section } from "./bundle.js";
import { type Candidate, statePath, stateErrorAt } from "./fill.js";

export class Placed {
  status = "pending"; // kept | trimmed | truncated | dropped | empty
  reason = "";
  body: string | null = null; // final body of non-list sections
  kept: number[] = []; // kept item indices, in the order added
  offered = 0; // items rendered and counted
  orderKey = 0; // when it was placed (for repair)
  constructor(readonly cand: Candidate) {}

  get spec(): Section {
    return this.cand.spec;
  }

  get isList(): boolean {
    return this.cand.items !== null;
  }

  get present(): boolean {
    return this.status === "kept" || this.status === "trimmed" || this.status === "truncated";
  }

  sortedKept(): number[] {
    return [...this.kept].sort((a, b) => a - b);
  }

  itemTexts(): string[] {
    return this.sortedKept().map((i) => this.cand.rendered.get(i) as string);
  }

  /** The section as counted pieces: title line, then body or items with separators. */
  pieces(): string[] {
    const out = this.spec.title ? [this.spec.title + "\n"] : [];
    if (this.isList) {
      const kept = this.sortedKept();
      for (const i of kept.slice(0, -1)) out.push(this.cand.units.get(i) as string);
      if (kept.length) out.push(this.cand.rendered.get(kept[kept.length - 1]) as string);
    } else if (this.body) out.push(this.body);
    return out;
  }

  text(): string {
    return this.pieces().join("");
  }
}

/** One message (or the whole text) of the final request. */
export class Container {
  tokens = 0; // exact tokens of the content (set by exactTotal)
  constructor(
    readonly role: string,
    readonly placed: Placed[] = [],
    readonly turn: JsonObject | null = null, // a history turn (chat wires): the item
    readonly turnOf: Placed | null = null,
  ) {}
}

/** A history turn's (role, content), PM810 when it is not `{role: user|assistant, content: string}`. */
export function turnContent(turn: Json, section: string, index: number, path: string[]): [string, string] {
  const role = isObject(turn) ? turn.get("role") : undefined;
  const content = isObject(turn) ? turn.get("content") : undefined;
  if (!isObject(turn) || (role !== "user" && role !== "assistant") || typeof content !== "string") {
    throw stateErrorAt([[statePath([...path, index]), `history turns of section '${section}' need role user|assistant and string content`]]);
  }
  return [role, content];
}
