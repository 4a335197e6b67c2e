// The runtime: load a build once, render roles many times (docs/bundle-format.md section 4; Python runtime/engine.py).
//
//   const rt = Runtime.load("build");
//   const req = rt.render("executor", state, { budget: 8000 });
//   requestData(req)   // the render document, as `promptmill render --format json` prints it

import { type Json, type JsonObject, isObject } from "./pyjson.js";
import { PromptmillError, unknownRoleError } from "./errors.js";
import { dirname } from "node:path";
import { loadBuild, loadBundleFile, type Manifest, type RoleBundle, type Section } from "./bundle.js";
import { conditionContext, evaluate, EVENTS } from "./conditions.js";
import { PreparedRole, StateError, makeCandidate, uniqueToolNames, type Candidate, type ItemChecker } from "./fill.js";
import { Fitter, budgetError, type CounterLike, type WireLike } from "./fit.js";
import { assemble, type Counted } from "./assemble.js";
import { type PromptRequest, isPresent } from "./request.js";
import { typeName } from "./pyfmt.js";
import { getCounter } from "./counting.js";
import { getWire } from "./wire.js";
import * as tooldecl from "./tooldecl.js";
import { ID_CUTOFF, didYouMean, nearest } from "./suggest.js";
import { stateChecks, toolProblems, toolWithDefaults } from "./statechecks.js";
import { type ModelInfo, type ModelTable, defaultTable, checkServes } from "./models.js";

export interface RenderOptions {
  budget?: number | null;
  provider?: string | null;
  model?: string | null;
  event?: string;
  validate?: boolean;
}

/** What validates a state against a role's inputs (TS-state's schema validator and state limits). */
export interface StateChecks {
  /** Check the state's size limits and validate it against `inputs` (lazy lists skipped): throw a StateError. */
  state(bundle: RoleBundle, state: JsonObject): void;
  /** Check one offered item of a lazy list: throw a StateError naming what is wrong. */
  lazyItem(bundle: RoleBundle, path: string[], index: number, item: Json): void;
}

/** No state checks: what `render(..., {validate: false})` does, for callers that checked the state already. */
export const NO_CHECKS: StateChecks = { state: () => undefined, lazyItem: () => undefined };

export class Runtime {
  private prepared = new Map<string, PreparedRole>();
  private counters = new Map<string, CounterLike>();
  private recounts = new Map<string, RoleBundle>();
  private modelTable: ModelTable | null = null;

  constructor(
    readonly bundles: Map<string, RoleBundle>,
    readonly baseDir: string | null = null,
    readonly manifest: Manifest | null = null,
    readonly checks: StateChecks = defaultChecks(),
  ) {}

  /** Read `buildDir/manifest.json` and every bundle it lists (SHA-256 checked); PM801 on anything malformed. */
  static load(buildDir = "build", checks?: StateChecks): Runtime {
    const { root, manifest, bundles } = loadBuild(buildDir);
    return new Runtime(bundles, root, manifest, checks ?? defaultChecks());
  }

  /** A runtime of one role: a bundle file shipped without its build (see `loadBundleFile`). */
  static loadBundle(bundleFile: string, checks?: StateChecks): Runtime {
    const bundle = loadBundleFile(bundleFile);
    return new Runtime(new Map([[bundle.id, bundle]]), dirname(bundleFile), null, checks ?? defaultChecks());
  }

  get roles(): string[] {
    return [...this.bundles.keys()].sort();
  }

  bundle(role: string): RoleBundle {
    const found = this.bundles.get(role);
    if (found === undefined && this.manifest?.abstract.includes(role)) {
      throw unknownRoleError(`role '${role}' is abstract: other roles extend it, it is never rendered itself`, abstractHint(role, this.roles));
    }
    if (found === undefined) throw unknownRoleError(`no role '${role}' in this build`, roleHint(nearest(role, this.roles, 3, ID_CUTOFF), this.roles));
    return found;
  }

  counter(tokenizer: string): CounterLike {
    let c = this.counters.get(tokenizer);
    if (c === undefined) {
      c = getCounter(tokenizer, this.baseDir ?? ".") as CounterLike;
      this.counters.set(tokenizer, c);
    }
    return c;
  }

  private prepare(bundle: RoleBundle, key: string): PreparedRole {
    let p = this.prepared.get(key);
    if (p === undefined) {
      const checks = this.checks;
      const checker: ItemChecker = {
        lazyItem: (path, index, item) => checks.lazyItem(bundle, path, index, item),
        toolProblems: (item) => toolProblems(item),
        toolWithDefaults: (item) => toolWithDefaults(item as JsonObject),
      };
      p = new PreparedRole(bundle, checker);
      this.prepared.set(key, p);
    }
    return p;
  }

  /** Fill `role` with `state` and fit it to the budget (Python `Runtime.render`). */
  render(role: string, state: JsonObject | null = null, options: RenderOptions = {}): PromptRequest {
    const event = options.event ?? "start";
    const validate = options.validate ?? true;
    const model = options.model ?? null;
    const info = model === null ? null : this.models.lookup(model);
    let bundle = this.bundle(role);
    if (info !== null && bundle.tokenizer !== info.tokenizer) bundle = this.recounted(bundle, info.tokenizer);
    let prepared = this.prepare(bundle, info === null ? role : `${role}@${bundle.tokenizer}`);
    const provider = options.provider ?? (info !== null ? info.defaultWire : bundle.provider);
    const wire = getWire(provider) as unknown as WireLike;
    if (!EVENTS.includes(event)) throw new PromptmillError("PM010", `unknown event '${event}'; expected one of: ${EVENTS.join(", ")}`);
    const st: JsonObject = state ?? new Map();
    let chosen: JsonObject | null = null;
    let req: PromptRequest;
    try {
      if (!isObject(st)) throw new StateError(role, [["state", `must be a mapping, got ${typeName(st as Json)}`]]);
      if (bundle.parents.length) {
        const condCtx = conditionContext(bundle.id, bundle.category, model ?? bundle.model, st, wire.name, event);
        const index = bundle.parents.findIndex((c) => evaluate(c.when, condCtx));
        if (index >= 0) {
          const choice = bundle.parents[index];
          chosen = new Map<string, Json>([
            ["type", "parent_chosen"],
            ["parent", choice.parent],
            ["candidate", BigInt(index)],
            ["when", choice.when],
          ]);
          bundle = choice.bundle;
          prepared = this.prepare(bundle, `${role}#${index}@${bundle.tokenizer}`);
        } else {
          chosen = new Map<string, Json>([
            ["type", "parent_chosen"],
            ["parent", bundle.defaultParent],
            ["candidate", null],
            ["when", null],
          ]);
        }
      }
      const [limit, origins, marginTokens, counted] = this.budget(bundle, wire, options.budget ?? null, info);
      if (validate) this.checks.state(bundle, st);
      const counter = this.counter(bundle.tokenizer);
      const ctx = prepared.context(st);
      const condCtx = conditionContext(bundle.id, bundle.category, model ?? bundle.model, st, wire.name, event);
      const cands: Candidate[] = [];
      const skipped: Section[] = [];
      bundle.sections.forEach((spec, index) => {
        if (spec.when !== null && !evaluate(spec.when, condCtx)) {
          skipped.push(spec);
          return;
        }
        cands.push(makeCandidate(prepared, spec, index, st, ctx, condCtx, validate));
      });
      if (cands.some((c) => c.spec.kind === "tools")) uniqueToolNames(cands, this.reservedTools(bundle, wire));
      const normalize = (item: Json) => tooldecl.normalize(item) as JsonObject;
      const result = new Fitter(prepared, wire, counter, limit, ctx, normalize).fit(cands);
      req = assemble(prepared, wire, counter, normalize, result, skipped, limit, origins, marginTokens, st, counted);
    } catch (exc) {
      if (exc instanceof StateError && !exc.role) throw new StateError(role, exc.errors, exc.code);
      throw exc;
    }
    if (chosen !== null) req.events = [chosen, ...req.events];
    requireContent(role, req, req.budget);
    return req;
  }

  private reservedTools(bundle: RoleBundle, wire: WireLike): Map<string, string> {
    const contract = bundle.output;
    if (contract === null || (contract.style !== "return_call" && contract.style !== "native")) return new Map();
    const names = wire.extraTools(contract, bundle.toolMode).map((t) => t.get("name") as string);
    if (contract.style === "return_call" && contract.returnTool !== null) names.push(contract.returnTool.get("name") as string);
    return new Map(names.map((n) => [n, `the return tool of output contract '${contract.id}'`]));
  }

  /** The model table a `model` is looked up in (the shipped one unless given). */
  get models(): ModelTable {
    if (this.modelTable === null) this.modelTable = defaultTable();
    return this.modelTable;
  }

  /** PM010 when the wire a render of `role` for `provider` and `model` uses cannot serve that model (Python
   * `Runtime.check_wire`; the CLI calls it before rendering). */
  checkWire(role: string, provider: string | null = null, model: string | null = null): void {
    const info = model === null ? null : this.models.lookup(model);
    const bundle = this.bundle(role);
    const wire = getWire(provider ?? (info !== null ? info.defaultWire : bundle.provider));
    checkServes(wire, model ?? bundle.model, this.models);
  }

  /** `bundle` counting with another tokenizer: the compile-time counts made again (parents too). */
  private recounted(bundle: RoleBundle, tokenizer: string): RoleBundle {
    const key = `${bundle.id}@${tokenizer}`;
    const known = this.recounts.get(key);
    if (known !== undefined) return known;
    const counter = this.counter(tokenizer);
    const again = (b: RoleBundle): RoleBundle => ({
      ...b,
      tokenizer,
      sections: b.sections.map((s) => ({
        ...s,
        tokens: s.kind === "static" && s.text ? counter.count(s.text) : s.tokens,
        titleTokens: s.title ? counter.count(s.title + "\n") : s.titleTokens,
      })),
      parents: b.parents.map((c) => ({ ...c, bundle: again(c.bundle) })),
    });
    const out = again(bundle);
    this.recounts.set(key, out);
    return out;
  }

  private budget(bundle: RoleBundle, wire: WireLike, budget: number | null, info: ModelInfo | null): [number, Map<string, string>, number, Counted] {
    const b = bundle.budget;
    const origins = new Map(b.origins);
    const margin = b.margin !== null ? b.margin : wire.defaultMargin;
    if (b.margin === null && wire.defaultMargin) origins.set("margin", `provider ${wire.name} default (counts are estimates)`);
    let maxTokens = b.maxTokens;
    let reserve = b.reserve;
    if (info !== null) {
      origins.set("model", `render-time model ${info.model} (row ${info.pattern})`);
      origins.set("context_window", `model ${info.model} (${info.contextWindow})`);
      origins.set("tokenizer", `model ${info.model} (row ${info.pattern})`); // the fit counts with the model's
      if (info.contextWindow < maxTokens) {
        maxTokens = info.contextWindow;
        origins.set("max_tokens", `context window of ${info.model} (${info.pattern})`);
      }
      if (info.maxOutputTokens !== null && reserve > info.maxOutputTokens) {
        reserve = info.maxOutputTokens;
        origins.set("reserve", `reply limit of ${info.model} (${info.pattern})`);
      }
      if (reserve >= maxTokens) {
        throw budgetError(`role '${bundle.id}': reserve ${reserve} leaves no room in the context window of ${info.model} (${maxTokens})`, null, "PM831");
      }
    }
    if (origins.has("provider")) {
      // the role's model chose its provider: say when this render's did
      if (info !== null && wire.name === info.defaultWire) origins.set("provider", `render-time model ${info.model} (row ${info.pattern})`);
      else if (wire.name !== bundle.provider) origins.set("provider", `render-time provider ${wire.name}`);
    }
    const counted = this.ratio(bundle, wire, info);
    if (Number(counted.ratio) !== 1) origins.set("ratio", counted.origin);
    let room = maxTokens - reserve;
    if (budget !== null) {
      if (!Number.isInteger(budget) || budget <= 0) throw budgetError(`budget must be a positive integer, got ${budget}`, null, "PM831");
      if (budget < room) {
        origins.set("budget", `render-time budget ${budget}`);
        room = budget;
      } else origins.set("budget", `render-time budget ${budget}, capped at the role's ${room}`);
    }
    const marginTokens = Math.ceil(room * margin);
    const modelLimit = room - marginTokens;
    const limit = Number(counted.ratio) === 1 ? modelLimit : Math.floor(modelLimit / Number(counted.ratio));
    counted.maxTokens = maxTokens;
    counted.reserve = reserve;
    counted.limit = modelLimit;
    counted.breakpoints = this.breakpoints(bundle, wire, info);
    return [limit, origins, marginTokens, counted];
  }

  private breakpoints(bundle: RoleBundle, wire: WireLike, info: ModelInfo | null): number | null {
    if (!wire.explicitCache) return null;
    const row = info !== null ? info : bundle.model ? this.models.resolve(bundle.model) : null;
    return row !== null && row.provider === wire.models ? row.cacheBreakpoints : null;
  }

  private ratio(bundle: RoleBundle, wire: WireLike, info: ModelInfo | null): Counted {
    const make = (ratio: number | bigint, origin: string, model: string | null, ratioFor: string | null = null): Counted => ({
      ratio,
      origin,
      model,
      maxTokens: 0,
      reserve: 0,
      limit: 0,
      ratioFor,
      breakpoints: null,
    });
    if (!wire.estimate) return make(1.0, "", info === null ? null : info.model);
    if (info !== null && info.provider === wire.models) return make(info.ratio, `model ${info.model} (row ${info.pattern})`, info.model, info.model);
    if (info === null && bundle.budget.ratio !== null) {
      const roleModel = bundle.model ? this.models.resolve(bundle.model) : null;
      if (roleModel === null || roleModel.provider === wire.models) {
        const origin = bundle.budget.origins.get("ratio") ?? `model ${bundle.model}`;
        return make(bundle.budget.ratio, origin, bundle.model, bundle.model);
      }
    }
    const ratio = this.models.maxRatio(wire.models);
    const named = info !== null ? info.model : bundle.model;
    const why = named ? `${named} is not one of its models` : "no model is named";
    const origin = `wire ${wire.name}: ${why}, so the largest ratio of its ${wire.models} models in the table`;
    return make(ratio, origin, named, `any ${wire.models} model`);
  }
}

function requireContent(role: string, req: PromptRequest, limit: number): void {
  if (req.sections.some(isPresent)) return;
  const dropped = req.sections.filter((s) => s.status === "dropped").map((s) => s.id);
  if (dropped.length) {
    throw budgetError(
      `role '${role}': the budget of ${limit} tokens holds no section; dropped: ${dropped.join(", ")}`,
      "raise the budget (render(..., budget=N) or budget.max_tokens), or shorten what the state sends",
    );
  }
}

/** The state checks of the Python runtime (TS-state's statechecks.ts). */
function defaultChecks(): StateChecks {
  return stateChecks() as StateChecks;
}

function roleList(roles: string[], shown = 20): string {
  return roles.slice(0, shown).join(", ") + (roles.length > shown ? ", ..." : "");
}

function abstractHint(role: string, roles: string[]): string {
  if (!roles.length) return `the build holds no roles yet: add one with \`extends: ${role}\` and compile`;
  return "render one of the roles: " + roleList(roles);
}

function roleHint(close: string[], roles: string[]): string {
  if (close.length) return didYouMean(close);
  if (!roles.length) return "the build holds no roles: add a `kind: role` template (abstract roles are not built) and compile";
  return "roles: " + roleList(roles);
}
