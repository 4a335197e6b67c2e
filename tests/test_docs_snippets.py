"""The examples of README.md and docs/*.md run as printed, from the repository root.

Every ```python block of those pages is run by some test: the README tutorial by
tests/test_tutorial.py, docs/errors.md by tests/test_errors_doc.py, blocks after
`<!-- python-... -->` markers by the page's own test, and every block after a
`<!-- run -->` marker here. The examples that send a request use the real openai,
anthropic and google-genai SDKs; their base URLs point at a local server that
answers like the provider (with the reply named in the marker,
`<!-- run: the model replies FILE -->`, or "Hello!"), so the payloads go through
each SDK's own request code without a network.

Blocks of docs/preview.md and docs/library.md that start with `$ promptmill render`
or `$ promptmill stats` are what the command prints; a `...` line stands for lines
left out, `    │ ...` for more lines of a section's text. The provider table of
docs/providers.md shows real token counts.
"""

from __future__ import annotations

import contextlib
import io
import json
import re
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]  # docs/**/*.md: the site's pages too
RUN = re.compile(r"^<!-- run(?:: the model replies (\S+))? -->$")
OTHER_TESTS = re.compile(r"^<!-- python-[\w-]+ -->$")


def python_blocks(page: Path) -> list[tuple[int, str, str]]:
    """(line, marker line before the block, code) for each ```python block of a page."""
    lines = page.read_text(encoding="utf-8").split("\n")
    out = []
    for i, line in enumerate(lines):
        if line.strip() == "```python":
            end = lines.index(line.replace("python", ""), i + 1)
            before = next((x.strip() for x in reversed(lines[:i]) if x.strip()), "")
            out.append((i + 1, before, "\n".join(lines[i + 1 : end])))
    return out


def runnable() -> list:
    cases = []
    for page in PAGES:
        for line, before, code in python_blocks(page):
            match = RUN.match(before)
            if match:
                cases.append(pytest.param(code, match.group(1), id=f"{page.name}:{line}"))
    return cases


class FakeProvider(BaseHTTPRequestHandler):
    """Answers OpenAI (chat and Responses), Anthropic and Gemini requests with `reply` as the model's text."""

    reply = "Hello!"
    bodies: list[dict] = []

    def do_POST(self) -> None:  # the http.server interface
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        FakeProvider.bodies.append(body)
        if self.path.endswith("/messages/count_tokens"):  # promptmill.counts: the provider's own count
            out: dict = {"input_tokens": 1}
        elif self.path.endswith(":countTokens"):
            out = {"totalTokens": 1}
        elif self.path.endswith("/chat/completions"):
            message = {"role": "assistant", "content": self.reply}
            out = {
                "id": "c",
                "object": "chat.completion",
                "created": 0,
                "model": body["model"],
                "choices": [{"index": 0, "finish_reason": "stop", "message": message}],
            }
        elif self.path.endswith("/responses"):  # OpenAI Responses: one message item
            item = {"type": "message", "id": "m", "status": "completed", "role": "assistant"}
            item["content"] = [{"type": "output_text", "text": self.reply, "annotations": []}]
            out = {"id": "r", "object": "response", "created_at": 0, "model": body["model"], "status": "completed", "output": [item]}
        elif self.path.endswith("/converse"):  # Bedrock Converse (boto3)
            message = {"role": "assistant", "content": [{"text": self.reply}]}
            usage = {"inputTokens": 1, "outputTokens": 1, "totalTokens": 2}
            out = {"output": {"message": message}, "stopReason": "end_turn", "usage": usage, "metrics": {"latencyMs": 1}}
        elif self.path.endswith("/messages") or self.path.endswith("/invoke"):  # /invoke: Claude on Bedrock
            out = {
                "id": "m",
                "type": "message",
                "role": "assistant",
                "model": body.get("model", "claude"),
                "content": [{"type": "text", "text": self.reply}],
                "stop_reason": "end_turn",
                "usage": {"input_tokens": 1, "output_tokens": 1},
            }
        else:
            out = {"candidates": [{"content": {"role": "model", "parts": [{"text": self.reply}]}}]}
        data = json.dumps(out).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args) -> None:
        pass


@pytest.fixture(scope="module")
def provider_url():
    server = ThreadingHTTPServer(("127.0.0.1", 0), FakeProvider)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def test_every_python_block_is_run_by_a_test():
    for page in PAGES:
        text = page.read_text(encoding="utf-8")
        tutorial = text.split("<!-- tutorial:start -->", 1)[-1].split("<!-- tutorial:end -->", 1)[0]
        for line, before, code in python_blocks(page):
            covered = (
                RUN.match(before)
                or OTHER_TESTS.match(before)
                or page == ROOT / "docs" / "errors.md"  # tools/errors_doc.py runs each example
                or ("<!-- tutorial:start -->" in text and code in tutorial)
            )
            assert covered, f"{page.name}:{line}: a python block no test runs (put <!-- run --> before it)"


@pytest.mark.parametrize("code, reply_file", runnable())
def test_python_block_runs_as_printed(code, reply_file, provider_url, monkeypatch):
    monkeypatch.chdir(ROOT)
    for name in ("OPENAI", "ANTHROPIC"):
        monkeypatch.setenv(f"{name}_API_KEY", "test-key")
        monkeypatch.setenv(f"{name}_BASE_URL", provider_url + ("/v1" if name == "OPENAI" else ""))
    monkeypatch.setenv("GEMINI_API_KEY", "test-key")
    monkeypatch.delenv("GOOGLE_API_KEY", raising=False)
    monkeypatch.setenv("GOOGLE_GEMINI_BASE_URL", provider_url)
    monkeypatch.setenv("NO_PROXY", "127.0.0.1")
    for name, value in {"ENDPOINT_URL_BEDROCK_RUNTIME": provider_url, "ACCESS_KEY_ID": "test", "SECRET_ACCESS_KEY": "test"}.items():
        monkeypatch.setenv(f"AWS_{name}", value)  # boto3 and AnthropicBedrock read these
    monkeypatch.setenv("ANTHROPIC_BEDROCK_BASE_URL", provider_url)
    reply = "Hello!"
    if reply_file:
        reply = (ROOT / reply_file).read_text(encoding="utf-8").split("\n", 1)[1]  # after `# expect: ok`
    monkeypatch.setattr(FakeProvider, "reply", reply)
    FakeProvider.bodies = []
    with contextlib.redirect_stdout(io.StringIO()):
        exec(compile(code, "doc example", "exec"), {"__name__": "__doc_example__"})  # our own documentation
    if "client." in code:
        assert FakeProvider.bodies, "the example sent no request"


# -- command output shown in docs/preview.md and docs/library.md -------------------------------

SHOWN_COMMANDS = re.compile(r"^\$ (promptmill (?:render|stats)\b[^|]*?)(?: \| head -(\d+))?$")


def command_blocks() -> list:
    """(command, head lines or None, expected lines) for each fenced block starting `$ promptmill render|stats`."""
    cases = []
    for page in (ROOT / "docs" / "preview.md", ROOT / "docs" / "library.md"):
        for block in page.read_text(encoding="utf-8").split("```")[1::2]:
            lines = block.split("\n")[1:]
            match = SHOWN_COMMANDS.match(lines[0]) if lines else None
            if match and not any(line.startswith("$ ") for line in lines[1:]):
                head = int(match.group(2)) if match.group(2) else None
                cases.append(pytest.param(match.group(1), head, lines[1:], id=f"{page.name}:{match.group(1)}"))
    return cases


def elided(expected: list[str]) -> re.Pattern:
    """A pattern for output shown with elisions: a `...` line stands for any lines, `    │ ...` for more text lines."""
    parts = []
    for line in expected:
        if line.strip() == "...":
            parts.append(r"(?:.*\n)*?")
        elif line.endswith("│ ..."):
            parts.append(rf"(?:{re.escape(line[:-3].rstrip())}.*\n)*?")
        else:
            parts.append(re.escape(line.rstrip()) + r"\n")
    return re.compile("".join(parts))


def test_the_pages_show_command_output():
    assert len(command_blocks()) >= 5


@pytest.mark.parametrize("command, head, expected", command_blocks())
def test_shown_command_output_is_what_the_command_prints(command, head, expected, monkeypatch):
    from click.testing import CliRunner

    from promptmill.cli.main import main

    monkeypatch.chdir(ROOT)
    monkeypatch.setenv("NO_COLOR", "1")
    result = CliRunner().invoke(main, command.split()[1:])
    assert result.exit_code == 0, result.output
    lines = [line.rstrip() for line in result.output.split("\n")]
    out = "\n".join(lines[:head] if head else lines).rstrip("\n") + "\n"
    while expected and not expected[-1].strip():
        expected = expected[:-1]
    assert elided(expected).fullmatch(out), f"$ {command}\n{out}"


def test_the_provider_table_shows_real_counts():
    """docs/providers.md: companion-chat's tokens / budget for each provider."""
    import yaml

    import promptmill

    text = (ROOT / "docs" / "providers.md").read_text(encoding="utf-8")
    rows = re.findall(r"^\| (openai|openai-responses|anthropic|gemini) \| (\d+) / (\d+) \|", text, re.M)
    assert [r[0] for r in rows] == ["openai", "openai-responses", "anthropic", "gemini"]
    runtime = promptmill.load(ROOT / "build")
    state = yaml.safe_load((ROOT / "prompts/examples/companion-chat.state.yaml").read_text(encoding="utf-8"))
    for provider, tokens, budget in rows:
        req = runtime.render("companion-chat", state, provider=provider)
        assert (req.tokens, req.budget) == (int(tokens), int(budget)), provider


def test_user_rules_example_prints_the_events_shown(tmp_path, monkeypatch):
    """docs/composition.md: the user rules file and its fragments, then the render that uses them."""
    from click.testing import CliRunner

    from promptmill.cli.main import main

    text = (ROOT / "docs" / "composition.md").read_text(encoding="utf-8")
    blocks = text.split("```")[1::2]
    written = 0
    for block in blocks:
        first = block.split("\n")[1]
        if block.startswith("yaml\n# ~/.config/promptmill/"):
            target = tmp_path / first.removeprefix("# ~/.config/promptmill/")
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(block.split("\n", 1)[1], encoding="utf-8")
            written += 1
    assert written == 3
    (shown,) = [b for b in blocks if b.startswith("text\n$ promptmill render executor")]
    command, *expected = shown.split("\n")[1:-1]
    monkeypatch.chdir(ROOT)
    monkeypatch.setenv("PROMPTMILL_USER_DIR", str(tmp_path))
    monkeypatch.setenv("NO_COLOR", "1")
    result = CliRunner().invoke(main, command.split()[2:])
    assert result.exit_code == 0, result.output
    out = "\n".join(line.rstrip() for line in result.output.split("\n"))
    assert elided([*expected, "..."]).fullmatch(out), out
