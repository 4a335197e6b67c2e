// "Did you mean": Python's difflib.get_close_matches(word, choices, n=1, cutoff=0.6), ported
// (compiler/promptmill/core/suggest.py `suggest`). Strings are compared code point by code point, as Python does.

function codePoints(s: string): string[] {
  return Array.from(s);
}

/** difflib.SequenceMatcher(None, a, b).ratio(), with its `autojunk` heuristic on b. */
export function ratio(aText: string, bText: string): number {
  const a = codePoints(aText);
  const b = codePoints(bText);
  const total = a.length + b.length;
  if (total === 0) return 1.0;
  // b2j: positions of each element of b; "popular" elements of a long b are left out (autojunk)
  const b2j = new Map<string, number[]>();
  b.forEach((ch, j) => {
    const list = b2j.get(ch);
    if (list) list.push(j);
    else b2j.set(ch, [j]);
  });
  const n = b.length;
  if (n >= 200) {
    const ntest = Math.floor(n / 100) + 1;
    for (const [ch, idxs] of [...b2j.entries()]) if (idxs.length > ntest) b2j.delete(ch);
  }
  const longest = (alo: number, ahi: number, blo: number, bhi: number): [number, number, number] => {
    let besti = alo;
    let bestj = blo;
    let bestsize = 0;
    let j2len = new Map<number, number>();
    for (let i = alo; i < ahi; i++) {
      const next = new Map<number, number>();
      for (const j of b2j.get(a[i]) ?? []) {
        if (j < blo) continue;
        if (j >= bhi) break;
        const k = (j2len.get(j - 1) ?? 0) + 1;
        next.set(j, k);
        if (k > bestsize) {
          besti = i - k + 1;
          bestj = j - k + 1;
          bestsize = k;
        }
      }
      j2len = next;
    }
    // no junk: extend with equal elements the popular-element pruning may have hidden
    while (besti > alo && bestj > blo && a[besti - 1] === b[bestj - 1]) {
      besti--;
      bestj--;
      bestsize++;
    }
    while (besti + bestsize < ahi && bestj + bestsize < bhi && a[besti + bestsize] === b[bestj + bestsize]) bestsize++;
    return [besti, bestj, bestsize];
  };
  let matches = 0;
  const queue: [number, number, number, number][] = [[0, a.length, 0, b.length]];
  while (queue.length) {
    const [alo, ahi, blo, bhi] = queue.pop() as [number, number, number, number];
    const [i, j, k] = longest(alo, ahi, blo, bhi);
    if (k) {
      matches += k;
      if (alo < i && blo < j) queue.push([alo, i, blo, j]);
      if (i + k < ahi && j + k < bhi) queue.push([i + k, ahi, j + k, bhi]);
    }
  }
  return (2.0 * matches) / total;
}

function cmpCodePoints(x: string, y: string): number {
  const a = codePoints(x);
  const b = codePoints(y);
  for (let i = 0; i < a.length && i < b.length; i++) {
    const d = (a[i].codePointAt(0) as number) - (b[i].codePointAt(0) as number);
    if (d) return d;
  }
  return a.length - b.length;
}

/** Up to `n` choices whose similarity to `word` is at least `cutoff`, best first (ties: the larger string first). */
export function nearest(word: string, choices: Iterable<string>, n = 1, cutoff = 0.6): string[] {
  const scored: [number, string][] = [];
  for (const x of choices) {
    const r = ratio(x, word);
    if (r >= cutoff) scored.push([r, x]);
  }
  scored.sort((p, q) => (q[0] - p[0]) || cmpCodePoints(q[1], p[1]));
  return scored.slice(0, n).map((p) => p[1]);
}

/** The closest choice to `word`, or null. */
export function suggest(word: string, choices: Iterable<string>): string | null {
  const found = nearest(word, choices);
  return found.length ? found[0] : null;
}

export { cmpCodePoints };
