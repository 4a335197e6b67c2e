"""`promptmill counts` against a local server that answers like the Anthropic and Gemini token-counting
endpoints, through the real anthropic and google-genai SDK clients (no key, no network)."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from cli_inprocess import run_cli
from promptmill import build_in_memory, counts
from promptmill.cli.main import main

ROLE = """\
kind: role
id: {id}
model: {model}
budget: {{max_tokens: 4000, reserve: 500}}
inputs:
  type: object
  properties:
    question: {{type: string}}
sections:
  - {{id: persona, text: "You answer questions about tides, briefly and with care."}}
  - {{id: q, template: "{{{{ question }}}}", message: user}}
"""
STATE = "question: Why are there two high tides a day, and why does their height change through the month?\n"


class CountingProvider:
    """Answers count_tokens like the APIs: the texts' o200k_base count times `factor`."""

    def __init__(self, server) -> None:
        self.server = server
        self.factor = 1.0
        server.answer("/messages/count_tokens", lambda r: {"input_tokens": self.count(r.json)})
        server.answer_re(r":countTokens$", lambda r: {"totalTokens": self.count(r.json)})

    @property
    def paths(self) -> list[str]:
        return [r.path for r in self.server.requests]

    def count(self, body) -> int:
        from promptmill import get_tokenizer

        tok = get_tokenizer("o200k_base")
        texts: list[str] = []

        def walk(node):
            if isinstance(node, dict):
                for k, v in node.items():
                    if k in ("text", "content") and isinstance(v, str):
                        texts.append(v)
                    else:
                        walk(v)
            elif isinstance(node, list):
                for v in node:
                    walk(v)

        walk(body)
        return int(sum(tok.count(t) for t in texts) * self.factor) + 10  # plus the provider's own framing


@pytest.fixture
def provider(monkeypatch, wire_server):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", wire_server.url)
    monkeypatch.setenv("GEMINI_API_KEY", "test-key")
    monkeypatch.delenv("GOOGLE_API_KEY", raising=False)
    monkeypatch.setenv("GOOGLE_GEMINI_BASE_URL", wire_server.url)
    monkeypatch.setenv("NO_PROXY", "127.0.0.1")
    return CountingProvider(wire_server)


def _project(make_project):
    return make_project(
        {
            "promptmill.yaml": "prompts: prompts\nlibrary: false\n",
            "prompts/claude.yaml": ROLE.format(id="claude", model="claude-sonnet-4-5"),
            "prompts/gem.yaml": ROLE.format(id="gem", model="gemini-2.5-flash"),
            "prompts/gpt.yaml": ROLE.format(id="gpt", model="gpt-4o-mini"),
            "prompts/nostate.yaml": ROLE.format(id="nostate", model="gpt-4o"),
            "examples/claude.state.yaml": STATE,
            "examples/gem.state.yaml": STATE,
            "examples/gpt.state.yaml": STATE,
        }
    )


def test_estimates_at_or_above_the_providers_count_pass(make_project, provider, monkeypatch):
    provider.factor = 1.0
    root = _project(make_project)
    result = counts(root)
    assert result.ok
    by_role = {c.role: c for c in result.counts}
    assert set(by_role) == {"claude", "gem", "gpt"} and result.skipped == ["nostate: no example state"]
    assert any(p.endswith("/v1/messages/count_tokens") for p in provider.paths)
    assert any(p.endswith("models/gemini-2.5-flash:countTokens") for p in provider.paths)
    assert by_role["gpt"].actual == by_role["gpt"].estimate == by_role["gpt"].counted  # OpenAI: tiktoken's own count
    claude = by_role["claude"]
    assert claude.ratio == 1.2 and claude.estimate >= claude.actual
    monkeypatch.chdir(root)
    out = CliRunner().invoke(main, ["counts"])
    assert out.exit_code == 0, out.output
    assert "claude-sonnet-4-5" in out.output and "0 under the provider's count" in out.output


def test_an_estimate_under_the_providers_count_exits_1_and_write_calibrates(make_project, provider, monkeypatch):
    provider.factor = 1.6  # the provider counts more than the table's ratio allows for
    root = _project(make_project)
    monkeypatch.chdir(root)
    out = CliRunner().invoke(main, ["counts"])
    assert out.exit_code == 1, out.output
    assert "UNDER" in out.output and "Traceback" not in out.output
    # --write stores the measured ratios; compile reads them, so the next renders hold
    out = CliRunner().invoke(main, ["counts", "--write"])
    assert out.exit_code == 1 and "promptmill.ratios.json" in out.output
    stored = json.loads((root / "promptmill.ratios.json").read_text())["ratios"]
    assert (
        set(stored) == {"claude-sonnet-4-5", "gemini-2.5-flash"} and stored["claude-sonnet-4-5"]["ratio"] > 1.2
    )  # above the table's ratio, which fell short
    runtime, _ = build_in_memory(root)
    assert runtime.bundle("claude").budget.ratio == stored["claude-sonnet-4-5"]["ratio"]
    assert "promptmill.ratios.json" in runtime.bundle("claude").budget.origins["ratio"]
    again = CliRunner().invoke(main, ["counts"])
    assert again.exit_code == 0, again.output
    # a compiled build is stale once the ratios change
    assert CliRunner().invoke(main, ["compile", "."]).exit_code == 0
    assert CliRunner().invoke(main, ["compile", ".", "--check"]).exit_code == 0
    (root / "promptmill.ratios.json").write_text(json.dumps({"ratios": {"claude-sonnet-4-5": {"ratio": 2.5}}}))
    assert CliRunner().invoke(main, ["compile", ".", "--check"]).exit_code == 1


def test_a_broken_ratios_file_is_a_clear_error(make_project, monkeypatch):
    root = _project(make_project)
    (root / "promptmill.ratios.json").write_text('{"ratios": {"claude-sonnet-4-5": {"ratio": "high"}}}')
    monkeypatch.chdir(root)
    out = CliRunner().invoke(main, ["render", "claude", "--state", "examples/claude.state.yaml"])
    assert out.exit_code != 0 and "PM010" in out.output and "promptmill.ratios.json" in out.output
    assert "Traceback" not in out.output


# --- hostile input (issue 33): the CLI against a real local server (or none); in-process (tests/cli_inprocess.py)
# but for the FIFO, where a child that waited on the pipe would be stopped by its timeout, not hang the run

SECRET = "OUTSIDE-THE-PROJECT-do-not-send-7f3a"


def _cli(root, *args, env=None, timeout=60, process=False):
    """`promptmill ARGS` in `root`, in-process or (`process`) as its own process: (exit code, stdout + stderr,
    seconds). Keys, auth tokens and base URLs of the environment are removed; `env` adds its own."""
    import os
    import subprocess
    import sys
    import time
    from pathlib import Path

    drop = [k for k in os.environ if k.endswith(("_API_KEY", "_AUTH_TOKEN", "_BASE_URL"))] + ["GOOGLE_GENAI_USE_VERTEXAI"]
    started = time.monotonic()
    if process:
        compiler = Path(__file__).resolve().parents[1] / "compiler"
        full = {k: v for k, v in os.environ.items() if k not in drop}
        full.update({"PYTHONPATH": str(compiler), "NO_PROXY": "127.0.0.1", **(env or {})})
        done = subprocess.run(
            [sys.executable, "-m", "promptmill.cli", *args], cwd=root, env=full, capture_output=True, text=True, timeout=timeout
        )
    else:
        done = run_cli(root, *args, env={**dict.fromkeys(drop), "NO_PROXY": "127.0.0.1", **(env or {})})
    said = done.stdout + done.stderr
    assert "Traceback" not in said and "PM000" not in said, said
    return done.returncode, said, time.monotonic() - started


def _keys(server_url):
    return {
        "ANTHROPIC_API_KEY": "test-key",
        "ANTHROPIC_BASE_URL": server_url,
        "GEMINI_API_KEY": "test-key",
        "GOOGLE_GEMINI_BASE_URL": server_url,
    }


def _closed_port() -> int:
    import socket

    with socket.socket() as s:  # a port that was free a moment ago and that nothing listens on
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_an_example_state_linked_out_of_the_project_is_never_read_or_sent(make_project, provider, tmp_path):
    import os

    root = _project(make_project)
    outside = tmp_path.parent / (tmp_path.name + "-outside")
    outside.mkdir()
    (outside / "private.yaml").write_text(f"question: {SECRET}\n")
    (root / "examples/claude.state.yaml").unlink()
    os.symlink(outside / "private.yaml", root / "examples/claude.state.yaml")
    code, said, _ = _cli(root, "counts", env=_keys(provider.server.url))
    assert code == 0, said
    assert "examples/claude.state.yaml" in said and "link out of the project" in said and "not sent" in said
    assert "claude: no example state" in said
    assert provider.paths, "the other roles were counted"
    assert all(SECRET.encode() not in r.body for r in provider.server.requests)
    # the library call says the same, and the linked file is never read (no provider request carries it)
    before = len(provider.server.requests)
    result = counts(root)
    assert [w for w in result.warnings if w.startswith("examples/claude.state.yaml:")] and "claude" not in {c.role for c in result.counts}
    assert all(SECRET.encode() not in r.body for r in provider.server.requests[before:])


@pytest.mark.parametrize(("model", "variable"), [("claude-sonnet-4-5", "ANTHROPIC_API_KEY"), ("gemini-2.5-flash", "GEMINI_API_KEY")])
def test_no_api_key_is_pm843_naming_the_variable_and_nothing_is_sent(make_project, wire_server, model, variable):
    root = _project(make_project)
    env = {k: v for k, v in _keys(wire_server.url).items() if not k.endswith("_API_KEY")}
    code, said, _ = _cli(root, "counts", "--model", model, env=env)
    assert code == 1 and "PM843" in said, said
    assert variable in said and model in said
    assert wire_server.requests == []  # the key is checked before any request


@pytest.mark.parametrize("model", ["claude-sonnet-4-5", "gemini-2.5-flash"])
def test_an_unreachable_provider_is_pm844_with_the_address_and_the_cause(make_project, model):
    root = _project(make_project)
    url = f"http://127.0.0.1:{_closed_port()}"
    code, said, _ = _cli(root, "counts", "--model", model, env=_keys(url))
    assert code == 1 and "PM844" in said, said
    assert url in said and "refused" in said.lower() and "could not connect" in said


@pytest.fixture
def silent_server():
    """A server that accepts connections and never answers; `.times` says when each came."""
    import socket
    import threading
    import time

    class Silent:
        times: list[float] = []  # time.monotonic() of each connection

    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(16)
    held = []

    def serve():
        while True:
            try:
                conn, _ = listener.accept()
            except OSError:
                return
            held.append(conn)
            Silent.times.append(time.monotonic())

    threading.Thread(target=serve, daemon=True).start()
    Silent.url = f"http://127.0.0.1:{listener.getsockname()[1]}"
    yield Silent
    listener.close()
    for conn in held:
        conn.close()


@pytest.mark.parametrize("model", ["claude-sonnet-4-5", "gemini-2.5-flash"])
def test_a_provider_that_never_answers_is_stopped_by_the_timeout(make_project, silent_server, model):
    import time

    root = _project(make_project)
    # fractions of a second prove the same as whole seconds (both settings take them) and wait less
    env = {**_keys(silent_server.url), "PROMPTMILL_PROVIDER_TIMEOUT": "1"}
    for seconds, args in ((1, []), (0.5, ["--timeout", "0.5"])):  # --timeout wins over the environment
        silent_server.times.clear()
        code, said, _ = _cli(root, "counts", "--model", model, *args, env=env, timeout=60)
        # timed from the first request on: importing the SDK alone takes seconds on a busy machine
        waited, times = time.monotonic() - silent_server.times[0], silent_server.times
        assert code == 1 and "PM844" in said and f"no answer within {seconds} s" in said, said
        assert len(times) == 2  # one try and one retry, then the command ends (3 roles: no storm)
        assert seconds <= times[1] - times[0] < seconds + 3  # the retry came when the timeout ended the first try
        assert waited < 2 * seconds + 6, f"waited {waited:.1f} s for a server that never answers"


def test_counts_write_refuses_a_ratio_compile_would_refuse(make_project, provider):
    provider.factor = 276.0
    root = _project(make_project)
    code, said, _ = _cli(root, "counts", "--write", env=_keys(provider.server.url))
    assert code == 1 and "PM010" in said and "not writing promptmill.ratios.json" in said, said
    assert "claude-sonnet-4-5" in said and "outside 0.1-10" in said
    assert "UNDER" in said  # the table is shown first
    assert not (root / "promptmill.ratios.json").exists()
    # an existing file is left as it was
    (root / "promptmill.ratios.json").write_text('{"ratios": {}}\n')
    code, said, _ = _cli(root, "counts", "--write", env=_keys(provider.server.url))
    assert code == 1 and (root / "promptmill.ratios.json").read_text() == '{"ratios": {}}\n'


@pytest.mark.parametrize("value", ["276", "5e-324", "0", "1e999"])
def test_compile_refuses_a_bad_ratio_at_its_position_with_a_hint_that_does_not_loop(make_project, value):
    root = _project(make_project)
    (root / "promptmill.ratios.json").write_text(
        '{\n  "ratios": {\n    "gemini-2.5-flash": {"ratio": 1.1},\n    "claude-sonnet-4-5": {"source": "x", "ratio": '
        + value
        + "}\n  }\n}\n"
    )
    code, said, _ = _cli(root, "compile", ".")
    assert code == 1 and "PM010" in said, said
    assert "promptmill.ratios.json:4:51" in said and "claude-sonnet-4-5" in said
    assert 'delete the entry "claude-sonnet-4-5"' in said and "counts --write" not in said


def test_the_ratios_file_is_read_and_written_only_inside_the_project(make_project, provider, tmp_path):
    import os

    root = _project(make_project)
    outside = tmp_path.parent / (tmp_path.name + "-other")
    outside.mkdir()
    theirs = outside / "promptmill.ratios.json"
    theirs.write_text('{"ratios": {"claude-sonnet-4-5": {"ratio": 1.5}}}\n')
    os.symlink(theirs, root / "promptmill.ratios.json")
    code, said, _ = _cli(root, "compile", ".")
    assert code == 1 and "PM017" in said and "promptmill.ratios.json" in said, said
    provider.factor = 1.3
    code, said, _ = _cli(root, "counts", "--write", env=_keys(provider.server.url))
    assert code == 1 and "PM017" in said, said
    assert theirs.read_text() == '{"ratios": {"claude-sonnet-4-5": {"ratio": 1.5}}}\n'
    assert os.path.islink(root / "promptmill.ratios.json")
    # a FIFO or an oversized file is refused, never waited on or read whole
    os.unlink(root / "promptmill.ratios.json")
    os.mkfifo(root / "promptmill.ratios.json")
    code, said, took = _cli(root, "compile", ".", timeout=30, process=True)
    assert code == 1 and "PM100" in said and took < 15, said
    os.unlink(root / "promptmill.ratios.json")
    (root / "promptmill.ratios.json").write_text('{"ratios": {}, "pad": "' + "x" * (1 << 20) + '"}')
    code, said, _ = _cli(root, "compile", ".")
    assert code == 1 and "PM105" in said, said
