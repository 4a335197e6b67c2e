"""The catalog of stable diagnostic and error codes.

Each code has a short name, a default severity and a one-line summary. The
documented form, with an example that triggers it and the fix, lives in
docs/errors.md; a test keeps the two in step with the code base.

Ranges: PM0xx general and configuration, PM1xx files and YAML, PM2xx schema,
PM3xx references, PM4xx Jinja templates, PM5xx budget and tokenizers, PM6xx
composition and conditions, PM7xx output contracts and tools, PM8xx runtime.
"""

from __future__ import annotations

from typing import Literal, NamedTuple

Severity = Literal["error", "warning", "info"]


class Code(NamedTuple):
    name: str
    severity: Severity
    summary: str


CODES: dict[str, Code] = {
    # general
    "PM000": Code("internal", "error", "an unexpected failure inside promptmill (a bug: please report it)"),
    "PM001": Code("compile-failed", "error", "templates did not compile; the diagnostics say why"),
    "PM010": Code("config-invalid", "error", "promptmill.yaml or a command-line argument is unusable"),
    "PM011": Code("path-not-found", "error", "a prompts folder, file or build folder does not exist, or a folder holds no project at all"),
    "PM012": Code("build-locked", "error", "another compile holds the build lock"),
    "PM013": Code(
        "init-failed",
        "error",
        "`promptmill init` or `schema --write` would overwrite existing files (without --force), or cannot write them",
    ),
    "PM014": Code(
        "build-unwritable",
        "error",
        "the build or snapshots folder cannot be created or written (a file in the way, permissions, disk full)",
    ),
    "PM015": Code(
        "port-unsupported",
        "error",
        "`promptmill port-format`: the str.format template has a field with no template counterpart, or is malformed",
    ),
    "PM016": Code("revision-unknown", "error", "`promptmill diff`: BASE or HEAD is neither a folder nor a git revision that can be read"),
    "PM018": Code(
        "types-unwritable",
        "error",
        "`promptmill types` cannot write the module: a file it did not write is in the way, or the disk refuses",
    ),
    "PM019": Code(
        "types-stale", "error", "the types module promptmill.yaml names is missing or differs from what `promptmill types` writes now"
    ),
    "PM017": Code(
        "path-outside",
        "error",
        "a file or folder is behind a symbolic link that leads out of the folder the command works in; it is neither read nor written",
    ),
    "PM020": Code("tool-missing", "error", "a program promptmill runs (git) is not installed or not on PATH"),
    "PM021": Code("disk-refused", "error", "the disk refused a read or write: full, read-only, over quota, no permission, an I/O error"),
    "PM022": Code("name-too-long", "error", "a file name is longer than the file system allows"),
    "PM023": Code("out-of-memory", "error", "the machine ran out of memory"),
    "PM024": Code("worker-stopped", "error", "a worker process of a batch run stopped before it finished (killed, or out of memory)"),
    # files and YAML
    "PM100": Code("file-unreadable", "error", "a file could not be read (permissions, vanished, not a regular file)"),
    "PM101": Code("yaml-syntax", "error", "the file is not valid YAML"),
    "PM102": Code("not-utf8", "error", "the file is not UTF-8 text (binary, another encoding, NUL bytes, a lone surrogate escape)"),
    "PM103": Code("empty-file", "error", "the file holds no YAML document"),
    "PM104": Code("multiple-documents", "error", "the file holds more than one YAML document"),
    "PM105": Code("file-too-large", "error", "the file exceeds the size limit"),
    "PM106": Code("duplicate-key", "error", "a mapping repeats a key"),
    "PM107": Code("alias-limit", "error", "the file uses too many YAML aliases (alias-expansion bomb)"),
    "PM108": Code("too-deep", "error", "the YAML nesting is deeper than the limit"),
    "PM109": Code("yaml-tag", "error", "the file uses a YAML tag that safe loading does not allow"),
    "PM110": Code("symlink-loop", "warning", "a symbolic link in the prompts folder loops or escapes it; it was skipped"),
    "PM111": Code("too-many-nodes", "error", "the document has more nodes than the limit"),
    "PM112": Code("line-too-long", "error", "a line exceeds the line-length limit"),
    "PM113": Code(
        "invisible-character",
        "warning",
        "a file holds a character a reviewer cannot see: a bidi control, a zero-width character, a soft hyphen, a BOM or a tag character",
    ),
    # schema
    "PM200": Code("not-a-mapping", "error", "the document's top level is not a mapping"),
    "PM201": Code("schema-violation", "error", "a value does not match the template schema"),
    "PM202": Code("unknown-key", "error", "a key the schema does not allow (often a typo)"),
    "PM203": Code("unknown-kind", "error", "`kind` is missing or not one of role, constraints, output, fragment"),
    "PM204": Code("missing-key", "error", "a required key is missing"),
    "PM205": Code("wrong-type", "error", "a value has the wrong type (for example a list where a mapping is expected)"),
    "PM206": Code("invalid-id", "error", "an id does not match the id pattern"),
    # references
    "PM301": Code("duplicate-id", "error", "two files define the same id"),
    "PM302": Code("unknown-reference", "error", "a reference names an id that no file defines"),
    "PM303": Code("reference-cycle", "error", "references form a cycle"),
    "PM304": Code("wrong-kind-reference", "error", "a reference names an id of the wrong kind"),
    "PM305": Code("duplicate-section", "error", "a role defines two sections with the same id"),
    "PM306": Code("shadowed-id", "info", "an id shadows one of the same id further down the search path"),
    # Jinja
    "PM401": Code("jinja-syntax", "error", "a Jinja template does not parse"),
    "PM402": Code("unknown-filter", "error", "a template uses a filter or test that does not exist"),
    "PM403": Code("undeclared-variable", "error", "a template uses a variable the role's inputs do not declare"),
    "PM404": Code("unused-input", "warning", "an input the role declares is used by no template or condition"),
    "PM405": Code("unsafe-template", "error", "a template reaches for something the sandbox forbids"),
    "PM406": Code("template-error", "error", "a template without state failed while rendering at compile time"),
    "PM407": Code("each-not-list", "error", "an `each:` path does not point at an array in the inputs schema"),
    "PM408": Code("unescaped-in-markup", "warning", "a template prints a state value raw inside an XML-looking tag or attribute"),
    "PM409": Code(
        "undeclared-key",
        "warning",
        "a template (or a list section's order_by) reads a key the inputs schema does not declare for that object "
        "(an error when the object sets additionalProperties: false)",
    ),
    "PM410": Code("jinja-in-literal", "warning", "a section's `title` or `text` holds Jinja syntax, which is sent as written"),
    "PM411": Code(
        "needs-jinja",
        "error",
        "a template needs Jinja (it has no plan) while promptmill.yaml's `runtimes:` names a runtime without Jinja",
    ),
    # budget and tokenizers
    "PM501": Code("static-over-budget", "error", "the sections that are never trimmed already exceed the budget"),
    "PM502": Code("unknown-tokenizer", "error", "the tokenizer or model is unknown"),
    "PM503": Code("invalid-budget", "error", "the budget is inconsistent (reserve not below max_tokens, or above the context window)"),
    "PM504": Code("budget-raised", "warning", "a role asks for more than its parent or model allows; the lower value is used"),
    "PM505": Code("approximate-tokenizer", "info", "the role counts tokens approximately"),
    "PM506": Code("reserve-over-output-limit", "warning", "a role's reserve is above its model's maximum output tokens"),
    "PM507": Code("unknown-model", "warning", "a role's model is not in the model table: no window, reply limit or ratio is known"),
    # composition and conditions
    "PM601": Code("extends-chain-too-deep", "error", "an extends chain is longer than the limit"),
    "PM602": Code("section-anchor-unknown", "error", "a section's before/after/remove names a section that does not exist"),
    "PM603": Code("suppress-unknown", "warning", "a suppress names a fragment no layer provides"),
    "PM604": Code("duplicate-rule", "warning", "a rule id appears in two included constraint sets; the first wins"),
    "PM605": Code("duplicate-injection", "warning", "a fragment is injected twice; the first position wins"),
    "PM606": Code("invalid-regex", "error", "a condition's regex does not compile"),
    "PM607": Code("condition-path-unknown", "error", "a condition's path is not in the render context or inputs schema"),
    "PM608": Code("invalid-tag-name", "error", "a fragment's name cannot form an XML tag"),
    "PM609": Code("condition-invalid", "error", "a condition is malformed (unknown operator or wrong value type)"),
    "PM610": Code("cache-breaking-section", "warning", "a dynamic section sits where it breaks the cacheable stable prefix"),
    "PM611": Code(
        "cache-breaking-system-section",
        "warning",
        "a dynamic section placed in the system message comes before stable content of other messages",
    ),
    "PM612": Code("too-many-sections", "error", "a role has more sections than the limit (1,000), in its file or after composition"),
    "PM613": Code("slow-regex", "warning", "a condition's regex can backtrack for long on crafted state (nested or overlapping repeats)"),
    "PM614": Code("too-many-cache-breakpoints", "warning", "a Claude role needs more cache breakpoints than its model takes"),
    "PM615": Code(
        "cache-prefix-too-short", "info", "a Claude role's stable prefix is shorter than its model caches: the breakpoint caches nothing"
    ),
    # output contracts and tools
    "PM701": Code("invalid-json-schema", "error", "an embedded JSON Schema (inputs, reply schema, tool parameters) is not valid"),
    "PM702": Code("output-not-rendered", "warning", "the role has an output contract whose instructions no section renders"),
    "PM703": Code("contract-check-invalid", "error", "an output contract check refers to fields the reply schema does not have"),
    "PM704": Code("contract-not-object", "error", "a native or return_call contract's reply schema is not a JSON object"),
    "PM705": Code(
        "provider-schema-lossy",
        "warning",
        "a provider cannot express part of a native contract's schema (OpenAI strict mode off, or a keyword left out for Gemini)",
    ),
    "PM706": Code(
        "outputs-schema-mismatch",
        "error",
        "an output contract's `outputs` (described to the model) and `schema` (checked on the reply) name different fields",
    ),
    "PM707": Code("call-wording-unknown-name", "error", "an output contract's `call` wording uses a {name} it has no value for"),
    "PM708": Code(
        "wire-loses-schema-keyword",
        "info",
        "a wire drops or rejects a constraint of a native contract's schema (stated in the prompt; the reply is still checked)",
    ),
    # runtime
    "PM801": Code("build-invalid", "error", "the build folder is missing, corrupt, or from an incompatible version"),
    "PM802": Code("unknown-role", "error", "the build has no role with that id"),
    "PM810": Code("state-invalid", "error", "the render state does not match the role's inputs schema"),
    "PM811": Code("state-not-json", "error", "the render state holds a value that is not JSON data"),
    "PM812": Code("state-too-large", "error", "the render state exceeds the size limit"),
    "PM813": Code("state-file-invalid", "error", "a state file could not be read or parsed"),
    "PM820": Code("render-failed", "error", "a template failed while filling it with the state"),
    "PM821": Code("regex-timeout", "error", "a condition's regex ran past its time limit on a state value (it backtracks)"),
    "PM830": Code("budget-unmet", "error", "the untrimmable sections alone exceed the budget, or the budget holds no section at all"),
    "PM831": Code("budget-invalid", "error", "a render-time budget is zero, negative, or not an integer"),
    "PM840": Code("unknown-provider", "error", "a provider name that does not exist"),
    "PM841": Code("provider-mismatch", "error", "a request fitted for one provider was rendered for another"),
    "PM842": Code(
        "provider-cannot-express", "error", "the fitted request has a shape the provider's API cannot accept (e.g. no user message)"
    ),
    "PM843": Code(
        "provider-refused", "error", "a provider answered a request with an error: no or a wrong API key, no permission, a rate limit"
    ),
    "PM844": Code("provider-unreachable", "error", "a provider could not be reached, or did not answer within the timeout"),
    "PM850": Code("tokenizer-data", "error", "tokenizer data is missing or failed its integrity check"),
    "PM860": Code("reply-not-json", "error", "a model reply holds no parseable JSON"),
    "PM861": Code("reply-invalid", "error", "a model reply does not match the output contract"),
    "PM862": Code("reply-too-large", "error", "a model reply exceeds the size limit"),
    "PM863": Code("reply-check-failed", "error", "a model reply fails a contract check that needs the render state"),
    "PM864": Code("reply-no-contract", "error", "parse_reply was called for a role that has no output contract"),
    # batch rendering
    "PM870": Code(
        "batch-row-invalid",
        "error",
        "a batch row cannot become a request: not a JSON object, no state, or larger than a batch file may hold",
    ),
    "PM871": Code(
        "batch-id-invalid",
        "error",
        "a batch row's custom id is missing, not what providers accept (^[A-Za-z0-9_-]{1,64}$), or used twice",
    ),
    "PM872": Code("batch-error-rate", "error", "more batch rows failed than --max-error-rate allows; no request files were written"),
    "PM873": Code("batch-result-invalid", "error", "a batch results line cannot be read, matches no request, or carries no reply"),
    "PM874": Code(
        "batch-out-not-empty",
        "error",
        "a batch --out folder holds files promptmill did not write there, or that changed since; nothing is written",
    ),
    "PM875": Code("batch-out-locked", "error", "another promptmill batch run is writing to the same --out folder"),
    "PM876": Code(
        "batch-write-failed",
        "error",
        "a batch output file cannot be created or written (disk full, file size limit, permissions); no partial file is left",
    ),
    "PM879": Code("batch-folder-invalid", "error", "the --batch folder's summary.json or a request file of it cannot be read"),
}


def default_severity(code: str) -> Severity:
    entry = CODES.get(code)
    return entry.severity if entry else "error"
