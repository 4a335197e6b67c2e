"""A local HTTP server that records what a real SDK client sends and answers like the provider.

Tests point an official SDK (openai, anthropic, google-genai, boto3) at `server.url`, call it
with a promptmill payload, and compare the recorded body with the payload:

    def test_x(wire_server):
        wire_server.answer("/responses", {"id": "resp_1", ...})
        client = OpenAI(base_url=wire_server.url + "/v1", api_key="test")
        client.responses.create(**payload)
        assert wire_server.last.json == payload

An answer may be a function of the `Recorded` request (a provider whose answer depends on the
body). Answers are chosen by the longest registered path suffix (or regular expression, with
`answer_re`) that matches the request path; an unmatched request gets a 404 with a JSON body, so a
wrong URL fails the test instead of hanging.
"""

from __future__ import annotations

import json
import re
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Recorded:
    """One request as it arrived: method, path (with query), headers and the raw body bytes."""

    method: str
    path: str
    headers: dict[str, str]
    body: bytes

    @property
    def json(self) -> Any:
        return json.loads(self.body) if self.body else None


@dataclass
class WireServer:
    requests: list[Recorded] = field(default_factory=list)
    _answers: list[tuple[re.Pattern[str], int, Any]] = field(default_factory=list)
    _server: ThreadingHTTPServer | None = None

    @property
    def url(self) -> str:
        assert self._server is not None
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    @property
    def last(self) -> Recorded:
        assert self.requests, "the server received no request"
        return self.requests[-1]

    def answer(self, suffix: str, body: Any, status: int = 200) -> None:
        """Answer requests whose path (query removed) ends with `suffix` with `body` as JSON
        (or with `body(request)` when `body` is callable)."""
        self._answers.append((re.compile(re.escape(suffix) + r"$"), status, body))

    def answer_re(self, pattern: str, body: Any, status: int = 200) -> None:
        """Answer requests whose path (query removed) matches the regular expression `pattern`."""
        self._answers.append((re.compile(pattern), status, body))

    def _pick(self, request: Recorded) -> tuple[int, Any]:
        bare = request.path.split("?", 1)[0]
        hits = [(p, s, b) for p, s, b in self._answers if p.search(bare)]
        if not hits:
            return 404, {"error": {"message": f"the test server has no answer for {bare}"}}
        _, status, body = max(hits, key=lambda h: len(h[0].pattern))
        return status, body(request) if callable(body) else body

    def start(self) -> None:
        owner = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def _handle(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else b""
                request = Recorded(self.command, self.path, {k.lower(): v for k, v in self.headers.items()}, body)
                owner.requests.append(request)
                status, answer = owner._pick(request)
                data = json.dumps(answer).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            do_POST = do_GET = do_PUT = _handle  # the http.server interface

            def log_message(self, *args: Any) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()  # stop: 50 ms, not 0.5 s

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
