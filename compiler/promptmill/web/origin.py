"""Which requests the preview server answers: loopback names only.

The server listens on 127.0.0.1, but a web page on another site can still
reach it through the visitor's browser: by DNS rebinding (a name of the
attacker's that resolves to 127.0.0.1, so the Host header names that site) or
by a cross-origin request (the Origin header names that site). Both are
refused: the Host header must be a loopback name with the server's port, an
Origin header, when sent, must be `http://` the same, and a browser's
`Sec-Fetch-Site` may say cross-site only when opening the page itself.
"""

from __future__ import annotations

from email.message import Message
from urllib.parse import urlsplit

LOOPBACK = ("127.0.0.1", "localhost", "::1")


def _split_host(host: str) -> tuple[str, int | None] | None:
    """`name[:port]` (IPv6 in brackets) -> (name, port); None when malformed."""
    if host.startswith("["):
        end = host.find("]")
        if end < 0:
            return None
        name, rest = host[1:end], host[end + 1 :]
        if rest and not rest.startswith(":"):
            return None
        port = rest[1:] if rest else None
    else:
        name, _, port = host.partition(":")
        port = port if ":" in host else None
    if port is not None and not port.isdigit():
        return None
    return name.lower().rstrip("."), int(port) if port is not None else None


def host_ok(host: str | None, port: int) -> bool:
    """Is `host` (a Host header) a loopback name, with the server's port when it names one?"""
    if not host:
        return False
    parts = _split_host(host.strip())
    return parts is not None and parts[0] in LOOPBACK and parts[1] in (None, port) and (parts[1] is not None or port == 80)


def origin_ok(origin: str | None, port: int) -> bool:
    """Is `origin` (an Origin header) absent, or `http://` a loopback name with the server's port?"""
    if origin is None:
        return True
    try:
        url = urlsplit(origin.strip())
        origin_port = url.port if url.port is not None else 80
    except ValueError:
        return False
    return url.scheme == "http" and (url.hostname or "") in LOOPBACK and origin_port == port


def refusal(headers: Message | dict[str, str], port: int, path: str = "/") -> str | None:
    """Why a request with these headers is refused, or None when it may be answered.

    Besides Host and Origin: a browser's `Sec-Fetch-Site: cross-site` (or
    `same-site`) is refused for everything but opening the page itself, so
    another site can neither embed the page's data nor load its files.
    """
    if not host_ok(headers.get("Host"), port):
        return f"Host {headers.get('Host')!r} is not this preview server (127.0.0.1:{port})"
    if not origin_ok(headers.get("Origin"), port):
        return f"Origin {headers.get('Origin')!r} is not this preview server (http://127.0.0.1:{port})"
    site = (headers.get("Sec-Fetch-Site") or "").lower()
    if site in ("cross-site", "same-site") and not (path == "/" and (headers.get("Sec-Fetch-Mode") or "") == "navigate"):
        return f"a request from another site ({site}) for {path}"
    return None
