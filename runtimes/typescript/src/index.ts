// The public API of the TypeScript runtime:
//
//   import { Runtime, requestData, requestText } from "promptmill";
//   const rt = Runtime.load("build");
//   const req = rt.render("executor", parse(stateJson), { budget: 8000, provider: "openai", model: "gpt-4o-mini" });
//   requestText(req);        // the prompt as one text (`promptmill render --format text`)
//   requestData(req);        // the render document (`--format json`), JSON data for pyjson.dumps
//   payloadFor("openai", req) // the provider payload (`--format openai`)
export { Runtime, NO_CHECKS, type RenderOptions, type StateChecks } from "./engine.js";
export { requestData, requestText, requestSystem, type PromptRequest, type RenderedSection, type Message } from "./request.js";
export { payloadFor } from "./payloads.js";
export { loadBuild, loadBundleFile, roleFromDict, manifestFromDict, type RoleBundle, type Section, type Budget, type Contract, type Manifest } from "./bundle.js";
export { evaluate, problems as conditionProblems, conditionContext } from "./conditions.js";
export { runPlan, planOk, Deferred } from "./plans.js";
export { toYaml } from "./yamlemit.js";
export { PromptmillError } from "./errors.js";
export { StateError } from "./fill.js";
export { stateChecks } from "./statechecks.js";
export { getWire, WIRE_NAMES } from "./wire.js";
export { defaultTable, type ModelInfo, type ModelTable } from "./models.js";
export { parse, dumps, type Json, type JsonObject } from "./pyjson.js";
