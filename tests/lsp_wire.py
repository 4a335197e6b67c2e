"""A tiny raw JSON-RPC client for `promptmill lsp` over stdio: it sends bytes exactly as given (broken
framing included) and reads the server's replies with strict framing, so a test sees what an editor would.

    with Wire(project) as w:
        w.initialize()
        w.send({"jsonrpc": "2.0", "id": 2, "method": "shutdown"})
        reply = w.reply(2)
"""

from __future__ import annotations

import json
import os
import queue
import re
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

COMPILER = Path(__file__).resolve().parents[1] / "compiler"
_HEADER = re.compile(rb"Content-Length: (\d+)\r\n(?:[^\r\n]+\r\n)*\r\n")


def frame(message: dict[str, Any] | bytes) -> bytes:
    body = message if isinstance(message, bytes) else json.dumps(message).encode("utf-8")
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


class Wire:
    """One `promptmill lsp --stdio` process; `messages` collects everything it sends, in order."""

    def __init__(self, cwd: Path, env: dict[str, str] | None = None) -> None:
        base = {**os.environ, **(env or {})}
        base["PYTHONPATH"] = os.pathsep.join(p for p in (str(COMPILER), base.get("PYTHONPATH", "")) if p)
        self.cwd = cwd
        self.stderr_path = cwd.parent / f"lsp-stderr-{os.getpid()}-{id(self)}.txt"
        self._stderr = open(self.stderr_path, "wb")
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "promptmill.cli", "lsp", "--stdio"],
            cwd=cwd,
            env=base,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._stderr,
        )
        self._inbox: queue.Queue[dict[str, Any] | None] = queue.Queue()
        self.messages: list[dict[str, Any]] = []
        self.broken: list[bytes] = []  # anything the server wrote that is not a well-framed message
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        out = self.proc.stdout
        assert out is not None
        buf = b""
        while True:
            chunk = out.read1(1 << 16)
            if not chunk:
                self._inbox.put(None)
                return
            buf += chunk
            while True:
                m = _HEADER.match(buf)
                if m is None:
                    if not (b"Content-Length: ".startswith(buf) or buf.startswith(b"Content-Length: ")):
                        self.broken.append(buf)
                        buf = b""
                    break
                end = m.end() + int(m.group(1))
                if len(buf) < end:
                    break
                self._inbox.put(json.loads(buf[m.end() : end]))
                buf = buf[end:]

    def send_raw(self, data: bytes) -> None:
        assert self.proc.stdin is not None
        try:
            self.proc.stdin.write(data)
            self.proc.stdin.flush()
        except BrokenPipeError:
            pass

    def send(self, message: dict[str, Any]) -> None:
        self.send_raw(frame(message))

    def next(self, timeout: float) -> dict[str, Any] | None:
        """The next message the server sends (None at its end or after `timeout`)."""
        try:
            got = self._inbox.get(timeout=timeout)
        except queue.Empty:
            return None
        if got is not None:
            self.messages.append(got)
        return got

    def reply(self, msg_id: Any, timeout: float = 30.0) -> dict[str, Any] | None:
        """The response to request `msg_id` (None when none came within `timeout`); requests the server
        makes meanwhile are answered with null, as a minimal editor would."""
        for seen in self.messages:
            if seen.get("id") == msg_id and "method" not in seen:
                return seen
        deadline = time.monotonic() + timeout
        while (left := deadline - time.monotonic()) > 0:
            got = self.next(left)
            if got is None:
                return None
            if "method" in got and "id" in got:
                self.send({"jsonrpc": "2.0", "id": got["id"], "result": None})
            elif "method" not in got and got.get("id") == msg_id:
                return got
        return None

    def request(self, msg_id: Any, method: str, params: Any = None, timeout: float = 30.0) -> dict[str, Any] | None:
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": msg_id, "method": method}
        if params is not None:
            message["params"] = params
        self.send(message)
        return self.reply(msg_id, timeout)

    def initialize(self, root: Path | None = None) -> dict[str, Any] | None:
        root = root or self.cwd
        params = {
            "processId": None,
            "rootUri": root.as_uri(),
            "capabilities": {},
            "workspaceFolders": [{"uri": root.as_uri(), "name": "p"}],
        }
        got = self.request("init", "initialize", params)
        self.send({"jsonrpc": "2.0", "method": "initialized", "params": {}})
        return got

    def notify(self, method: str, params: Any) -> None:
        self.send({"jsonrpc": "2.0", "method": method, "params": params})

    def peak_bytes(self) -> int:
        """The server's peak resident memory so far (Linux: VmHWM), 0 when unknown."""
        try:
            status = Path(f"/proc/{self.proc.pid}/status").read_text()
        except OSError:
            return 0
        m = re.search(r"VmHWM:\s+(\d+) kB", status)
        return int(m.group(1)) * 1024 if m else 0

    def stderr(self) -> str:
        if not self._stderr.closed:
            self._stderr.flush()
        return self.stderr_path.read_text(encoding="utf-8", errors="replace")

    def close(self) -> int | None:
        """End the process (politely if it still runs); its exit code."""
        if self.proc.poll() is None:
            self.send({"jsonrpc": "2.0", "method": "exit"})
            try:
                self.proc.wait(5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)
        if self.proc.stdin is not None:
            try:
                self.proc.stdin.close()
            except BrokenPipeError:
                pass
        self._stderr.close()
        return self.proc.returncode

    def __enter__(self) -> Wire:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
