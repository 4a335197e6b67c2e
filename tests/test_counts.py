"""`promptmill counts` against a local server that answers like the Anthropic and Gemini token-counting
endpoints, through the real anthropic and google-genai SDK clients (no key, no network)."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

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
