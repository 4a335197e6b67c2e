// `npm test`: the pure parts, with node's own test runner (node --test).
import { test } from "node:test";
import * as assert from "node:assert/strict";
import * as fs from "node:fs";
import * as path from "node:path";
import { diagnose, installCommand, missingMessage, quote, resolveLaunch, statusText } from "../src/resolve";
import { previewHtml } from "../src/preview";

const here = path.resolve(__dirname, "..", "..");

test("the setting wins, then the Python extension's interpreter, then promptmill on PATH", () => {
  assert.deepEqual(resolveLaunch(["/v/bin/promptmill"], "/usr/bin/python3"), { command: "/v/bin/promptmill", prefix: [], source: "setting" });
  assert.deepEqual(resolveLaunch(["uv", "run", "promptmill"], undefined).prefix, ["run", "promptmill"]);
  assert.deepEqual(resolveLaunch([" ", ""], "/p/.venv/bin/python"), {
    command: "/p/.venv/bin/python",
    prefix: ["-m", "promptmill.cli"],
    source: "python",
    python: "/p/.venv/bin/python",
  });
  assert.deepEqual(resolveLaunch(undefined, undefined), { command: "promptmill", prefix: [], source: "path" });
  assert.equal(resolveLaunch([], "  ").source, "path");
});

test("a failed start is told apart: no promptmill, no [lsp] extra, something else", () => {
  assert.equal(diagnose("ENOENT", null, ""), "promptmill");
  assert.equal(diagnose(undefined, 1, "/x/python: Error while finding module specification for 'promptmill.cli' (ModuleNotFoundError: No module named 'promptmill')"), "promptmill");
  assert.equal(diagnose(undefined, 1, "promptmill: error[PM010]: the language server needs pygls\n    hint: pip install 'promptmill[lsp]'"), "lsp-extra");
  assert.equal(diagnose(undefined, 1, "ModuleNotFoundError: No module named 'lsprotocol'"), "lsp-extra");
  assert.equal(diagnose(undefined, 2, "Error: No such command 'lsp'."), "other");
});

test("the message names where promptmill was looked for and the command that installs it", () => {
  const py = resolveLaunch([], "/home/a b/.venv/bin/python");
  assert.equal(installCommand(py), "'/home/a b/.venv/bin/python' -m pip install 'promptmill[lsp]'");
  const m = missingMessage("lsp-extra", py);
  assert.match(m, /\[lsp\] extra/);
  assert.match(m, /Install it with: '\/home\/a b\/\.venv\/bin\/python' -m pip install 'promptmill\[lsp\]'$/);
  assert.equal(missingMessage("promptmill", resolveLaunch([], undefined)), "promptmill is not installed on PATH. Install it with: pip install 'promptmill[lsp]'");
  assert.match(missingMessage("other", resolveLaunch(["pm"], undefined), "Traceback...\nValueError: boom\n"), /setting names it \(pm\)\): ValueError: boom\./);
  assert.equal(quote("plain/path-1.0"), "plain/path-1.0");
  assert.equal(quote("it's"), `'it'\\''s'`);
});

test("the status bar shows the server's tokens against the budget, or its error", () => {
  assert.equal(statusText(undefined), undefined);
  assert.equal(statusText({ role: null }), undefined);
  const s = statusText({ role: "helpdesk", tokens: 131, budget: 3500, wire: "openai", model: "gpt-4o-mini", state: "examples/h.state.yaml", budget_line: "budget 3500: max_tokens 4000 - reserve 500", dropped: [] });
  assert.equal(s?.text, "helpdesk: 131/3500 tokens");
  assert.match(s!.tooltip, /^budget 3500: max_tokens 4000 - reserve 500\nwire openai/);
  assert.match(statusText({ role: "r", tokens: 9, budget: 8, dropped: ["a (whole section)"] })!.tooltip, /dropped: a \(whole section\)/);
  assert.match(statusText({ role: "r", error: { code: "PM301", message: "no fit" } })!.text, /warning/);
});

test("the preview page renders nothing itself: a script that only shows what it is posted, under a nonce", () => {
  const html = previewHtml("vscode-resource:", "N0NCE");
  assert.match(html, /script-src 'nonce-N0NCE'/);
  assert.match(html, /<script nonce="N0NCE">/);
  assert.doesNotMatch(html, /fetch\(|XMLHttpRequest/);
});

test("the package's version is promptmill's, and its schemas are promptmill's", () => {
  const pkg = JSON.parse(fs.readFileSync(path.join(here, "package.json"), "utf8"));
  const py = fs.readFileSync(path.join(here, "..", "..", "compiler", "promptmill", "core", "version.py"), "utf8");
  assert.equal(pkg.version, /__version__\s*=\s*"([^"]+)"/.exec(py)![1]);
  for (const entry of pkg.contributes.yamlValidation) {
    const shipped = fs.readFileSync(path.join(here, entry.url), "utf8");
    const source = fs.readFileSync(path.join(here, "..", "..", "schemas", path.basename(entry.url)), "utf8");
    assert.equal(shipped, source, entry.url);
  }
  assert.equal(pkg.extensionDependencies, undefined); // the YAML extension is not required
});
