// The state checks a render runs, as the Python runtime runs them (runtime/engine.py `_validate` and the
// `check_state_data` call before it; runtime/fill.py `check_item` for an offered item of a lazy list):
//   - `state(bundle, state)`: size limits and JSON data (PM811, PM812), then the inputs schema with the
//     lazy lists' items skipped (PM810 listing every problem);
//   - `lazyItem(bundle, path, index, item)`: one offered item, in one pass where the compiler proved its schema
//     a record (item_proofs), else as JSON data within the limits and against the item schema;
//   - `toolProblems`, `toolWithDefaults`: tool declarations offered from the state (tooldecl.ts `problems`, `withDefaults`).
// Errors are StateError (schema/state_errors.ts) without a role: the engine names it.
// A role whose inputs schema the TypeScript validator cannot decide as Python does is refused: PM801.
import { buildError } from "./errors.js";
import type { Json, JsonObject } from "./pyjson.js";
import { type ItemCheck, itemChecks } from "./itemproof.js";
import { StateError } from "./schema/state_errors.js";
import { problems as toolProblems, withDefaults as toolWithDefaults } from "./tooldecl.js";
import { Unsupported, Validator } from "./schema/validate.js";
import { checkStateData } from "./statelimits.js";

/** What these checks read of a role bundle. */
export interface CheckedBundle {
  id: string;
  inputs: JsonObject;
  lazyPaths: string[][];
  itemProofs: JsonObject[];
}

interface Prepared {
  validator: Validator | null;
  proven: Map<string, ItemCheck>;
}

const prepared = new WeakMap<object, Prepared>();

function prepare(bundle: CheckedBundle): Prepared {
  let p = prepared.get(bundle);
  if (p === undefined) {
    let validator: Validator | null = null;
    if (bundle.inputs.size) {
      try {
        validator = new Validator(bundle.inputs, { lazyPaths: bundle.lazyPaths });
      } catch (err) {
        if (!(err instanceof Unsupported)) throw err;
        throw buildError(
          `role '${bundle.id}': its inputs schema needs what the TypeScript runtime does not implement: ${err.message}`,
          "keep the inputs schema to what promptmill's own validator decides (no unevaluated*, $dynamicRef, " +
            "remote or anchor $refs, nested $id), or render this role with the Python runtime",
        );
      }
    }
    p = { validator, proven: validator ? itemChecks(bundle.itemProofs, bundle.lazyPaths) : new Map() };
    prepared.set(bundle, p);
  }
  return p;
}

/** Refuse a state that is not JSON data of a sane size, or does not fit the role's inputs (lazy lists aside). */
export function checkState(bundle: CheckedBundle, state: JsonObject): void {
  checkStateData(state, bundle.lazyPaths);
  const { validator } = prepare(bundle);
  if (validator === null) return;
  let errors: [string, string][];
  try {
    if (validator.isValid(state)) return;
    errors = validator.errors(state);
  } catch (err) {
    if (!(err instanceof RangeError)) throw err; // the stack ran out: lazy lists skip the depth limit
    throw new StateError("", [["state", "is nested too deeply to check against the inputs schema"]], "PM812");
  }
  throw new StateError("", errors);
}

/** Check item `index` (counted from the state's first item) of the lazy list at `path`, when it is offered. */
export function checkLazyItem(bundle: CheckedBundle, path: string[], index: number, item: Json): void {
  const { validator, proven } = prepare(bundle);
  const check = proven.get(JSON.stringify(path));
  if (check !== undefined && check(item, path.length + 1)) return;
  checkStateData(item, [], [...path, index]);
  if (validator !== null && !validator.itemValid(path, item)) throw new StateError("", validator.itemErrors(path, index, item));
}

/** Makes the error the engine catches from the problems of a refused state (its own StateError class). */
export type StateErrorFactory = (errors: [string, string][], code: string) => Error;

/**
 * The engine's StateChecks: `Runtime.load(dir, stateChecks())`. With `makeError`, refusals are thrown as the
 * errors it makes (e.g. the pipeline's `stateErrorAt`), so an engine with a StateError class of its own
 * recognises them; without, as schema/state_errors.ts StateError.
 */
export function stateChecks(makeError?: StateErrorFactory): {
  state(bundle: CheckedBundle, state: JsonObject): void;
  lazyItem(bundle: CheckedBundle, path: string[], index: number, item: Json): void;
} {
  const wrap =
    <A extends unknown[]>(fn: (...args: A) => void) =>
    (...args: A): void => {
      try {
        fn(...args);
      } catch (err) {
        if (makeError && err instanceof StateError) throw makeError([...err.errors] as [string, string][], err.code);
        throw err;
      }
    };
  return { state: wrap(checkState), lazyItem: wrap(checkLazyItem) };
}

export { toolProblems, toolWithDefaults };
