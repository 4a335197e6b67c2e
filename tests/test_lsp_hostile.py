"""The language server's hostile corpus: each case under tests/cases/hostile/lsp/ is a raw JSON-RPC exchange
with a real `promptmill lsp --stdio` process (tests/lsp_wire.py), bytes sent exactly as written.

A case (YAML, see tests/cases/hostile/lsp/README.md):

    about: a hover on a line of -1
    files: {prompts/extra.yaml: "..."}      # added to the small project every case starts from
    outside_fifos: [pipe.yaml]              # named pipes in a folder beside the project ({outside})
    outside: {secret.yaml: "..."}           # files there
    fifos: [prompts/p.yaml]                 # named pipes in the project
    links: {prompts/l.yaml: "{outside}/pipe.yaml"}   # symbolic links in the project
    steps:
      - initialize                          # the usual handshake, rootUri = the project
      - open: prompts/r.yaml                # didOpen with the file's text
      - ready                               # open prompts/r.yaml, wait until the first lint is done
      - raw: "Content-Length: 3\\r\\n\\r\\n{}x"   # bytes as given ({project}, {outside} filled in)
      - send: {jsonrpc: "2.0", id: 2, method: textDocument/hover, params: {...}}   # framed correctly
      - expect: {id: 2, error: -32602, says: [line]}    # the reply to id 2: an error with that code
      - expect: {id: 3, result: null}                   # or that exact result (`result: any`: any result)
      - open_big: {path: prompts/big.yaml, megabytes: 50}
      - keystrokes: {path: prompts/big.yaml, count: 20, line: 500000, probe: {...request...}, within: 1.0}
      # (full: true and megabytes: 50 send the whole text on each keystroke instead of one character)
    stderr_says: [framing]                  # each must be on the server's stderr
    ends: false                             # true: the server is expected to end by itself

Whatever a case expects, the runner also requires: every expected reply within its time (10 s unless
`within:` says), a request sent at the end still answered (unless the case ends the server), no
traceback on stderr, at most 500 MB of peak memory, the whole exchange within 60 s.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

import pytest
import yaml
from tests.lsp_wire import Wire, frame

pytest.importorskip("pygls", reason="the language server needs the [lsp] extra")

CASES = Path(__file__).parent / "cases" / "hostile" / "lsp"
ROLE = (
    "kind: role\nid: r\ncontext:\n  system: [greet]\nsections:\n  - id: a\n    text: Answer.\n  - id: rules\n    constraints: [executor]\n"
)
FRAGMENT = "kind: fragment\nid: greet\ntext: Hello there.\n"
EXECUTOR_ROLE = "kind: role\nid: executor\nsections:\n  - id: a\n    text: Do it.\n"
EXECUTOR_SET = "kind: constraints\nid: executor\nrules:\n  - id: short\n    text: Be short.\n"
BASE = {
    "promptmill.yaml": "prompts: prompts\n",
    "prompts/r.yaml": ROLE,
    "prompts/f.yaml": FRAGMENT,
    "prompts/roles/executor.yaml": EXECUTOR_ROLE,
    "prompts/constraints/executor.yaml": EXECUTOR_SET,
}
MEMORY_LIMIT = 500 * 1024 * 1024
CASE_TIME = 60.0


def case_files() -> list[Path]:
    return sorted(CASES.glob("*.yaml"))


def _fill(value: Any, project: Path, outside: Path) -> Any:
    if isinstance(value, str):
        return value.replace("{project_uri}", project.as_uri()).replace("{project}", str(project)).replace("{outside}", str(outside))
    if isinstance(value, list):
        return [_fill(v, project, outside) for v in value]
    if isinstance(value, dict):
        return {k: _fill(v, project, outside) for k, v in value.items()}
    return value


def _check_reply(got: dict[str, Any] | None, want: dict[str, Any]) -> None:
    assert got is not None, f"no reply to {want['id']!r} within {want.get('within', 10)} s"
    if "error" in want:
        assert "error" in got, got
        assert want["error"] == "any" or got["error"]["code"] == want["error"], got
    if "result" in want:
        assert "result" in got, got
        if want["result"] != "any":
            assert got["result"] == want["result"], got
    said = json.dumps(got)
    for text in want.get("says", []):
        assert text in said, f"{text!r} not in {said[:2000]}"
    for text in want.get("not_says", []):
        assert text not in said, f"{text!r} in {said[:2000]}"


def _big_text(megabytes: float) -> str:
    line = "# " + "x" * 47 + "\n"
    return "kind: fragment\nid: big\ntext: big\n" + line * int(megabytes * 1_000_000 / len(line))


def _step(w: Wire, step: Any, project: Path, outside: Path, timings: list[float]) -> None:
    if step == "initialize":
        assert w.initialize() is not None, "no reply to initialize"
        return
    if step == "ready":  # open the role, wait until the first lint is done: a hover on an id answers with where it resolves
        _step(w, {"open": "prompts/r.yaml"}, project, outside, timings)
        probe = {"textDocument": {"uri": (project / "prompts/r.yaml").as_uri()}, "position": {"line": 3, "character": 12}}
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            got = w.request(f"ready-{time.monotonic()}", "textDocument/hover", probe, timeout=10)
            if got is not None and got.get("result"):
                return
            time.sleep(0.1)
        raise AssertionError("the server never finished its first lint")
    ((kind, arg),) = step.items()
    arg = _fill(arg, project, outside)
    if kind == "raw":
        w.send_raw(arg.encode("utf-8", "surrogateescape"))
    elif kind == "send":
        w.send(arg)
    elif kind == "send_body":  # a body framed with its true length, sent as given (not re-serialised)
        w.send_raw(frame(arg.encode("utf-8")))
    elif kind == "open":
        text = (project / arg).read_text(encoding="utf-8")
        w.notify(
            "textDocument/didOpen", {"textDocument": {"uri": (project / arg).as_uri(), "languageId": "yaml", "version": 1, "text": text}}
        )
    elif kind == "expect":
        _check_reply(w.reply(arg["id"], arg.get("within", 10.0)), arg)
    elif kind == "sleep":
        time.sleep(float(arg))
    elif kind == "open_big":
        uri = (project / arg["path"]).as_uri()
        w.notify(
            "textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "yaml", "version": 1, "text": _big_text(arg["megabytes"])}}
        )
    elif kind == "keystrokes":
        uri = (project / arg["path"]).as_uri()
        whole = _big_text(arg["megabytes"]) if arg.get("full") else ""
        for n in range(arg["count"]):
            at = {"line": arg["line"], "character": 2}
            change: dict[str, Any] = {"range": {"start": at, "end": at}, "text": "y"}
            if whole:  # a client that sends the whole text on every keystroke
                whole = whole[:40] + "y" + whole[40:]
                change = {"text": whole}
            w.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": n + 2}, "contentChanges": [change]})
            time.sleep(arg.get("pause", 0.05))
            probe = {**arg["probe"], "id": f"probe-{n}"}
            started = time.monotonic()
            w.send(probe)
            got = w.reply(probe["id"], 30.0)
            timings.append(time.monotonic() - started)
            assert got is not None and "result" in got, got
            assert timings[-1] < arg["within"], (
                f"answered in {timings[-1]:.3f} s while {arg['path']} was being edited (limit {arg['within']} s)"
            )
    else:
        raise AssertionError(f"unknown step {kind!r}")


@pytest.mark.parametrize("path", case_files(), ids=lambda p: p.stem)
def test_lsp_hostile_case(path: Path, make_project, tmp_path: Path):
    case = yaml.safe_load(path.read_text(encoding="utf-8"))
    project = make_project({**BASE, **(case.get("files") or {})}, root=tmp_path / "project").resolve()
    outside = tmp_path / "outside"
    outside.mkdir()
    for rel in case.get("outside_fifos") or []:
        os.mkfifo(outside / rel)
    for rel, text in (case.get("outside") or {}).items():
        (outside / rel).write_text(text, encoding="utf-8")
    for rel in case.get("fifos") or []:
        os.mkfifo(project / rel)
    for rel, target in (case.get("links") or {}).items():
        os.symlink(_fill(target, project, outside), project / rel)
    timings: list[float] = []
    started = time.monotonic()
    w = Wire(project)
    try:
        for step in case["steps"]:
            _step(w, step, project, outside, timings)
        if case.get("ends"):
            assert w.proc.wait(10) is not None
        else:
            probe = {"textDocument": {"uri": (project / "prompts/r.yaml").as_uri()}, "position": {"line": 3, "character": 12}}
            got = w.request("final-probe", "textDocument/hover", probe, timeout=10)
            assert got is not None and "id" in got, "the server no longer answers"
        peak = w.peak_bytes()
    finally:
        w.close()
    stderr = w.stderr()
    assert "Traceback" not in stderr, stderr[-3000:]
    for text in case.get("stderr_says", []):
        assert text in stderr, f"{text!r} not on stderr:\n{stderr[-3000:]}"
    assert not w.broken, f"the server wrote bytes that are not a framed message: {w.broken[:2]!r}"
    assert peak < MEMORY_LIMIT, f"peak memory {peak / 2**20:.0f} MB"
    assert time.monotonic() - started < CASE_TIME
    if timings:
        print(f"{path.stem}: answered in {max(timings) * 1000:.0f} ms at worst, {sorted(timings)[len(timings) // 2] * 1000:.0f} ms median")


def test_the_lsp_corpus_covers_each_finding():
    names = {p.stem for p in case_files()}
    for finding in (
        "fifo",
        "dev-zero",
        "short-length",
        "long-length",
        "missing-length",
        "huge-length",
        "line-minus-one",
        "no-text-document",
        "params-wrong-type",
        "after-shutdown",
        "big-buffer",
        "rename-",
        "definition-",
    ):
        assert any(finding in name for name in names), finding
