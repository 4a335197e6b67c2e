"""Write the wire fixtures of the TypeScript runtime: (render document, payload bytes) pairs from the Python runtime.

For every shipped role that has an example state (`build/`, `prompts/examples/<role>.state.yaml`), every wire, the
role's own budget and a tighter one, and a few `--model` values, it renders with the Python runtime and records:

- `document`: the JSON text `promptmill render ROLE --build build --state F --provider W --format json` prints;
- `payload`: the bytes `promptmill render ... --format W` prints (`json.dumps(req.to_payload(), ensure_ascii=False,
  indent=2)` and a newline; the `text` wire, whose `--format text` prints the bare prompt, gets its payload the
  same way), or `error` {code, message, hint} when the wire refuses the request;
- for some cases, `options` {model, max_tokens} passed to the wire's render (the API's `to_<wire>(model=...,
  max_tokens=...)`) and the payload they give.

Derived cases (`derived` names the change): a rendered request changed with dataclasses.replace where the shipped
roles do not reach a branch of a wire: no user message, an assistant turn first (PM842), caching off, a model row
with 0 or 1 cache breakpoints, a tools section that is not stable. The wire renders them as any request.

Cases of a wire with a batch format also hold `batch`: the batch input line (`batch/formats.py`, compact JSON and a
newline) of the request's batch body for BATCH_MODELS' model, with no reply limit and with 100, or the error.

Renders the Python runtime refuses before a payload exists (PM010 for a model the wire does not serve, a budget
too small) are left out: they are the pipeline's cases, not the wires'. `--check-cli N` runs the real CLI on N
cases and stops if its bytes differ from the recorded ones.

    . .venv/bin/activate; PYTHONPATH=$PWD/compiler python runtimes/typescript/scripts/gen-wire-fixtures.py [--check-cli 12]

writes runtimes/typescript/test/fixtures/wires.jsonl.gz (one case a line, gzip: the documents repeat the prompt
text three times each). test/wires-payloads.test.mjs reads it.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

from promptmill.cli.preview import request_data
from promptmill.core.errors import PromptmillError
from promptmill.runtime.engine import Runtime
from promptmill.runtime.registry import WIRE_NAMES
from promptmill.runtime.request import PromptRequest
from promptmill.source.statefile import read_state

ROOT = Path(__file__).resolve().parents[3]
OUT = ROOT / "runtimes" / "typescript" / "test" / "fixtures" / "wires.jsonl.gz"

# models rendered for, per wire (None: the role's own); an id the wire does not serve is refused by check_wire
MODELS: dict[str, list[str | None]] = {
    "text": [None, "gpt-4-turbo"],
    "live": [None],
    "openai": [None, "gpt-4o", "gpt-4-turbo"],
    "openai-responses": [None, "gpt-5"],
    "anthropic": [None, "claude-sonnet-4-5", "claude-3-haiku-20240307"],
    "anthropic-bedrock": [None, "claude-opus-4-1"],
    "anthropic-vertex": [None, "claude-sonnet-4-5@20250929"],
    "bedrock": [None, "us.anthropic.claude-sonnet-4-5-20250929-v1:0"],
    "gemini": [None, "gemini-2.5-flash"],
    "gemini-vertex": [None, "gemini-2.0-flash"],
}
# wire options of the API (`req.to_<wire>(model=..., max_tokens=...)`) tried on the role's own render
# the model a batch line names, per wire with a batch format
BATCH_MODELS: dict[str, str | None] = {
    "text": None,
    "openai": "gpt-4o",
    "openai-responses": "gpt-5",
    "anthropic": "claude-sonnet-4-5",
    "gemini": None,
    "bedrock": "us.anthropic.claude-sonnet-4-5-20250929-v1:0",
}
# roles whose requests are also changed into the derived cases (tools, history, contracts between them)
DERIVED_ROLES = ("companion-beat", "companion-chat", "companion-delivery", "planner")
OPTIONS: list[dict] = [{"model": "my-model", "max_tokens": 321}, {"max_tokens": 0}, {"max_tokens": 12}]


def error_data(exc: PromptmillError) -> dict:
    return {"code": exc.code, "message": exc.message, "hint": exc.hint}


def payload_bytes(req: PromptRequest, wire: str, options: dict | None) -> dict:
    try:
        if options is None:
            payload = req.to_payload()
        else:
            payload = req.wire.render(req, model=options.get("model"), max_tokens=options.get("max_tokens"))
    except PromptmillError as exc:
        return {"error": error_data(exc)}
    return {"payload": json.dumps(payload, ensure_ascii=False, indent=2) + "\n"}


def batch_lines(req: PromptRequest, wire: str) -> dict:
    from promptmill.batch import formats
    from promptmill.runtime.wire import get_wire

    w = get_wire(wire)
    if w.batch_limits is None:
        return {}
    model = BATCH_MODELS[wire]
    out: list[dict] = []
    for max_tokens in (None, 100):
        try:
            body = w.batch_body(req, model)
            out.append(
                {
                    "model": model,
                    "max_tokens": max_tokens,
                    "line": formats.dumps(formats.line(wire, "row-7", body, model, max_tokens)).decode(),
                }
            )
        except PromptmillError as exc:
            out.append({"model": model, "max_tokens": max_tokens, "error": error_data(exc)})
    return {"batch": out}


def cases(runtime: Runtime) -> Iterator[dict]:
    examples = ROOT / "prompts" / "examples"
    for role in sorted(runtime.roles):
        state_file = examples / f"{role}.state.yaml"
        if not state_file.is_file():
            continue
        state = read_state(str(state_file))
        for wire in WIRE_NAMES:
            for model in MODELS[wire]:
                try:
                    runtime.check_wire(role, provider=wire, model=model)
                    full = runtime.render(role, state, provider=wire, model=model)
                except PromptmillError:
                    continue
                budgets: list[int | None] = [None, max(40, full.tokens * 2 // 3)]
                for budget in budgets:
                    try:
                        req = full if budget is None else runtime.render(role, state, budget=budget, provider=wire, model=model)
                    except PromptmillError:
                        continue
                    doc = json.dumps(request_data(req), ensure_ascii=False, indent=2) + "\n"
                    base = {
                        "role": role,
                        "wire": wire,
                        "model": model,
                        "budget": budget,
                        "state": str(state_file.relative_to(ROOT)),
                        "document": doc,
                    }
                    yield {**base, "options": None, **payload_bytes(req, wire, None), **batch_lines(req, wire)}
                    if budget is None and model is None:
                        for options in OPTIONS:
                            yield {**base, "options": options, **payload_bytes(req, wire, options)}
                        if role in DERIVED_ROLES and wire not in ("text", "live"):
                            for change, changed in derived(req):
                                doc = json.dumps(request_data(changed), ensure_ascii=False, indent=2) + "\n"
                                yield {**base, "document": doc, "derived": change, "options": None, **payload_bytes(changed, wire, None)}


def derived(req: PromptRequest) -> list[tuple[str, PromptRequest]]:
    """Requests a wire renders that the shipped roles do not produce (see the module doc)."""
    from dataclasses import replace

    system = tuple(m for m in req.messages if m.role == "system")
    rest = tuple(m for m in req.messages if m.role != "system")
    out: list[tuple[str, PromptRequest]] = [
        ("no user message", replace(req, messages=system)),
        ("assistant first", replace(req, messages=system + tuple(replace(m, role="assistant") for m in rest[:1]) + rest[1:])),
        ("cache off", replace(req, cache=False)),
        ("0 breakpoints", replace(req, cache_breakpoints=0)),
        ("1 breakpoint", replace(req, cache_breakpoints=1)),
        ("nothing stable", replace(req, messages=tuple(replace(m, stable=False) for m in req.messages))),
    ]
    tools = [i for i, s in enumerate(req.sections) if s.kind == "tools" and s.present]
    if tools:
        sections = list(req.sections)
        sections[tools[-1]] = replace(sections[tools[-1]], stability="dynamic")
        out.append(("last tools section dynamic", replace(req, sections=tuple(sections))))
        sections[tools[0]] = replace(sections[tools[0]], stability="dynamic")
        out.append(("first tools section dynamic", replace(req, sections=tuple(sections))))
    return out


def cli_bytes(case: dict) -> tuple[str, str]:
    """(document, payload) as the CLI prints them for a case without options."""
    base = [
        sys.executable,
        "-m",
        "promptmill.cli",
        "render",
        case["role"],
        "--build",
        str(ROOT / "build"),
        "--state",
        str(ROOT / case["state"]),
    ]
    if case["budget"] is not None:
        base += ["--budget", str(case["budget"])]
    if case["model"] is not None:
        base += ["--model", case["model"]]
    env = dict(os.environ)
    doc = subprocess.run(
        [*base, "--provider", case["wire"], "--format", "json"], capture_output=True, text=True, check=True, env=env
    ).stdout
    payload = subprocess.run([*base, "--format", case["wire"]], capture_output=True, text=True, env=env).stdout
    return doc, payload


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check-cli", type=int, default=0, metavar="N", help="compare N cases with the real CLI's bytes")
    args = parser.parse_args()
    runtime = Runtime.load(ROOT / "build")
    rows = list(cases(runtime))
    checked = 0
    for case in rows:
        if checked >= args.check_cli:
            break
        if case["options"] is not None or case.get("derived") or case["wire"] == "text" or "payload" not in case:
            continue
        doc, payload = cli_bytes(case)
        if doc != case["document"] or payload != case["payload"]:
            sys.exit(
                f"the CLI prints other bytes than recorded for {case['role']} {case['wire']} model={case['model']} budget={case['budget']}"
            )
        checked += 1
    OUT.parent.mkdir(parents=True, exist_ok=True)
    with gzip.GzipFile(OUT, "wb", mtime=0) as f:
        for case in rows:
            f.write((json.dumps(case, ensure_ascii=False) + "\n").encode("utf-8"))
    errors = sum("error" in c for c in rows)
    print(
        f"{OUT.relative_to(ROOT)}: {len(rows)} cases ({errors} wire errors), {checked} checked against the CLI, {OUT.stat().st_size} bytes"
    )


if __name__ == "__main__":
    main()
