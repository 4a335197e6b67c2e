"""Edit-to-diagnostics latency of `promptmill lsp`, the real server over stdio.

    PYTHONPATH=compiler python bench/bench_lsp.py [--roles 1000] [--edits 20]

On a copy of the shipped prompts (the executor role) and on a generated project
of `--roles` roles (bench/genproject.py; one role edited), the client opens the
role, then alternately breaks its `extends` parent and fixes it, each edit a
`didChange` of the unsaved buffer. Timed from just before the edit is sent to
the arrival of the diagnostics that reflect it (an error, then an empty list); the first break and fix, which wait for
the first lint of the whole project, are not counted:

- save:   `didChange` then `didSave` (linted at once);
- typing: `didChange` alone (linted after the 150 ms debounce, included).

Prints median, p95 and max per project and scenario. Target: save median under
150 ms for one role's file on the shipped prompts.
"""

from __future__ import annotations

import argparse
import asyncio
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

from lsprotocol import types
from pytest_lsp import client_capabilities, make_test_lsp_client

sys.path.insert(0, str(Path(__file__).parent))
from genproject import make_project

ROOT = Path(__file__).resolve().parents[1]


async def measure(root: Path, rel: str, good: str, bad: str, edits: int, save: bool) -> list[float]:
    client = make_test_lsp_client()
    await client.start_io(sys.executable, "-m", "promptmill.cli", "lsp", "--stdio", cwd=str(root))
    await client.initialize_session(types.InitializeParams(capabilities=client_capabilities("neovim"), root_uri=root.as_uri()))
    uri = (root / rel).resolve().as_uri()
    text = (root / rel).read_text(encoding="utf-8")
    assert good in text, (good, rel)
    client.text_document_did_open(types.DidOpenTextDocumentParams(types.TextDocumentItem(uri, "yaml", 1, text)))
    times = []
    for version in range(2, edits + 4):  # the first two edits (the first lint of the whole project) are not counted
        broken = version % 2 == 0
        body = text.replace(good, bad) if broken else text
        while uri in client.diagnostics and (len(client.diagnostics[uri]) > 0) == broken:
            await asyncio.sleep(0.001)  # (never true: each edit flips the state)
        start = time.perf_counter()
        client.text_document_did_change(
            types.DidChangeTextDocumentParams(
                types.VersionedTextDocumentIdentifier(version=version, uri=uri), [types.TextDocumentContentChangeWholeDocument(text=body)]
            )
        )
        if save:
            client.text_document_did_save(types.DidSaveTextDocumentParams(types.TextDocumentIdentifier(uri)))
        while not (uri in client.diagnostics and (len(client.diagnostics[uri]) > 0) == broken):
            await asyncio.sleep(0.001)
        if version >= 4:
            times.append((time.perf_counter() - start) * 1000)
    await client.shutdown_session()
    return times


def report(name: str, times: list[float]) -> None:
    p95 = sorted(times)[max(0, round(0.95 * len(times)) - 1)]
    print(f"{name:48} median {statistics.median(times):7.1f} ms   p95 {p95:7.1f} ms   max {max(times):7.1f} ms   ({len(times)} edits)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--roles", type=int, default=1000)
    parser.add_argument("--edits", type=int, default=20)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        shipped = Path(tmp) / "shipped"
        shipped.mkdir()
        shutil.copytree(ROOT / "prompts", shipped / "prompts")
        shutil.copy(ROOT / "promptmill.yaml", shipped)
        generated = Path(tmp) / "generated"
        make_project(generated, roles=args.roles)
        cases = [
            ("shipped prompts", shipped, "prompts/roles/executor.yaml", "extends: agent-base", "extends: agent-bse"),
            (f"generated, {args.roles} roles", generated, "prompts/roles/agent-007.yaml", "extends: base-agent", "extends: base-agnt"),
        ]
        for label, root, rel, good, bad in cases:
            for save in (True, False):
                times = asyncio.run(measure(root, rel, good, bad, args.edits, save))
                report(f"{label}, {'save' if save else 'typing (150 ms debounce)'}", times)


if __name__ == "__main__":
    main()
