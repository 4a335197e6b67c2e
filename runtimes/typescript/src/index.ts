// The public API of the TypeScript runtime.
export { Runtime, type RenderOptions, type StateChecks } from "./engine.js";
export { requestData, requestText, requestSystem, type PromptRequest, type RenderedSection, type Message } from "./request.js";
export { loadBuild, roleFromDict, manifestFromDict, type RoleBundle, type Section, type Budget, type Contract, type Manifest } from "./bundle.js";
export { evaluate, problems as conditionProblems, conditionContext } from "./conditions.js";
export { runPlan, planOk, Deferred } from "./plans.js";
export { toYaml } from "./yamlemit.js";
export { PromptmillError } from "./errors.js";
export { StateError } from "./fill.js";
export { parse, dumps, type Json, type JsonObject } from "./pyjson.js";
