// The compiled bundle and the build folder (docs/bundle-format.md sections 1-3; Python runtime/bundle.py and the
// loading part of runtime/engine.py). Every refusal is PM801 with the Python runtime's message.

import { createHash } from "node:crypto";
import { existsSync, lstatSync, statSync } from "node:fs";
import { type Json, type JsonObject, isObject, parse, JsonSyntaxError, PyDecodeError, decodeJsonBytes } from "./pyjson.js";
import { PromptmillError, buildError } from "./errors.js";
import { checkInside, pyPath, readBytes } from "./userfiles.js";
import { pyRepr, typeName } from "./pyfmt.js";
import { problems as conditionProblems } from "./conditions.js";
import { planOk } from "./plans.js";

export const FORMAT = "promptmill-bundle";
export const MANIFEST_FORMAT = "promptmill-build";
export const FORMAT_VERSION = 1;
export const PARENTS_FORMAT_VERSION = 2;
export const SECTION_KINDS = ["static", "template", "each", "rules", "history", "tools"];
export const ITEM_READS = ["item", "item-without-score", "more"];
export const TRIM_POLICIES = ["never", "drop", "items", "truncate"];
export const MESSAGE_ROLES = ["system", "user", "assistant"];
export const STABILITIES = ["stable", "semi", "dynamic"];
const PROOF_KINDS = ["string", "number", "integer", "boolean", "null", "object", "array", "any"];
const RECOMPILE = "recompile with this promptmill: promptmill compile";

export interface Origin {
  file: string;
  line: number;
  col: number;
  role: string;
}

export function originText(o: Origin): string {
  const where = `${o.file}:${o.line}:${o.col}`;
  return o.role ? `${o.role} (${where})` : where;
}

export interface Budget {
  maxTokens: number;
  reserve: number;
  margin: number | null;
  contextWindow: number | null;
  origins: Map<string, string>;
  ratio: number | null;
}

export interface RuleLine {
  text: string;
  group: number;
  isTitle: boolean;
  when: JsonObject | null;
  ruleId: string;
}

export interface Section {
  id: string;
  kind: string;
  priority: number;
  trim: string;
  message: string;
  stability: string;
  title: string | null;
  titleTokens: number;
  text: string | null;
  tokens: number;
  template: string | null;
  plan: Json[] | null;
  path: string[];
  itemName: string;
  itemSeparator: string;
  orderBy: string[];
  orderDesc: boolean;
  keep: string;
  step: number;
  declared: JsonObject[];
  rules: RuleLine[];
  truncateKeep: string;
  truncateMarker: string;
  when: JsonObject | null;
  fragment: string | null;
  context: JsonObject | null;
  origin: Origin | null;
  itemReads: string | null;
}

export interface Contract {
  id: string;
  style: string;
  schema: JsonObject;
  instructions: string;
  returnTool: JsonObject | null;
  checks: JsonObject[];
  native: JsonObject | null;
  origin: Origin | null;
}

export interface SourceRef {
  file: string;
  sha256: string;
}

export interface ParentChoice {
  parent: string;
  when: JsonObject;
  bundle: RoleBundle;
}

export interface RoleBundle {
  id: string;
  tokenizer: string;
  budget: Budget;
  separator: string;
  sections: Section[];
  inputs: JsonObject;
  description: string;
  category: string;
  model: string | null;
  provider: string;
  toolMode: string;
  cache: boolean;
  output: Contract | null;
  lazyPaths: string[][];
  itemProofs: JsonObject[];
  events: JsonObject[];
  sources: SourceRef[];
  sourceHash: string;
  format: string;
  formatVersion: number;
  parents: ParentChoice[];
  defaultParent: string | null;
}

export interface ManifestEntry {
  file: string;
  sha256: string;
  sourceHash: string;
  sources: string[];
}

export interface Manifest {
  roles: Map<string, ManifestEntry>;
  promptmillVersion: string;
  inputs: Map<string, Json>;
  tokenizers: Map<string, Json>;
  format: string;
  formatVersion: number;
  abstract: string[];
}

// ---------------------------------------------------------------- closed objects, typed fields

type Kind = "str" | "int" | "float" | "bool" | "dict" | "list" | "none" | "any";
interface FieldSpec {
  kinds: Kind[];
  required: boolean;
}

function is(value: Json, kind: Kind): boolean {
  switch (kind) {
    case "str":
      return typeof value === "string";
    case "int":
      return typeof value === "bigint";
    case "float":
      return typeof value === "bigint" || typeof value === "number";
    case "bool":
      return typeof value === "boolean";
    case "dict":
      return isObject(value);
    case "list":
      return Array.isArray(value);
    case "none":
      return value === null;
    default:
      return true;
  }
}

const F = (kinds: Kind[] | Kind, required = false): FieldSpec => ({ kinds: Array.isArray(kinds) ? kinds : [kinds], required });

const SPECS: Record<string, [string, Record<string, FieldSpec>]> = {
  Origin: ["Origin", { file: F("str", true), line: F("int", true), col: F("int", true), role: F("str") }],
  Budget: [
    "Budget",
    {
      max_tokens: F("int", true),
      reserve: F("int", true),
      margin: F(["float", "none"]),
      context_window: F(["int", "none"]),
      origins: F("dict"),
      ratio: F(["float", "none"]),
    },
  ],
  RuleLine: ["RuleLine", { text: F("str", true), group: F("int", true), is_title: F("bool"), when: F(["dict", "none"]), rule_id: F("str") }],
  Section: [
    "Section",
    {
      id: F("str", true),
      kind: F("str", true),
      priority: F("int", true),
      trim: F("str", true),
      message: F("str", true),
      stability: F("str", true),
      title: F(["str", "none"]),
      title_tokens: F("int"),
      text: F(["str", "none"]),
      tokens: F("int"),
      template: F(["str", "none"]),
      plan: F(["list", "none"]),
      path: F("list"),
      item_name: F("str"),
      item_separator: F("str"),
      order_by: F("list"),
      order_desc: F("bool"),
      keep: F("str"),
      step: F("int"),
      declared: F("list"),
      rules: F("list"),
      truncate_keep: F("str"),
      truncate_marker: F("str"),
      when: F(["dict", "none"]),
      fragment: F(["str", "none"]),
      context: F(["dict", "none"]),
      origin: F("any"),
      item_reads: F(["str", "none"]),
    },
  ],
  Contract: [
    "Contract",
    {
      id: F("str", true),
      style: F("str", true),
      schema: F("dict", true),
      instructions: F("str", true),
      return_tool: F(["dict", "none"]),
      checks: F("list"),
      native: F(["dict", "none"]),
      origin: F("any"),
    },
  ],
  SourceRef: ["SourceRef", { file: F("str", true), sha256: F("str", true) }],
  RoleBundle: [
    "RoleBundle",
    {
      id: F("str", true),
      tokenizer: F("str", true),
      budget: F("any", true),
      separator: F("str", true),
      sections: F("list", true),
      inputs: F("dict", true),
      description: F("str"),
      category: F("str"),
      model: F(["str", "none"]),
      provider: F("str"),
      tool_mode: F("str"),
      cache: F("bool"),
      output: F("any"),
      lazy_paths: F("list"),
      item_proofs: F("list"),
      events: F("list"),
      sources: F("list"),
      source_hash: F("str"),
      format: F("str"),
      format_version: F("int"),
      parents: F("list"),
      default_parent: F(["str", "none"]),
    },
  ],
  ManifestEntry: ["ManifestEntry", { file: F("str", true), sha256: F("str", true), source_hash: F("str", true), sources: F("list") }],
  Manifest: [
    "Manifest",
    {
      roles: F("dict", true),
      promptmill_version: F("str", true),
      inputs: F("dict"),
      tokenizers: F("dict"),
      format: F("str"),
      format_version: F("int"),
      abstract: F("list"),
    },
  ],
};

/** Python's `{value!r:.60}`: the repr cut to 60 characters. */
function repr60(v: Json): string {
  return [...pyRepr(v)].slice(0, 60).join("");
}

function pyList(names: string[]): string {
  return "[" + names.map((n) => pyRepr(n)).join(", ") + "]";
}

function missingText(cls: string, names: string[]): string {
  const quoted = names.map((n) => `'${n}'`);
  let list: string;
  if (quoted.length === 1) list = quoted[0];
  else if (quoted.length === 2) list = `${quoted[0]} and ${quoted[1]}`;
  else list = quoted.slice(0, -1).join(", ") + ", and " + quoted[quoted.length - 1];
  const s = names.length === 1 ? "argument" : "arguments";
  return `${cls}.__init__() missing ${names.length} required positional ${s}: ${list}`;
}

/** Python `_build`: a closed object of the dataclass `cls`, each field of its type. `overrides` are fields
 * already converted by the caller (checked as their Python values would be, i.e. not at all). */
function build(cls: string, data: Json, where: string, converted: Set<string> = new Set()): JsonObject {
  if (!isObject(data)) throw buildError(`${where}: expected an object`);
  const [name, fields] = SPECS[cls];
  const unknown = [...data.keys()].filter((k) => !(k in fields)).sort(codepointCompare);
  if (unknown.length) throw buildError(`${where}: unknown fields ${pyList(unknown)} (written by another promptmill?)`, RECOMPILE);
  for (const [key, value] of data) {
    if (converted.has(key)) continue;
    if (!fields[key].kinds.some((k) => is(value, k))) {
      throw buildError(`${where}.${key}: ${typeName(value)} is not a valid value (${repr60(value)})`, RECOMPILE);
    }
  }
  const missing = Object.entries(fields)
    .filter(([k, f]) => f.required && !data.has(k))
    .map(([k]) => k);
  if (missing.length) throw buildError(`${where}: ${missingText(name, missing)}`, RECOMPILE);
  return data;
}

function codepointCompare(a: string, b: string): number {
  const x = [...a].map((c) => c.codePointAt(0) as number);
  const y = [...b].map((c) => c.codePointAt(0) as number);
  for (let i = 0; i < Math.min(x.length, y.length); i++) if (x[i] !== y[i]) return x[i] - y[i];
  return x.length - y.length;
}

function list(data: JsonObject, key: string, where: string, item?: "str" | "dict" | "list"): Json[] {
  const value = data.has(key) ? (data.get(key) as Json) : [];
  const names = { str: "str", dict: "dict", list: "list" };
  if (!Array.isArray(value) || (item !== undefined && !value.every((v) => is(v, item)))) {
    throw buildError(`${where}.${key}: expected a list` + (item ? ` of ${names[item]}` : ""), RECOMPILE);
  }
  return value;
}

const str = (v: Json | undefined, d = ""): string => (typeof v === "string" ? v : d);
const strOrNull = (v: Json | undefined): string | null => (typeof v === "string" ? v : null);
const num = (v: Json | undefined, d = 0): number => (typeof v === "bigint" ? Number(v) : typeof v === "number" ? v : d);
const objOrNull = (v: Json | undefined): JsonObject | null => (isObject(v) ? v : null);

function toOrigin(data: Json, where: string): Origin {
  const d = build("Origin", data, where);
  return { file: str(d.get("file")), line: num(d.get("line")), col: num(d.get("col")), role: str(d.get("role")) };
}

/** A malformed-bundle KeyError as Python words it. */
function keyError(where: string, key: string): never {
  throw buildError(`${where}: malformed bundle (KeyError(${pyRepr(key)}))`, "recompile: promptmill compile");
}

function checkSection(s: Section, where: string): void {
  if (!SECTION_KINDS.includes(s.kind) || !TRIM_POLICIES.includes(s.trim)) {
    throw buildError(`${where}: unknown kind ${pyRepr(s.kind)} or trim ${pyRepr(s.trim)}`);
  }
  if (!MESSAGE_ROLES.includes(s.message) || !STABILITIES.includes(s.stability)) {
    throw buildError(`${where}: unknown message ${pyRepr(s.message)} or stability ${pyRepr(s.stability)}`);
  }
  if (s.kind === "static" && s.text === null) throw buildError(`${where}: static section without text`);
  if (s.kind === "tools" && !s.path.length && !s.declared.length) {
    throw buildError(`${where}: tools section without a state path or declared tools`);
  }
  if (["template", "each", "tools", "history"].includes(s.kind) && s.template === null) {
    throw buildError(`${where}: ${s.kind} section without template`);
  }
  if (s.itemReads !== null && (!ITEM_READS.includes(s.itemReads) || !["each", "tools", "history"].includes(s.kind))) {
    throw buildError(`${where}: item_reads ${pyRepr(s.itemReads)} is not one of ${ITEM_READS.join(", ")} on a list section`);
  }
  const conds: [string, JsonObject | null][] = [["when", s.when], ...s.rules.map((r, i): [string, JsonObject | null] => [`rules[${i}].when`, r.when])];
  for (const [what, cond] of conds) {
    if (cond !== null && conditionProblems(cond).length) throw buildError(`${where}.${what}: not a well-formed condition`, RECOMPILE);
  }
  if (s.plan !== null && !planOk(s.plan)) throw buildError(`${where}.plan: not a well-formed template plan`, RECOMPILE);
}

function toSection(raw: JsonObject, i: number, where: string): Section {
  const at = `${where}.sections[${i}]`;
  const s = new Map(raw);
  const path = list(s, "path", at, "str") as string[];
  const orderBy = list(s, "order_by", at, "str") as string[];
  const declared = list(s, "declared", at, "dict") as JsonObject[];
  const rulesRaw = list(s, "rules", at);
  const rules = rulesRaw.map((r) => {
    const d = build("RuleLine", r, `${at}.rules`);
    return {
      text: str(d.get("text")),
      group: num(d.get("group")),
      isTitle: d.get("is_title") === true,
      when: objOrNull(d.get("when")),
      ruleId: str(d.get("rule_id")),
    };
  });
  let origin: Origin | null = null;
  if (s.get("origin") !== undefined && s.get("origin") !== null) origin = toOrigin(s.get("origin") as Json, `${at}.origin`);
  const converted = new Set(["path", "order_by", "declared", "rules", "origin"]);
  build("Section", s, at, converted);
  const section: Section = {
    id: str(s.get("id")),
    kind: str(s.get("kind")),
    priority: num(s.get("priority")),
    trim: str(s.get("trim")),
    message: str(s.get("message")),
    stability: str(s.get("stability")),
    title: strOrNull(s.get("title")),
    titleTokens: num(s.get("title_tokens")),
    text: strOrNull(s.get("text")),
    tokens: num(s.get("tokens")),
    template: strOrNull(s.get("template")),
    plan: Array.isArray(s.get("plan")) ? (s.get("plan") as Json[]) : null,
    path,
    itemName: str(s.get("item_name"), "item"),
    itemSeparator: str(s.get("item_separator"), "\n"),
    orderBy,
    orderDesc: s.has("order_desc") ? s.get("order_desc") === true : true,
    keep: str(s.get("keep"), "first"),
    step: num(s.get("step"), 1),
    declared,
    rules,
    truncateKeep: str(s.get("truncate_keep"), "head"),
    truncateMarker: str(s.get("truncate_marker"), "[…truncated]"),
    when: objOrNull(s.get("when")),
    fragment: strOrNull(s.get("fragment")),
    context: objOrNull(s.get("context")),
    origin,
    itemReads: strOrNull(s.get("item_reads")),
  };
  checkSection(section, at);
  return section;
}

function proofOk(proof: JsonObject): boolean {
  const keys = [...proof.keys()].sort();
  if (keys.join(",") !== "fields,others,path,required") return false;
  const path = proof.get("path");
  const fields = proof.get("fields");
  const required = proof.get("required");
  if (!Array.isArray(path) || !path.length || !path.every((p) => typeof p === "string")) return false;
  if (!Array.isArray(required) || !required.every((r) => typeof r === "string") || typeof proof.get("others") !== "boolean") return false;
  if (!isObject(fields)) return false;
  for (const kind of fields.values()) {
    if (isObject(kind) && kind.has("enum")) {
      const values = kind.get("enum");
      if (kind.size !== 1 || !Array.isArray(values) || !values.length || !values.every((v) => typeof v === "string")) return false;
    } else if (isObject(kind)) {
      if (!kind.size || ![...kind.keys()].every((k) => k === "minLength" || k === "maxLength")) return false;
      if (![...kind.values()].every((n) => typeof n === "bigint" && n >= 0n)) return false;
    } else if (typeof kind !== "string" || !PROOF_KINDS.includes(kind)) return false;
  }
  return true;
}

function versionOk(v: Json | undefined): boolean {
  // Python: version in (1, 2) and not a bool: 1.0 and 2.0 pass too (quirk 8)
  return (typeof v === "bigint" && (v === 1n || v === 2n)) || (typeof v === "number" && (v === 1 || v === 2));
}

/** Rebuild a RoleBundle from parsed JSON, checking its shape (Python `role_from_dict`). */
export function roleFromDict(data: Json, where = "bundle"): RoleBundle {
  if (!isObject(data)) throw buildError(`${where}: expected an object`);
  const version = data.get("format_version");
  if (data.get("format") !== FORMAT || !versionOk(version)) {
    throw buildError(
      `${where}: bundle format ${pyRepr(data.get("format"))} version ${pyRepr(version)} ` +
        `is not '${FORMAT}' version ${FORMAT_VERSION} or ${PARENTS_FORMAT_VERSION}`,
      RECOMPILE,
    );
  }
  const v = Number(version);
  const parentsRaw = data.get("parents");
  const hasParents = parentsRaw !== undefined && truthyJson(parentsRaw);
  if ((v === PARENTS_FORMAT_VERSION) !== hasParents || (data.has("default_parent") && v !== PARENTS_FORMAT_VERSION)) {
    throw buildError(`${where}: format version ${pyRepr(version)} goes with \`parents\` only in version ${PARENTS_FORMAT_VERSION}`, RECOMPILE);
  }
  const d = new Map(data);
  d.delete("format_version");
  d.delete("parents");
  const bundle = roleFromDictInner(d, where, v);
  if (!hasParents) return bundle;
  if (!Array.isArray(parentsRaw)) throw buildError(`${where}.parents: expected a list`, RECOMPILE);
  const choices: ParentChoice[] = [];
  parentsRaw.forEach((raw, i) => {
    const at = `${where}.parents[${i}]`;
    if (!isObject(raw) || [...raw.keys()].sort().join(",") !== "bundle,parent,when" || typeof raw.get("parent") !== "string") {
      throw buildError(`${at}: expected an object with parent, when and bundle`, RECOMPILE);
    }
    const when = raw.get("when");
    if (!isObject(when) || conditionProblems(when).length) throw buildError(`${at}.when: not a well-formed condition`, RECOMPILE);
    const inner = raw.get("bundle");
    if (!isObject(inner) || inner.has("parents") || !(inner.get("format_version") === 1n || inner.get("format_version") === 1)) {
      throw buildError(`${at}.bundle: expected a version ${FORMAT_VERSION} bundle without parents`, RECOMPILE);
    }
    const candidate = roleFromDict(inner, `${at}.bundle`);
    if (candidate.id !== bundle.id) throw buildError(`${at}.bundle: holds role '${candidate.id}', not '${bundle.id}'`, RECOMPILE);
    choices.push({ parent: raw.get("parent") as string, when, bundle: candidate });
  });
  bundle.parents = choices;
  return bundle;
}

function truthyJson(v: Json): boolean {
  if (v === null || v === false) return false;
  if (typeof v === "string") return v.length > 0;
  if (typeof v === "bigint") return v !== 0n;
  if (typeof v === "number") return v !== 0;
  if (Array.isArray(v)) return v.length > 0;
  if (isObject(v)) return v.size > 0;
  return true;
}

function roleFromDictInner(d: JsonObject, where: string, version: number): RoleBundle {
  if (!d.has("budget")) keyError(where, "budget");
  const b = build("Budget", d.get("budget") as Json, `${where}.budget`);
  const origins = new Map<string, string>();
  for (const [k, x] of (b.get("origins") as JsonObject | undefined) ?? new Map()) origins.set(k, typeof x === "string" ? x : String(x));
  const budget: Budget = {
    maxTokens: num(b.get("max_tokens")),
    reserve: num(b.get("reserve")),
    margin: b.get("margin") === undefined || b.get("margin") === null ? null : num(b.get("margin")),
    contextWindow: b.get("context_window") === undefined || b.get("context_window") === null ? null : num(b.get("context_window")),
    origins,
    ratio: b.get("ratio") === undefined || b.get("ratio") === null ? null : num(b.get("ratio")),
  };
  const sections = (list(d, "sections", where, "dict") as JsonObject[]).map((raw, i) => toSection(raw, i, where));
  let output: Contract | null = null;
  const outRaw = d.get("output");
  if (outRaw !== undefined && outRaw !== null) {
    if (!isObject(outRaw)) throw buildError(`${where}.output: expected an object`, RECOMPILE);
    const out = new Map(outRaw);
    const checks = list(out, "checks", `${where}.output`, "dict") as JsonObject[];
    let origin: Origin | null = null;
    if (out.get("origin") !== undefined && out.get("origin") !== null) origin = toOrigin(out.get("origin") as Json, `${where}.output.origin`);
    build("Contract", out, `${where}.output`, new Set(["checks", "origin"]));
    output = {
      id: str(out.get("id")),
      style: str(out.get("style")),
      schema: out.get("schema") as JsonObject,
      instructions: str(out.get("instructions")),
      returnTool: objOrNull(out.get("return_tool")),
      checks,
      native: objOrNull(out.get("native")),
      origin,
    };
  }
  const lazy = list(d, "lazy_paths", where, "list") as Json[][];
  if (!lazy.every((p) => p.every((part) => typeof part === "string"))) throw buildError(`${where}.lazy_paths: expected lists of names`, RECOMPILE);
  const lazyPaths = lazy as string[][];
  const proofs = list(d, "item_proofs", where, "dict") as JsonObject[];
  proofs.forEach((proof, i) => {
    const path = proof.get("path");
    const ok = proofOk(proof) && lazyPaths.some((p) => Array.isArray(path) && p.length === path.length && p.every((x, k) => x === path[k]));
    if (!ok) throw buildError(`${where}.item_proofs[${i}]: not a well-formed item proof of a lazy path`, RECOMPILE);
  });
  const events = list(d, "events", where, "dict") as JsonObject[];
  const sources = list(d, "sources", where).map((s) => {
    const x = build("SourceRef", s, `${where}.sources`);
    return { file: str(x.get("file")), sha256: str(x.get("sha256")) };
  });
  build("RoleBundle", d, where, new Set(["budget", "sections", "output", "lazy_paths", "item_proofs", "events", "sources"]));
  return {
    id: str(d.get("id")),
    tokenizer: str(d.get("tokenizer")),
    budget,
    separator: str(d.get("separator")),
    sections,
    inputs: d.get("inputs") as JsonObject,
    description: str(d.get("description")),
    category: str(d.get("category")),
    model: strOrNull(d.get("model")),
    provider: str(d.get("provider"), "text"),
    toolMode: str(d.get("tool_mode"), "inline"),
    cache: d.has("cache") ? d.get("cache") === true : true,
    output,
    lazyPaths,
    itemProofs: proofs,
    events,
    sources,
    sourceHash: str(d.get("source_hash")),
    format: str(d.get("format"), FORMAT),
    formatVersion: version,
    parents: [],
    defaultParent: strOrNull(d.get("default_parent")),
  };
}

/** Rebuild a Manifest, refusing other formats with a clear message (Python `manifest_from_dict`). */
export function manifestFromDict(data: Json, where = "manifest.json"): Manifest {
  if (!isObject(data) || data.get("format") !== MANIFEST_FORMAT) throw buildError(`${where}: not a promptmill build manifest`);
  const v = data.get("format_version");
  // Python: format_version != 1 (1.0 and True pass: quirk 8)
  if (!(v === 1n || v === 1 || v === true)) {
    const pv = data.has("promptmill_version") ? pyStrLike(data.get("promptmill_version") as Json) : "?";
    throw buildError(`${where}: build format version ${pyRepr(v)} was written by promptmill ${pv}; this promptmill reads version 1`, RECOMPILE);
  }
  const d = new Map(data);
  const rolesRaw = d.get("roles");
  if (rolesRaw === undefined) throw buildError(`${where}: malformed manifest (KeyError('roles'))`);
  if (!isObject(rolesRaw)) throw buildError(`${where}: malformed manifest (AttributeError("'${typeName(rolesRaw)}' object has no attribute 'items'"))`);
  const roles = new Map<string, ManifestEntry>();
  for (const [k, v0] of rolesRaw) {
    if (!isObject(v0)) throw buildError(`${where}: malformed manifest (TypeError("'${typeName(v0)}' object is not a mapping"))`);
    const e = build("ManifestEntry", v0, `${where}.roles.${k}`, new Set(["sources"]));
    const sources = e.get("sources");
    if (sources !== undefined && !Array.isArray(sources)) {
      throw buildError(`${where}: malformed manifest (TypeError("'${typeName(sources)}' object is not iterable"))`);
    }
    roles.set(k, {
      file: str(e.get("file")),
      sha256: str(e.get("sha256")),
      sourceHash: str(e.get("source_hash")),
      sources: ((sources as Json[] | undefined) ?? []).map((x) => (typeof x === "string" ? x : String(x))),
    });
  }
  const abstract = d.has("abstract") ? d.get("abstract") : [];
  if (!Array.isArray(abstract) || !abstract.every((a) => typeof a === "string")) {
    throw buildError(`${where}.abstract: expected a list of role ids`, RECOMPILE);
  }
  build("Manifest", d, where, new Set(["roles", "abstract"]));
  return {
    roles,
    promptmillVersion: str(d.get("promptmill_version")),
    inputs: (d.get("inputs") as JsonObject | undefined) ?? new Map(),
    tokenizers: (d.get("tokenizers") as JsonObject | undefined) ?? new Map(),
    format: MANIFEST_FORMAT,
    formatVersion: 1,
    abstract: abstract as string[],
  };
}

function pyStrLike(v: Json): string {
  return typeof v === "string" ? v : pyRepr(v);
}

// ---------------------------------------------------------------- the build folder

export function joinPath(a: string, b: string): string {
  if (b.startsWith("/")) return pyPath(b);
  return pyPath(a === "." ? b : `${a}/${b}`);
}

const BUILD_FILE_LIMIT = 64 * 1024 * 1024;

function readJson(path: string, expectedSha: string | null, what: string, root: string | null = null): Json {
  let raw: Buffer;
  if (root !== null) checkInside(path, root, what); // a link out of the build (PM017) is never followed, whatever it holds
  try {
    // a regular file only, at most BUILD_FILE_LIMIT: a bundle linked to /dev/zero or a FIFO is an error, not a hang
    // (Python: runtime/engine.py `_read_json` through core/userfiles.py `read_bytes`, with its words)
    raw = readBytes(path, BUILD_FILE_LIMIT, what);
  } catch (exc) {
    if (!(exc instanceof PromptmillError)) throw exc;
    if (exc.message.endsWith(": it does not exist") || !lexists(path)) throw new MissingFile(path); // a compile removed it: load again
    throw buildError(exc.message, "recompile: promptmill compile");
  }
  if (expectedSha !== null && createHash("sha256").update(raw).digest("hex") !== expectedSha) {
    throw buildError(`${what} ${path} does not match the hash in manifest.json (corrupted or edited by hand)`, "recompile: promptmill compile");
  }
  let text: string;
  try {
    text = decodeJsonBytes(raw); // Python's json.loads of the bytes: their encoding detected, its decoder's words
  } catch (exc) {
    if (exc instanceof PyDecodeError) throw buildError(`${what} ${path} is not valid JSON: ${exc.message}`, "recompile: promptmill compile");
    throw exc;
  }
  try {
    return parse(text);
  } catch (exc) {
    if (exc instanceof JsonSyntaxError) throw buildError(`${what} ${path} is not valid JSON: ${exc.message}`, "recompile: promptmill compile");
    throw exc;
  }
}

function lexists(path: string): boolean {
  try {
    lstatSync(path);
    return true;
  } catch {
    return false;
  }
}

class MissingFile extends Error {
  constructor(readonly path: string) {
    super(path);
  }
}

export interface LoadedBuild {
  root: string;
  manifest: Manifest;
  bundles: Map<string, RoleBundle>;
}

const LOAD_ATTEMPTS = 5;

/** Read one role bundle file (`roles/<id>.<hash>.json` of a build, shipped on its own): the same checks as a
 * bundle a manifest lists, except the manifest's hash, which a lone file has no manifest to hold. */
export function loadBundleFile(path: string): RoleBundle {
  const file = pyPath(path);
  try {
    return roleFromDict(readJson(file, null, "bundle"), file);
  } catch (exc) {
    if (exc instanceof MissingFile) throw buildError(`no bundle at ${file}`, "compile your prompts first: promptmill compile");
    throw exc;
  }
}

/** Read `buildDir/manifest.json` and every bundle it lists (Python `Runtime.load`). */
export function loadBuild(buildDir: string): LoadedBuild {
  const root = pyPath(buildDir);
  const manifestPath = joinPath(root, "manifest.json");
  for (let attempt = 0; attempt < LOAD_ATTEMPTS; attempt++) {
    if (!existsSync(manifestPath) || !statSync(manifestPath).isFile()) {
      throw buildError(`no build at ${root}: ${manifestPath} does not exist`, "compile your prompts first: promptmill compile");
    }
    try {
      const manifest = manifestFromDict(readJson(manifestPath, null, "manifest", root), manifestPath);
      const bundles = new Map<string, RoleBundle>();
      for (const [roleId, entry] of manifest.roles) {
        const file = joinPath(root, entry.file);
        const data = readJson(file, entry.sha256, `bundle of role '${roleId}'`, root);
        const bundle = roleFromDict(data, file);
        if (bundle.id !== roleId) throw buildError(`${file}: holds role '${bundle.id}', manifest says '${roleId}'`);
        bundles.set(roleId, bundle);
      }
      return { root, manifest, bundles };
    } catch (exc) {
      if (!(exc instanceof MissingFile)) throw exc;
      if (attempt === LOAD_ATTEMPTS - 1) {
        throw buildError(`build at ${root} is incomplete: ${exc.path} is missing`, "recompile: promptmill compile");
      }
    }
  }
  throw new Error("unreachable");
}
