"""The Python examples of README.md and docs/*.md run as printed, from the repository root.

Every ```python block of those pages is run by some test: the README tutorial by
tests/test_tutorial.py, docs/errors.md by tests/test_errors_doc.py, blocks after
`<!-- python-... -->` markers by the page's own test, and every block after a
`<!-- run -->` marker here. The examples that send a request use the real openai,
anthropic and google-genai SDKs; their base URLs point at a local server that
answers like the provider (with the reply named in the marker,
`<!-- run: the model replies FILE -->`, or "Hello!"), so the payloads go through
each SDK's own request code without a network.
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
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
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
    """Answers OpenAI, Anthropic and Gemini requests with `reply` as the model's text."""

    reply = "Hello!"
    bodies: list[dict] = []

    def do_POST(self) -> None:  # noqa: N802 - the http.server interface
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        FakeProvider.bodies.append(body)
        if self.path.endswith("/chat/completions"):
            message = {"role": "assistant", "content": self.reply}
            out: dict = {"id": "c", "object": "chat.completion", "created": 0, "model": body["model"],
                         "choices": [{"index": 0, "finish_reason": "stop", "message": message}]}
        elif self.path.endswith("/messages"):
            out = {"id": "m", "type": "message", "role": "assistant", "model": body["model"],
                   "content": [{"type": "text", "text": self.reply}], "stop_reason": "end_turn",
                   "usage": {"input_tokens": 1, "output_tokens": 1}}
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
                or page.name == "errors.md"  # tools/errors_doc.py runs each example
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
    reply = "Hello!"
    if reply_file:
        reply = (ROOT / reply_file).read_text(encoding="utf-8").split("\n", 1)[1]  # after `# expect: ok`
    monkeypatch.setattr(FakeProvider, "reply", reply)
    FakeProvider.bodies = []
    with contextlib.redirect_stdout(io.StringIO()):
        exec(compile(code, "doc example", "exec"), {"__name__": "__doc_example__"})  # noqa: S102 - our own documentation
    if "client." in code:
        assert FakeProvider.bodies, "the example sent no request"
