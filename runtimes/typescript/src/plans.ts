// Template plans (docs/bundle-format.md section 8; Python runtime/plans.py, the run-time half and `plan_ok`).
// A plan is executed step by step; where the Python runtime would defer to Jinja, `runPlan` returns a
// `Deferred` saying why: this runtime does not run Jinja and never guesses the text (the caller reports it).

import { type Json, type JsonObject, isObject, pyEqual, floatRepr } from "./pyjson.js";
import { PyFail, Unsupported, truthy, pyStr, pyRepr, pyLen, percentFormat, strFormat } from "./pyfmt.js";
import { PLAIN_FILTERS } from "./filters.js";

const PURE_FILTERS = new Set(["to_json", "to_yaml", "upper", "lower", "trim", "xml_escape", "xml_text"]);
type ArgKind = "str" | "int" | "float" | "bool" | "none";
const CONSTS: ArgKind[] = ["str", "int", "float", "bool", "none"];
const FILTERS: Record<string, ArgKind[][]> = {
  ...Object.fromEntries([...PURE_FILTERS].map((n) => [n, []])),
  title: [],
  capitalize: [],
  string: [],
  length: [],
  count: [],
  join: [["str"]],
  default: [CONSTS, ["bool"]],
  round: [["int"], ["str"]],
};
const LOOP_ATTRS = new Set(["index", "index0", "first", "last", "length", "revindex", "revindex0"]);
const COMPARE = new Set(["eq", "ne", "lt", "lteq", "gt", "gteq"]);
const PRINTF = /^(?:[^%]|%%|%[#0 +-]*\d{0,3}(?:\.\d{0,3})?[diouxXeEfFgGcrsa])*$/s;
export const MAX_TEXT = 4_000_000;
export const MAX_STEPS = 100_000;
export const MAX_ARG_TEXT = 1_000_000;
const MAX_INT = 10n ** 18n;

function kindOf(v: Json): ArgKind | null {
  if (typeof v === "string") return "str";
  if (typeof v === "bigint") return "int";
  if (typeof v === "number") return "float";
  if (typeof v === "boolean") return "bool";
  if (v === null) return "none";
  return null;
}

// ---------------------------------------------------------------- bundle check

class NoPlan extends Error {}

function need(ok: boolean): void {
  if (!ok) throw new NoPlan();
}

/** True when `plan` has the shape the compiler writes (Python `plan_ok`). */
export function planOk(plan: Json): boolean {
  try {
    checkSteps(plan);
    return true;
  } catch (exc) {
    if (exc instanceof NoPlan) return false;
    throw exc;
  }
}

function checkSteps(steps: Json): void {
  need(Array.isArray(steps));
  for (const step of steps as Json[]) {
    need(Array.isArray(step) && step.length > 0);
    const s = step as Json[];
    const kind = s[0];
    if (kind === "t") need(s.length === 2 && typeof s[1] === "string");
    else if (kind === "v") {
      need(s.length === 2);
      checkPath(s[1]);
    } else if (kind === "f") {
      need(s.length === 3 && typeof s[2] === "string" && PURE_FILTERS.has(s[2]));
      checkPath(s[1]);
    } else if (kind === "e") {
      need(s.length === 2);
      checkExpr(s[1]);
    } else if (kind === "for") {
      need(s.length === 5 && typeof s[1] === "string");
      checkExpr(s[2]);
      checkSteps(s[3]);
      checkSteps(s[4]);
    } else if (kind === "if") {
      need(s.length === 3 && Array.isArray(s[1]) && (s[1] as Json[]).length > 0);
      for (const branch of s[1] as Json[]) {
        need(Array.isArray(branch) && branch.length === 2);
        checkExpr((branch as Json[])[0]);
        checkSteps((branch as Json[])[1]);
      }
      checkSteps(s[2]);
    } else throw new NoPlan();
  }
}

function checkPath(path: Json): void {
  need(Array.isArray(path) && path.length > 0 && path.every((p) => typeof p === "string"));
}

function checkExpr(expr: Json): void {
  need(Array.isArray(expr) && expr.length > 0);
  const e = expr as Json[];
  const kind = e[0];
  const n = e.length;
  if (kind === "c") need(n === 2 && kindOf(e[1]) !== null);
  else if (kind === "p") {
    need(n === 2);
    checkPath(e[1]);
  } else if (kind === "loop") need(n === 2 && typeof e[1] === "string" && LOOP_ATTRS.has(e[1]));
  else if (kind === "fl") {
    need(n === 4 && typeof e[1] === "string" && e[1] in FILTERS && Array.isArray(e[3]));
    const kinds = FILTERS[e[1] as string];
    const args = e[3] as Json[];
    need(args.length <= kinds.length);
    need(args.every((a, i) => kindOf(a) !== null && kinds[i].includes(kindOf(a) as ArgKind)));
    checkExpr(e[2]);
  } else if (kind === "pf" || kind === "sf") {
    need(n === 3 && typeof e[1] === "string" && Array.isArray(e[2]));
    if (kind === "pf") need(PRINTF.test(e[1] as string));
    for (const x of e[2] as Json[]) checkExpr(x);
  } else if (kind === "cat") {
    need(n === 2 && Array.isArray(e[1]));
    for (const x of e[1] as Json[]) checkExpr(x);
  } else if (kind === "is") {
    need(n === 3 && (e[1] === "defined" || e[1] === "undefined" || e[1] === "none"));
    checkExpr(e[2]);
  } else if (kind === "not") {
    need(n === 2);
    checkExpr(e[1]);
  } else if (kind === "and" || kind === "or") {
    need(n === 3);
    checkExpr(e[1]);
    checkExpr(e[2]);
  } else if (kind === "cmp") {
    need(n === 4 && typeof e[1] === "string" && COMPARE.has(e[1]));
    checkExpr(e[2]);
    checkExpr(e[3]);
  } else throw new NoPlan();
}

// ---------------------------------------------------------------- run time

const UNDEF = Symbol("undefined");
type Value = Json | typeof UNDEF;

/** Why a plan could not decide a render (the Python runtime renders the template with Jinja then). */
export class Deferred {
  constructor(readonly reason: string) {}
}

class Defer extends Error {}

interface Run {
  context: JsonObject;
  outer: JsonObject | null;
  scopes: [string, Json][];
  loops: [number, number][];
  out: string[];
  size: number;
  steps: number;
}

/** Fill `plan` from `context` (then `outer`): the text, or a `Deferred` when Jinja would have to decide. */
export function runPlan(plan: Json[], context: JsonObject, outer: JsonObject | null = null): string | Deferred {
  const run: Run = { context, outer, scopes: [], loops: [], out: [], size: 0, steps: 0 };
  try {
    exec(plan, run);
  } catch (exc) {
    if (exc instanceof Defer || exc instanceof PyFail) return new Deferred(exc.message || "a value the plan does not handle");
    if (exc instanceof Unsupported) return new Deferred(`${exc.message} (not reproduced by this runtime)`);
    if (exc instanceof RangeError || exc instanceof TypeError) return new Deferred(exc.message);
    throw exc;
  }
  return run.out.join("");
}

function emit(run: Run, text: string): void {
  run.size += text.length;
  if (run.size > MAX_TEXT) throw new Defer("the output would pass 4,000,000 characters");
  run.out.push(text);
}

function exec(steps: Json[], run: Run): void {
  for (const raw of steps) {
    const step = raw as Json[];
    const kind = step[0];
    if (kind === "t") emit(run, step[1] as string);
    else if (kind === "v") emit(run, printed(path(step[1] as string[], run)));
    else if (kind === "f") emit(run, printed(apply(step[2] as string, path(step[1] as string[], run), [])));
    else if (kind === "e") emit(run, printed(evalExpr(step[1] as Json[], run)));
    else if (kind === "for") {
      const items = evalExpr(step[2] as Json[], run);
      if (!Array.isArray(items)) throw new Defer("a for loop over something other than a list");
      if (!items.length) {
        exec(step[4] as Json[], run);
        continue;
      }
      run.steps += items.length;
      if (run.steps > MAX_STEPS) throw new Defer("loops would pass 100,000 iterations");
      const n = items.length;
      items.forEach((item, i) => {
        run.scopes.push([step[1] as string, item]);
        run.loops.push([i, n]);
        exec(step[3] as Json[], run);
        run.loops.pop();
        run.scopes.pop();
      });
    } else {
      let done = false;
      for (const branch of step[1] as Json[][]) {
        if (truth(evalExpr(branch[0] as Json[], run))) {
          exec(branch[1] as Json[], run);
          done = true;
          break;
        }
      }
      if (!done) exec(step[2] as Json[], run);
    }
  }
}

const MAX_STR_DIGITS = 4300;

function intText(i: bigint): string {
  const s = i.toString();
  if (s.replace("-", "").length > MAX_STR_DIGITS) throw new Defer("an integer of more than 4300 digits");
  return s;
}

/** A value as `{{ }}` prints it. */
function printed(value: Value): string {
  if (typeof value === "string") return value;
  if (value === null) return "";
  if (typeof value === "bigint") return intText(value);
  if (typeof value === "number") return floatRepr(value);
  if (typeof value === "boolean") return value ? "True" : "False";
  if (value === UNDEF) throw new Defer("an undefined value");
  return containerText(value);
}

const MAX_CONTAINER_TEXT = 100_000;

/** A list or mapping as `{{ }}` prints it when the plan defers to Jinja: the sandbox weighs it, then prints
 * Python's str() (runtime/jinja/guard.py `produce`). Reproduced for JSON data well inside the sandbox's limits
 * (at most 100,000 characters, no integer Python would refuse to print); anything larger defers. */
function containerText(value: Json): string {
  let ok = true;
  const scan = (v: Json): void => {
    if (typeof v === "bigint" && v.toString().replace("-", "").length > MAX_STR_DIGITS) ok = false;
    else if (Array.isArray(v)) v.forEach(scan);
    else if (isObject(v)) v.forEach(scan);
  };
  scan(value);
  if (!ok) throw new Defer("an integer of more than 4300 digits");
  const text = pyRepr(value);
  if (text.length > MAX_CONTAINER_TEXT) throw new Defer(`a ${Array.isArray(value) ? "list" : "mapping"} printed as more than 100,000 characters`);
  return text;
}

function truth(value: Value): boolean {
  if (value === UNDEF) throw new Defer("an undefined value tested");
  return truthy(value);
}

function path(p: string[], run: Run): Value {
  const name = p[0];
  let obj: Value | undefined;
  for (let i = run.scopes.length - 1; i >= 0; i--) {
    if (run.scopes[i][0] === name) {
      obj = run.scopes[i][1];
      break;
    }
  }
  if (obj === undefined) {
    if (run.context.has(name)) obj = run.context.get(name) as Json;
    else if (run.outer !== null && run.outer.has(name)) obj = run.outer.get(name) as Json;
    else obj = UNDEF;
  }
  for (const key of p.slice(1)) {
    if (!isObject(obj)) throw new Defer(obj === UNDEF ? `'${name}' is undefined` : `a key looked up in a ${Array.isArray(obj) ? "list" : "scalar"}`);
    obj = obj.has(key) ? (obj.get(key) as Json) : UNDEF;
  }
  return obj;
}

function evalExpr(expr: Json[], run: Run): Value {
  const kind = expr[0];
  if (kind === "p") return path(expr[1] as string[], run);
  if (kind === "c") return expr[1];
  if (kind === "fl") return apply(expr[1] as string, evalExpr(expr[2] as Json[], run), expr[3] as Json[]);
  if (kind === "pf") {
    const values = args(expr[2] as Json[][], run);
    return percentFormat(expr[1] as string, values);
  }
  if (kind === "sf") return strFormat(expr[1] as string, args(expr[2] as Json[][], run));
  if (kind === "loop") {
    if (!run.loops.length) throw new Defer("loop outside a loop");
    const [index0, length] = run.loops[run.loops.length - 1];
    const attrs: Record<string, Json> = {
      index: BigInt(index0 + 1),
      index0: BigInt(index0),
      first: index0 === 0,
      last: index0 === length - 1,
      length: BigInt(length),
      revindex: BigInt(length - index0),
      revindex0: BigInt(length - index0 - 1),
    };
    return attrs[expr[1] as string];
  }
  if (kind === "cat") return args(expr[1] as Json[][], run).map((v) => (typeof v === "string" ? v : pyStr(v))).join("");
  if (kind === "is") {
    const value = evalExpr(expr[2] as Json[], run);
    if (expr[1] === "defined") return value !== UNDEF;
    if (expr[1] === "undefined") return value === UNDEF;
    return value === null;
  }
  if (kind === "not") return !truth(evalExpr(expr[1] as Json[], run));
  if (kind === "and") {
    const left = evalExpr(expr[1] as Json[], run);
    return truth(left) ? evalExpr(expr[2] as Json[], run) : left;
  }
  if (kind === "or") {
    const left = evalExpr(expr[1] as Json[], run);
    return truth(left) ? left : evalExpr(expr[2] as Json[], run);
  }
  if (kind === "cmp") {
    const left = evalExpr(expr[2] as Json[], run);
    const right = evalExpr(expr[3] as Json[], run);
    if (left === UNDEF || right === UNDEF || kindOf(left) === null || kindOf(right) === null) throw new Defer("a comparison of an undefined or non-scalar value");
    return compareScalars(expr[1] as string, left, right);
  }
  throw new Defer(`unknown expression ${String(kind)}`);
}

function compareScalars(op: string, a: Json, b: Json): boolean {
  if (op === "eq") return pyEqual(a, b);
  if (op === "ne") return !pyEqual(a, b);
  const num = (x: Json): bigint | number | null => (typeof x === "boolean" ? (x ? 1n : 0n) : typeof x === "bigint" || typeof x === "number" ? x : null);
  const na = num(a);
  const nb = num(b);
  let c: number;
  if (na !== null && nb !== null) {
    if (Number.isNaN(na) || Number.isNaN(nb)) return false;
    c = na < nb ? -1 : na > nb ? 1 : 0;
  } else if (typeof a === "string" && typeof b === "string") {
    const x = [...a].map((ch) => ch.codePointAt(0) as number);
    const y = [...b].map((ch) => ch.codePointAt(0) as number);
    c = 0;
    for (let i = 0; i < Math.min(x.length, y.length) && c === 0; i++) c = x[i] - y[i];
    if (c === 0) c = x.length - y.length;
  } else throw new Defer("an ordering of values of different types");
  if (op === "lt") return c < 0;
  if (op === "lteq") return c <= 0;
  if (op === "gt") return c > 0;
  return c >= 0;
}

function args(exprs: Json[][], run: Run): Json[] {
  const values = exprs.map((e) => arg(evalExpr(e, run)));
  if (values.reduce((n: number, v) => n + (typeof v === "string" ? pyLen(v) : 1000), 0) > MAX_ARG_TEXT) throw new Defer("formatted text over 1,000,000 characters");
  return values;
}

function arg(value: Value): Json {
  if (typeof value === "string") {
    if (value.length > MAX_ARG_TEXT && pyLen(value) > MAX_ARG_TEXT) throw new Defer("formatted text over 1,000,000 characters");
  } else if (typeof value === "bigint") {
    if ((value < 0n ? -value : value) >= MAX_INT) throw new Defer("an integer of 10^18 or more formatted");
  } else if (!(typeof value === "number" || typeof value === "boolean" || value === null)) {
    throw new Defer(value === UNDEF ? "an undefined value formatted" : "a list or mapping formatted");
  }
  return value as Json;
}

function apply(name: string, value: Value, fargs: Json[]): Json {
  if (name === "default") {
    if (value === UNDEF || (fargs.length > 1 && fargs[1] && !truth(value))) return fargs.length ? fargs[0] : "";
    return value;
  }
  if (value === UNDEF) throw new Defer("a filter applied to an undefined value");
  if (name === "join") {
    if (!Array.isArray(value) || value.length > MAX_STEPS) throw new Defer("join of something other than a list");
    const texts = value.map((v) => (typeof v === "string" ? v : pyStr(arg(v))));
    const sep = fargs.length ? (fargs[0] as string) : "";
    if (texts.reduce((n, t) => n + pyLen(t), 0) + pyLen(sep) * texts.length > MAX_ARG_TEXT) throw new Defer("joined text over 1,000,000 characters");
    return texts.join(sep);
  }
  if (name === "length" || name === "count") {
    if (typeof value === "string") return BigInt(pyLen(value));
    if (Array.isArray(value)) return BigInt(value.length);
    if (isObject(value)) return BigInt(value.size);
    throw new Defer("length of a scalar");
  }
  if (name === "round") {
    if (!(typeof value === "bigint" || typeof value === "number") || (typeof value === "bigint" && (value < 0n ? -value : value) >= MAX_INT)) {
      throw new Defer("round of something other than a number");
    }
  } else if (name === "title" || name === "capitalize" || name === "string") arg(value);
  const f = PLAIN_FILTERS[name];
  if (f === undefined) throw new Defer(`unknown filter ${name}`);
  const result = f(value, ...fargs);
  if (typeof result === "string" && result.length > MAX_TEXT) throw new Defer("filter output over 4,000,000 characters");
  return result;
}
