"""The conformance corpus: what the Python runtime prints for renders every runtime must reproduce.

    python tools/gen_conformance.py           write conformance/ (builds, states, cases.jsonl, state-cases.jsonl, schema-checks.jsonl)
    python tools/gen_conformance.py --check   write nothing; exit 1 when conformance/ is stale

`conformance/cases.jsonl` holds one render a line: `{id, build, role, state, args, stdout, stderr, exit}`.
`build` is a build folder relative to the repository root (the repo's own `build/`, or one of the small
synthetic projects below compiled into `conformance/builds/<name>/`); `state` the state file
(`conformance/states/<hash>.json`, one file per distinct state); `args` what follows
`render ROLE --build BUILD --state STATE` on the command line; `stdout`, `stderr` and `exit` what
`promptmill render` printed and returned; `fallback`, when present, the role's sections that need Jinja (a
runtime without Jinja must refuse the role with PM801 naming one of them instead); `yaml_syntax`, when true,
that the state is YAML that does not parse (a runtime must give PM813 for the same file and line; the words
are its YAML parser's). A runtime runs every case
from the repository root with the same arguments and must print the same bytes
(runtimes/typescript/test/conformance.test.mjs, run by `npm test` and by tests/test_conformance_ts.py).

The expected output is produced in-process with click's CliRunner on `promptmill.cli.main.main`, the
function the `promptmill` command runs: the same code, the same bytes, a fraction of the time.
"""

from __future__ import annotations

import argparse
import base64
import filecmp
import hashlib
import json
import os
import shutil
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import yaml

REPO = Path(__file__).resolve().parent.parent
OUT = REPO / "conformance"
CASES = OUT / "cases.jsonl"
BUILDS = OUT / "builds"
STATES = OUT / "states"
STATE_CASES = OUT / "state-cases.jsonl"  # tools/state_cases.py
SCHEMA_CHECKS = OUT / "schema-checks.jsonl"  # tools/state_cases.py: tool declarations' schemas
SIZE_LIMIT = 4_500_000  # bytes of cases.jsonl: the corpus stays small enough to commit and diff

# -- synthetic projects: one small project per edge the shipped prompts do not reach -----------------

EDGES_ROLES = {
    "promptmill.yaml": "prompts: prompts\n",
    # exact budget boundaries, item steps, order_by ties, truncation head and tail with markers
    "prompts/lists.yaml": """\
kind: role
id: lists
budget: {max_tokens: 4000}
inputs:
  type: object
  properties:
    intro: {type: string}
    notes:
      type: array
      items:
        type: object
        required: [text]
        properties:
          text: {type: string}
          score: {type: [number, "null"]}
    tail_text: {type: string}
    head_text: {type: string}
    tags: {type: array, items: {type: string}}
sections:
  - id: rules
    text: Answer in one short paragraph.
  - id: intro
    title: "INTRO:"
    template: "{{ intro }}"
    priority: 80
    trim: drop
  - id: notes
    title: "NOTES:"
    each: notes
    as: note
    template: "- {{ note.text }}"
    order_by: score
    priority: 60
  - id: head
    title: "HEAD:"
    template: "{{ head_text }}"
    priority: 40
    trim: truncate
  - id: tail
    title: "TAIL:"
    template: "{{ tail_text }}"
    priority: 30
    trim: truncate
    truncate: {keep: tail, marker: "[... earlier text cut ...]"}
  - id: tags
    title: "TAGS:"
    each: tags
    as: tag
    template: "#{{ tag }}"
    keep: last
    priority: 20
""",
    "prompts/chat.yaml": """\
kind: role
id: chat
budget: {max_tokens: 4000}
inputs:
  type: object
  required: [message]
  properties:
    message: {type: string}
    history:
      type: array
      items:
        type: object
        required: [role, content]
        properties:
          role: {enum: [user, assistant]}
          content: {type: string}
sections:
  - id: persona
    text: You are a helpful assistant who answers briefly.
  - id: history
    history: history
    step: 2
    priority: 40
  - id: message
    message: user
    template: "{{ message }}"
    trim: never
""",
    # values printed as Python prints them, hostile text, conditions on model, provider and event
    "prompts/values.yaml": """\
kind: role
id: values
inputs:
  type: object
  properties:
    n: {type: integer}
    x: {type: number}
    s: {type: string}
    flag: {type: boolean}
    data: {type: object}
    items: {type: array}
sections:
  - id: head
    text: Values follow.
  - id: numbers
    template: "n={{ n }} x={{ x }} flag={{ flag }}"
  - id: text
    title: "TEXT:"
    template: "{{ s }}"
    trim: truncate
  - id: data
    template: "{{ data | to_json }}"
  - id: yaml
    template: "{{ data | to_yaml }}"
  - id: list
    each: items
    as: it
    template: "* {{ it }}"
  - id: gpt
    text: Only for GPT models.
    when: {path: model, op: regex, value: "^gpt-"}
  - id: anthropic
    text: Only when sent to Anthropic.
    when: {path: provider, op: eq, value: anthropic}
  - id: resumed
    text: Resuming the conversation.
    when: {path: event, op: eq, value: continue}
""",
    "prompts/strict.yaml": """\
kind: role
id: strict
inputs:
  type: object
  required: [name, kind, count]
  additionalProperties: false
  properties:
    name: {type: string, minLength: 1, maxLength: 20, pattern: "^[a-z]"}
    kind: {enum: [alpha, beta, 3, null]}
    count: {type: integer, minimum: 0, maximum: 10}
    ratio: {type: number, exclusiveMinimum: 0, multipleOf: 0.5}
    tags: {type: array, items: {type: string}, maxItems: 3, uniqueItems: true}
    nested:
      type: object
      required: [deep]
      properties:
        deep:
          type: object
          properties:
            deeper: {type: array, items: {type: object, required: [v], properties: {v: {type: boolean}}}}
    entries:
      type: array
      items:
        type: object
        required: [id]
        additionalProperties: false
        properties:
          id: {type: string}
          summary: {type: string, maxLength: 10}
sections:
  - id: body
    template: "{{ name }} {{ kind }} {{ count }}"
  - id: entries
    each: entries
    as: e
    template: "{{ e.id }}"
""",
}

# the seed reproductions of tests/test_seed_fidelity.py (a rye return call, context layers, version-2 parents)
SEEDS = {
    "promptmill.yaml": (
        "prompts: prompts\n"
        "inject:\n  - {id: hook-before, fragment: hb, position: before}\n  - {id: hook-after, fragment: ha, position: after}\n"
    ),
    "prompts/ob.yaml": "kind: fragment\nid: ob\ntext: OB\n",
    "prompts/oa.yaml": "kind: fragment\nid: oa\ntext: OA\n",
    "prompts/ha.yaml": "kind: fragment\nid: ha\nwrap: false\ntext: HA\n",
    "prompts/hb.yaml": "kind: fragment\nid: hb\nwrap: false\ntext: HB\n",
    "prompts/r.yaml": (
        "kind: role\nid: r\ncontext: {before: [{id: ob, wrap: false}], after: [{id: oa, wrap: false}]}\n"
        "sections:\n  - {id: body, text: BODY}\n"
    ),
    "prompts/contract.yaml": """\
kind: output
id: directive-return
style: return_call
return_tool: {name: directive_return}
call:
  lead: "When you have completed all steps, return structured results:"
  call: 'rye_execute(item_type="tool", item_id="rye/agent/threads/{tool}", parameters={arguments})'
  placeholder: "<{description}{type_label}{required}>"
  placeholder_bare: "<{type}{required}>"
outputs:
  - {name: directive_path, description: Path to the created file, required: true}
  - {name: signed, description: Whether signing succeeded, type: boolean}
  - {name: count, type: integer}
""",
    "prompts/directive.yaml": "kind: role\nid: directive\noutput: directive-return\nsections:\n  - id: returns\n    output: true\n",
    "prompts/base.yaml": "kind: role\nid: base\nabstract: true\nsections:\n  - {id: who, text: You are a careful assistant.}\n",
    "prompts/terse.yaml": "kind: role\nid: terse\nabstract: true\nsections:\n  - {id: who, text: You are terse.}\n",
    "prompts/coder.yaml": (
        "kind: role\nid: coder\nabstract: true\ninputs: {type: object, properties: {diff: {type: string}}}\n"
        "sections:\n  - {id: who, text: You are a code reviewer.}\n  - {id: diff, template: '{{ diff }}'}\n"
    ),
    "prompts/task.yaml": (
        "kind: role\nid: task\nextends: base\n"
        "extends_when:\n"
        "  - {role: terse, when: {path: state.mode, op: eq, value: quick}}\n"
        "  - {role: coder, when: {path: state.category, op: eq, value: code}}\n"
        "inputs: {type: object, properties: {mode: {type: string}, category: {type: string}, task: {type: string}}}\n"
        "sections:\n  - {id: task, template: 'Task: {{ task }}'}\n"
    ),
}

# the composition examples of tests/test_composition.py: injections by event, conditions on role and model
COMPOSITION = {
    "promptmill.yaml": """\
prompts: prompts
inject:
  - id: resume
    event: continue
    fragment: note/resume
    position: before
  - id: everywhere
    fragment: note/everywhere
    position: after
  - when: {any: [{path: role.category, op: eq, value: ops}, {path: model, op: regex, value: "^gpt-4o"}]}
    fragment: n/ops
""",
    "prompts/frags.yaml": "kind: fragment\nid: note/resume\ntext: Resume.\n",
    "prompts/frags2.yaml": "kind: fragment\nid: note/everywhere\ntext: Everywhere.\n",
    "prompts/f.yaml": "kind: fragment\nid: n/ops\ntext: Ops.\n",
    "prompts/a.yaml": "kind: role\nid: a\ncategory: ops\nsections:\n  - {id: body, text: A.}\n",
    "prompts/b.yaml": "kind: role\nid: b\nmodel: gpt-4o-mini\nsections:\n  - {id: body, text: B.}\n",
    "prompts/c.yaml": "kind: role\nid: c\nsections:\n  - {id: body, text: C.}\n",
}

CASES_DIR = REPO / "tests" / "cases"
# the test suite's render project and its composition cases (tests/cases/README.md), compiled as they are
COMPOSITION_CASES = sorted(p for p in (CASES_DIR / "composition").iterdir() if (p / "case.yaml").is_file())
PROJECTS: dict[str, dict[str, str] | Path] = {
    "edges": EDGES_ROLES,
    "seeds": SEEDS,
    "composition": COMPOSITION,
    "render-project": CASES_DIR / "render" / "project",
    **{f"composition-{p.name}": p for p in COMPOSITION_CASES},
}

WIRES = ("live", "openai", "anthropic", "gemini", "openai-responses", "bedrock", "anthropic-bedrock", "anthropic-vertex", "gemini-vertex")
FORMATS = ("text", "json", *WIRES)


def compile_project(name: str, files: dict[str, str] | Path, out: Path) -> None:
    """Compile a project (files, or a folder of the test suite's cases) into `out` (a fresh folder).

    The user folder is the case's own (`user_dir` in its case.yaml) or an empty one: a developer's
    ~/.config/promptmill must never reach the corpus."""
    import promptmill

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "project"
        user = Path(tmp) / "user"
        user.mkdir()
        if isinstance(files, Path):
            shutil.copytree(files, root)
            spec = yaml.safe_load((files / "case.yaml").read_text(encoding="utf-8")) if (files / "case.yaml").exists() else {}
            if spec.get("user_dir"):
                user = root / spec["user_dir"]
        else:
            for rel, text in files.items():
                (root / rel).parent.mkdir(parents=True, exist_ok=True)
                (root / rel).write_text(text, encoding="utf-8")
        if out.exists():
            shutil.rmtree(out)
        before = os.environ.get("PROMPTMILL_USER_DIR")
        os.environ["PROMPTMILL_USER_DIR"] = str(user)
        try:
            result = promptmill.compile(root, output=out, force=True)
        finally:
            if before is None:
                del os.environ["PROMPTMILL_USER_DIR"]
            else:
                os.environ["PROMPTMILL_USER_DIR"] = before
        errors = [d for d in result.diagnostics if d.severity == "error"]
        if errors:
            raise SystemExit(f"conformance project {name!r} does not compile: {errors}")
    lock = out / ".lock"  # the compiler's lock file, empty; not part of the build
    if lock.exists():
        lock.unlink()


# -- states ------------------------------------------------------------------------------------------


def state_text(state: Any) -> str:
    """JSON text of a state: UTF-8 where it can be, \\u escapes where it holds lone surrogates."""
    text = json.dumps(state, ensure_ascii=False, indent=None)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        text = json.dumps(state, ensure_ascii=True)
    return text


def example_states() -> dict[str, str]:
    """Role id -> its example state (prompts/examples/<role>.state.yaml) as JSON text."""
    from promptmill.source.statefile import read_state

    out = {}
    for path in sorted((REPO / "prompts" / "examples").glob("*.state.yaml")):
        out[path.name[: -len(".state.yaml")]] = state_text(read_state(path))
    return out


def model_ids() -> list[str]:
    """One model per row of the model table: its first known id, else its pattern without `*`."""
    import fnmatch

    table = json.loads((REPO / "compiler" / "promptmill" / "data" / "models.json").read_text(encoding="utf-8"))
    known = table["known_ids"]
    out = []
    for row in table["models"]:
        pattern = row["pattern"]
        # the first known id this row is the first match for (rows are tried in order)
        pick = next(
            (k for k in known if fnmatch.fnmatchcase(k, pattern) and _first_row(table["models"], k) is row),
            pattern.replace("*", ""),
        )
        out.append(pick)
    return out


def _first_row(rows: list[dict], model: str) -> dict | None:
    import fnmatch

    return next((r for r in rows if fnmatch.fnmatchcase(model, r["pattern"])), None)


# -- running the Python CLI ---------------------------------------------------------------------------


StateIn = str | tuple[bytes, str]  # JSON text, or a state file's bytes and suffix (YAML, broken files)


def _state_bytes(state: StateIn) -> tuple[bytes, str]:
    return state if isinstance(state, tuple) else (state.encode("utf-8"), ".json")


def state_file(state: StateIn) -> str:
    """Where the state file of a state is, relative to the repository root (named by its hash)."""
    data, suffix = _state_bytes(state)
    return f"conformance/states/{hashlib.sha256(data).hexdigest()[:16]}{suffix}"


CHECKING = False  # --check: a missing state file is staleness, not something to write


class Stale(Exception):
    """A file of the corpus is missing or differs."""


def run_cli(build: str, role: str, state: StateIn, args: list[str]) -> tuple[str, str, int]:
    """(stdout, stderr, exit code) of `promptmill render ROLE --build BUILD --state FILE ARGS`, in-process."""
    from click.testing import CliRunner

    from promptmill.cli.main import main

    path = state_file(state)
    data = _state_bytes(state)[0]
    if not (REPO / path).exists() or (REPO / path).read_bytes() != data:
        if CHECKING:
            raise Stale(path)
        (REPO / path).parent.mkdir(parents=True, exist_ok=True)
        (REPO / path).write_bytes(data)
    try:  # click < 8.2 mixes stderr into stdout unless told not to; 8.2 keeps them apart and has no such option
        runner = CliRunner(mix_stderr=False)  # type: ignore[call-arg]
    except TypeError:
        runner = CliRunner()
    result = runner.invoke(main, ["render", role, "--build", build, "--state", path, *args], catch_exceptions=True)
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise RuntimeError(f"{role} {args}: the CLI raised {result.exception!r}") from result.exception
    return result.stdout_bytes.decode("utf-8"), result.stderr_bytes.decode("utf-8"), result.exit_code


def tokens_used(build: str, role: str, state: str, args: list[str]) -> int | None:
    """The `tokens` of the JSON render (the count the budget is compared with), or None on failure."""
    out, _, code = run_cli(build, role, state, [*args, "--format", "json"])
    if code != 0:
        return None
    data = json.loads(out)
    return int(data["tokens"])


# -- the cases -----------------------------------------------------------------------------------------

Case = tuple[str, str, str, StateIn, list[str]]  # id, build, role, state, args


def shipped_cases() -> Iterator[Case]:
    """Every shipped role with its example state: every format at its own budget, and fits below it."""
    states = example_states()
    for role, state in states.items():
        for fmt in FORMATS:
            yield f"shipped/{role}/{fmt}", "build", role, state, ["--format", fmt]
        used = tokens_used("build", role, state, [])
        if used is None:
            continue
        # tighter budgets: just enough, one short, most of it, half (trimming decisions), and far too little
        for budget in sorted({used, used - 1, used // 2, 40}):
            for fmt in ("text", "json"):
                yield f"shipped/{role}/budget-{budget}/{fmt}", "build", role, state, ["--format", fmt, "--budget", str(budget)]
        yield f"shipped/{role}/continue/json", "build", role, state, ["--format", "json", "--event", "continue"]


def model_cases() -> Iterator[Case]:
    """One model of every row of the model table, on a shipped role: budgets, ratios and wires per model."""
    states = example_states()
    for model in model_ids():
        yield f"models/{model}/executor/json", "build", "executor", states["executor"], ["--format", "json", "--model", model]
        yield (
            f"models/{model}/companion-chat/payload",
            "build",
            "companion-chat",
            states["companion-chat"],
            ["--model", model, "--format", _wire_of(model)],
        )
        yield (
            f"models/{model}/executor/budget-600",
            "build",
            "executor",
            states["executor"],
            ["--model", model, "--format", "text", "--budget", "600"],
        )


def hostile_shipped_cases() -> Iterator[Case]:
    """The executor's example state broken in its lazily checked lists (memory, tools): errors when an item is
    offered, none when the budget never offers it; tool declarations checked, tool names unique."""
    import copy

    from promptmill.source.statefile import read_state

    base = read_state(REPO / "prompts" / "examples" / "executor.state.yaml")

    def broken(edit: Any) -> str:
        state = copy.deepcopy(base)
        edit(state)
        return state_text(state)

    variants = {
        "memory-bad-type": lambda s: s["memory"][1].update(type="oops"),
        "memory-not-object": lambda s: s["memory"].__setitem__(2, "just text"),
        "memory-score-text": lambda s: s["memory"][0].update(relevance="high"),
        "memory-long-summary": lambda s: s["memory"][0].update(summary="x" * 301),
        "tool-bad-name": lambda s: s["tools"][0].update(name="read file"),
        "tool-bad-schema": lambda s: s["tools"][1]["parameters"]["properties"]["path"].update(type="strng"),
        "tool-bad-pattern": lambda s: s["tools"][1]["parameters"]["properties"]["path"].update(pattern="("),
        "tool-duplicate": lambda s: s["tools"][1].update(name="read_file"),
        "tool-missing-parameters": lambda s: s["tools"][2].pop("parameters"),
        "deep-memory": lambda s: s["memory"][0].update(extra=json.loads("[" * 130 + "]" * 130)),
        "surrogate-in-memory": lambda s: s["memory"][3].update(summary="bad \ud800 text"),
    }
    for name, edit in variants.items():
        text = broken(edit)
        for fmt in ("text", "openai"):
            yield f"hostile/executor/{name}/{fmt}", "build", "executor", text, ["--format", fmt]
        yield f"hostile/executor/{name}/budget-700", "build", "executor", text, ["--format", "json", "--budget", "700"]


def _wire_of(model: str) -> str:
    if model.startswith("claude"):
        return "anthropic"
    if model.startswith("gemini"):
        return "gemini"
    return "openai"


def edge_cases() -> Iterator[Case]:
    b = "conformance/builds/edges"
    notes = [{"text": f"note {i} " + "word " * (i % 5), "score": [3, 1, 2, 2, 5, 1, 0.5, 2][i % 8]} for i in range(12)]
    notes.insert(3, {"text": "unscored note"})
    notes.insert(6, {"text": "null-scored note", "score": None})
    long_text = " ".join(f"sentence {i} says something about item {i * 7}." for i in range(25))
    lists = {
        "intro": "An introduction that can be dropped whole.",
        "notes": notes,
        "head_text": long_text,
        "tail_text": long_text,
        "tags": [f"tag{i}" for i in range(15)],
    }
    text = state_text(lists)
    used = tokens_used(b, "lists", text, [])
    assert used is not None
    for budget in sorted(set(range(max(used - 6, 20), used + 2)) | set(range(30, used, max(1, used // 12)))):
        yield f"edges/lists/budget-{budget}/json", b, "lists", text, ["--format", "json", "--budget", str(budget)]
        yield f"edges/lists/budget-{budget}/text", b, "lists", text, ["--format", "text", "--budget", str(budget)]
    for fmt in FORMATS:
        yield f"edges/lists/{fmt}", b, "lists", text, ["--format", fmt, "--budget", str(used // 2)]
    ties = state_text({"notes": [{"text": f"tie {i}", "score": 1} for i in range(8)] + [{"text": "top", "score": 2}]})
    for budget in (20, 25, 30, 35, 40, 60):
        yield f"edges/lists/ties-{budget}", b, "lists", ties, ["--format", "json", "--budget", str(budget)]
    bad_scores = {
        "string-score": {"notes": [{"text": "a", "score": "high"}]},
        "bool-score": {"notes": [{"text": "a", "score": True}]},
        "nan-score": "NAN",
        "not-a-list": {"notes": {"text": "a"}},
    }
    for name, state in bad_scores.items():
        t = '{"notes": [{"text": "a", "score": NaN}]}' if state == "NAN" else state_text(state)
        yield f"edges/lists/{name}", b, "lists", t, ["--format", "text"]
    # history: steps of two turns, the user turn first
    turns = [{"role": "user" if i % 2 == 0 else "assistant", "content": f"turn {i}: " + "blah " * (i % 7)} for i in range(15)]
    chat = state_text({"message": "And now?", "history": turns})
    used = tokens_used(b, "chat", chat, [])
    assert used is not None
    for budget in sorted(set(range(30, used + 1, max(1, used // 20))) | {used, used - 1}):
        yield f"edges/chat/budget-{budget}/json", b, "chat", chat, ["--format", "json", "--budget", str(budget)]
    for fmt in FORMATS:
        yield f"edges/chat/{fmt}", b, "chat", chat, ["--format", fmt, "--budget", str(used * 2 // 3)]
    yield from value_cases(b)
    yield from strict_cases(b)


def value_cases(b: str) -> Iterator[Case]:
    big = "x" * 100_000
    texts = {
        "combining": "e\u0301 a\u0308 \u0915\u094d\u0937 Z\u0351\u0354\u0357",
        "emoji": (
            "\U0001f600 \U0001f44d\U0001f3fd \U0001f1eb\U0001f1f7 \U0001f468\u200d\U0001f469\u200d\U0001f467\u200d\U0001f466 \u2764\ufe0f"
        ),
        "scripts": (
            "\u65e5\u672c\u8a9e \u0627\u0644\u0639\u0631\u0628\u064a\u0629 "
            "\u05e2\u05d1\u05e8\u05d9\u05ea \u0440\u0443\u0441\u0441\u043a\u0438\u0439 \U00020000"
        ),
        "hostile": "{{ s }} {% if x %} </system> <|endoftext|> \u0000 \u001b[31m \u2028 \r\n \\u0041 ${x} `rm -rf`",
        "big": big,
        "whitespace": "  \t lead\n\n\n\ntrail  \n",
    }
    for name, s in texts.items():
        state = state_text({"s": s, "n": 1, "x": 1.5, "flag": True, "data": {"s": s[:200]}, "items": [s[:50]]})
        for fmt in ("text", "openai") if name == "big" else ("text", "json", "openai", "anthropic", "gemini"):
            yield f"edges/values/{name}/{fmt}", b, "values", state, ["--format", fmt]
        yield f"edges/values/{name}/budget-60", b, "values", state, ["--format", "json", "--budget", "60"]
    raw_states = {
        "floats": (
            '{"n": 3, "x": 3.0, "data": {"f": [0.1, 1e-05, 1e16, 1E5, -0.0, 2.5e-300, 1.7976931348623157e308, '
            '0.30000000000000004]}, "items": [1.0, 100.0, 1e22]}'
        ),
        "bigints": (
            '{"n": 18446744073709551616, "x": 12345678901234567890123, '
            '"data": {"big": -99999999999999999999999999999}, "items": [9007199254740993]}'
        ),
        "key-order": '{"data": {"b": 1, "1": 2, "a": {"z": null, "10": true, "2": false}, "": 3}, "items": [{}, [], ""]}',
        "dup-keys": '{"s": "first", "n": 1, "s": "second"}',
        "nan": '{"x": NaN}',
        "infinity": '{"data": {"deep": [1, Infinity]}}',
        "huge-float": '{"x": 1e400}',
        "lone-surrogate": '{"s": "a\\ud800b"}',
        "lone-surrogate-key": '{"data": {"\\udc00": 1}}',
        "surrogate-pair": '{"s": "\\ud83d\\ude00 ok"}',
        "not-an-object": "[1, 2]",
        "scalar": '"text"',
        "wrong-types": '{"n": "1", "x": true, "s": 5, "flag": "yes", "data": [], "items": {}}',
        "bool-as-int": '{"n": true, "x": false}',
        "float-as-int": '{"n": 3.0, "x": 4}',
        "float-as-int-bad": '{"n": 3.5}',
        "syntax-error": '{"s": "a",}',
        "empty": "",
        "yaml-looking": "s: not json",
        "deep": '{"data": ' + '{"a": ' * 200 + "1" + "}" * 200 + "}",
        "deep-list": '{"items": ' + "[" * 130 + "]" * 130 + "}",
        "control": '{"s": "tab\\there\\u0007bell\\u0000nul"}',
    }
    for name, text in raw_states.items():
        for fmt in ("text", "json"):
            yield f"edges/values/{name}/{fmt}", b, "values", text, ["--format", fmt]
    cond = state_text({"s": "conditions", "n": 2})
    for fmt, extra in (
        ("json", ["--model", "gpt-4o"]),
        ("json", ["--model", "claude-sonnet-4-5"]),
        ("anthropic", []),
        ("json", ["--provider", "anthropic"]),
        ("json", ["--event", "continue"]),
        ("gemini", ["--event", "continue", "--model", "gemini-2.5-pro"]),
        ("text", ["--provider", "openai", "--model", "gpt-5"]),
        ("openai", ["--model", "claude-sonnet-4-5"]),
        ("json", ["--model", "no-such-model-9"]),
        ("anthropic", ["--model", "gpt-4o"]),
    ):
        yield f"edges/values/conditions/{fmt}/{'_'.join(extra) or 'plain'}", b, "values", cond, ["--format", fmt, *extra]


def strict_cases(b: str) -> Iterator[Case]:
    ok = {"name": "abc", "kind": "alpha", "count": 3}
    states: dict[str, Any] = {
        "valid": ok,
        "missing-all": {},
        "wrong-types": {"name": 1, "kind": "gamma", "count": "3"},
        "extra-keys": {**ok, "nmae": "x", "zzz": 1, "odd key": 2, "ключ": 3},
        "bounds": {"name": "", "kind": 3, "count": 11, "ratio": 0.3, "tags": ["a", "a", "b", "c"]},
        "bounds2": {"name": "Abc" + "x" * 30, "kind": None, "count": -1, "ratio": 0, "tags": [1, 2]},
        "float-count": {**ok, "count": 3.0, "ratio": 1.5},
        "bool-count": {**ok, "count": True},
        "deep-errors": {**ok, "nested": {"deep": {"deeper": [{"v": True}, {"v": 1}, {}, "x", {"v": None}]}}},
        "nested-missing": {**ok, "nested": {}},
        "entries-bad": {**ok, "entries": [{"id": "a"}, {"id": 1, "summary": "far too long here", "extra": 1}, {"summary": "s"}, 7]},
        "entries-good": {**ok, "entries": [{"id": "a"}, {"id": "b", "summary": "short"}]},
        "many-errors": {"name": 1, **{f"k{i}": i for i in range(30)}},
        "kind-enum-float": {**ok, "kind": 3.0},
        "kind-enum-bool": {**ok, "kind": True},
    }
    for name, state in states.items():
        yield f"edges/strict/{name}", b, "strict", state_text(state), ["--format", "text"]
    yield "edges/strict/entries-bad-budget", b, "strict", state_text(states["entries-bad"]), ["--format", "text", "--budget", "12"]
    yield "edges/strict/unknown-role", b, "strct", "{}", ["--format", "text"]
    yield "edges/strict/abstract-role", "conformance/builds/seeds", "base", "{}", ["--format", "text"]
    yield "edges/strict/bad-budget", b, "strict", state_text(ok), ["--format", "text", "--budget", "0"]
    yield "edges/strict/negative-budget", b, "strict", state_text(ok), ["--format", "text", "--budget", "-5"]


def seed_cases() -> Iterator[Case]:
    b = "conformance/builds/seeds"
    for fmt in ("text", "json", "openai", "anthropic"):
        yield f"seeds/directive/{fmt}", b, "directive", "{}", ["--format", fmt]
        yield f"seeds/r/{fmt}", b, "r", "{}", ["--format", fmt]
    task_states = {
        "quick": {"mode": "quick", "category": "code", "task": "fix it"},
        "code": {"category": "code", "task": "review", "diff": "+x"},
        "plain": {"task": "think"},
    }
    for name, state in task_states.items():
        for fmt in ("text", "json"):
            yield f"seeds/task/{name}/{fmt}", b, "task", state_text(state), ["--format", fmt]
    b = "conformance/builds/composition"
    for role in ("a", "b", "c"):
        for extra in ([], ["--model", "claude-opus-4-7"], ["--model", "gpt-4o"], ["--event", "continue"]):
            yield f"composition/{role}/{'_'.join(extra) or 'plain'}", b, role, "{}", ["--format", "json", *extra]


def suite_cases() -> Iterator[Case]:
    """The test suite's render project with its state files (YAML, and the broken ones of negative/), and
    every render of its composition cases (role, state, event, render-time budget)."""
    b = "conformance/builds/render-project"
    state = ((CASES_DIR / "render" / "state.yaml").read_bytes(), ".yaml")
    for role in ("triage", "triage-short"):
        for fmt in FORMATS:
            yield f"suite/render/{role}/{fmt}", b, role, state, ["--format", fmt]
        yield f"suite/render/{role}/budget-150", b, role, state, ["--format", "json", "--budget", "150"]
    for path in sorted((CASES_DIR / "render" / "negative").iterdir()):
        yield f"suite/render/negative/{path.name}", b, "triage", (path.read_bytes(), path.suffix), ["--format", "text"]
    for case in COMPOSITION_CASES:
        spec = yaml.safe_load((case / "case.yaml").read_text(encoding="utf-8"))
        for i, r in enumerate(spec.get("renders", [])):
            args = ["--format", "json", "--event", r.get("event", "start")]
            if r.get("render_budget") is not None:
                args += ["--budget", str(r["render_budget"])]
            if r.get("provider"):
                args += ["--provider", r["provider"]]
            state = state_text(r.get("state") or {})
            yield f"suite/composition/{case.name}/{i}-{r['role']}", f"conformance/builds/composition-{case.name}", r["role"], state, args
            yield (
                f"suite/composition/{case.name}/{i}-{r['role']}/text",
                f"conformance/builds/composition-{case.name}",
                r["role"],
                state,
                [
                    *args[2:],
                    "--format",
                    "text",
                ],
            )


# -- files: state files that are not regular files, standard input, sizes -------------------------------------
#
# conformance/files-cases.jsonl: renders whose state is a FIFO, a device, a folder, a socket, a symbolic link,
# an oversized or sparse file, or bytes on standard input. Such files cannot live in git, so each case says how
# to make them: `setup` is a list of steps run in a new temporary folder, `{tmp}` in a path, in `state` and in
# the expected output stands for that folder. `stdin` is the standard input: `{"base64": ...}` or
# `{"file": "/dev/zero"}` (none: empty). Runners make the files, run the command as a real process from the
# repository root, and compare stdout, stderr and the exit code with `{tmp}` replaced by their own folder
# (runtimes/typescript/test/conformance-files.test.mjs).
#
# `build`, when it holds `{tmp}`, is a build folder the setup made or broke. `output`, when present, is where
# standard output goes: "/dev/full" (a full disk: PM021) or "closed-pipe" (a pipe whose reader is gone, as in
# `promptmill render ... | head -c 10`: exit 141 and no message); those cases run the Python CLI as a real process.
#
# Setup steps: {"make": "fifo"|"folder"|"socket", "path"}, {"make": "link", "path", "to"} (a symbolic link),
# {"make": "copy", "from", "path"} (a file or folder of the repository), {"make": "remove", "path"},
# {"make": "file", "path", "text"} or {"make": "file", "path", "base64"} (bytes)
# or {"make": "file", "path", "pieces": [[text, count], ...]} (each text repeated)
# or {"make": "file", "path", "size", "fill"} (`fill` repeated to `size` bytes)
# or {"make": "file", "path", "size", "sparse": true} (a hole of `size` bytes: large to fstat, nothing written).

FILES_CASES = OUT / "files-cases.jsonl"


def _pieces(path: str, *pieces: tuple[str, int]) -> dict[str, Any]:
    """A file step whose text is each piece repeated its count of times, in order (a deep or long file, kept short)."""
    return {"make": "file", "path": path, "pieces": [list(p) for p in pieces]}


def _alias_bomb() -> str:
    """Nine levels of ten aliases each: 10**9 nodes once expanded, from 9 short lines."""
    lines = ["a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    lines += [f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 10) + "]" for i in range(1, 9)]
    return "\n".join(lines) + "\n"


def files_cases() -> list[dict[str, Any]]:
    """Each case: id, setup, state (the --state argument), stdin; role executor of the repository's build."""
    limit = 8 * 1024 * 1024  # statefile.MAX_STATE_FILE_BYTES
    state = example_states()["executor"]  # JSON text: the renders that succeed print the prompt
    yaml_state = (REPO / "prompts" / "examples" / "executor.state.yaml").read_bytes()
    b64 = lambda raw: {"base64": base64.b64encode(raw).decode("ascii")}  # noqa: E731
    cases: list[tuple[str, list[dict[str, Any]], str, dict[str, str] | None]] = [
        ("fifo", [{"make": "fifo", "path": "{tmp}/state.json"}], "{tmp}/state.json", None),
        ("fifo-yaml", [{"make": "fifo", "path": "{tmp}/state.yaml"}], "{tmp}/state.yaml", None),
        ("fifo-dot-path", [{"make": "fifo", "path": "{tmp}/state.json"}], "{tmp}/./state.json", None),
        (
            "link-to-fifo",
            [{"make": "fifo", "path": "{tmp}/pipe"}, {"make": "link", "path": "{tmp}/state.yml", "to": "pipe"}],
            "{tmp}/state.yml",
            None,
        ),
        ("device-zero", [{"make": "link", "path": "{tmp}/state.json", "to": "/dev/zero"}], "{tmp}/state.json", None),
        ("device-null", [{"make": "link", "path": "{tmp}/state.yaml", "to": "/dev/null"}], "{tmp}/state.yaml", None),
        ("device-no-suffix", [], "/dev/zero", None),
        ("folder", [{"make": "folder", "path": "{tmp}/state.json"}], "{tmp}/state.json", None),
        ("folder-slash", [{"make": "folder", "path": "{tmp}/state.yaml"}], "{tmp}/state.yaml/", None),
        ("socket", [{"make": "socket", "path": "{tmp}/state.json"}], "{tmp}/state.json", None),
        ("link-dangling", [{"make": "link", "path": "{tmp}/state.json", "to": "nowhere.json"}], "{tmp}/state.json", None),
        (
            "link-loop",
            [{"make": "link", "path": "{tmp}/a.json", "to": "b.json"}, {"make": "link", "path": "{tmp}/b.json", "to": "a.json"}],
            "{tmp}/a.json",
            None,
        ),
        # a link out of the repository is followed: the user named the file (Python refuses links out of a
        # project only for the files it finds itself, such as example states)
        (
            "link-out",
            [
                {"make": "file", "path": "{tmp}/real.json", "text": state},
                {"make": "link", "path": "{tmp}/state.json", "to": "{tmp}/real.json"},
            ],
            "{tmp}/state.json",
            None,
        ),
        ("missing", [], "{tmp}/absent.json", None),
        ("hidden-name", [{"make": "file", "path": "{tmp}/.json", "text": "{}"}], "{tmp}/.json", None),
        ("over-limit", [{"make": "file", "path": "{tmp}/state.json", "size": limit + 1, "fill": " "}], "{tmp}/state.json", None),
        ("at-limit", [{"make": "file", "path": "{tmp}/state.yaml", "size": limit, "fill": "#"}], "{tmp}/state.yaml", None),
        ("sparse-huge", [{"make": "file", "path": "{tmp}/state.json", "size": 1 << 40, "sparse": True}], "{tmp}/state.json", None),
        ("bom-only-json", [{"make": "file", "path": "{tmp}/state.json", "text": "\ufeff"}], "{tmp}/state.json", None),
        ("bom-comment-yaml", [{"make": "file", "path": "{tmp}/state.yaml", "text": "\ufeff# nothing\n"}], "{tmp}/state.yaml", None),
        ("stdin-json", [], "-", b64(state.encode("utf-8"))),
        ("stdin-yaml", [], "-", b64(yaml_state)),
        ("stdin-empty", [], "-", None),
        ("stdin-bad-json", [], "-", b64(b'{"task": \n')),
        ("stdin-utf16", [], "-", b64("task: t\n".encode("utf-16"))),
        ("stdin-latin1", [], "-", b64("task: caf\u00e9\n".encode("latin-1"))),
        ("stdin-latin1-json", [], "-", b64('{"task": "caf\u00e9"}'.encode("latin-1"))),
        ("stdin-bom-only", [], "-", b64(b"\xef\xbb\xbf")),
        ("stdin-duplicate-key", [], "-", b64(b'{"task": "a", "task": "b"}')),
        ("stdin-zero", [], "-", {"file": "/dev/zero"}),
        # the loader's limits on what a state file's YAML and JSON may hold (source/loader.py _STATE_LIMITS)
        ("yaml-deep", [_pieces("{tmp}/state.yaml", ("a: ", 1), ("[", 200), ("]", 200), ("\n", 1))], "{tmp}/state.yaml", None),
        ("yaml-many-aliases", [_pieces("{tmp}/state.yaml", ("a: &x 1\nb: [", 1), ("*x, ", 1500), ("*x]\n", 1))], "{tmp}/state.yaml", None),
        ("yaml-alias-bomb", [{"make": "file", "path": "{tmp}/state.yaml", "text": _alias_bomb()}], "{tmp}/state.yaml", None),
        ("yaml-alias-undefined", [{"make": "file", "path": "{tmp}/state.yaml", "text": "a: *nope\n"}], "{tmp}/state.yaml", None),
        ("yaml-alias-self", [{"make": "file", "path": "{tmp}/state.yaml", "text": "a: &x [1, *x]\n"}], "{tmp}/state.yaml", None),
        (
            "yaml-alias-deep",
            [_pieces("{tmp}/state.yaml", ("a: &d ", 1), ("[", 100), ("]", 100), ("\nb: ", 1), ("[", 40), ("*d", 1), ("]", 40))],
            "{tmp}/state.yaml",
            None,
        ),
        (
            "yaml-aliases-ok",
            [{"make": "file", "path": "{tmp}/state.yaml", "text": "t: &t x\nsubtask: {title: *t}\nlist: [*t, *t]\n"}],
            "{tmp}/state.yaml",
            None,
        ),
        ("yaml-two-documents", [{"make": "file", "path": "{tmp}/state.yaml", "text": "task: a\n---\ntask: b\n"}], "{tmp}/state.yaml", None),
        ("json-deep", [_pieces("{tmp}/state.json", ('{"a": ', 1), ("[", 100_000), ("]", 100_000), ("}", 1))], "{tmp}/state.json", None),
    ]
    out = [
        {
            "id": f"files/{name}",
            "build": "build",
            "role": "executor",
            "state": path,
            "args": ["--format", "text"],
            "setup": setup,
            "stdin": stdin,
        }
        for name, setup, path, stdin in cases
    ]
    # build folders that are missing, half-written or hold what is not a regular file
    manifest = json.loads((REPO / "build" / "manifest.json").read_text(encoding="utf-8"))
    bundle = "{tmp}/build/" + manifest["roles"]["executor"]["file"]
    copy = {"make": "copy", "from": "build", "path": "{tmp}/build"}
    gone = {"make": "remove", "path": bundle}
    manifest_at = "{tmp}/build/manifest.json"
    drop = {"make": "remove", "path": manifest_at}
    half_manifest = {"make": "file", "path": "{tmp}/build/manifest.json", "text": '{"format": "promptmill-build", "roles": {'}
    builds: list[tuple[str, list[dict[str, Any]]]] = [
        ("build-missing", []),
        (
            "build-manifest-only",
            [
                {"make": "folder", "path": "{tmp}/build"},
                {"make": "copy", "from": "build/manifest.json", "path": "{tmp}/build/manifest.json"},
            ],
        ),
        ("build-manifest-half", [copy, {"make": "remove", "path": "{tmp}/build/manifest.json"}, half_manifest]),
        (
            "build-manifest-fifo",
            [copy, {"make": "remove", "path": "{tmp}/build/manifest.json"}, {"make": "fifo", "path": "{tmp}/build/manifest.json"}],
        ),
        ("build-bundle-missing", [copy, gone]),
        ("build-bundle-half", [copy, gone, {"make": "file", "path": bundle, "text": '{"id": "executor", "sections": ['}]),
        ("build-bundle-fifo", [copy, gone, {"make": "fifo", "path": bundle}]),
        ("build-bundle-device", [copy, gone, {"make": "link", "path": bundle, "to": "/dev/zero"}]),
        ("build-bundle-folder", [copy, gone, {"make": "folder", "path": bundle}]),
        ("build-bundle-sparse", [copy, gone, {"make": "file", "path": bundle, "size": 1 << 40, "sparse": True}]),
        ("build-manifest-sparse", [copy, drop, {"make": "file", "path": manifest_at, "size": 1 << 40, "sparse": True}]),
        ("build-manifest-device", [copy, drop, {"make": "link", "path": manifest_at, "to": "/dev/zero"}]),
        # the same bundle bytes (so the manifest's hash matches) behind a link out of the build: never read (PM017)
        (
            "build-bundle-link-out",
            [
                copy,
                {"make": "copy", "from": "build/" + manifest["roles"]["executor"]["file"], "path": "{tmp}/elsewhere.json"},
                gone,
                {"make": "link", "path": bundle, "to": "{tmp}/elsewhere.json"},
            ],
        ),
    ]
    # a manifest in another encoding: json.loads of the bytes detects UTF-16 and UTF-32, and words a bad byte
    the_manifest = (REPO / "build" / "manifest.json").read_text(encoding="utf-8")
    encoded = {
        "latin1": the_manifest.replace('"format"', '"f\u00f6rmat"', 1).encode("latin-1"),
        "utf16": the_manifest.encode("utf-16"),
        "utf16be-no-bom": the_manifest.encode("utf-16-be"),
        "utf32": the_manifest.encode("utf-32"),
        "utf16-odd": the_manifest.encode("utf-16")[:-1],
        "two-boms": b"\xef\xbb\xbf\xef\xbb\xbf" + the_manifest.encode("utf-8"),
        "bom-then-bad": b"\xef\xbb\xbf\xff" + the_manifest.encode("utf-8"),
        "cut-in-a-character": the_manifest.encode("utf-8") + b"\xe2\x82",
    }
    for name, raw in encoded.items():
        step = {"make": "file", "path": manifest_at, "base64": base64.b64encode(raw).decode("ascii")}
        builds.append((f"build-manifest-{name}", [copy, drop, step]))
    for name, setup in builds:
        case = {"id": f"files/{name}", "build": "{tmp}/build", "role": "executor", "state": "prompts/examples/executor.state.yaml"}
        out.append({**case, "args": ["--format", "text"], "setup": setup, "stdin": None})
    # standard output that cannot take the prompt
    for name, where in (("output-full", "/dev/full"), ("output-reader-gone", "closed-pipe")):
        case = {"id": f"files/{name}", "build": "build", "role": "executor", "state": "prompts/examples/executor.state.yaml"}
        out.append({**case, "args": ["--format", "json"], "setup": [], "stdin": None, "output": where})
    return out


def make_setup(steps: list[dict[str, Any]], tmp: str) -> list[Any]:
    """Run the setup steps in `tmp`; the sockets made, to close when the case is done."""
    import socket
    import stat

    keep = []
    for step in steps:
        path = step["path"].replace("{tmp}", tmp)
        kind = step["make"]
        # a step only ever makes or removes a name inside `tmp`, whose folder lies inside `tmp` after every link
        if not (path.startswith(tmp + "/") and os.path.realpath(os.path.dirname(path)).startswith(tmp)):
            raise ValueError(f"setup outside {tmp}: {path}")
        if kind == "fifo":
            os.mkfifo(path)
        elif kind == "folder":
            os.mkdir(path)
        elif kind == "socket":
            sock = socket.socket(socket.AF_UNIX)
            sock.bind(path)
            keep.append(sock)
        elif kind == "copy":
            source = REPO / step["from"]
            if source.is_dir():
                shutil.copytree(source, path)  # files, never links to the repository's
            else:
                shutil.copyfile(source, path)
        elif kind == "remove":
            os.unlink(path)
        elif kind == "link":
            os.symlink(step["to"].replace("{tmp}", tmp), path)
        elif kind == "file":
            with open(path, "wb") as fh:
                if step.get("sparse"):
                    fh.truncate(step["size"])
                elif "text" in step:
                    fh.write(step["text"].encode("utf-8"))
                elif "base64" in step:
                    fh.write(base64.b64decode(step["base64"]))
                elif "pieces" in step:
                    fh.write("".join(text * count for text, count in step["pieces"]).encode("utf-8"))
                else:
                    fill = step["fill"].encode("utf-8")
                    fh.write((fill * (step["size"] // len(fill) + 1))[: step["size"]])
        else:
            raise ValueError(f"unknown setup step {kind!r}")
        assert kind != "fifo" or stat.S_ISFIFO(os.lstat(path).st_mode)
    return keep


def run_files_case(case: dict[str, Any]) -> tuple[str, str, int]:
    """(stdout, stderr, exit code) of the case's command, in-process, its files made in a temporary folder."""
    from click.testing import CliRunner

    from promptmill.cli.main import main

    with tempfile.TemporaryDirectory(prefix="pm-files-") as tmp:
        tmp = os.path.realpath(tmp)
        keep = make_setup(case["setup"], tmp)
        stdin: Any = b""
        if case["stdin"] is not None and "base64" in case["stdin"]:
            stdin = base64.b64decode(case["stdin"]["base64"])
        try:
            runner = CliRunner(mix_stderr=False)  # type: ignore[call-arg]
        except TypeError:
            runner = CliRunner()
        build, state = case["build"].replace("{tmp}", tmp), case["state"].replace("{tmp}", tmp)
        argv = ["render", case["role"], "--build", build, "--state", state, *case["args"]]
        if case.get("output"):
            return run_with_output(argv, case["output"], tmp)
        try:
            if case["stdin"] is not None and "file" in case["stdin"]:
                with open(case["stdin"]["file"], "rb") as fh:
                    result = runner.invoke(main, argv, input=fh, catch_exceptions=True)
            else:
                result = runner.invoke(main, argv, input=stdin, catch_exceptions=True)
        finally:
            for sock in keep:
                sock.close()
        if result.exception is not None and not isinstance(result.exception, SystemExit):
            raise RuntimeError(f"{case['id']}: the CLI raised {result.exception!r}") from result.exception
        out = result.stdout_bytes.decode("utf-8").replace(tmp, "{tmp}")
        err = result.stderr_bytes.decode("utf-8").replace(tmp, "{tmp}")
        return out, err, result.exit_code


def run_with_output(argv: list[str], where: str, tmp: str) -> tuple[str, str, int]:
    """The `promptmill` command as a real process whose standard output is `where`: /dev/full, or a pipe whose
    reader is gone (what CliRunner's in-memory streams cannot be); stdout is what reached the output: nothing."""
    import subprocess

    env = {**os.environ, "PYTHONPATH": str(REPO / "compiler")}
    command = [sys.executable, "-m", "promptmill.cli", *argv]
    if where == "closed-pipe":
        read, write = os.pipe()
        os.close(read)
        try:
            run = subprocess.run(command, cwd=REPO, env=env, stdin=subprocess.DEVNULL, stdout=write, stderr=subprocess.PIPE, timeout=120)
        finally:
            os.close(write)
    else:
        with open(where, "wb") as sink:
            run = subprocess.run(command, cwd=REPO, env=env, stdin=subprocess.DEVNULL, stdout=sink, stderr=subprocess.PIPE, timeout=120)
    return "", run.stderr.decode("utf-8").replace(tmp, "{tmp}"), run.returncode


def files_lines() -> str:
    lines = []
    for case in files_cases():
        out, err, code = run_files_case(case)
        lines.append(json.dumps({**case, "stdout": out, "stderr": err, "exit": code}, ensure_ascii=False) + "\n")
    return "".join(lines)


def all_cases() -> list[Case]:
    cases = [*shipped_cases(), *model_cases(), *hostile_shipped_cases(), *edge_cases(), *seed_cases(), *suite_cases()]
    ids = [c[0] for c in cases]
    dup = {i for i in ids if ids.count(i) > 1}
    if dup:
        raise SystemExit(f"duplicate case ids: {sorted(dup)[:5]}")
    return cases


def fallback_sections(build: str, role: str) -> list[str]:
    """Ids of the role's sections whose template has no plan (`"plan": null`: it needs Jinja), parents' too.

    A runtime without Jinja (the TypeScript one) refuses such a role with PM801 naming the section
    (docs/bundle-format.md, section 8.4); the case records them as `fallback`."""
    manifest = json.loads((REPO / build / "manifest.json").read_text(encoding="utf-8"))
    entry = manifest["roles"].get(role)
    if entry is None:
        return []
    found: list[str] = []
    stack: list[Any] = [json.loads((REPO / build / entry["file"]).read_text(encoding="utf-8"))]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            if isinstance(node.get("template"), str) and "plan" in node and node["plan"] is None and isinstance(node.get("id"), str):
                found.append(node["id"])
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
    return sorted(set(found))


def yaml_syntax_error(state: str) -> bool:
    """True when the state file is YAML that does not parse: the one error whose words come from the parser
    (PyYAML's here, the `yaml` package's in TypeScript), so the TypeScript runtime matches its code, file and
    line, not its message; the corpus marks such cases `yaml_syntax`."""
    path = REPO / state
    if path.suffix not in (".yaml", ".yml"):
        return False
    try:
        yaml.safe_load(path.read_bytes())
    except yaml.MarkedYAMLError:
        return True
    except (yaml.YAMLError, ValueError):
        return False
    return False


def corpus_lines(cases: list[Case]) -> list[str]:
    lines = []
    for case_id, build, role, state, args in cases:
        out, err, code = run_cli(build, role, state, args)
        record = {
            "id": case_id,
            "build": build,
            "role": role,
            "state": state_file(state),
            "args": args,
            "stdout": out,
            "stderr": err,
            "exit": code,
        }
        fallback = fallback_sections(build, role)
        if fallback:
            record["fallback"] = fallback
        if code != 0 and yaml_syntax_error(record["state"]):
            record["yaml_syntax"] = True
        lines.append(json.dumps(record, ensure_ascii=False) + "\n")
    return lines


def _same_tree(a: Path, b: Path) -> list[str]:
    """Files that differ between two folders (relative paths)."""
    out = []
    names = {p.relative_to(a).as_posix() for p in a.rglob("*") if p.is_file()} | {
        p.relative_to(b).as_posix() for p in b.rglob("*") if p.is_file()
    }
    for rel in sorted(names):
        x, y = a / rel, b / rel
        if not (x.is_file() and y.is_file() and filecmp.cmp(x, y, shallow=False)):
            out.append(rel)
    return out


def _builds(check: bool) -> list[str]:
    """Compile the synthetic projects into conformance/builds/ (with `check`: the files that would change)."""
    stale: list[str] = []
    with tempfile.TemporaryDirectory() as tmp:
        for name, files in PROJECTS.items():
            fresh = Path(tmp) / name
            compile_project(name, files, fresh)
            target = BUILDS / name
            if check:
                stale += [f"conformance/builds/{name}/{rel}" for rel in (_same_tree(fresh, target) if target.exists() else ["(missing)"])]
            else:
                if target.exists():
                    shutil.rmtree(target)
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.copytree(fresh, target)
    return stale


def _state_checks(check: bool) -> bool:
    """Write conformance/state-cases.jsonl (with `check`: False when it is stale)."""
    from state_cases import schema_check_lines, state_lines  # tools/state_cases.py: state and tool checks in Python

    ok = True
    for path, text in ((STATE_CASES, "".join(state_lines())), (SCHEMA_CHECKS, "".join(schema_check_lines()))):
        if not check:
            path.write_text(text, encoding="utf-8")
        elif not path.exists() or path.read_text(encoding="utf-8") != text:
            print(f"{path.relative_to(REPO)} is stale; run `python tools/gen_conformance.py`")
            ok = False
    return ok


def _compare(lines: list[str], size: int) -> int:
    # lines end at "\n" only: a state's text may hold U+2028, which splitlines() would split at
    old = [line + "\n" for line in CASES.read_text(encoding="utf-8").split("\n")[:-1]] if CASES.exists() else []
    if old != lines:
        changed = [json.loads(line)["id"] for line in sorted(set(lines) ^ set(old))]
        example = sorted(set(changed))[:5]
        print(f"conformance/cases.jsonl is stale ({len(changed)} lines differ, e.g. {example}); run `python tools/gen_conformance.py`")
        return 1
    print(f"conformance/ is up to date ({len(lines)} cases, {size} bytes)")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="write nothing; exit 1 when conformance/ is stale")
    opts = parser.parse_args(argv)
    os.chdir(REPO)  # builds are named relative to the repository root, as runtimes run the cases
    sys.path.insert(0, str(REPO / "compiler"))
    sys.path.insert(0, str(REPO / "tools"))
    global CHECKING
    CHECKING = opts.check
    stale = _builds(opts.check)
    if stale:  # cases rendered from a stale build would differ for that reason alone
        print("conformance/ is stale; `python tools/gen_conformance.py` would change:\n  " + "\n  ".join(stale))
        return 1
    if not opts.check and STATES.exists():
        shutil.rmtree(STATES)
    try:
        cases = all_cases()
        lines = corpus_lines(cases)
    except Stale as exc:
        print(f"conformance/ is stale: {exc} is missing or differs; run `python tools/gen_conformance.py`")
        return 1
    used = {state_file(c[3]) for c in cases}
    extra = sorted(p.relative_to(REPO).as_posix() for p in STATES.glob("*") if p.relative_to(REPO).as_posix() not in used)
    if extra and opts.check:
        print(f"conformance/ is stale: state files no case uses: {extra[:5]}")
        return 1
    for rel in extra:  # states only the budget probes read
        (REPO / rel).unlink()
    if not _state_checks(opts.check):
        return 1
    files = files_lines()
    if not opts.check:
        FILES_CASES.write_text(files, encoding="utf-8")
    elif not FILES_CASES.exists() or FILES_CASES.read_text(encoding="utf-8") != files:
        print(f"{FILES_CASES.relative_to(REPO)} is stale; run `python tools/gen_conformance.py`")
        return 1
    text = "".join(lines)
    size = len(text.encode("utf-8"))
    if size > SIZE_LIMIT:
        print(f"the corpus is {size} bytes, over the limit of {SIZE_LIMIT}: trim the cases", file=sys.stderr)
        return 1
    if opts.check:
        return _compare(lines, size)
    CASES.write_text(text, encoding="utf-8")
    counts: dict[str, int] = {}
    for line in lines:
        head = json.loads(line)["id"].split("/")[0]
        counts[head] = counts.get(head, 0) + 1
    print(f"wrote {CASES.relative_to(REPO)}: {len(lines)} cases ({', '.join(f'{k} {v}' for k, v in counts.items())}), {size} bytes")
    return 0


if __name__ == "__main__":
    sys.exit(main())
