// Python's text forms of JSON data: str(), repr(), type names, exact decimal formatting of floats
// ('%.2f', round), '%' formatting and str.format, as far as promptmill's plans use them (docs/bundle-format.md 8.2).
// A format this module cannot reproduce exactly throws `Unsupported`; callers turn that into a clear error,
// never into a guessed text.

import { type Json, isObject, floatRepr } from "./pyjson.js";

/** A Python operation that raised (TypeError, ValueError...): a plan defers on it. */
export class PyFail extends Error {}
/** Something this runtime does not reproduce (it would have to guess). */
export class Unsupported extends Error {}

/** Python's type(value).__name__ for JSON data. */
export function typeName(v: Json | undefined): string {
  if (v === null || v === undefined) return "NoneType";
  if (typeof v === "boolean") return "bool";
  if (typeof v === "string") return "str";
  if (typeof v === "bigint") return "int";
  if (typeof v === "number") return "float";
  if (Array.isArray(v)) return "list";
  return "dict";
}

const PRINTABLE_BAD = /[\p{Cc}\p{Cf}\p{Cs}\p{Co}\p{Cn}\p{Zl}\p{Zp}\p{Zs}]/u;

/** Python's str.isprintable() of one character (a code point). */
export function isPrintableChar(ch: string): boolean {
  return ch === " " || !PRINTABLE_BAD.test(ch);
}

/** Python's repr() of a string. */
export function reprString(s: string): string {
  const quote = s.includes("'") && !s.includes('"') ? '"' : "'";
  let out = quote;
  for (const ch of s) {
    const c = ch.codePointAt(0) as number;
    if (ch === quote || ch === "\\") out += "\\" + ch;
    else if (ch === "\n") out += "\\n";
    else if (ch === "\r") out += "\\r";
    else if (ch === "\t") out += "\\t";
    else if (c < 0x20 || c === 0x7f) out += "\\x" + c.toString(16).padStart(2, "0");
    else if (c >= 0xd800 && c <= 0xdfff) out += "\\u" + c.toString(16).padStart(4, "0");
    else if (!isPrintableChar(ch)) {
      if (c <= 0xff) out += "\\x" + c.toString(16).padStart(2, "0");
      else if (c <= 0xffff) out += "\\u" + c.toString(16).padStart(4, "0");
      else out += "\\U" + c.toString(16).padStart(8, "0");
    } else out += ch;
  }
  return out + quote;
}

/** Python's repr() of JSON data (dicts as `{'a': 1}`, True/False/None). */
export function pyRepr(v: Json | undefined): string {
  if (v === null || v === undefined) return "None";
  if (v === true) return "True";
  if (v === false) return "False";
  if (typeof v === "string") return reprString(v);
  if (typeof v === "bigint") return v.toString();
  if (typeof v === "number") return floatRepr(v);
  if (Array.isArray(v)) return "[" + v.map(pyRepr).join(", ") + "]";
  return "{" + [...v.entries()].map(([k, x]) => reprString(k) + ": " + pyRepr(x)).join(", ") + "}";
}

/** Python's str() of JSON data. */
export function pyStr(v: Json | undefined): string {
  if (typeof v === "string") return v;
  return pyRepr(v);
}

/** Python's truthiness of JSON data (a missing key, `undefined`, is false). */
export function truthy(v: Json | undefined): boolean {
  if (v === undefined || v === null || v === false) return false;
  if (v === true) return true;
  if (typeof v === "string") return v.length > 0;
  if (typeof v === "bigint") return v !== 0n;
  if (typeof v === "number") return v !== 0;
  if (Array.isArray(v)) return v.length > 0;
  if (isObject(v)) return v.size > 0;
  return true;
}

/** Code points of a string (Python's len()). */
export function pyLen(s: string): number {
  let n = s.length; // UTF-16 units, less one for each surrogate pair (a lone surrogate counts one, as in Python)
  for (let i = 0; i < s.length - 1; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff) {
      const d = s.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) {
        n--;
        i++;
      }
    }
  }
  return n;
}

// Python's str.isspace() characters (strip() with no argument removes these).
const SPACES = new Set([
  0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x1c, 0x1d, 0x1e, 0x1f, 0x20, 0x85, 0xa0, 0x1680, 0x2000, 0x2001, 0x2002, 0x2003, 0x2004,
  0x2005, 0x2006, 0x2007, 0x2008, 0x2009, 0x200a, 0x2028, 0x2029, 0x202f, 0x205f, 0x3000,
]);

export function isSpace(code: number): boolean {
  return SPACES.has(code);
}

export function rstrip(s: string): string {
  let end = s.length;
  while (end > 0 && SPACES.has(s.charCodeAt(end - 1))) end--;
  return s.slice(0, end);
}

export function lstrip(s: string): string {
  let start = 0;
  while (start < s.length && SPACES.has(s.charCodeAt(start))) start++;
  return s.slice(start);
}

export function strip(s: string): string {
  return lstrip(rstrip(s));
}

// ---------------------------------------------------------------- exact decimals of a double

/** The exact value of a finite double as num / 2^shift (shift >= 0). */
function exact(x: number): { num: bigint; shift: bigint } {
  const buf = new DataView(new ArrayBuffer(8));
  buf.setFloat64(0, x);
  const hi = buf.getUint32(0);
  const lo = buf.getUint32(4);
  const sign = hi >>> 31 ? -1n : 1n;
  const expBits = (hi >>> 20) & 0x7ff;
  let mant = (BigInt(hi & 0xfffff) << 32n) | BigInt(lo);
  let e: number;
  if (expBits === 0) e = -1074;
  else {
    mant |= 1n << 52n;
    e = expBits - 1075;
  }
  if (e >= 0) return { num: sign * (mant << BigInt(e)), shift: 0n };
  return { num: sign * mant, shift: BigInt(-e) };
}

/** round(num / den) with ties to even (den > 0). */
function divHalfEven(num: bigint, den: bigint): bigint {
  const neg = num < 0n;
  const a = neg ? -num : num;
  let q = a / den;
  const r = a - q * den;
  if (r * 2n > den || (r * 2n === den && q % 2n === 1n)) q += 1n;
  return neg ? -q : q;
}

/** The digits of |x| * 10^prec rounded half-even on the exact binary value (Python's %.Nf). */
function scaledInt(x: number, prec: number): bigint {
  const { num, shift } = exact(x);
  const n = prec >= 0 ? num * 10n ** BigInt(prec) : num;
  const d = (1n << shift) * (prec < 0 ? 10n ** BigInt(-prec) : 1n);
  return divHalfEven(n, d);
}

/** Python's '%.{prec}f' % x for a finite float, without sign handling of -0 (done by the caller). */
export function fixed(x: number, prec: number): string {
  const q = scaledInt(x, prec);
  const neg = q < 0n || (q === 0n && (x < 0 || Object.is(x, -0)));
  let digits = (q < 0n ? -q : q).toString();
  if (prec > 0) {
    digits = digits.padStart(prec + 1, "0");
    digits = digits.slice(0, digits.length - prec) + "." + digits.slice(digits.length - prec);
  }
  return (neg ? "-" : "") + digits;
}

/** Python's '%.{prec}e' % x for a finite float. */
export function expo(x: number, prec: number, upper = false): string {
  const neg = x < 0 || Object.is(x, -0);
  const ax = Math.abs(x);
  let mant: bigint;
  let e: number;
  if (ax === 0) {
    mant = 0n;
    e = 0;
  } else {
    e = Math.floor(Math.log10(ax));
    // adjust e so that 10^prec <= mant < 10^(prec+1)
    for (;;) {
      mant = scaledInt(ax, prec - e);
      if (mant >= 10n ** BigInt(prec + 1)) e += 1;
      else if (mant < 10n ** BigInt(prec)) e -= 1;
      else break;
    }
  }
  let ds = mant.toString().padStart(prec + 1, "0");
  if (prec > 0) ds = ds[0] + "." + ds.slice(1);
  const es = (e < 0 ? "-" : "+") + String(Math.abs(e)).padStart(2, "0");
  return (neg ? "-" : "") + ds + (upper ? "E" : "e") + es;
}

/** Python's round(x, ndigits) of a float. */
export function roundFloat(x: number, ndigits: number): number {
  if (!Number.isFinite(x)) return x;
  if (ndigits > 308) return x;
  if (ndigits < -308) return x < 0 || Object.is(x, -0) ? -0 : 0;
  const q = scaledInt(x, ndigits);
  let r: number;
  if (ndigits >= 0) r = Number(q.toString() + "e-" + ndigits);
  else r = Number(q.toString() + "e" + -ndigits);
  if (r === 0 && (x < 0 || Object.is(x, -0))) return -0;
  return r;
}

/** Python's round(i, ndigits) of an int. */
export function roundInt(i: bigint, ndigits: number): bigint {
  if (ndigits >= 0) return i;
  const p = 10n ** BigInt(-ndigits);
  return divHalfEven(i, p) * p;
}

// ---------------------------------------------------------------- '%' formatting and str.format

function pad(body: string, sign: string, width: number, left: boolean, zero: boolean, fill = " "): string {
  const len = pyLen(sign + body);
  if (len >= width) return sign + body;
  if (left) return sign + body + " ".repeat(width - len);
  if (zero) return sign + "0".repeat(width - len) + body;
  return fill.repeat(width - len) + sign + body;
}

function asIntArg(v: Json): bigint {
  if (typeof v === "bigint") return v;
  if (typeof v === "boolean") return v ? 1n : 0n;
  throw new PyFail("an integer is required");
}

function asNumberArg(v: Json, forInt: boolean): bigint | number {
  if (typeof v === "bigint" || typeof v === "number") {
    if (forInt && typeof v === "number") {
      if (!Number.isFinite(v)) throw new PyFail("cannot convert float");
      return BigInt(Math.trunc(v));
    }
    return v;
  }
  if (typeof v === "boolean") return v ? 1n : 0n;
  throw new PyFail("a real number is required");
}

function floatOf(v: bigint | number): number {
  return typeof v === "bigint" ? Number(v) : v;
}

function generalFormat(x: number, prec: number, alt: boolean, upper: boolean): string {
  if (prec === 0) prec = 1;
  if (x === 0) {
    const z = alt ? fixed(x, prec - 1) : fixed(x, 0);
    return z;
  }
  const ex = expo(x, prec - 1);
  const e = Number(ex.slice(ex.search(/[eE]/) + 1));
  let out: string;
  if (e >= -4 && e < prec) out = fixed(x, prec - 1 - e);
  else out = expo(x, prec - 1, upper);
  if (!alt) {
    const [m, ePart] = out.split(/(?=[eE])/);
    let mm = m;
    if (mm.includes(".")) mm = mm.replace(/0+$/, "").replace(/\.$/, "");
    out = mm + (ePart ?? "");
  }
  return out;
}

function nonFinite(x: number, upper: boolean): string | null {
  if (Number.isNaN(x)) return upper ? "NAN" : "nan";
  if (x === Infinity) return upper ? "INF" : "inf";
  if (x === -Infinity) return upper ? "-INF" : "-inf";
  return null;
}

/** One conversion of Python's '%' operator. */
function percentOne(flags: string, width: number, prec: number | null, type: string, v: Json): string {
  const left = flags.includes("-");
  const zero = flags.includes("0") && !left;
  const plus = flags.includes("+");
  const space = flags.includes(" ");
  const alt = flags.includes("#");
  const signOf = (neg: boolean) => (neg ? "-" : plus ? "+" : space ? " " : "");
  if (type === "s" || type === "r" || type === "a") {
    let s = type === "s" ? pyStr(v) : pyRepr(v);
    if (type === "a") s = asciiOnly(s);
    if (prec !== null) s = [...s].slice(0, prec).join("");
    return pad(s, "", width, left, false);
  }
  if (type === "c") {
    let ch: string;
    if (typeof v === "string") {
      if (pyLen(v) !== 1) throw new PyFail("%c requires int or char");
      ch = v;
    } else {
      const i = asIntArg(v);
      if (i < 0n || i > 0x10ffffn) throw new PyFail("%c arg not in range");
      ch = String.fromCodePoint(Number(i));
    }
    return pad(ch, "", width, left, false);
  }
  if ("diu".includes(type)) {
    const n = asNumberArg(v, true) as bigint;
    let body = (n < 0n ? -n : n).toString();
    if (prec !== null && body.length < prec) body = body.padStart(prec, "0");
    return pad(body, signOf(n < 0n), width, left, zero);
  }
  if ("xXo".includes(type)) {
    const n = asIntArg(v);
    let body = (n < 0n ? -n : n).toString(type === "o" ? 8 : 16);
    if (type === "X") body = body.toUpperCase();
    if (prec !== null && body.length < prec) body = body.padStart(prec, "0");
    const prefix = alt ? (type === "o" ? "0o" : type === "x" ? "0x" : "0X") : "";
    return pad(prefix + body, signOf(n < 0n), width, left, zero && true) as string;
  }
  // e E f F g G
  const x = floatOf(asNumberArg(v, false));
  const upper = type === type.toUpperCase();
  const p = prec === null ? 6 : prec;
  const nf = nonFinite(x, upper);
  let body: string;
  if (nf !== null) {
    body = nf.replace("-", "");
    return pad(body, signOf(x < 0), width, left, false);
  }
  if (type === "f" || type === "F") body = fixed(Math.abs(x), p);
  else if (type === "e" || type === "E") body = expo(Math.abs(x), p, upper);
  else body = generalFormat(Math.abs(x), p, alt, upper);
  if (alt && !body.includes(".") && (type === "f" || type === "F" || type === "e" || type === "E")) {
    body = body.replace(/^(\d+)/, "$1.");
  }
  const neg = x < 0 || Object.is(x, -0);
  return pad(body, signOf(neg), width, left, zero);
}

function asciiOnly(s: string): string {
  let out = "";
  for (const ch of s) {
    const c = ch.codePointAt(0) as number;
    if (c < 0x80) out += ch;
    else if (c <= 0xff) out += "\\x" + c.toString(16).padStart(2, "0");
    else if (c <= 0xffff) out += "\\u" + c.toString(16).padStart(4, "0");
    else out += "\\U" + c.toString(16).padStart(8, "0");
  }
  return out;
}

const PERCENT = /%([#0 +-]*)(\d{0,3})(?:\.(\d{0,3}))?([diouxXeEfFgGcrsa%])/g;

/** Python's `format % values` (one value: `format % value`). */
export function percentFormat(format: string, values: Json[]): string {
  let used = 0;
  let out = "";
  let last = 0;
  PERCENT.lastIndex = 0;
  for (let m = PERCENT.exec(format); m !== null; m = PERCENT.exec(format)) {
    out += format.slice(last, m.index);
    last = PERCENT.lastIndex;
    if (m[4] === "%" && m[0] === "%%") {
      out += "%";
      continue;
    }
    if (m[4] === "%") throw new Unsupported(`printf format ${m[0]}`);
    if (used >= values.length) throw new PyFail("not enough arguments for format string");
    out += percentOne(m[1], m[2] ? Number(m[2]) : 0, m[3] !== undefined ? Number(m[3] || "0") : null, m[4], values[used++]);
  }
  out += format.slice(last);
  if (used < values.length) throw new PyFail("not all arguments converted during string formatting");
  return out;
}

const SPEC = /^(?:(.)?([<>=^]))?([ +-])?(#)?(0)?(\d{0,3})([,_])?(?:\.(\d{0,3}))?([bcdeEfFgGnosxX%])?$/su;

function groupDigits(intPart: string, sep: string): string {
  return intPart.replace(/\B(?=(\d{3})+(?!\d))/g, sep);
}

/** Python's format(value, spec) for JSON scalars, the plain specs plans allow. */
export function formatSpec(v: Json, spec: string): string {
  const m = SPEC.exec(spec);
  if (!m) throw new PyFail("Invalid format specifier");
  const [, fillRaw, alignRaw, signRaw, alt, zeroFlag, widthRaw, group, precRaw, typeRaw] = m;
  let fill = fillRaw ?? " ";
  let align: string | undefined = alignRaw;
  const width = widthRaw ? Number(widthRaw) : 0;
  const prec = precRaw !== undefined ? Number(precRaw || "0") : null;
  const sign = signRaw ?? "-";
  let type = typeRaw ?? "";
  if (zeroFlag && !alignRaw) {
    fill = fillRaw ?? "0";
    // numbers pad after the sign; a string keeps its default (left) alignment
    align = typeof v === "string" ? undefined : "=";
  }
  const place = (body: string, signText: string, defaultAlign: string): string => {
    const a = align ?? defaultAlign;
    const len = pyLen(signText + body);
    if (len >= width) return signText + body;
    const n = width - len;
    if (a === "<") return signText + body + fill.repeat(n);
    if (a === ">") return fill.repeat(n) + signText + body;
    if (a === "^") return fill.repeat(Math.floor(n / 2)) + signText + body + fill.repeat(n - Math.floor(n / 2));
    return signText + fill.repeat(n) + body; // "="
  };
  if (typeof v === "string" || v === null) {
    if (type && type !== "s") throw new PyFail(`Unknown format code '${type}' for object of type 'str'`);
    if (signRaw || alt || align === "=" || group) throw new PyFail("not allowed in string format specifier");
    let s = v === null ? "None" : v;
    if (v === null && spec) throw new PyFail("unsupported format string passed to NoneType.__format__");
    if (prec !== null) s = [...s].slice(0, prec).join("");
    return place(s, "", "<");
  }
  if (typeof v === "object") throw new PyFail("unsupported format");
  const signText = (neg: boolean) => (neg ? "-" : sign === "+" ? "+" : sign === " " ? " " : "");
  const isIntLike = typeof v === "bigint" || typeof v === "boolean";
  if (isIntLike && (type === "" || "bcdoxXn".includes(type))) {
    if (typeof v === "boolean" && type === "" && !spec) return v ? "True" : "False";
    if (prec !== null) throw new PyFail("Precision not allowed in integer format specifier");
    const n = typeof v === "bigint" ? v : v ? 1n : 0n;
    const a = n < 0n ? -n : n;
    if (type === "c") return place(String.fromCodePoint(Number(n)), "", ">");
    if (type === "n") throw new Unsupported("format type n");
    const base = type === "b" ? 2 : type === "o" ? 8 : type === "x" || type === "X" ? 16 : 10;
    let body = a.toString(base);
    if (type === "X") body = body.toUpperCase();
    if (group) body = base === 10 ? groupDigits(body, group) : body.replace(/\B(?=([0-9a-fA-F]{4})+(?!\w))/g, group);
    const prefix = alt ? (type === "b" ? "0b" : type === "o" ? "0o" : type === "x" ? "0x" : type === "X" ? "0X" : "") : "";
    if (fill === "0" && align === "=" && group) throw new Unsupported("zero padding with grouping");
    return place(body, signText(n < 0n) + prefix, ">");
  }
  if (typeof v === "bigint" || typeof v === "boolean" || typeof v === "number") {
    if (!"eEfFgG%".includes(type) && type !== "") throw new PyFail(`Unknown format code '${type}' for object of type 'float'`);
    if (type === "n") throw new Unsupported("format type n");
    const x = typeof v === "number" ? v : Number(typeof v === "boolean" ? (v ? 1 : 0) : v);
    const neg = x < 0 || Object.is(x, -0);
    const ax = Math.abs(x);
    const upper = type !== "" && type === type.toUpperCase() && type !== "%";
    const nf = nonFinite(ax, upper);
    let body: string;
    if (nf !== null) body = nf;
    else if (type === "f" || type === "F") body = fixed(ax, prec ?? 6);
    else if (type === "e" || type === "E") body = expo(ax, prec ?? 6, upper);
    else if (type === "%") body = fixed(ax * 100, prec ?? 6) + "%";
    else if (type === "g" || type === "G") body = generalFormat(ax, prec ?? 6, !!alt, upper);
    else {
      // no type: repr-like (str(float)) when no precision, else like g with at least one digit after the point
      if (prec === null) body = floatRepr(ax);
      else if (nf !== null) body = nf;
      else {
        // CPython: 'g' with "add .0": exponent form once the digits before the point reach the precision
        const p = prec === 0 ? 1 : prec;
        const ex = expo(ax, p - 1);
        const e = Number(ex.slice(ex.indexOf("e") + 1));
        const decpt = ax === 0 ? 1 : e + 1;
        if (decpt <= -4 || decpt > p - 1) {
          const [m, ePart] = ex.split("e");
          body = (alt ? m : m.includes(".") ? m.replace(/0+$/, "").replace(/\.$/, "") : m) + "e" + ePart;
        } else {
          body = fixed(ax, p - 1 - e);
          if (!alt && body.includes(".")) body = body.replace(/0+$/, "").replace(/\.$/, "");
          if (!body.includes(".")) body += ".0";
        }
      }
    }
    if (alt && !body.includes(".") && nf === null && type !== "g" && type !== "G") throw new Unsupported("alternate float form");
    if (group) {
      const [ip, ...rest] = body.split(".");
      body = [groupDigits(ip, group), ...rest].join(".");
    }
    if (typeof v !== "number" && type === "") throw new Unsupported("format of an int");
    return place(body, signText(neg && nf !== "nan"), ">");
  }
  throw new PyFail("unsupported format");
}

/** Python's `format.format(*values)` with `{}`/`{N}` fields and plain specs. */
export function strFormat(format: string, values: Json[]): string {
  let out = "";
  let auto = 0;
  let i = 0;
  while (i < format.length) {
    const ch = format[i];
    if (ch === "{") {
      if (format[i + 1] === "{") {
        out += "{";
        i += 2;
        continue;
      }
      const end = format.indexOf("}", i);
      if (end < 0) throw new PyFail("Single '{' encountered in format string");
      const field = format.slice(i + 1, end);
      const colon = field.indexOf(":");
      const name = colon < 0 ? field : field.slice(0, colon);
      const spec = colon < 0 ? "" : field.slice(colon + 1);
      if (spec.includes("{")) throw new Unsupported("nested format fields");
      const index = name === "" ? auto++ : Number(name);
      if (!/^\d*$/.test(name) || index >= values.length) throw new PyFail("Replacement index out of range");
      const v = values[index];
      out += spec === "" ? pyStr(v) : formatSpec(v, spec);
      i = end + 1;
      continue;
    }
    if (ch === "}") {
      if (format[i + 1] === "}") {
        out += "}";
        i += 2;
        continue;
      }
      throw new PyFail("Single '}' encountered in format string");
    }
    out += ch;
    i++;
  }
  return out;
}
