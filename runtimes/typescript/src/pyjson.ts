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

/** A UnicodeDecodeError of Python's codecs, with its words: `'utf-8' codec can't decode byte 0xe9 in position 10:
 *  invalid continuation byte`. */
export class PyDecodeError extends Error {}

function decodeError(codec: string, b: Uint8Array, start: number, end: number, why: string): PyDecodeError {
  const hex = (x: number) => "0x" + x.toString(16).padStart(2, "0");
  const what = end - start === 1 ? `byte ${hex(b[start])} in position ${start}` : `bytes in position ${start}-${end - 1}`;
  return new PyDecodeError(`'${codec}' codec can't decode ${what}: ${why}`);
}

/** Python's UTF-8 decoder with errors='surrogatepass' (an encoded lone surrogate is kept), from `offset` on. */
function utf8Decode(b: Uint8Array, offset: number): string {
  const fast = b.subarray(offset);
  try {
    return new TextDecoder("utf-8", { fatal: true, ignoreBOM: true }).decode(fast);
  } catch {
    // an invalid sequence, or a lone surrogate that surrogatepass keeps: decode by hand
  }
  let out = "";
  let i = 0;
  const n = fast.length;
  const cont = (x: number | undefined) => x !== undefined && x >= 0x80 && x <= 0xbf;
  while (i < n) {
    const c = fast[i];
    if (c < 0x80) {
      out += String.fromCharCode(c);
      i += 1;
      continue;
    }
    let need: number;
    let lo = 0x80;
    let hi = 0xbf;
    if (c >= 0xc2 && c <= 0xdf) need = 1;
    else if (c >= 0xe0 && c <= 0xef) {
      need = 2;
      if (c === 0xe0) lo = 0xa0; // surrogatepass keeps ED A0-BF: no upper bound for 0xED
    } else if (c >= 0xf0 && c <= 0xf4) {
      need = 3;
      if (c === 0xf0) lo = 0x90;
      if (c === 0xf4) hi = 0x8f;
    } else throw decodeError("utf-8", b, offset + i, offset + i + 1, "invalid start byte");
    // the second byte has the lead byte's range; the others any continuation byte
    for (let k = 1; k <= need; k++) {
      const x = fast[i + k];
      if (x === undefined) throw decodeError("utf-8", b, offset + i, offset + n, "unexpected end of data");
      if (k === 1 ? x < lo || x > hi : !cont(x)) throw decodeError("utf-8", b, offset + i, offset + i + k, "invalid continuation byte");
    }
    let cp = c & (need === 1 ? 0x1f : need === 2 ? 0x0f : 0x07);
    for (let k = 1; k <= need; k++) cp = (cp << 6) | (fast[i + k] & 0x3f);
    out += String.fromCodePoint(cp);
    i += need + 1;
  }
  return out;
}

function utf16Decode(b: Uint8Array, offset: number, little: boolean): string {
  const codec = little ? "utf-16-le" : "utf-16-be";
  const n = b.length - offset;
  let out = "";
  for (let i = 0; i + 1 < n; i += 2) {
    const at = offset + i;
    out += String.fromCharCode(little ? b[at] | (b[at + 1] << 8) : (b[at] << 8) | b[at + 1]); // surrogates kept as they are
  }
  if (n % 2) throw decodeError(codec, b, b.length - 1, b.length, "truncated data");
  return out;
}

function utf32Decode(b: Uint8Array, offset: number, little: boolean): string {
  const codec = little ? "utf-32-le" : "utf-32-be";
  let out = "";
  let i = offset;
  for (; i + 3 < b.length; i += 4) {
    const cp = little ? (b[i] | (b[i + 1] << 8) | (b[i + 2] << 16) | (b[i + 3] << 24)) >>> 0 : ((b[i] << 24) | (b[i + 1] << 16) | (b[i + 2] << 8) | b[i + 3]) >>> 0;
    if (cp > 0x10ffff) throw decodeError(codec, b, i, i + 4, "code point not in range(0x110000)");
    out += cp >= 0xd800 && cp <= 0xdfff ? String.fromCharCode(cp) : String.fromCodePoint(cp);
  }
  if (i < b.length) throw decodeError(codec, b, i, b.length, "truncated data");
  return out;
}

/** The text `json.loads(b)` parses when given bytes: the encoding `json.detect_encoding` picks (a UTF-32 or UTF-16
 *  byte-order mark, a UTF-8 one, else NUL bytes in the first four), decoded with errors='surrogatepass'; a
 *  PyDecodeError with Python's words when the bytes are not that encoding. */
export function decodeJsonBytes(b: Uint8Array): string {
  const starts = (...bom: number[]) => bom.every((x, k) => b[k] === x);
  if (starts(0x00, 0x00, 0xfe, 0xff)) return utf32Decode(b, 4, false);
  if (starts(0xff, 0xfe, 0x00, 0x00)) return utf32Decode(b, 4, true);
  if (starts(0xfe, 0xff)) return utf16Decode(b, 2, false);
  if (starts(0xff, 0xfe)) return utf16Decode(b, 2, true);
  if (starts(0xef, 0xbb, 0xbf)) return utf8Decode(b.subarray(3), 0); // utf-8-sig: positions count after the BOM
  if (b.length >= 4) {
    if (!b[0]) return b[1] ? utf16Decode(b, 0, false) : utf32Decode(b, 0, false);
    if (!b[1]) return b[2] || b[3] ? utf16Decode(b, 0, true) : utf32Decode(b, 0, true);
  } else if (b.length === 2) {
    if (!b[0]) return utf16Decode(b, 0, false);
    if (!b[1]) return utf16Decode(b, 0, true);
  }
  return utf8Decode(b, 0);
}
