"""`promptmill preview`: a local web page to see, tune and compare a rendered prompt.

- `session.py`: the project kept in memory (recompiled on every save through
  `Workspace`), and the render, payload and compare data the page shows;
- `origin.py`: which requests may be answered (loopback Host and Origin only);
- `app.py`: the HTTP server (standard library), its routes, server-sent events
  from the file watcher, and `serve()` behind the CLI command;
- `static/`: the page itself (plain HTML, CSS and JavaScript, no build step).
"""

from __future__ import annotations

from .app import PreviewServer, make_server, serve

__all__ = ["PreviewServer", "make_server", "serve"]
