"""The conformance corpus (conformance/, tools/gen_conformance.py) from the Python side: it is what the Python
runtime prints today, it covers every shipped role in every format, and the TypeScript runtime
(runtimes/typescript/) passes it byte for byte (this test runs the renders' corpus; `npm test` there, `make ts`,
runs it with the runtime's unit tests and the files corpus, whose Python side is checked here).

Node and npm are needed for the last part; without them the test skips, except in CI (`CI` set), where Node is
installed and a missing one is a failure."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
TS = REPO / "runtimes" / "typescript"
CASES = REPO / "conformance" / "cases.jsonl"


def _cases() -> list[dict]:
    text = CASES.read_text(encoding="utf-8")
    return [json.loads(line) for line in text.split("\n") if line]  # "\n" only: states may hold U+2028


def test_the_corpus_is_what_the_python_runtime_prints_today():
    env = {**os.environ, "PYTHONPATH": str(REPO / "compiler")}
    run = subprocess.run(
        [sys.executable, str(REPO / "tools" / "gen_conformance.py"), "--check"],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert run.returncode == 0, run.stdout + run.stderr


def test_the_corpus_covers_every_shipped_role_in_every_format_and_every_model_row():
    from promptmill.cli.main import RENDER_FORMATS

    cases = _cases()
    manifest = json.loads((REPO / "build" / "manifest.json").read_text(encoding="utf-8"))
    roles = {r for r in manifest["roles"]}
    shipped = {(c["role"], c["args"][c["args"].index("--format") + 1]) for c in cases if c["build"] == "build" and "--format" in c["args"]}
    missing = {(r, f) for r in roles for f in RENDER_FORMATS if f != "pretty"} - shipped
    assert not missing, sorted(missing)
    table = json.loads((REPO / "compiler" / "promptmill" / "data" / "models.json").read_text(encoding="utf-8"))
    import fnmatch

    def row(model: str) -> str | None:
        return next((r["pattern"] for r in table["models"] if fnmatch.fnmatchcase(model, r["pattern"])), None)

    models = {row(c["args"][c["args"].index("--model") + 1]) for c in cases if "--model" in c["args"]}
    assert {r["pattern"] for r in table["models"]} <= models
    # the corpus holds failures too, each a PM error on stderr and nothing on stdout
    failing = [c for c in cases if c["exit"] != 0]
    assert failing and all(c["stderr"].startswith("promptmill: error[PM") and not c["stdout"] for c in failing)
    assert len(CASES.read_bytes()) < 4_500_000


def test_the_expected_output_is_what_the_promptmill_command_prints():
    # the generator runs the CLI in-process (click's CliRunner); a sample run as real processes prints the same bytes
    cases = _cases()
    sample = cases[::150] + [
        c for c in cases if c["id"] in ("edges/values/hostile/text", "edges/values/hostile/json", "edges/values/control/text")
    ]
    env = {**os.environ, "PYTHONPATH": str(REPO / "compiler")}
    for c in sample:
        argv = [sys.executable, "-m", "promptmill.cli", "render", c["role"], "--build", c["build"], "--state", c["state"], *c["args"]]
        run = subprocess.run(argv, cwd=REPO, env=env, capture_output=True, timeout=120)
        assert (run.stdout.decode("utf-8"), run.stderr.decode("utf-8"), run.returncode) == (c["stdout"], c["stderr"], c["exit"]), c["id"]


def test_the_files_corpus_is_what_the_promptmill_command_prints():
    # conformance/files-cases.jsonl (FIFOs, devices, sockets, links, stdin, broken builds): a sample run as real
    # processes, each case's files made as the generator makes them; a FIFO is refused at once and /dev/zero is never
    # read (the cases whose stdout is /dev/full or a closed pipe the generator runs as real processes itself)
    import base64
    import importlib.util
    import tempfile

    spec = importlib.util.spec_from_file_location("gen_conformance", REPO / "tools" / "gen_conformance.py")
    assert spec is not None and spec.loader is not None
    gen = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gen)
    cases = [json.loads(line) for line in (REPO / "conformance" / "files-cases.jsonl").read_text(encoding="utf-8").split("\n") if line]
    wanted = (
        "files/fifo",
        "files/device-zero",
        "files/socket",
        "files/folder",
        "files/link-out",
        "files/stdin-zero",
        "files/stdin-latin1",
        "files/build-bundle-fifo",
    )
    sample = [c for c in cases if c["id"] in wanted]
    assert len(sample) == len(wanted)
    env = {**os.environ, "PYTHONPATH": str(REPO / "compiler")}
    for c in sample:
        with tempfile.TemporaryDirectory(prefix="pm-files-") as tmp:
            tmp = os.path.realpath(tmp)
            keep = gen.make_setup(c["setup"], tmp)
            build, state = c["build"].replace("{tmp}", tmp), c["state"].replace("{tmp}", tmp)
            argv = [sys.executable, "-m", "promptmill.cli", "render", c["role"], "--build", build, "--state", state]
            try:
                if c["stdin"] and "file" in c["stdin"]:
                    with open(c["stdin"]["file"], "rb") as stdin:
                        run = subprocess.run([*argv, *c["args"]], cwd=REPO, env=env, stdin=stdin, capture_output=True, timeout=60)
                else:
                    data = base64.b64decode(c["stdin"]["base64"]) if c["stdin"] else b""
                    run = subprocess.run([*argv, *c["args"]], cwd=REPO, env=env, input=data, capture_output=True, timeout=60)
            finally:
                for sock in keep:
                    sock.close()
            got = (run.stdout.decode("utf-8"), run.stderr.decode("utf-8"), run.returncode)
            assert got == (c["stdout"].replace("{tmp}", tmp), c["stderr"].replace("{tmp}", tmp), c["exit"]), c["id"]


def test_the_typescript_runtime_passes_the_corpus():
    if shutil.which("node") is None or shutil.which("npm") is None:
        if os.environ.get("CI"):
            pytest.fail("Node and npm are installed in CI: the TypeScript runtime's conformance run needs them", pytrace=False)
        pytest.skip("Node and npm are not installed")
    if not (TS / "node_modules").exists():
        ci = subprocess.run(["npm", "ci", "--no-audit", "--no-fund"], cwd=TS, capture_output=True, text=True, timeout=900)
        assert ci.returncode == 0, ci.stdout[-3000:] + ci.stderr[-3000:]
    # the renders' corpus (cases.jsonl) only: `npm test` (make ts, its own CI step) adds the runtime's unit tests and
    # the files corpus (files-cases.jsonl: 62 cases, each made at test time and run as real processes, 19 s here);
    # that corpus's Python side is checked above (freshness, and a sample run through `promptmill`)
    build = subprocess.run(["npm", "run", "build"], cwd=TS, capture_output=True, text=True, timeout=900)
    assert build.returncode == 0, build.stdout[-3000:] + build.stderr[-3000:]
    run = subprocess.run(
        ["node", "--test", "test/conformance.test.mjs"],
        cwd=TS,
        capture_output=True,
        text=True,
        timeout=1800,
    )
    summary = [line for line in run.stdout.splitlines() if "conformance:" in line]
    assert run.returncode == 0, "\n".join(summary) + "\n" + run.stdout[-6000:] + run.stderr[-3000:]
