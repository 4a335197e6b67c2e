// The `to_yaml` filter's emitter (Python runtime/filters/yamlemit.py, line for line): deterministic block-style
// YAML of JSON data, no trailing newline. Anything that is not JSON data (NaN, infinities) throws.

import { type Json, isObject, floatRepr } from "./pyjson.js";
import { isPrintableChar, pyLen, typeName } from "./pyfmt.js";

const MAX_DEPTH = 200;
const MAX_IMPLICIT_KEY = 1000;

const RESOLVES = new RegExp(
  "^(?:" +
    [
      "y|Y|yes|Yes|YES|n|N|no|No|NO|true|True|TRUE|false|False|FALSE|on|On|ON|off|Off|OFF",
      "~|null|Null|NULL",
      "[-+]?0b[0-1_]+",
      "[-+]?0o?[0-7_]+",
      "[-+]?0x[0-9a-fA-F_]+",
      "[-+]?(?:0|[1-9][0-9_]*)",
      "[-+]?[1-9][0-9_]*(?::[0-5]?[0-9])+",
      "[-+]?(?:[0-9][0-9_]*)?\\.[0-9_]*(?:[eE][-+]?[0-9]+)?",
      "[-+]?[0-9][0-9_]*(?:[eE][-+]?[0-9]+)",
      "[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+\\.[0-9_]*",
      "[-+]?\\.(?:inf|Inf|INF)",
      "\\.(?:nan|NaN|NAN)",
      "[0-9]{4}-[0-9]{1,2}-[0-9]{1,2}(?:(?:[Tt]|[ \\t]+).*)?",
      "<<|=",
    ].join("|") +
    ")$",
);

const INDICATORS = new Set("-?:,[]{}#&*!|>'\"%@`");

const ESCAPES: Record<string, string> = {
  "\0": "\\0",
  "\x07": "\\a",
  "\b": "\\b",
  "\t": "\\t",
  "\n": "\\n",
  "\v": "\\v",
  "\f": "\\f",
  "\r": "\\r",
  "\x1b": "\\e",
  '"': '\\"',
  "\\": "\\\\",
  "\x85": "\\N",
  "\xa0": "\\_",
  "\u2028": "\\L",
  "\u2029": "\\P",
};

export class YamlError extends Error {}

/** Block-style YAML of JSON data (no trailing newline); `indent` 2 to 8. */
export function toYaml(value: Json, indent = 2): string {
  if (!Number.isInteger(indent) || indent < 2 || indent > 8) throw new YamlError(`to_yaml indent must be an integer from 2 to 8, not ${indent}`);
  const lines: string[] = [];
  const emitter = new Emitter(indent, lines);
  emitter.node(value, "", 0, 0);
  const tail = emitter.openTail;
  if (tail !== null && tail[1] === lines.length) {
    const [start, , head, text] = tail;
    lines.splice(start, lines.length - start, `${head}${quoted(text)}`);
  }
  return lines.join("\n");
}

class Emitter {
  openTail: [number, number, string, string] | null = null;
  constructor(
    readonly indent: number,
    readonly lines: string[],
  ) {}

  node(value: Json, head: string, level: number, depth: number): void {
    if (depth > MAX_DEPTH) throw new YamlError(`to_yaml: data nested deeper than ${MAX_DEPTH} levels`);
    const isValue = head.endsWith(":");
    const sep = isValue ? " " : "";
    if (isObject(value) || Array.isArray(value)) {
      const empty = isObject(value) ? value.size === 0 : value.length === 0;
      if (empty) {
        this.lines.push(isObject(value) ? `${head}${sep}{}` : `${head}${sep}[]`);
        return;
      }
      if (isValue) {
        this.lines.push(head);
        head = "";
      }
      if (isObject(value)) this.mapping(value, head, level, depth);
      else this.sequence(value, head, level, depth);
    } else if (typeof value === "string" && blockOk(value)) {
      this.block(value, head + sep, Math.max(level, this.indent));
    } else {
      this.lines.push(`${head}${sep}${scalar(value)}`);
    }
  }

  mapping(value: Map<string, Json>, head: string, level: number, depth: number): void {
    const pad = " ".repeat(level);
    let i = 0;
    for (const [key, item] of value) {
      let prefix = i === 0 && head ? head : pad;
      let text = yamlString(key);
      if (pyLen(text) > MAX_IMPLICIT_KEY) {
        this.lines.push(`${prefix}? ${quoted(key)}`);
        prefix = pad;
        text = "";
      }
      this.node(item, `${prefix}${text}:`, level + this.indent, depth + 1);
      i++;
    }
  }

  sequence(value: Json[], head: string, level: number, depth: number): void {
    const pad = " ".repeat(level);
    const dash = "-" + " ".repeat(this.indent - 1);
    value.forEach((item, i) => {
      const prefix = i === 0 && head ? head : pad;
      this.node(item, prefix + dash, level + this.indent, depth + 1);
    });
  }

  block(text: string, head: string, content: number): void {
    const hint = text[0] === " " || text[0] === "\n" ? String(this.indent) : "";
    let chomp: string;
    if (!text.endsWith("\n")) chomp = "-";
    else if (text.length === 1 || text[text.length - 2] === "\n") chomp = "+";
    else chomp = "";
    const start = this.lines.length;
    this.lines.push(`${head}|${hint}${chomp}`);
    const body = text.endsWith("\n") ? text.slice(0, -1) : text;
    const pad = " ".repeat(content);
    for (const line of body.split("\n")) this.lines.push(line ? pad + line : "");
    if (chomp !== "-") this.openTail = [start, this.lines.length, head, text];
  }
}

function blockOk(text: string): boolean {
  if (!text.includes("\n")) return false;
  for (const ch of text) if (!(ch === "\n" || ch === "\t" || isPrintableChar(ch))) return false;
  return !text.includes("\ufeff");
}

function scalar(value: Json): string {
  if (value === null) return "null";
  if (value === true) return "true";
  if (value === false) return "false";
  if (typeof value === "bigint") return value.toString();
  if (typeof value === "number") {
    if (!Number.isFinite(value)) throw new YamlError(`to_yaml: ${floatRepr(value)} is not JSON data`);
    const text = floatRepr(value);
    const at = text.indexOf("e");
    let mantissa = at < 0 ? text : text.slice(0, at);
    let exponent = at < 0 ? "" : text.slice(at + 1);
    if (!mantissa.includes(".")) mantissa += ".0";
    if (at >= 0 && exponent[0] !== "+" && exponent[0] !== "-") exponent = "+" + exponent;
    return mantissa + (at >= 0 ? `e${exponent}` : "");
  }
  if (typeof value === "string") return yamlString(value);
  throw new YamlError(`to_yaml: a ${typeName(value)} value is not JSON data`);
}

function yamlString(text: string): string {
  return plainOk(text) ? text : quoted(text);
}

function plainOk(text: string): boolean {
  if (!text || INDICATORS.has(text[0]) || text[0] === " ") return false;
  const last = [...text].pop() as string;
  if (last === " " || last === ":") return false;
  if (text.startsWith("...") || text.includes(": ") || text.includes(" #") || RESOLVES.test(text)) return false;
  for (const ch of text) if (!isPrintableChar(ch) || ch === "\ufeff") return false;
  return true;
}

function quoted(text: string): string {
  let out = '"';
  for (const ch of text) {
    const esc = ESCAPES[ch];
    if (esc !== undefined) out += esc;
    else if (isPrintableChar(ch) && ch !== "\ufeff") out += ch;
    else {
      const code = ch.codePointAt(0) as number;
      if (code <= 0xff) out += "\\x" + code.toString(16).toUpperCase().padStart(2, "0");
      else if (code <= 0xffff) out += "\\u" + code.toString(16).toUpperCase().padStart(4, "0");
      else out += "\\U" + code.toString(16).toUpperCase().padStart(8, "0");
    }
  }
  return out + '"';
}
