// A Python `re` pattern as a JavaScript RegExp that searches the same way (re.search), for the `pattern` and
// `patternProperties` keywords: the Python runtime validates with Python's regular expressions.
//
// Translated: `(?P<name>` and `(?P=name)`, `\A`, `\Z`, `$` (Python's also matches before a final newline),
// `\d` and `\w` (Unicode in Python), leading inline flags `(?i)`, `(?s)`, `(?m)`. A pattern that does not
// translate into a RegExp that compiles throws; the caller treats it as a schema it cannot decide.
export class PatternError extends Error {}

export function pyRegex(pattern: string): RegExp {
  let flags = "u";
  let src = pattern;
  const lead = /^\(\?([aiLmsux]+)\)/.exec(src);
  if (lead) {
    for (const f of lead[1]) {
      if (f === "i") flags += "i";
      else if (f === "s") flags += "s";
      else if (f === "m") flags += "m";
      else if (f !== "u") throw new PatternError(`inline flag (?${f}) has no JavaScript equivalent`);
    }
    src = src.slice(lead[0].length);
  }
  const multiline = flags.includes("m");
  let out = "";
  let inClass = false;
  for (let i = 0; i < src.length; i++) {
    const c = src[i];
    if (c === "\\") {
      const e = src[i + 1];
      if (e === undefined) throw new PatternError("a pattern cannot end with a backslash");
      i++;
      if (e === "A" && !inClass) out += "(?<![\\s\\S])";
      else if (e === "Z" && !inClass) out += "(?![\\s\\S])";
      else if (e === "d") out += "\\p{Nd}";
      else if (e === "w") out += inClass ? "\\p{L}\\p{N}_" : "[\\p{L}\\p{N}_]";
      else if (e === "W" && !inClass) out += "[^\\p{L}\\p{N}_]";
      else if (e === "D") out += "\\P{Nd}";
      else if (/[0-9]/.test(e) && !inClass) out += "\\" + e;
      else if (/[A-Za-z]/.test(e)) out += "\\" + e;
      else if (/[\^$\\.*+?()[\]{}|/]/.test(e)) out += "\\" + e;
      else if (e === "-" && inClass) out += "\\-";
      else out += e === "-" ? "-" : `\\u{${(e.codePointAt(0) as number).toString(16)}}`;
      continue;
    }
    if (inClass) {
      if (c === "]") inClass = false;
      else if (c === "[") out += "\\";
      out += c;
      continue;
    }
    if (c === "[") {
      inClass = true;
      out += c;
      if (src[i + 1] === "^") out += src[++i];
      if (src[i + 1] === "]") {
        out += "\\]";
        i++;
      }
      continue;
    }
    if (c === "(" && src.startsWith("(?P<", i)) {
      out += "(?<";
      i += 3;
      continue;
    }
    if (c === "(" && src.startsWith("(?P=", i)) {
      const end = src.indexOf(")", i);
      if (end < 0) throw new PatternError("unterminated (?P=");
      out += `\\k<${src.slice(i + 4, end)}>`;
      i = end;
      continue;
    }
    if (c === "$" && !multiline) {
      out += "(?=\\n?(?![\\s\\S]))";
      continue;
    }
    out += c;
  }
  try {
    return new RegExp(out, flags);
  } catch (err) {
    throw new PatternError(`pattern ${JSON.stringify(pattern)} does not compile: ${(err as Error).message}`);
  }
}
