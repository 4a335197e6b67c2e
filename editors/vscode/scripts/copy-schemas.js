// Copies promptmill's JSON Schemas (the repository's schemas/, what `promptmill schema KIND` prints)
// into schemas/, which package.json's yamlValidation names, and checks that this package's version is
// promptmill's (compiler/promptmill/core/version.py): the .vsix follows promptmill's version.
"use strict";
const fs = require("fs");
const path = require("path");

const here = path.resolve(__dirname, "..");
const repo = path.resolve(here, "..", "..");
const from = path.join(repo, "schemas");
const to = path.join(here, "schemas");
fs.mkdirSync(to, { recursive: true });
for (const name of ["project", "role", "constraints", "output", "fragment"]) {
  fs.copyFileSync(path.join(from, `${name}.schema.json`), path.join(to, `${name}.schema.json`));
}
const versionPy = fs.readFileSync(path.join(repo, "compiler", "promptmill", "core", "version.py"), "utf8");
const m = /__version__\s*=\s*"([^"]+)"/.exec(versionPy);
const own = JSON.parse(fs.readFileSync(path.join(here, "package.json"), "utf8")).version;
if (!m || m[1] !== own) {
  console.error(`editors/vscode/package.json has version ${own}, promptmill has ${m ? m[1] : "none found"}: make them equal`);
  process.exit(1);
}
