"""`promptmill lsp`: a Language Server Protocol server over stdio (pygls), docs/editors.md.

The only importer of pygls and lsprotocol; it reuses `Workspace` (compile and lint), never a copy of them.
"""

from __future__ import annotations

import os
import sys

__all__ = ["serve_stdio"]


def serve_stdio() -> None:
    """Run the language server on stdin/stdout until the editor asks it to exit.

    The protocol gets its own copies of the two streams; file descriptor 1 is pointed at stderr
    meanwhile, so that nothing printed by accident can corrupt the protocol's stream."""
    from .server import build_server

    sys.stdout.flush()
    stdin, stdout = os.fdopen(os.dup(0), "rb"), os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)
    build_server().start_io(stdin=stdin, stdout=stdout)
