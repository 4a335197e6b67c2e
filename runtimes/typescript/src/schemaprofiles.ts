// What each wire's structured output does with each JSON Schema constraint keyword, as data
// (Python: runtime/schemaprofiles.py, where each profile names its sources). A profile sorts the value
// constraints (CONSTRAINTS) into enforced, dropped (accepted, not enforced) and rejected (a 400: removed before
// sending).

import { type Json, type JsonObject, isObject } from "./pyjson.js";
import { JSON_SCHEMA_STRICT, OPENAPI_SUBSET, deepCopy } from "./schemaforms.js";

/** What a profile is chosen by: the attributes of a Wire (wire.ts) read here. */
export interface WireTraits {
  readonly name: string;
  readonly provider: string;
  readonly single: boolean;
  readonly schemaForm: string | null;
  readonly contractAsTool: boolean;
}

export const CONSTRAINTS = [
  "minLength", "maxLength", "pattern", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf",
  "minItems", "maxItems", "uniqueItems", "minProperties", "maxProperties",
] as const;
const CONSTRAINT_SET = new Set<string>(CONSTRAINTS);

export type Fate = "enforced" | "dropped" | "rejected";

export class Profile {
  readonly enforced: Set<string>;
  constructor(
    readonly name: string,
    readonly dropped: Set<string>,
    readonly rejected: Set<string>,
    readonly sources: readonly string[],
    /** keyword -> the largest value the dialect enforces; a larger one is rejected */
    readonly rejectedAbove: readonly [string, number][] = [],
  ) {
    this.enforced = new Set(CONSTRAINTS.filter((k) => !dropped.has(k) && !rejected.has(k)));
  }

  /** What the dialect does with one keyword (and its value). */
  fate(keyword: string, value: Json | undefined = null): Fate {
    for (const [key, limit] of this.rejectedAbove) {
      if (key === keyword && (typeof value === "bigint" || typeof value === "number") && value > limit) return "rejected";
    }
    if (this.rejected.has(keyword)) return "rejected";
    if (this.dropped.has(keyword)) return "dropped";
    return "enforced";
  }
}

const profile = (name: string, o: { dropped?: string[]; rejected?: string[]; sources: string[]; rejectedAbove?: [string, number][] }) =>
  new Profile(name, new Set(o.dropped ?? []), new Set(o.rejected ?? []), o.sources, o.rejectedAbove ?? []);

export const OPENAI_STRICT = profile("openai-strict", {
  rejected: ["minLength", "maxLength", "uniqueItems", "minProperties", "maxProperties"],
  sources: ["https://platform.openai.com/docs/guides/structured-outputs#supported-schemas", "https://github.com/mastra-ai/mastra/issues/23321"],
});
const ANTHROPIC_REJECTED = [
  "minLength", "maxLength", "pattern", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf",
  "maxItems", "uniqueItems", "minProperties", "maxProperties",
];
export const ANTHROPIC_STRICT = profile("anthropic-strict", {
  rejected: ANTHROPIC_REJECTED,
  rejectedAbove: [["minItems", 1]],
  sources: [
    "https://docs.claude.com/en/docs/build-with-claude/structured-outputs#json-schema-limitations",
    "https://github.com/vercel/ai/issues/14342",
    "https://github.com/vercel/ai/pull/14372",
    "https://github.com/laravel/ai/issues/715",
  ],
});
export const GEMINI = profile("gemini", {
  dropped: ["pattern", "minLength", "maxLength", "minProperties", "maxProperties"],
  rejected: ["exclusiveMinimum", "exclusiveMaximum", "multipleOf", "uniqueItems"],
  sources: [
    "https://ai.google.dev/api/caching#Schema",
    "https://ai.google.dev/gemini-api/docs/structured-output#json-schemas",
    "https://github.com/vercel/ai/pull/18325",
  ],
});
export const BEDROCK_CONVERSE = profile("bedrock-converse", {
  rejected: [...ANTHROPIC_REJECTED].sort(),
  rejectedAbove: [["minItems", 1]],
  sources: [
    "https://docs.aws.amazon.com/bedrock/latest/userguide/structured-output.html",
    "https://github.com/mastra-ai/mastra/issues/23321",
    "https://github.com/vercel/ai/pull/17558",
    "https://github.com/MattJColes/lgtmaybe/issues/531",
  ],
});
export const PROFILES: ReadonlyMap<string, Profile> = new Map([OPENAI_STRICT, ANTHROPIC_STRICT, GEMINI, BEDROCK_CONVERSE].map((p) => [p.name, p]));

export const WIRE_PROFILES: Readonly<Record<string, string>> = {
  openai: OPENAI_STRICT.name,
  "openai-responses": OPENAI_STRICT.name,
  anthropic: ANTHROPIC_STRICT.name,
  "anthropic-bedrock": ANTHROPIC_STRICT.name,
  "anthropic-vertex": ANTHROPIC_STRICT.name,
  gemini: GEMINI.name,
  "gemini-vertex": GEMINI.name,
  bedrock: BEDROCK_CONVERSE.name,
};
const BY_FORM: Readonly<Record<string, string>> = { [JSON_SCHEMA_STRICT]: OPENAI_STRICT.name, [OPENAPI_SUBSET]: GEMINI.name };
const BY_PROVIDER: Readonly<Record<string, string>> = { anthropic: ANTHROPIC_STRICT.name, aws: BEDROCK_CONVERSE.name, bedrock: BEDROCK_CONVERSE.name };

/** Whether the wire sends a native contract natively (a structured-output field or a forced tool). */
export function carriesContract(wire: WireTraits): boolean {
  return !wire.single && (wire.schemaForm !== null || wire.contractAsTool);
}

/** The wire's profile: by its name, else by its schema form, else by its provider (null: none fits). */
export function profileFor(wire: WireTraits): Profile | null {
  let name: string | undefined = Object.hasOwn(WIRE_PROFILES, wire.name) ? WIRE_PROFILES[wire.name] : undefined;
  if (name === undefined && wire.schemaForm !== null) name = BY_FORM[wire.schemaForm];
  if (name === undefined && wire.contractAsTool) name = Object.hasOwn(BY_PROVIDER, wire.provider) ? BY_PROVIDER[wire.provider] : undefined;
  return name !== undefined ? (PROFILES.get(name) ?? null) : null;
}

const SUBSCHEMA_MAPS = ["properties", "$defs", "definitions", "patternProperties", "dependentSchemas"];
const SUBSCHEMA_LISTS = ["anyOf", "oneOf", "allOf", "prefixItems"];
const SUBSCHEMA_ONE = ["items", "additionalProperties", "not", "if", "then", "else", "contains", "propertyNames"];

function children(schema: JsonObject, path: string): [Json, string][] {
  const out: [Json, string][] = [];
  for (const key of SUBSCHEMA_MAPS) {
    const sub = schema.get(key);
    if (isObject(sub)) for (const [k, v] of sub) out.push([v, key === "properties" ? `${path}.${k}` : `${path}.${key}.${k}`]);
  }
  for (const key of SUBSCHEMA_LISTS) {
    const sub = schema.get(key);
    if (Array.isArray(sub)) sub.forEach((v, i) => out.push([v, key === "prefixItems" ? `${path}[${i}]` : path]));
  }
  for (const key of SUBSCHEMA_ONE) {
    const sub = schema.get(key);
    if (isObject(sub)) out.push([sub, key === "items" ? `${path}[]` : key === "additionalProperties" ? `${path}.*` : `${path}.${key}`]);
  }
  return out;
}

/** [path, keyword, value, fate] for each constraint the profile drops or rejects, in schema order. */
export function lostKeywords(schema: Json, prof: Profile, path = "reply"): [string, string, Json, Fate][] {
  if (!isObject(schema)) return [];
  const out: [string, string, Json, Fate][] = [];
  for (const key of CONSTRAINTS) {
    if (schema.has(key)) {
      const value = schema.get(key) as Json;
      const fate = prof.fate(key, value);
      if (fate !== "enforced" && !(key === "uniqueItems" && value !== true)) out.push([path, key, value, fate]);
    }
  }
  for (const [sub, where] of children(schema, path)) out.push(...lostKeywords(sub, prof, where));
  return out;
}

/** `schema` with every keyword the profile rejects removed (a new object; dropped ones are left in). */
export function withoutRejected(schema: Json, prof: Profile): Json {
  if (!isObject(schema)) return deepCopy(schema);
  const out: JsonObject = new Map();
  for (const [key, value] of schema) {
    if (CONSTRAINT_SET.has(key) && prof.fate(key, value) === "rejected") continue;
    if (SUBSCHEMA_MAPS.includes(key) && isObject(value)) {
      out.set(key, new Map([...value].map(([k, v]) => [k, withoutRejected(v, prof)])));
    } else if (SUBSCHEMA_LISTS.includes(key) && Array.isArray(value)) {
      out.set(key, value.map((v) => withoutRejected(v, prof)));
    } else if (SUBSCHEMA_ONE.includes(key) && isObject(value)) {
      out.set(key, withoutRejected(value, prof));
    } else out.set(key, deepCopy(value));
  }
  return out;
}
