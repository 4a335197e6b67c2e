// Tokenizers: how promptmill counts tokens (Python: compiler/promptmill/runtime/tokenizers.py).
//
// `getTokenizer(name)` returns a shared tokenizer:
// - `o200k_base` (default) and `cl100k_base`: tiktoken's BPE, built from the encoding files the Python package
//   ships (compiler/promptmill/data/*.tiktoken, copied to data/ by scripts/copy-data.mjs), whose SHA-256 is
//   checked on load against the hash tiktoken itself expects (SHIPPED_ENCODINGS). The pre-tokenizer patterns
//   are tiktoken's (tiktoken_ext/openai_public.py of tiktoken 0.14.0, what the Python runtime runs) written for
//   JavaScript's regex engine (see PATTERNS), and the merge is tiktoken's rule (the lowest-ranked adjacent
//   pair first, the leftmost on a tie): the same token ids. js-tiktoken 1.0.21 (a development dependency) encodes the same
//   ids, but its merge is quadratic with string-joined keys (a 20,000-letter run took 71 s on the 2-core dev
//   machine), so the encoder here is its own, with a heap for long pieces; test/tokenizers.test.mjs checks
//   both against tiktoken's counts;
// - `approx`: ceil(code points / 4), marked inexact;
// - `hf:PATH` is refused (PM850): this runtime has no Hugging Face tokenizer.
// Every tokenizer says whether a join between two characters is *hard* (no pre-token crosses it), which
// counting.ts uses to count concatenations exactly from piece counts.

import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { pathToFileURL } from "node:url";
import { PromptmillError } from "./errors.js";

export const DEFAULT_TOKENIZER = "o200k_base";
export const LONG_ENCODE_CHARS = 65_536; // a text this long is encoded once for the truncations of it that follow

// SHA-256 of the official encoding files: equal to `expected_hash` in tiktoken_ext/openai_public.py (tiktoken
// 0.14.0) and to SHIPPED_ENCODINGS in compiler/promptmill/runtime/tokenizers.py.
export const SHIPPED_ENCODINGS: Readonly<Record<string, string>> = {
  o200k_base: "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d",
  cl100k_base: "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7",
};
export const KNOWN_NAMES = [...Object.keys(SHIPPED_ENCODINGS), "approx"];

// `\s` of tiktoken's regex engine (Rust `regex`, Unicode White_Space). JavaScript's `\s` differs (it holds
// U+FEFF and lacks U+0085), so the patterns spell the class out.
const WS = "\\t\\n\\u000b\\f\\r \\u0085\\u00a0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000";
const S = `[${WS}]`;
const NS = `[^${WS}]`;
// tiktoken's `(?i:...)` contractions: case-insensitive in Unicode, so `s` also matches U+017F (long s)
const CI = (w: string) => [...w].map((c) => (c === "'" ? c : c === "s" ? "[sSſ]" : `[${c}${c.toUpperCase()}]`)).join("");
const O200K_CONTRACTION = `(?:${["'s", "'t", "'re", "'ve", "'m", "'ll", "'d"].map(CI).join("|")})?`;

/** tiktoken's pre-tokenizer patterns (openai_public.py) for JavaScript's `u` regexes: `\s` spelled out (WS),
 *  `(?i:...)` spelled out, and cl100k's possessive quantifiers (`?+`, `++`, `*+`, `{1,3}+`) made greedy, which
 *  matches the same text there because each possessive part is followed by a disjoint class or the end. */
export const PATTERNS: Readonly<Record<string, string>> = {
  o200k_base: [
    `[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]*[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]+${O200K_CONTRACTION}`,
    `[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]+[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]*${O200K_CONTRACTION}`,
    `\\p{N}{1,3}`,
    ` ?[^${WS}\\p{L}\\p{N}]+[\\r\\n/]*`,
    `${S}*[\\r\\n]+`,
    `${S}+(?!${NS})`,
    `${S}+`,
  ].join("|"),
  // '(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+|\s++$|\s*[\r\n]|\s+(?!\S)|\s
  cl100k_base: [
    `'(?:[sSſdDmMtT]|[lL][lL]|[vV][eE]|[rR][eE])`,
    `[^\\r\\n\\p{L}\\p{N}]?\\p{L}+`,
    `\\p{N}{1,3}`,
    ` ?[^${WS}\\p{L}\\p{N}]+[\\r\\n]*`,
    `${S}+$`,
    `${S}*[\\r\\n]`,
    `${S}+(?!${NS})`,
    `${S}`,
  ].join("|"),
};

// special tokens of each encoding (openai_public.py); promptmill counts their text as ordinary text
const SPECIAL: Readonly<Record<string, Record<string, number>>> = {
  o200k_base: { "<|endoftext|>": 199999, "<|endofprompt|>": 200018 },
  cl100k_base: {
    "<|endoftext|>": 100257,
    "<|fim_prefix|>": 100258,
    "<|fim_middle|>": 100259,
    "<|fim_suffix|>": 100260,
    "<|endofprompt|>": 100276,
  },
};

export type Keep = "head" | "tail";

/** What the runtime needs from a tokenizer. */
export interface Tokenizer {
  readonly name: string;
  /** false for approximate counters; reports say so */
  readonly exact: boolean;
  /** true when hardJoin() can ever answer true */
  readonly hasHardJoins: boolean;
  count(text: string): number;
  /** At most `n` tokens of `text`, cut at a token boundary: the start (head) or the end (tail); never a split
   *  character or grapheme cluster (see wholeClusters). */
  truncate(text: string, n: number, keep?: Keep): string;
  /** true when no token can span the join of code point `left` and code point `right`. */
  hardJoin(left: string, right: string): boolean;
}

// Python's str.isspace() (bidirectional class WS, B or S, or category Zs), CPython 3.11
const PY_SPACE = new Set([
  0x9, 0xa, 0xb, 0xc, 0xd, 0x1c, 0x1d, 0x1e, 0x1f, 0x20, 0x85, 0xa0, 0x1680, 0x2000, 0x2001, 0x2002, 0x2003, 0x2004,
  0x2005, 0x2006, 0x2007, 0x2008, 0x2009, 0x200a, 0x2028, 0x2029, 0x202f, 0x205f, 0x3000,
]);
const ALNUM = /^[\p{L}\p{N}]$/u;
const SYMBOL_OR_PUNCT = /^[\p{P}\p{S}]$/u;

/** Python's str.isspace() of one code point. */
export function isSpace(ch: string): boolean {
  return ch.length > 0 && PY_SPACE.has(ch.codePointAt(0) as number) && ch.length === 1;
}

/** Python's str.isalnum() of one code point (letters and numbers). */
export function isAlnum(ch: string): boolean {
  return ALNUM.test(ch);
}

/** The hard-join rules proven against o200k_base and cl100k_base pre-tokenisation (tokenizers.py hard_join). */
function tiktokenHardJoin(left: string, right: string): boolean {
  if (left === "\n") return !isSpace(right) && right !== "/";
  if (isAlnum(left)) {
    if (isSpace(right)) return true;
    return right !== "'" && SYMBOL_OR_PUNCT.test(right);
  }
  return false;
}

/** Code points of `text` (Python's len()). */
export function cpLength(text: string): number {
  let n = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < text.length) {
      const d = text.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) i++;
    }
    n++;
  }
  return n;
}

/** The UTF-16 index of code point `k` of `text` (text.length when k is past the end). */
export function cpIndex(text: string, k: number): number {
  let i = 0;
  while (k > 0 && i < text.length) {
    const c = text.charCodeAt(i);
    i += c >= 0xd800 && c <= 0xdbff && i + 1 < text.length && (text.charCodeAt(i + 1) & 0xfc00) === 0xdc00 ? 2 : 1;
    k--;
  }
  return i;
}

const utf8 = new TextEncoder();

/** UTF-8 bytes as Python's `bytes.decode("utf-8", errors)` reads them ("replace": U+FFFD for each maximal
 *  invalid subpart, "ignore": dropped). */
export function decodeUtf8(raw: Uint8Array, errors: "replace" | "ignore"): string {
  const out: string[] = [];
  let chunk: number[] = [];
  const flush = () => {
    if (chunk.length) out.push(String.fromCodePoint(...chunk));
    chunk = [];
  };
  const n = raw.length;
  let i = 0;
  while (i < n) {
    const b = raw[i];
    if (b < 0x80) {
      chunk.push(b);
      i++;
    } else {
      let need = 0;
      let lo = 0x80;
      let hi = 0xbf;
      if (b >= 0xc2 && b <= 0xdf) need = 1;
      else if (b === 0xe0) [need, lo] = [2, 0xa0];
      else if ((b >= 0xe1 && b <= 0xec) || b === 0xee || b === 0xef) need = 2;
      else if (b === 0xed) [need, hi] = [2, 0x9f];
      else if (b === 0xf0) [need, lo] = [3, 0x90];
      else if (b >= 0xf1 && b <= 0xf3) need = 3;
      else if (b === 0xf4) [need, hi] = [3, 0x8f];
      let j = 1;
      let cp = need === 1 ? b & 0x1f : need === 2 ? b & 0x0f : b & 0x07;
      if (need > 0) {
        for (; j <= need && i + j < n; j++) {
          const c = raw[i + j];
          const [l, h] = j === 1 ? [lo, hi] : [0x80, 0xbf];
          if (c < l || c > h) break;
          cp = (cp << 6) | (c & 0x3f);
        }
      }
      if (need > 0 && j === need + 1) {
        chunk.push(cp);
        i += need + 1;
      } else {
        if (errors === "replace") chunk.push(0xfffd);
        i += j; // the maximal subpart (a lone bad byte: 1)
      }
    }
    if (chunk.length >= 4096) flush();
  }
  flush();
  return out.join("");
}

function partialEnd(raw: Uint8Array): boolean {
  for (let back = 1; back <= Math.min(4, raw.length); back++) {
    const byte = raw[raw.length - back];
    if ((byte & 0xc0) !== 0x80) {
      const need = byte < 0x80 ? 1 : byte >> 5 === 0b110 ? 2 : byte >> 4 === 0b1110 ? 3 : 4;
      return need > back;
    }
  }
  return true;
}

function partialStart(raw: Uint8Array): boolean {
  return raw.length > 0 && (raw[0] & 0xc0) === 0x80;
}

const CLUSTER_WINDOW = 4096; // characters looked at before a cut: boundaries depend on little context
let segmenter: Intl.Segmenter | null = null;

function isRegionalIndicatorBefore(text: string, at: number): boolean {
  // the code point ending at `at` is U+1F1E6..U+1F1FF (a surrogate pair D83C DDE6..DDFF)
  return at >= 2 && text.charCodeAt(at - 2) === 0xd83c && text.charCodeAt(at - 1) >= 0xdde6 && text.charCodeAt(at - 1) <= 0xddff;
}

function windowStart(text: string, at: number): number {
  let start = Math.max(0, at - CLUSTER_WINDOW);
  if (start > 0 && (text.charCodeAt(start) & 0xfc00) === 0xdc00 && (text.charCodeAt(start - 1) & 0xfc00) === 0xd800) start--;
  while (start > 0 && isRegionalIndicatorBefore(text, start)) start -= 2; // a flag's pairing needs the whole run
  return start;
}

/** `cut` (a prefix of `text` for head, a suffix for tail) shortened so the cut does not split an extended
 *  grapheme cluster (Intl.Segmenter's graphemes; Python uses `\X` of the `regex` engine). */
export function wholeClusters(text: string, cut: string, keep: Keep): string {
  const at = keep === "head" ? cut.length : text.length - cut.length;
  if (at <= 0 || at >= text.length) return cut;
  const pair = text.slice(at - 1, at + 1);
  if (/^[\x00-\x7f]*$/.test(pair) && pair !== "\r\n") return cut;
  segmenter ??= new Intl.Segmenter(undefined, { granularity: "grapheme" });
  const start = windowStart(text, at);
  for (const seg of segmenter.segment(text.slice(start))) {
    const s = start + seg.index;
    const e = s + seg.segment.length;
    if (e < at) continue;
    if (s === at || e === at) return cut;
    return keep === "head" ? text.slice(0, s) : text.slice(e);
  }
  return cut;
}

/** The byte-pair encoder of one encoding: ranks keyed by the token's bytes as a latin1 string. */
export class BPE {
  private readonly regex: RegExp;
  constructor(
    pattern: string,
    private readonly ranks: Map<string, number>,
    readonly bytes: Uint8Array[],
  ) {
    this.regex = new RegExp(pattern, "gu");
  }

  /** tiktoken's `encode_ordinary`: every pre-token's ids (special-token text is ordinary text). */
  encode(text: string): number[] {
    const out: number[] = [];
    const re = new RegExp(this.regex); // lastIndex is per call
    for (const m of text.matchAll(re)) {
      const piece = m[0];
      // the piece's UTF-8 bytes as latin1 (a lone surrogate becomes U+FFFD, as tiktoken does)
      const key = /^[\x00-\x7f]*$/.test(piece) ? piece : Buffer.from(piece, "utf8").toString("latin1");
      const rank = this.ranks.get(key);
      if (rank !== undefined) out.push(rank);
      else if (key.length < 256) this.mergeShort(key, out);
      else this.mergeLong(key, out);
    }
    return out;
  }

  private rank(key: string, a: number, b: number): number {
    return this.ranks.get(key.slice(a, b)) ?? Infinity;
  }

  /** tiktoken's `_byte_pair_merge`: merge the lowest-ranked adjacent pair (leftmost on a tie) until none is a token. */
  private mergeShort(key: string, out: number[]): void {
    const starts: number[] = [];
    for (let i = 0; i <= key.length; i++) starts.push(i);
    const pair: number[] = [];
    for (let i = 0; i + 2 < starts.length; i++) pair.push(this.rank(key, starts[i], starts[i + 2]));
    for (;;) {
      let min = Infinity;
      let at = -1;
      for (let i = 0; i < pair.length; i++) {
        if (pair[i] < min) {
          min = pair[i];
          at = i;
        }
      }
      if (at < 0) break;
      starts.splice(at + 1, 1);
      pair.splice(at, 1);
      // the merged part's pair with its right neighbour, and the left neighbour's pair with it
      if (at < pair.length) pair[at] = at + 2 < starts.length ? this.rank(key, starts[at], starts[at + 2]) : Infinity;
      if (at > 0) pair[at - 1] = this.rank(key, starts[at - 1], starts[at + 1]);
    }
    for (let i = 0; i + 1 < starts.length; i++) out.push(this.ranks.get(key.slice(starts[i], starts[i + 1])) as number);
  }

  /** The same merges for a long piece in O(n log n): parts in a linked list, pairs in a heap ordered by
   *  (rank, position), so the pair taken is always the lowest-ranked and, on a tie, the leftmost. */
  private mergeLong(key: string, out: number[]): void {
    const n = key.length;
    const next = new Int32Array(n + 1);
    const prev = new Int32Array(n + 1);
    const version = new Int32Array(n + 1);
    const alive = new Uint8Array(n + 1).fill(1);
    for (let i = 0; i <= n; i++) {
      next[i] = i + 1;
      prev[i] = i - 1;
    }
    // heap of [rank, start, version]
    const heap: [number, number, number][] = [];
    const less = (a: [number, number, number], b: [number, number, number]) => a[0] < b[0] || (a[0] === b[0] && a[1] < b[1]);
    const push = (e: [number, number, number]) => {
      heap.push(e);
      let i = heap.length - 1;
      while (i > 0) {
        const p = (i - 1) >> 1;
        if (!less(heap[i], heap[p])) break;
        [heap[i], heap[p]] = [heap[p], heap[i]];
        i = p;
      }
    };
    const pop = (): [number, number, number] => {
      const top = heap[0];
      const last = heap.pop() as [number, number, number];
      if (heap.length) {
        heap[0] = last;
        let i = 0;
        for (;;) {
          const l = 2 * i + 1;
          const r = l + 1;
          let m = i;
          if (l < heap.length && less(heap[l], heap[m])) m = l;
          if (r < heap.length && less(heap[r], heap[m])) m = r;
          if (m === i) break;
          [heap[i], heap[m]] = [heap[m], heap[i]];
          i = m;
        }
      }
      return top;
    };
    const offer = (start: number) => {
      version[start]++;
      const mid = next[start];
      if (mid >= n) return;
      const end = next[mid];
      const r = this.rank(key, start, end);
      if (r !== Infinity) push([r, start, version[start]]);
    };
    for (let i = 0; i < n - 1; i++) offer(i);
    while (heap.length) {
      const [, start, ver] = pop();
      if (!alive[start] || version[start] !== ver) continue;
      const mid = next[start];
      alive[mid] = 0;
      next[start] = next[mid];
      prev[next[mid]] = start;
      offer(start);
      if (start > 0) offer(prev[start]);
    }
    for (let i = 0; i < n; i = next[i]) out.push(this.ranks.get(key.slice(i, next[i])) as number);
  }
}

/** A tiktoken encoding (exact; the counting model OpenAI models use). */
export class TiktokenTokenizer implements Tokenizer {
  readonly exact = true;
  readonly hasHardJoins = true;
  private last: [string, number[]] | null = null;

  constructor(
    readonly name: string,
    private readonly bpe: BPE,
  ) {}

  /** tiktoken's `encode_ordinary`: the ids of `text`, special-token text counted as ordinary text. */
  encode(text: string): number[] {
    return this.bpe.encode(text);
  }

  /** tiktoken's `decode_bytes`. */
  decodeBytes(ids: readonly number[]): Uint8Array {
    let size = 0;
    const table = this.bpe.bytes;
    for (const id of ids) size += table[id]?.length ?? 0;
    const out = new Uint8Array(size);
    let at = 0;
    for (const id of ids) {
      const b = table[id];
      if (b) {
        out.set(b, at);
        at += b.length;
      }
    }
    return out;
  }

  private ids(text: string): number[] {
    if (text.length < LONG_ENCODE_CHARS) return this.encode(text);
    if (this.last !== null && this.last[0] === text) return this.last[1];
    const ids = this.encode(text);
    this.last = [text, ids];
    return ids;
  }

  count(text: string): number {
    return this.ids(text).length;
  }

  truncate(text: string, n: number, keep: Keep = "head"): string {
    const tokens = this.ids(text);
    if (n >= tokens.length) return text;
    if (n <= 0) return "";
    const part = keep === "head" ? tokens.slice(0, n) : tokens.slice(tokens.length - n);
    const raw = this.decodeBytes(part);
    // A token may end (head) or start (tail) inside a UTF-8 sequence: drop the partial character rather than
    // emit a replacement character.
    const partial = keep === "head" ? partialEnd(raw) : partialStart(raw);
    const cut = decodeUtf8(raw, partial ? "ignore" : "replace");
    return wholeClusters(text, cut, keep);
  }

  hardJoin(left: string, right: string): boolean {
    return tiktokenHardJoin(left, right);
  }
}

/** Characters / 4, rounded up (in code points, as Python's len). Approximate by design, never additive. */
export class ApproxTokenizer implements Tokenizer {
  readonly name = "approx";
  readonly exact = false;
  readonly hasHardJoins = false;
  static readonly charsPerToken = 4;

  count(text: string): number {
    return Math.ceil(cpLength(text) / ApproxTokenizer.charsPerToken);
  }

  truncate(text: string, n: number, keep: Keep = "head"): string {
    const chars = Math.max(0, n) * ApproxTokenizer.charsPerToken;
    const len = cpLength(text);
    if (chars >= len) return text;
    const cut = keep === "head" ? text.slice(0, cpIndex(text, chars)) : text.slice(cpIndex(text, len - chars));
    return wholeClusters(text, cut, keep);
  }

  hardJoin(_left: string, _right: string): boolean {
    return false;
  }
}

/** Where the encoding files are read from: this package's data/ (scripts/copy-data.mjs fills it). */
let dataDir: URL = new URL("../data/", import.meta.url);

/** Read the encodings and the model table from another folder (a file URL or path ending in `/`). */
export function setDataDir(dir: string | URL): void {
  dataDir = typeof dir === "string" ? pathToFileURL(dir.endsWith("/") ? dir : dir + "/") : dir;
  cache.clear();
}

export function dataFile(name: string): Buffer {
  return readFileSync(new URL(name, dataDir));
}

const encodingError = (message: string, hint: string | null = null) => new PromptmillError("PM850", message, hint);

/** The verified encoding file of `name`, as a tokenizer. */
function loadEncoding(name: string): TiktokenTokenizer {
  const expected = SHIPPED_ENCODINGS[name];
  let raw: Buffer;
  try {
    raw = dataFile(`${name}.tiktoken`);
  } catch (exc) {
    throw encodingError(`shipped encoding file for '${name}' is missing: ${(exc as Error).message}`);
  }
  const digest = createHash("sha256").update(raw).digest("hex");
  if (digest !== expected) {
    throw encodingError(
      `encoding file for '${name}' failed its integrity check (sha256 ${digest}, expected ${expected})`,
      "reinstall promptmill",
    );
  }
  const fields = raw.toString("latin1").split(/\s+/).filter(Boolean); // "token rank" lines: base64 token, decimal rank
  if (fields.length % 2) throw encodingError(`encoding file for '${name}' has a line that is not 'token rank'`);
  const ranks = new Map<string, number>();
  const bytes: Uint8Array[] = [];
  for (let k = 0; k < fields.length; k += 2) {
    const rank = Number(fields[k + 1]);
    if (!Number.isInteger(rank) || rank < 0) throw encodingError(`encoding file for '${name}' has a line that is not 'token rank'`);
    const token = Buffer.from(fields[k], "base64");
    bytes[rank] = token;
    ranks.set(token.toString("latin1"), rank);
  }
  return new TiktokenTokenizer(name, new BPE(PATTERNS[name], ranks, bytes));
}

const cache = new Map<string, Tokenizer>();

/** The shared tokenizer called `name`: PM502 for an unknown name, PM850 for `hf:` (not available here) or a
 *  shipped encoding file that is missing or fails its hash. */
export function getTokenizer(name: string): Tokenizer {
  const cached = cache.get(name);
  if (cached !== undefined) return cached;
  let tok: Tokenizer;
  if (name in SHIPPED_ENCODINGS) tok = loadEncoding(name);
  else if (name === "approx") tok = new ApproxTokenizer();
  else if (name.startsWith("hf:")) {
    throw encodingError(
      `tokenizer '${name}' is a Hugging Face tokenizer, which the TypeScript runtime cannot count`,
      "render this role with the Python runtime, or give it the tokenizer o200k_base, cl100k_base or approx",
    );
  } else {
    throw new PromptmillError(
      "PM502",
      `unknown tokenizer '${name}'`,
      "use one of " + KNOWN_NAMES.join(", ") + ", or hf:PATH/tokenizer.json",
    );
  }
  cache.set(name, tok);
  return tok;
}
