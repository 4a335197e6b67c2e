// Exact token counts of concatenated pieces, from cached piece counts (Python: runtime/counting.py).
//
// `Counter.countParts(parts)` returns exactly `tokenizer.count(parts.join(""))` while tokenizing each distinct
// piece at most once: where the tokenizer guarantees that no token spans a join (a *hard* join,
// `Tokenizer.hardJoin`), counts add up; around a soft join only a short region (from the last hard boundary
// before the join to the first one after it) is counted again. Tokenizers without hard-join rules (approx) have no
// hard boundaries, so the whole text is counted. Strings are UTF-16 here and code points in Python: a join is
// only ever looked at between two code points (never inside a surrogate pair), so the regions are the same or
// larger and the totals the same.

import { GenerationalCache } from "./cache.js";
import { type Tokenizer, getTokenizer } from "./tokenizers.js";

// How far to look for a hard boundary inside a piece before giving up (correct either way).
const SCAN = 64;
export const MAX_DELTAS = 100_000;
export const MAX_DELTA_CHARS = 2_000_000;
export const MAX_DELTA_KEY_CHARS = 4_096;
export const MAX_JOIN_KEY_CHARS = 20_000;
export const MAX_KEY_CHARS = 200_000; // text longer than this is not kept in the count cache

const isHigh = (c: number) => c >= 0xd800 && c <= 0xdbff;
const isLow = (c: number) => c >= 0xdc00 && c <= 0xdfff;

/** The code point of `text` that ends at UTF-16 index `i`. */
function before(text: string, i: number): string {
  if (i >= 2 && isLow(text.charCodeAt(i - 1)) && isHigh(text.charCodeAt(i - 2))) return text.slice(i - 2, i);
  return text.slice(i - 1, i);
}

/** The code point of `text` that starts at UTF-16 index `i`. */
function after(text: string, i: number): string {
  if (i + 1 < text.length && isHigh(text.charCodeAt(i)) && isLow(text.charCodeAt(i + 1))) return text.slice(i, i + 2);
  return text.slice(i, i + 1);
}

/** A bounded map text -> token count; each entry weighs its length plus ENTRY_COST. */
export class CountCache extends GenerationalCache<string, number> {
  static readonly ENTRY_COST = 64;
  constructor(
    maxChars = 8_000_000,
    readonly maxKeyChars = MAX_KEY_CHARS,
  ) {
    super(maxChars, (key) => key.length + CountCache.ENTRY_COST);
  }

  override put(text: string, value: number): void {
    if (text.length <= this.maxKeyChars) super.put(text, value, text.length + CountCache.ENTRY_COST);
  }
}

/** Counts tokens for one tokenizer with a cache. */
export class Counter {
  readonly cache: CountCache;
  encodedChars = 0; // characters actually sent to the tokenizer (for tests)
  private deltas = new Map<string, number>();
  private deltaChars = 0;
  private joins = new Map<string, [number, number]>();
  private joinChars = 0;

  constructor(
    readonly tokenizer: Tokenizer,
    cache?: CountCache,
  ) {
    this.cache = cache ?? new CountCache();
  }

  /** Token count of `text` (cached). */
  count(text: string): number {
    if (!text) return 0;
    const hit = this.cache.get(text);
    if (hit !== undefined) return hit;
    const value = this.tokenizer.count(text);
    this.encodedChars += text.length;
    this.cache.put(text, value);
    return value;
  }

  /** Whether the join at UTF-16 index `i` of `text` is hard (never inside a surrogate pair). */
  private hardAt(text: string, i: number): boolean {
    if (isLow(text.charCodeAt(i)) && isHigh(text.charCodeAt(i - 1))) return false;
    return this.tokenizer.hardJoin(before(text, i), after(text, i));
  }

  /** Whether the join of `left` followed by `right` is hard. */
  private hardBetween(left: string, right: string): boolean {
    return this.tokenizer.hardJoin(before(left, left.length), after(right, 0));
  }

  /** Largest internal hard boundary of `text` at or after `floor` (else `floor`). */
  private lastHard(text: string, floor: number): number {
    const stop = Math.max(floor, text.length - SCAN);
    for (let i = text.length - 1; i > stop; i--) {
      if (this.hardAt(text, i)) return i;
    }
    return floor;
  }

  /** Smallest internal hard boundary of `text` (else its length). */
  private firstHard(text: string): number {
    const end = Math.min(text.length, SCAN + 1);
    for (let i = 1; i < end; i++) {
      if (this.hardAt(text, i)) return i;
    }
    return text.length;
  }

  /** About count(left + right) - count(left) - count(right), from short strings: exact when `right` holds a
   *  hard boundary (or ends the text); used for estimates while fitting, never for reported totals. */
  joinDelta(left: string, right: string): number {
    if (!left || !right || this.hardBetween(left, right)) return 0;
    if (!this.tokenizer.hasHardJoins) return this.count(left + right) - this.count(left) - this.count(right);
    const tail = left.slice(this.lastHard(left, 0));
    const head = right.slice(0, this.firstHard(right));
    const key = tail + "\u0000" + tail.length + "\u0000" + head;
    let delta = this.deltas.get(key);
    if (delta === undefined) {
      delta = this.count(tail + head) - this.count(tail) - this.count(head);
      const size = tail.length + head.length;
      if (size <= MAX_DELTA_KEY_CHARS) {
        if (this.deltas.size >= MAX_DELTAS || this.deltaChars + size > MAX_DELTA_CHARS) {
          this.deltas = new Map();
          this.deltaChars = 0;
        }
        this.deltas.set(key, delta);
        this.deltaChars += size;
      }
    }
    return delta;
  }

  private rememberJoin(left: string, right: string, floorIn: number, delta: number, floor: number): void {
    const size = left.length + right.length;
    if (size > MAX_JOIN_KEY_CHARS) return;
    if (this.joins.size >= MAX_DELTAS || this.joinChars + size > MAX_DELTA_CHARS) {
      this.joins = new Map();
      this.joinChars = 0;
    }
    this.joins.set(`${floorIn}\u0000${left.length}\u0000${left}${right}`, [delta, floor]);
    this.joinChars += size;
  }

  /** Exactly `tokenizer.count(parts.join(""))`, from cached piece counts. */
  countParts(parts: readonly string[]): number {
    const pieces = parts.filter((p) => p);
    if (!pieces.length) return 0;
    if (!this.tokenizer.hasHardJoins) return this.count(pieces.join(""));
    let total = 0;
    for (const p of pieces) total += this.count(p);
    const n = pieces.length;
    let floor = 0; // hard boundary inside pieces[i] where the previous region ended
    let i = 0;
    while (i < n - 1) {
      const left = pieces[i];
      if (this.hardBetween(left, pieces[i + 1])) {
        i += 1;
        floor = 0;
        continue;
      }
      const joinKey = `${floor}\u0000${left.length}\u0000${left}${pieces[i + 1]}`;
      const known = left.length + pieces[i + 1].length <= MAX_JOIN_KEY_CHARS ? this.joins.get(joinKey) : undefined;
      if (known !== undefined) {
        total += known[0];
        floor = known[1];
        i += 1;
        continue;
      }
      const floorIn = floor;
      // A soft join: the region from the last hard boundary before it to the first hard boundary after it,
      // possibly across several pieces.
      const start = this.lastHard(left, floor);
      const region = [left.slice(start)];
      let minus = this.count(left.slice(start));
      let j = i + 1;
      for (;;) {
        const piece = pieces[j];
        const end = this.firstHard(piece);
        if (end < piece.length || j === n - 1 || this.hardBetween(piece, pieces[j + 1])) {
          const head = piece.slice(0, end);
          region.push(head);
          minus += this.count(head);
          floor = end < piece.length ? end : 0;
          break;
        }
        region.push(piece);
        minus += this.count(piece);
        j += 1;
      }
      const delta = this.count(region.join("")) - minus;
      total += delta;
      if (j === i + 1 && floor) this.rememberJoin(left, pieces[i + 1], floorIn, delta, floor);
      i = floor === 0 ? j + 1 : j;
    }
    return total;
  }
}

const counters = new Map<string, Counter>();

/** The shared Counter of the tokenizer called `name` (PM502 for an unknown name, PM850 for `hf:`); `baseDir`
 *  is where an `hf:` path would be resolved from (the build folder), unused while `hf:` is refused. */
export function getCounter(name: string, _baseDir = "."): Counter {
  let counter = counters.get(name);
  if (counter === undefined) {
    counter = new Counter(getTokenizer(name));
    counters.set(name, counter);
  }
  return counter;
}
