// One "did you mean" for every message: the nearest names to a misspelt one (Python: core/suggest.py), with
// Python's difflib.get_close_matches ported so the suggestions (and so the error hints) are the same.

export const CUTOFF = 0.6; // difflib's similarity ratio a word suggestion needs (difflib's own default)
export const ID_CUTOFF = 0.5; // the same for template and role ids

/** difflib.SequenceMatcher(None, a, b) (autojunk on), for ratio(), quick_ratio() and real_quick_ratio(). */
class SequenceMatcher {
  private b2j = new Map<string, number[]>();
  private fullbcount: Map<string, number> | null = null;
  private a: string[] = [];
  constructor(private readonly b: string[]) {
    const n = b.length;
    b.forEach((elt, i) => {
      const list = this.b2j.get(elt);
      if (list) list.push(i);
      else this.b2j.set(elt, [i]);
    });
    if (n >= 200) {
      const ntest = Math.floor(n / 100) + 1;
      for (const [elt, idxs] of [...this.b2j]) if (idxs.length > ntest) this.b2j.delete(elt);
    }
  }

  setA(a: string[]): void {
    this.a = a;
  }

  private findLongestMatch(alo: number, ahi: number, blo: number, bhi: number): [number, number, number] {
    const { a, b } = this;
    let [besti, bestj, bestsize] = [alo, blo, 0];
    let j2len = new Map<number, number>();
    for (let i = alo; i < ahi; i++) {
      const newj2len = new Map<number, number>();
      for (const j of this.b2j.get(a[i]) ?? []) {
        if (j < blo) continue;
        if (j >= bhi) break;
        const k = (j2len.get(j - 1) ?? 0) + 1;
        newj2len.set(j, k);
        if (k > bestsize) [besti, bestj, bestsize] = [i - k + 1, j - k + 1, k];
      }
      j2len = newj2len;
    }
    // no junk: extend over equal elements that autojunk left out of b2j
    while (besti > alo && bestj > blo && a[besti - 1] === b[bestj - 1]) [besti, bestj, bestsize] = [besti - 1, bestj - 1, bestsize + 1];
    while (besti + bestsize < ahi && bestj + bestsize < bhi && a[besti + bestsize] === b[bestj + bestsize]) bestsize++;
    return [besti, bestj, bestsize];
  }

  private matches(): number {
    const la = this.a.length;
    const lb = this.b.length;
    const queue: [number, number, number, number][] = [[0, la, 0, lb]];
    const blocks: [number, number, number][] = [];
    while (queue.length) {
      const [alo, ahi, blo, bhi] = queue.pop() as [number, number, number, number];
      const [i, j, k] = this.findLongestMatch(alo, ahi, blo, bhi);
      if (k) {
        blocks.push([i, j, k]);
        if (alo < i && blo < j) queue.push([alo, i, blo, j]);
        if (i + k < ahi && j + k < bhi) queue.push([i + k, ahi, j + k, bhi]);
      }
    }
    return blocks.reduce((s, x) => s + x[2], 0);
  }

  private calc(matches: number): number {
    const length = this.a.length + this.b.length;
    return length ? (2.0 * matches) / length : 1.0;
  }

  ratio(): number {
    return this.calc(this.matches());
  }

  quickRatio(): number {
    if (this.fullbcount === null) {
      this.fullbcount = new Map();
      for (const elt of this.b) this.fullbcount.set(elt, (this.fullbcount.get(elt) ?? 0) + 1);
    }
    const avail = new Map<string, number>();
    let matches = 0;
    for (const elt of this.a) {
      const numb = avail.has(elt) ? (avail.get(elt) as number) : (this.fullbcount.get(elt) ?? 0);
      avail.set(elt, numb - 1);
      if (numb > 0) matches++;
    }
    return this.calc(matches);
  }

  realQuickRatio(): number {
    return this.calc(Math.min(this.a.length, this.b.length));
  }
}

/** Python's order of two strings: code point by code point (JavaScript's `<` compares UTF-16 units, which puts
 *  an astral character before U+E000-U+FFFF). */
export function cmpCodePoints(x: string, y: string): number {
  const a = Array.from(x);
  const b = Array.from(y);
  for (let i = 0; i < a.length && i < b.length; i++) {
    const d = (a[i].codePointAt(0) as number) - (b[i].codePointAt(0) as number);
    if (d) return d;
  }
  return a.length - b.length;
}

/** difflib.get_close_matches(word, choices, n, cutoff): up to `n` choices close to `word`, closest first. */
export function nearest(word: string, choices: Iterable<string>, n = 1, cutoff = CUTOFF): string[] {
  const s = new SequenceMatcher(Array.from(word));
  const result: [number, string][] = [];
  for (const x of choices) {
    s.setA(Array.from(x));
    if (s.realQuickRatio() >= cutoff && s.quickRatio() >= cutoff && s.ratio() >= cutoff) result.push([s.ratio(), x]);
  }
  // heapq.nlargest on (score, text) tuples: the highest score first, then the greater text (by code point)
  result.sort((p, q) => q[0] - p[0] || cmpCodePoints(q[1], p[1]));
  return result.slice(0, n).map((r) => r[1]);
}

/** The closest choice to `word`, or null. */
export function suggest(word: string, choices: Iterable<string>): string | null {
  return nearest(word, choices)[0] ?? null;
}

/** `did you mean 'a'?` or `did you mean 'a' or 'b'?` */
export function didYouMean(names: Iterable<string>): string {
  return "did you mean " + [...names].map((n) => `'${n}'`).join(" or ") + "?";
}

/** The Damerau-Levenshtein distance of `a` and `b` (code points), or `limit + 1` once it exceeds `limit`. */
export function editDistance(a0: string, b0: string, limit: number): number {
  const a = Array.from(a0);
  const b = Array.from(b0);
  if (Math.abs(a.length - b.length) > limit) return limit + 1;
  let before: number[] | null = null;
  let row = Array.from({ length: b.length + 1 }, (_, k) => k);
  for (let i = 1; i <= a.length; i++) {
    const current = [i, ...new Array<number>(b.length).fill(0)];
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      current[j] = Math.min(row[j] + 1, current[j - 1] + 1, row[j - 1] + cost);
      if (before !== null && i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) {
        current[j] = Math.min(current[j], before[j - 2] + 1);
      }
    }
    if (Math.min(...current) > limit) return limit + 1;
    [before, row] = [row, current];
  }
  return Math.min(row[b.length], limit + 1);
}
