"""The preview's HTTP server: routes, server-sent events, and `serve()`.

The standard library's `ThreadingHTTPServer` is enough here: one user, a
handful of small JSON requests, and one long-lived event stream per open page
(a thread each). Routes:

    GET  /                  the page (static/index.html)
    GET  /static/NAME       app.js, app.css: only the files in STATIC, from the package
    GET  /api/project       roles, example state files, models, the providers (tabs), the starting role and state
    GET  /api/state?path=P  the text of one listed example state file
    POST /api/render        {role, state, budget, provider, model, wires} -> the views of `wires` (default:
                            the provider rendered), or an error
    POST /api/compare       {role, state, budget, provider, model, against, other} -> diff and deltas

Each field's type is checked first (`fields.py`): a wrong one is 400 PM010 naming the field.
    GET  /api/events        server-sent events: a `status` after every recompile

Every request is first checked by `guard.refusal` (403 when the Host or
Origin is not this loopback server). The server binds 127.0.0.1 only.
"""

from __future__ import annotations

import errno
import json
import os
import queue
import sys
import threading
import webbrowser
from collections.abc import Callable
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from importlib import resources
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

# promptmill internals this module uses (kept together for the subpackage move)
from ..core.errors import ConfigError
from ..core.jsontypes import JSON
from ..source.statefile import MAX_STATE_FILE_BYTES, read_state
from ..watch import Watcher
from .fields import FieldError, compare_request, render_request, state_query
from .origin import refusal
from .session import Session, error_data, wire_names

HOST = "127.0.0.1"
DEFAULT_PORT = 8765
STATIC = {  # the only files served: name -> content type
    "index.html": "text/html; charset=utf-8",
    "app.js": "text/javascript; charset=utf-8",
    "app.css": "text/css; charset=utf-8",
}
MAX_BODY = 2 * MAX_STATE_FILE_BYTES + 65536  # a state and another state to compare with
PING_SECONDS = 15.0
CLIENT_TIMEOUT = 60.0  # seconds a socket read or write may wait for the client
CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; "
    "base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
)


def _static(name: str) -> bytes:
    return resources.files(__package__).joinpath("static", name).read_bytes()


class PreviewServer(ThreadingHTTPServer):
    """The preview of one project on 127.0.0.1:`port` (0 picks a free port)."""

    daemon_threads = True
    allow_reuse_address = True

    def __init__(
        self,
        session: Session,
        port: int = 0,
        *,
        role: str | None = None,
        watch: bool = True,
        debounce: float = 0.05,
        log: Callable[[str], None] | None = None,
    ) -> None:
        super().__init__((HOST, port), _Handler)
        self.session = session
        self.role = role
        self.port = self.server_address[1]
        self.log = log
        self.closing = threading.Event()
        self._clients: set[queue.Queue[JSON]] = set()
        self._clients_lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self.watcher = Watcher(session.watch_paths(), self.on_change, debounce=debounce) if watch else None

    @property
    def url(self) -> str:
        return f"http://{HOST}:{self.port}/"

    def start(self) -> PreviewServer:
        """Serve and watch on threads of their own; returns at once."""
        if self.watcher is not None:
            self.watcher.start()
        # a short poll: `close` (shutdown) waits for the loop's next look, 0.5 s by default, on every close
        self._thread = threading.Thread(target=self.serve_forever, kwargs={"poll_interval": 0.05}, name="promptmill-preview", daemon=True)
        self._thread.start()
        return self

    def close(self) -> None:
        """Stop watching and serving; event streams end within a second."""
        self.closing.set()
        if self.watcher is not None:
            self.watcher.stop()
        self.shutdown()
        self.server_close()

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that hung up (mid-body, mid-response) or stalled is no error: drop it silently."""
        if isinstance(sys.exc_info()[1], (ConnectionError, TimeoutError)):
            return
        super().handle_error(request, client_address)

    def __enter__(self) -> PreviewServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- live updates ----------------------------------------------------------
    def on_change(self, changed: set[Path]) -> None:
        """The watcher's callable: recompile in memory, tell every open page."""
        event = self.session.refresh(changed)
        if self.log is not None:
            what = ", ".join(event["changed"][:3]) or "files"
            self.log(f"{what} changed: {'ok' if event['ok'] else 'templates have errors'} ({event['ms']:.0f} ms)")
        self.broadcast(event)

    def broadcast(self, event: dict[str, Any]) -> None:
        with self._clients_lock:
            for q in self._clients:
                q.put(event)

    def subscribe(self) -> queue.Queue[JSON]:
        q: queue.Queue[JSON] = queue.Queue()
        with self._clients_lock:
            self._clients.add(q)
        return q

    def unsubscribe(self, q: queue.Queue[JSON]) -> None:
        with self._clients_lock:
            self._clients.discard(q)

    # -- the page's data -----------------------------------------------------------
    def project_data(self) -> dict[str, Any]:
        s = self.session
        roles = s.roles()
        examples = s.examples()
        by_stem = {Path(p).name.split(".state.")[0]: p for p in examples}
        state = s.shown(s.state_file) if s.state_file is not None else None
        role = self.role if self.role is not None else (roles[0] if roles else None)
        return {
            "project": s.root.name,
            "roles": roles,
            "examples": examples,
            "example_for": {r: by_stem[r] for r in roles if r in by_stem},
            "models": s.models(),
            "providers": list(wire_names()),  # the tabs: the wire registry's names, in its order
            "watching": self.watcher is not None,  # the badge says whether saves reload the page
            "role": role,
            "state": state,
            "status": s.status(),
        }


class _Handler(BaseHTTPRequestHandler):
    server: PreviewServer
    server_version = "promptmill-preview"
    sys_version = ""
    timeout = CLIENT_TIMEOUT  # a client that stops sending mid-request frees its thread

    def log_message(self, format: str, *args: Any) -> None:  # the base class's name
        pass  # the terminal shows what changed, not every request

    # -- responses ---------------------------------------------------------------
    def _headers(self, status: int, content_type: str, length: int | None = None) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        if length is not None:
            self.send_header("Content-Length", str(length))
        self.send_header("Cache-Control", "no-store")
        self.send_header("X-Content-Type-Options", "nosniff")
        self.send_header("X-Frame-Options", "DENY")
        self.send_header("Referrer-Policy", "no-referrer")
        self.send_header("Content-Security-Policy", CSP)
        self.end_headers()

    def _send(self, status: int, body: bytes, content_type: str) -> None:
        self._headers(status, content_type, len(body))
        if self.command != "HEAD":
            self.wfile.write(body)

    def _json(self, data: Any, status: int = 200) -> None:
        self._send(status, json.dumps(data, ensure_ascii=False).encode("utf-8"), "application/json; charset=utf-8")

    def _refuse(self, status: int, why: str) -> None:
        self._send(status, (why + "\n").encode("utf-8"), "text/plain; charset=utf-8")

    def _guarded(self) -> bool:
        why = refusal(self.headers, self.server.port, urlsplit(self.path).path)
        if why is not None:
            self._refuse(HTTPStatus.FORBIDDEN, f"403 forbidden: {why}")
            return False
        return True

    # -- methods -------------------------------------------------------------------
    def do_GET(self) -> None:  # the base class's name
        if not self._guarded():
            return
        url = urlsplit(self.path)
        path = url.path
        try:
            if path in ("/", "/index.html"):
                self._send(200, _static("index.html"), STATIC["index.html"])
            elif path.startswith("/static/") and path[len("/static/") :] in STATIC:
                name = path[len("/static/") :]
                self._send(200, _static(name), STATIC[name])
            elif path == "/api/project":
                self._json(self.server.project_data())
            elif path == "/api/state":
                try:
                    name = state_query(parse_qs(url.query, keep_blank_values=True))
                except FieldError as exc:
                    self._json({"error": error_data(exc)}, 400)
                    return
                self._json(self.server.session.read_example(name))
            elif path == "/api/events":
                self._events()
            elif path == "/favicon.ico":
                self._send(HTTPStatus.NO_CONTENT, b"", "image/x-icon")
            else:
                self._refuse(HTTPStatus.NOT_FOUND, "404 not found")
        except (BrokenPipeError, ConnectionResetError):
            pass
        except Exception as exc:  # a bug: say so as data, never a traceback in the page
            self._internal(exc)

    do_HEAD = do_GET

    def do_POST(self) -> None:
        if not self._guarded():
            return
        path = urlsplit(self.path).path
        if path not in ("/api/render", "/api/compare"):
            self._refuse(HTTPStatus.NOT_FOUND, "404 not found")
            return
        if not (self.headers.get("Content-Type") or "").startswith("application/json"):
            self._refuse(HTTPStatus.UNSUPPORTED_MEDIA_TYPE, "415: send application/json")
            return
        try:
            length = int(self.headers.get("Content-Length") or "0")
        except ValueError:
            length = -1
        if length < 0 or length > MAX_BODY:
            self._refuse(HTTPStatus.REQUEST_ENTITY_TOO_LARGE, f"413: the body must be at most {MAX_BODY} bytes")
            return
        data = self.rfile.read(length)
        if len(data) < length:  # the client hung up mid-body: nobody to answer
            self.close_connection = True
            return
        try:
            body = json.loads(data or b"{}")
            if path == "/api/render":
                fields = render_request(body, wire_names())
            else:
                fields = compare_request(body)
        except FieldError as exc:
            self._json({"error": error_data(exc)}, 400)
            return
        except (ValueError, UnicodeDecodeError, RecursionError) as exc:
            self._json({"error": {"code": "PM010", "message": f"bad request: the body is not JSON: {exc}", "hint": None}}, 400)
            return
        try:
            s = self.server.session
            if path == "/api/render":
                self._json(s.render(**fields))
            else:
                other = fields.pop("other")
                self._json(s.compare(**fields, other_state=other))
        except (BrokenPipeError, ConnectionResetError):
            pass
        except Exception as exc:
            self._internal(exc)

    def _internal(self, exc: Exception) -> None:
        if os.environ.get("PROMPTMILL_DEBUG"):
            raise exc
        try:
            self._json({"error": {"code": "PM000", "message": f"internal error: {exc!r} (a bug; please report it)", "hint": None}}, 500)
        except OSError:
            pass

    def _events(self) -> None:
        """Server-sent events: the status now, then one after every recompile."""
        self._headers(200, "text/event-stream; charset=utf-8")
        if self.command == "HEAD":
            return
        q = self.server.subscribe()
        try:
            self.wfile.write(b"retry: 1000\n\n")  # reconnect within a second when the server restarts
            self._event(self.server.session.status())
            idle = 0.0
            while not self.server.closing.is_set():
                try:
                    event = q.get(timeout=0.5)
                except queue.Empty:
                    idle += 0.5
                    if idle >= PING_SECONDS:
                        self.wfile.write(b": ping\n\n")
                        self.wfile.flush()
                        idle = 0.0
                    continue
                self._event(event)
                idle = 0.0
        except (BrokenPipeError, ConnectionResetError, OSError):
            pass
        finally:
            self.server.unsubscribe(q)

    def _event(self, data: dict[str, Any]) -> None:
        self.wfile.write(b"event: status\ndata: " + json.dumps(data, ensure_ascii=False).encode("utf-8") + b"\n\n")
        self.wfile.flush()


def make_server(
    project: str | os.PathLike[str] = ".",
    *,
    role: str | None = None,
    state: str | os.PathLike[str] | None = None,
    port: int = 0,
    watch: bool = True,
    debounce: float = 0.05,
    log: Callable[[str], None] | None = None,
) -> PreviewServer:
    """A preview server for `project` on 127.0.0.1 (not started: `.start()` or `with`).

    Fails with a PromptmillError for an unknown role (when the project
    compiles), a missing state file, or a port that is taken.
    """
    if state is not None and not Path(state).is_file():
        read_state(state)  # its error: no such file, a folder, another suffix
    session = Session(project, state_file=state)
    if role is not None and session.runtime is not None:
        session.runtime.bundle(role)  # PM802 with "did you mean" for an unknown role
    try:
        return PreviewServer(session, port, role=role, watch=watch, debounce=debounce, log=log)
    except OSError as exc:
        if exc.errno == errno.EADDRINUSE:
            raise ConfigError(
                f"port {port} on {HOST} is already in use", code="PM010", hint="pass another --port, or --port 0 for any free port"
            ) from None
        raise


def serve(
    project: str | os.PathLike[str] = ".",
    *,
    role: str | None = None,
    state: str | os.PathLike[str] | None = None,
    port: int = DEFAULT_PORT,
    open_browser: bool = False,
    debounce: float = 0.05,
    write: Callable[[str], None] = print,
) -> None:
    """Serve the preview until Ctrl-C: print the URL, optionally open a browser.

    When the reader of `write`'s output goes away (`promptmill preview | head -1`)
    the server stops and BrokenPipeError is raised, as the first lines would.
    """
    closed = threading.Event()

    def log(line: str) -> None:  # on the watcher's thread: stop serving rather than log a traceback there
        try:
            write(line)
        except BrokenPipeError:
            if not closed.is_set():
                closed.set()
                server.shutdown()

    server = make_server(project, role=role, state=state, port=port, debounce=debounce, log=log)
    s = server.session
    try:
        write(f"promptmill preview of {s.root.name}: {server.url}")
        if not s.ok:
            errors = sum(d["severity"] == "error" for d in s.diagnostics)
            write(f"the templates have {errors} error(s): the page shows them")
        write("watching for changes; Ctrl-C to stop")
    except BaseException:  # nobody reads the output (BrokenPipeError): nothing was served yet
        server.server_close()
        raise
    if server.watcher is not None:
        server.watcher.start()
    if open_browser:
        webbrowser.open(server.url)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        write("stopped")
    finally:
        server.close()
    if closed.is_set():
        raise BrokenPipeError(errno.EPIPE, os.strerror(errno.EPIPE))


__all__ = ["DEFAULT_PORT", "PreviewServer", "make_server", "serve"]
