"""The server's main loop over stdio, in place of pygls' own: `Framer` reads the messages (framing errors
are repaired or skipped, never a hang or a huge allocation), and `dispatch` makes sure that every
request gets an answer: a result, or a JSON-RPC error that says why.

- a body that is not JSON: ParseError (-32700, id null);
- not a JSON-RPC 2.0 object, a bad id or method: InvalidRequest (-32600);
- params that do not fit the method (a negative line, no `textDocument`, a string for an object):
  InvalidParams (-32602) with the reason, as cattrs words it;
- any request after `shutdown` but `exit`: InvalidRequest (-32600).
"""

from __future__ import annotations

import asyncio
import logging
import re
import sys
import threading
from typing import TYPE_CHECKING, Any, BinaryIO

from cattrs.errors import BaseValidationError
from cattrs.v import transform_error
from lsprotocol.types import EXIT, ResponseError, ResponseErrorMessage
from pygls.io_ import StdoutWriter

from .framing import Framer, ParseError

if TYPE_CHECKING:
    from pygls.protocol import JsonRPCProtocol

    from .server import PromptmillServer

PARSE_ERROR, INVALID_REQUEST, INVALID_PARAMS = -32700, -32600, -32602


def say(text: str) -> None:
    """One line on stderr, where editors show a server's log."""
    try:
        sys.stderr.write(f"promptmill lsp: {text}\n")
        sys.stderr.flush()
    except (OSError, ValueError):
        pass


class _Quiet(logging.Formatter):
    """pygls' log lines without tracebacks (a bad message is the editor's, not a crash)."""

    def format(self, record: logging.LogRecord) -> str:
        text = f"promptmill lsp: {record.getMessage().splitlines()[0] if record.getMessage() else ''}"
        if record.exc_info and record.exc_info[1] is not None:
            exc = record.exc_info[1]
            text += f" ({type(exc).__name__}: {str(exc)[:300]})"
        return text


def quiet_logging() -> None:
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(_Quiet())
    for name in ("pygls", "promptmill"):
        log = logging.getLogger(name)
        log.handlers = [handler]
        log.setLevel(logging.WARNING)
        log.propagate = False


def send_error(protocol: JsonRPCProtocol, msg_id: Any, code: int, message: str) -> None:
    protocol._send_data(ResponseErrorMessage(id=msg_id, error=ResponseError(code=code, message=message)))


def _leaf(exc: BaseException, kind: type | None) -> str:
    if isinstance(exc, KeyError):
        return "required field missing"
    if isinstance(exc, ValueError) and str(exc):
        return str(exc).splitlines()[0][:200]  # lsprotocol's validators say which bound failed
    name = getattr(kind, "__name__", None)
    return f"expected {name}" if name else "invalid value"


def _reason(exc: BaseException) -> str:
    """Which field of the message is wrong and how, with the protocol's field names ($.params.textDocument)."""
    cause = exc.__cause__ if exc.__cause__ is not None else exc
    if isinstance(cause, BaseValidationError):
        said = "; ".join(transform_error(cause, path="$", format_exception=_leaf))
        return re.sub(r"_([a-z])", lambda m: m.group(1).upper(), said)[:1000]
    return f"{type(cause).__name__}: {cause}"[:1000]


def dispatch(protocol: JsonRPCProtocol, data: Any) -> None:
    """Hand one decoded message to pygls, or answer it with an error that says what is wrong."""
    if isinstance(data, ParseError):
        send_error(protocol, None, PARSE_ERROR, data.reason)
        return
    if not isinstance(data, dict):
        send_error(protocol, None, INVALID_REQUEST, "a message must be a JSON object (batches are not part of LSP)")
        return
    has_id, msg_id, method = "id" in data, data.get("id"), data.get("method")
    if has_id and (isinstance(msg_id, bool) or not isinstance(msg_id, int | str)):
        send_error(protocol, None, INVALID_REQUEST, "a request's id must be a number or a string")
        return
    if data.get("jsonrpc") != "2.0":
        if has_id:
            send_error(protocol, msg_id, INVALID_REQUEST, 'a message must say "jsonrpc": "2.0"')
        return
    if method is None:
        if has_id and ("result" in data or "error" in data):
            _handle(protocol, data, None)  # the editor's answer to a request of ours
        elif has_id:
            send_error(protocol, msg_id, INVALID_REQUEST, "a request needs a method")
        return
    if not isinstance(method, str):
        if has_id:
            send_error(protocol, msg_id, INVALID_REQUEST, "a method must be a string")
        return
    if protocol._shutdown and method != EXIT:
        if has_id:
            send_error(
                protocol,
                msg_id,
                INVALID_REQUEST,
                f"the server is shut down: only 'exit' is accepted after 'shutdown' (not '{method[:100]}')",
            )
        return
    _handle(protocol, data, msg_id if has_id else None)


def _handle(protocol: JsonRPCProtocol, data: dict[str, Any], msg_id: Any) -> None:
    method = data.get("method")
    if method is not None and "params" not in data:
        data = {**data, "params": None}  # JSON-RPC lets a request or notification leave params out
    try:
        message = protocol.structure_message(data)
    except Exception as exc:
        reason = _reason(exc)
        if msg_id is not None:
            send_error(protocol, msg_id, INVALID_PARAMS, f"invalid params for '{method}': {reason}")
        else:
            say(f"ignored '{method}': invalid params: {reason}")
        return
    protocol.handle_message(message)


async def _serve(server: PromptmillServer, fd: int) -> None:
    """Messages come from a daemon thread (it may sit in a read when `exit` ends the process), one at a
    time: the queue holds one, so an editor that floods the server waits for it instead of filling memory."""
    framer = Framer(fd, lambda text: say(f"framing: {text}"))
    loop = asyncio.get_running_loop()
    inbox: asyncio.Queue[Any] = asyncio.Queue(maxsize=1)

    def read() -> None:
        while True:
            try:
                data = framer.next()
            except MemoryError:
                data = None
                say("out of memory while reading a message; ending")
            except OSError as exc:
                data = None
                say(f"cannot read the input: {exc}")
            ended = data is None
            try:
                asyncio.run_coroutine_threadsafe(inbox.put(data), loop).result()
            except Exception:  # the loop is gone: the server is ending
                return
            del data  # not held while the next message is read (a 50 MB buffer's text)
            if ended:
                return

    threading.Thread(target=read, name="lsp-reader", daemon=True).start()
    stop = server._stop_event
    while stop is None or not stop.is_set():
        data = await inbox.get()
        if data is None:
            break
        dispatch(server.protocol, data)
        del data
        await asyncio.sleep(0)  # let handlers and the lint run between messages


def serve(server: PromptmillServer, fd: int, stdout: BinaryIO) -> int:
    """Serve on `fd` (stdin's copy) and `stdout` until `exit` or the end of input; the exit code."""
    quiet_logging()
    server._stop_event = threading.Event()
    server.protocol.set_writer(StdoutWriter(stdout))
    code = 0
    try:
        asyncio.run(_serve(server, fd))
    except SystemExit as exc:  # pygls' `exit` handler: 0 after `shutdown`, 1 before
        code = exc.code if isinstance(exc.code, int) else 0
    except BrokenPipeError:
        say("the editor closed the connection")
    except MemoryError:
        say("out of memory; ending")
        code = 1
    finally:
        server.shutdown()
    return code
