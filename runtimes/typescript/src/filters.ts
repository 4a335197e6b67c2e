// The filters a plan applies itself (docs/bundle-format.md 8.2.1; Python runtime/filters/plain.py): each gives
// what Jinja's gives for the JSON values a plan passes it. A filter that fails throws; the plan then defers.

import { type Json, dumps } from "./pyjson.js";
import { PyFail, pyStr, strip, roundFloat, roundInt } from "./pyfmt.js";
import { toYaml } from "./yamlemit.js";

export function toJson(value: Json): string {
  try {
    return dumps(value, { ensureAscii: false, allowNan: false });
  } catch (exc) {
    throw new PyFail(`to_json: ${(exc as Error).message}`);
  }
}

const XML: Record<string, string> = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&apos;" };

export function xmlEscape(value: Json): string {
  return pyStr(value).replace(/[&<>"']/g, (c) => XML[c]);
}

export function xmlText(value: Json): string {
  return pyStr(value).replace(/[&<]/g, (c) => XML[c]);
}

export function upper(value: Json): string {
  return pyStr(value).toUpperCase();
}

export function lower(value: Json): string {
  return pyStr(value).toLowerCase();
}

export function trim(value: Json): string {
  return strip(pyStr(value));
}

function firstUpper(part: string): string {
  const chars = [...part];
  return chars.length ? chars[0].toUpperCase() + chars.slice(1).join("").toLowerCase() : "";
}

// the characters whose title case differs from their upper case (Unicode's digraphs)
const TITLE: Record<string, string> = { "Ǆ": "ǅ", "ǅ": "ǅ", "ǆ": "ǅ", "Ǉ": "ǈ", "ǈ": "ǈ", "ǉ": "ǈ", "Ǌ": "ǋ", "ǋ": "ǋ", "ǌ": "ǋ", "Ǳ": "ǲ", "ǲ": "ǲ", "ǳ": "ǲ" };

/** Python's str.capitalize: the first character in title case, the rest lower case. */
export function capitalize(value: Json): string {
  const chars = [...pyStr(value)];
  if (!chars.length) return "";
  let first = TITLE[chars[0]] ?? chars[0].toUpperCase();
  if ([...first].length > 1) first = [...first][0] + [...first].slice(1).join("").toLowerCase(); // ß -> Ss
  return first + chars.slice(1).join("").toLowerCase();
}

const WORD_STARTS = /([-\s({[<]+)/u;

/** Jinja's `title`: a word starts after a run of spaces, dashes or opening brackets. */
export function title(value: Json): string {
  return pyStr(value)
    .split(WORD_STARTS)
    .filter((part) => part)
    .map(firstUpper)
    .join("");
}

/** Jinja's `round`: Python's round for "common", else ceil/floor at `precision` places (a float). */
export function round(value: Json, precision = 0, method = "common"): Json {
  if (method === "common") {
    if (typeof value === "bigint") return roundInt(value, precision);
    if (typeof value === "number") return roundFloat(value, precision);
    throw new PyFail("round: not a number");
  }
  if (method !== "ceil" && method !== "floor") throw new PyFail("method must be common, ceil or floor");
  const x = typeof value === "bigint" ? Number(value) : (value as number);
  if (precision >= 0) {
    const scale = 10 ** precision;
    const r = (method === "ceil" ? Math.ceil : Math.floor)(x * scale);
    if (!Number.isFinite(r)) throw new PyFail("cannot convert float infinity to integer");
    return r / scale + 0; // + 0: Python's math.ceil gives the integer 0, never -0
  }
  const scale = 10 ** precision; // Python: 10 ** -n is a float
  const r = (method === "ceil" ? Math.ceil : Math.floor)(x * scale);
  if (!Number.isFinite(r)) throw new PyFail("cannot convert float infinity to integer");
  return r / scale + 0;
}

export { toYaml };

/** Filter name -> the function a plan applies (arguments are the plan's constants). */
export const PLAIN_FILTERS: Record<string, (value: Json, ...args: Json[]) => Json> = {
  to_json: (v) => toJson(v),
  to_yaml: (v) => {
    try {
      return toYaml(v);
    } catch (exc) {
      throw new PyFail((exc as Error).message);
    }
  },
  xml_escape: (v) => xmlEscape(v),
  xml_text: (v) => xmlText(v),
  upper: (v) => upper(v),
  lower: (v) => lower(v),
  trim: (v) => trim(v),
  capitalize: (v) => capitalize(v),
  title: (v) => title(v),
  string: (v) => pyStr(v),
  round: (v, p, m) => round(v, p === undefined ? 0 : Number(p as bigint), m === undefined ? "common" : (m as string)),
};
