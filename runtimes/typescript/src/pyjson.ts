// JSON data as the Python runtime sees it, and JSON text as Python's `json` module writes it.
//
// Python keeps what JavaScript's JSON.parse loses, and the bytes of a render depend on it:
//   - an integer and a float are different values: `{{ x }}` prints `3` for 3 and `3.0` for 3.0;
//   - integers have no size limit: 2**64 prints exactly;
//   - objects keep their keys in document order, even keys that look like numbers
//     (a JavaScript object puts "1" before "b").
// So the value model here is:
//   null | boolean | string | bigint (a JSON integer) | number (a JSON float) | Json[] | JsonObject (a Map)
// and `parse` reads JSON text into it the way Python's json.loads does (NaN, Infinity and -Infinity
// accepted, a later duplicate key replaces the earlier one in its first position, lone surrogates kept).

export type JsonObject = Map<string, Json>;
export type Json = null | boolean | string | bigint | number | Json[] | JsonObject;

export class JsonSyntaxError extends Error {
  constructor(message: string, readonly line: number, readonly col: number, readonly pos: number) {
    super(message);
  }
}

export function isObject(v: unknown): v is JsonObject {
  return v instanceof Map;
}

export function isInt(v: unknown): v is bigint {
  return typeof v === "bigint";
}

export function isFloat(v: unknown): v is number {
  return typeof v === "number";
}

/** A number in the Python sense (int or float; never a boolean). */
export function isNumber(v: unknown): v is bigint | number {
  return typeof v === "bigint" || typeof v === "number";
}

const WS = new Set([0x20, 0x09, 0x0a, 0x0d]);

/** Parse JSON text as Python's json.loads does (see the module comment). */
export function parse(text: string): Json {
  let i = 0;
  const n = text.length;
  const fail = (msg: string, at = i): never => {
    let line = 1;
    let col = 1;
    for (let k = 0; k < at && k < n; k++) {
      if (text.charCodeAt(k) === 0x0a) {
        line++;
        col = 1;
      } else col++;
    }
    throw new JsonSyntaxError(`${msg}: line ${line} column ${col} (char ${at})`, line, col, at);
  };
  const ws = () => {
    while (i < n && WS.has(text.charCodeAt(i))) i++;
  };
  const value = (depth: number): Json => {
    if (depth > 10000) fail("too deeply nested");
    ws();
    if (i >= n) fail("Expecting value");
    const c = text[i];
    if (c === "{") {
      i++;
      const obj: JsonObject = new Map();
      ws();
      if (text[i] === "}") {
        i++;
        return obj;
      }
      for (;;) {
        ws();
        if (text[i] !== '"') fail("Expecting property name enclosed in double quotes");
        const key = str();
        ws();
        if (text[i] !== ":") fail("Expecting ':' delimiter");
        i++;
        const v = value(depth + 1);
        obj.set(key, v);
        ws();
        if (text[i] === ",") {
          i++;
          continue;
        }
        if (text[i] === "}") {
          i++;
          return obj;
        }
        fail("Expecting ',' delimiter");
      }
    }
    if (c === "[") {
      i++;
      const arr: Json[] = [];
      ws();
      if (text[i] === "]") {
        i++;
        return arr;
      }
      for (;;) {
        arr.push(value(depth + 1));
        ws();
        if (text[i] === ",") {
          i++;
          continue;
        }
        if (text[i] === "]") {
          i++;
          return arr;
        }
        fail("Expecting ',' delimiter");
      }
    }
    if (c === '"') return str();
    if (text.startsWith("null", i)) {
      i += 4;
      return null;
    }
    if (text.startsWith("true", i)) {
      i += 4;
      return true;
    }
    if (text.startsWith("false", i)) {
      i += 5;
      return false;
    }
    if (text.startsWith("NaN", i)) {
      i += 3;
      return NaN;
    }
    if (text.startsWith("Infinity", i)) {
      i += 8;
      return Infinity;
    }
    if (text.startsWith("-Infinity", i)) {
      i += 9;
      return -Infinity;
    }
    const m = /-?(?:0|[1-9][0-9]*)(\.[0-9]+)?([eE][-+]?[0-9]+)?/y;
    m.lastIndex = i;
    const r = m.exec(text);
    if (!r) return fail("Expecting value");
    i = m.lastIndex;
    if (r[1] === undefined && r[2] === undefined) return BigInt(r[0]);
    return Number(r[0]);
  };
  const str = (): string => {
    const start = i;
    i++; // opening quote
    let out = "";
    let chunk = i;
    for (;;) {
      if (i >= n) fail("Unterminated string starting at", start);
      const ch = text.charCodeAt(i);
      if (ch === 0x22) {
        out += text.slice(chunk, i);
        i++;
        return out;
      }
      if (ch < 0x20) fail("Invalid control character at");
      if (ch === 0x5c) {
        out += text.slice(chunk, i);
        const e = text[i + 1];
        const simple: Record<string, string> = { '"': '"', "\\": "\\", "/": "/", b: "\b", f: "\f", n: "\n", r: "\r", t: "\t" };
        if (e !== undefined && e in simple) {
          out += simple[e];
          i += 2;
        } else if (e === "u") {
          const hex = text.slice(i + 2, i + 6);
          if (!/^[0-9a-fA-F]{4}$/.test(hex)) fail("Invalid \\uXXXX escape", i + 1);
          out += String.fromCharCode(parseInt(hex, 16));
          i += 6;
        } else {
          fail("Invalid \\escape", i);
        }
        chunk = i;
        continue;
      }
      i++;
    }
  };
  const v = value(0);
  ws();
  if (i !== n) fail("Extra data");
  return v;
}

/** Python's repr() of a float (also its str()): `3.0`, `0.5`, `1e-05`, `1e+16`, `inf`, `nan`. */
export function floatRepr(x: number): string {
  if (Number.isNaN(x)) return "nan";
  if (x === Infinity) return "inf";
  if (x === -Infinity) return "-inf";
  if (x === 0) return Object.is(x, -0) ? "-0.0" : "0.0";
  const sign = x < 0 ? "-" : "";
  const [mant, expText] = Math.abs(x).toExponential().split("e");
  const exp = Number(expText);
  const digits = mant.replace(".", "");
  if (exp < -4 || exp >= 16) {
    const m = digits.length > 1 ? `${digits[0]}.${digits.slice(1)}` : digits;
    const e = Math.abs(exp) < 10 ? `0${Math.abs(exp)}` : `${Math.abs(exp)}`;
    return `${sign}${m}e${exp < 0 ? "-" : "+"}${e}`;
  }
  if (exp < 0) return `${sign}0.${"0".repeat(-exp - 1)}${digits}`;
  if (digits.length <= exp + 1) return `${sign}${digits}${"0".repeat(exp + 1 - digits.length)}.0`;
  return `${sign}${digits.slice(0, exp + 1)}.${digits.slice(exp + 1)}`;
}

export interface DumpOptions {
  /** Python's `indent`: null writes one line with ", " and ": " between items. */
  indent?: number | null;
  /** Python's `ensure_ascii` (its default is true; promptmill's CLI and to_json pass false). */
  ensureAscii?: boolean;
  /** Python's `allow_nan`: false makes NaN and infinities an error, as to_json does. */
  allowNan?: boolean;
  sortKeys?: boolean;
}

const ESC: Record<number, string> = { 0x22: '\\"', 0x5c: "\\\\", 0x0a: "\\n", 0x0d: "\\r", 0x09: "\\t", 0x08: "\\b", 0x0c: "\\f" };

/** A JSON string literal as Python's json.dumps writes it. */
export function dumpString(s: string, ensureAscii = false): string {
  let out = '"';
  let chunk = 0;
  for (let k = 0; k < s.length; k++) {
    const c = s.charCodeAt(k);
    let rep: string | undefined;
    if (c < 0x20 || c === 0x22 || c === 0x5c) rep = ESC[c] ?? `\\u${c.toString(16).padStart(4, "0")}`;
    else if (ensureAscii && c > 0x7e) rep = `\\u${c.toString(16).padStart(4, "0")}`;
    if (rep !== undefined) {
      out += s.slice(chunk, k) + rep;
      chunk = k + 1;
    }
  }
  return out + s.slice(chunk) + '"';
}

function dumpFloat(x: number, allowNan: boolean): string {
  if (!Number.isFinite(x)) {
    if (!allowNan) throw new RangeError(`Out of range float values are not JSON compliant: ${floatRepr(x)}`);
    return Number.isNaN(x) ? "NaN" : x > 0 ? "Infinity" : "-Infinity";
  }
  return floatRepr(x);
}

/** JSON text of a value as Python's json.dumps(value, **options) writes it. */
export function dumps(value: Json, options: DumpOptions = {}): string {
  const indent = options.indent ?? null;
  const ascii = options.ensureAscii ?? true;
  const allowNan = options.allowNan ?? true;
  const sortKeys = options.sortKeys ?? false;
  const itemSep = indent === null ? ", " : ",";
  const go = (v: Json, level: number): string => {
    if (v === null) return "null";
    if (v === true) return "true";
    if (v === false) return "false";
    if (typeof v === "string") return dumpString(v, ascii);
    if (typeof v === "bigint") return v.toString();
    if (typeof v === "number") return dumpFloat(v, allowNan);
    const open = indent === null ? "" : "\n" + " ".repeat(indent * (level + 1));
    const close = indent === null ? "" : "\n" + " ".repeat(indent * level);
    if (Array.isArray(v)) {
      if (v.length === 0) return "[]";
      return "[" + open + v.map((x) => go(x, level + 1)).join(itemSep + open) + close + "]";
    }
    if (v.size === 0) return "{}";
    let keys = [...v.keys()];
    if (sortKeys) keys = keys.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
    return "{" + open + keys.map((k) => dumpString(k, ascii) + ": " + go(v.get(k) as Json, level + 1)).join(itemSep + open) + close + "}";
  };
  return go(value, 0);
}

/** Build JSON data from plain JavaScript (objects become Maps, integral numbers stay floats unless bigint). */
export function fromJs(v: unknown): Json {
  if (v === null || v === undefined) return null;
  if (typeof v === "boolean" || typeof v === "string" || typeof v === "bigint" || typeof v === "number") return v;
  if (Array.isArray(v)) return v.map(fromJs);
  if (v instanceof Map) return new Map([...v.entries()].map(([k, x]) => [String(k), fromJs(x)]));
  if (typeof v === "object") return new Map(Object.entries(v as Record<string, unknown>).map(([k, x]) => [k, fromJs(x)]));
  throw new TypeError(`not JSON data: ${typeof v}`);
}

/** Python's `==` on JSON data (1 == 1.0 == True; containers compare deeply; key order does not matter). */
export function pyEqual(a: Json, b: Json): boolean {
  const num = (x: Json): number | bigint | null =>
    typeof x === "boolean" ? (x ? 1n : 0n) : typeof x === "bigint" || typeof x === "number" ? x : null;
  const na = num(a);
  const nb = num(b);
  if (na !== null && nb !== null) {
    // bigint vs number: == compares exact values in JavaScript (1n == 1, 2n**64n == 2**64)
    return na == nb; // eslint-disable-line eqeqeq
  }
  if (na !== null || nb !== null) return false;
  if (a === null || b === null) return a === b;
  if (typeof a === "string" || typeof b === "string") return a === b;
  if (Array.isArray(a) || Array.isArray(b)) {
    if (!Array.isArray(a) || !Array.isArray(b) || a.length !== b.length) return false;
    return a.every((x, k) => pyEqual(x, b[k]));
  }
  if (!(a instanceof Map) || !(b instanceof Map) || a.size !== b.size) return false;
  for (const [k, x] of a) {
    if (!b.has(k) || !pyEqual(x, b.get(k) as Json)) return false;
  }
  return true;
}
