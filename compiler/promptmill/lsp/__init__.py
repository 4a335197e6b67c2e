"""`promptmill lsp`: a Language Server Protocol server over stdio (pygls), docs/editors.md.

The only importer of pygls and lsprotocol; it reuses `Workspace` (compile and lint), never a copy of them.
Its limits and what it reads: docs/hostile-lsp.md.
"""

from __future__ import annotations

import os
import sys

__all__ = ["serve_stdio"]


def serve_stdio() -> None:
    """Run the language server on stdin/stdout until the editor asks it to exit (or the input ends).

    The protocol gets its own copies of the two streams; file descriptor 1 is pointed at stderr
    meanwhile, so that nothing printed by accident can corrupt the protocol's stream. Messages are
    read by `stream.serve` (framing repaired or skipped, every request answered), not by pygls."""
    from .server import build_server
    from .stream import serve

    sys.stdout.flush()
    stdin_fd, stdout = os.dup(0), os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)
    code = serve(build_server(), stdin_fd, stdout)
    if code:
        raise SystemExit(code)
