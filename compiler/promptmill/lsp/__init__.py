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
    try:
        stdin_fd, stdout_fd = os.dup(0), os.dup(1)
    except OSError:  # started with `<&-` or `>&-`: there is no editor to talk to
        from ..core.errors import ConfigError

        raise ConfigError(
            "the language server talks to the editor over standard input and output, and one of them is closed",
            code="PM010",
            hint="start it from an editor (docs/editors.md), which connects both",
        ) from None
    stdout = os.fdopen(stdout_fd, "wb")
    os.dup2(2, 1)
    code = serve(build_server(), stdin_fd, stdout)
    if code:
        raise SystemExit(code)
