"""`promptmill/preview`, the language server's request for the VS Code extension's preview panel
(compiler/promptmill/lsp/features/preview.py): the real server over stdio, the starter project, and the
render compared with `promptmill render --format json` of the same role, state and wire."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("pytest_lsp", reason="the language server tests need the dev extra (pytest-lsp)")

from lsprotocol import types
from pytest_lsp import client_capabilities, make_test_lsp_client

from promptmill.cli.scaffold import init

STATE = "examples/helpdesk.state.yaml"
ROLE_FILE = "prompts/roles/helpdesk.yaml"


def render_json(root: Path, *args: str) -> dict:
    out = subprocess.run(
        [sys.executable, "-m", "promptmill.cli", "render", "helpdesk", "--format", "json", *args],
        cwd=root,
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(out.stdout)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    init(tmp_path / "p")
    return tmp_path / "p"


async def started(root: Path):
    client = make_test_lsp_client()
    await client.start_io(sys.executable, "-m", "promptmill.cli", "lsp", "--stdio", cwd=str(root))
    await client.initialize_session(
        types.InitializeParams(
            capabilities=client_capabilities("visual_studio_code"),
            root_uri=root.as_uri(),
            workspace_folders=[types.WorkspaceFolder(uri=root.as_uri(), name="p")],
        )
    )
    return client


def opened(client, root: Path, rel: str) -> str:
    uri = (root / rel).resolve().as_uri()
    text = (root / rel).read_text(encoding="utf-8")
    client.text_document_did_open(types.DidOpenTextDocumentParams(types.TextDocumentItem(uri, "yaml", 1, text)))
    return uri


def changed(client, uri: str, version: int, text: str) -> None:
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            types.VersionedTextDocumentIdentifier(version=version, uri=uri),
            [types.TextDocumentContentChangeWholeDocument(text=text)],
        )
    )


def plain(value: object) -> object:
    """pygls' client gives a result of a method it has no type for as named tuples: back to JSON data."""
    if hasattr(value, "_asdict"):
        return {k: plain(v) for k, v in value._asdict().items()}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    return value


async def ask(client, **params: object) -> dict:
    got = plain(await client.protocol.send_request_async("promptmill/preview", params))
    assert isinstance(got, dict)
    return got


@pytest.mark.asyncio
async def test_preview_is_promptmill_render(project: Path) -> None:
    """The role's file open: the render equals `promptmill render --state <its example> --format json`,
    for the role's wire and for another one, with the budget line and the sections' tokens."""
    client = await started(project)
    try:
        uri = opened(client, project, ROLE_FILE)
        got = await ask(client, uri=uri)
        want = render_json(project, "--state", STATE)
        assert "error" not in got, got
        assert (got["role"], got["state"], got["wire"]) == ("helpdesk", STATE, want["provider"])
        assert got["text"] == want["text"]
        assert got["tokens"] == want["tokens"] and got["budget"] == want["budget"]
        assert got["budget_line"].startswith(f"budget {want['budget']}: max_tokens 4000 - reserve 500")
        assert [s["id"] for s in got["sections"]] == [s["id"] for s in want["sections"]]
        assert [s["tokens"] for s in got["sections"] if s["tokens"] is not None] == [
            s["tokens"] for s in want["sections"] if s["status"] != "dropped"
        ]
        assert json.loads(got["payload"])["messages"]  # the wire's own payload, as `render --format openai`
        assert STATE in got["states"] and "text" in got["wires"]
        other = await ask(client, uri=uri, wire="text")
        want_other = render_json(project, "--state", STATE, "--provider", "text")
        assert (other["wire"], other["text"], other["tokens"]) == ("text", want_other["text"], want_other["tokens"])
        claude = await ask(client, uri=uri, wire="anthropic", model="claude-sonnet-4")
        want_claude = render_json(project, "--state", STATE, "--provider", "anthropic", "--model", "claude-sonnet-4")
        assert (claude["wire"], claude["tokens"], claude["text"]) == ("anthropic", want_claude["tokens"], want_claude["text"])
    finally:
        await client.shutdown_session()


@pytest.mark.asyncio
async def test_preview_follows_unsaved_buffers(project: Path) -> None:
    """An unsaved edit of the state, then of the role, is in the next answer (the files on disk unchanged)."""
    client = await started(project)
    try:
        role_uri = opened(client, project, ROLE_FILE)
        state_uri = opened(client, project, STATE)
        before = await ask(client, uri=state_uri)  # the state's own file active: its role, that state
        assert (before["role"], before["state"]) == ("helpdesk", STATE) and "Ada asks" in before["text"]
        state_text = (project / STATE).read_text(encoding="utf-8").replace("name: Ada", "name: Grace Hopper")
        changed(client, state_uri, 2, state_text)
        after = await ask(client, uri=role_uri)
        assert "Grace Hopper asks" in after["text"] and after["tokens"] > before["tokens"]
        role_text = (project / ROLE_FILE).read_text(encoding="utf-8")
        role_text = role_text.replace("Answer the customer's question", "Answer briefly the question")
        changed(client, role_uri, 2, role_text)
        edited = await ask(client, uri=role_uri)
        assert "Answer briefly the question" in edited["text"]
        assert "Answer the customer's question" in (project / ROLE_FILE).read_text(encoding="utf-8")
    finally:
        await client.shutdown_session()


@pytest.mark.asyncio
async def test_preview_mistakes_are_data(project: Path) -> None:
    """No role here, an unknown role, a wire that does not exist, a state that does not parse: an error
    with its code, never a failed request."""
    client = await started(project)
    try:
        frag = opened(client, project, "prompts/fragments/voice.yaml") if (project / "prompts/fragments/voice.yaml").exists() else None
        if frag is not None:
            none = (await ask(client, uri=frag))["error"]
            assert none["code"] == "PM802" and none["message"].startswith("no role here") and none["hint"]
        unknown = (await ask(client, role="nope"))["error"]
        assert unknown["code"] == "PM802" and "not compiled" in unknown["message"] and unknown["hint"]
        assert (await ask(client, role="helpdesk", wire="nope"))["error"]["code"] == "PM840"  # an unknown wire
        assert (await ask(client, role="helpdesk", wire="anthropic"))["error"]["code"] == "PM010"  # a wire the model is not for
        state_uri = opened(client, project, STATE)
        changed(client, state_uri, 2, "customer: [unclosed\n")
        bad = await ask(client, role="helpdesk")
        assert bad["error"]["code"].startswith("PM") and "text" not in bad
        assert (await ask(client, role="helpdesk", state="../../etc/passwd"))["error"]["code"] == "PM017"
    finally:
        await client.shutdown_session()


@pytest.mark.asyncio
async def test_preview_hostile_states_and_fields(project: Path, tmp_path: Path) -> None:
    """A state path that is a link out of the project, a FIFO, /dev/zero behind a link, a file over the
    size limit, invalid UTF-8 and NUL, a name too long; and wrong types in every field: each answers
    with its code and a hint, never PM000, never a failed request, and the server keeps answering."""
    outside = tmp_path / "secret.yaml"
    outside.write_text("customer: {name: Mallory}\nquestion: leaked\n", encoding="utf-8")
    (project / "examples" / "out.state.yaml").symlink_to(outside)
    os.mkfifo(project / "examples" / "fifo.state.yaml")
    (project / "examples" / "zero.state.yaml").symlink_to("/dev/zero")
    (project / "examples" / "huge.state.yaml").write_bytes(b"question: " + b"x" * (40 * 1024 * 1024) + b"\n")
    (project / "examples" / "bytes.state.yaml").write_bytes(b"question: \xff\xfe\x00 nul\n")
    client = await started(project)
    try:
        cases = {
            "examples/out.state.yaml": "PM017",
            "examples/fifo.state.yaml": "PM100",
            "examples/zero.state.yaml": "PM017",  # the link resolves out of the project
            "examples/huge.state.yaml": "PM100",
            "examples/bytes.state.yaml": "PM100",  # not UTF-8: the server reads text files only
            "examples/" + "n" * 300 + ".state.yaml": "PM100",
        }
        for state, code in cases.items():
            got = await ask(client, role="helpdesk", state=state)
            assert got["error"]["code"] == code and got["error"]["hint"], (state, got["error"])
            assert "text" not in got and "leaked" not in json.dumps(got)
        for wrong in (5, [], {"a": 1}, None, True, "\ud800", "\x00"):
            got = await ask(client, uri=wrong, role=wrong, wire=wrong, model=wrong, state=wrong)
            assert got.get("error", {}).get("code") != "PM000", (wrong, got)
        assert (await ask(client, role="helpdesk"))["tokens"] > 0  # still answering
    finally:
        await client.shutdown_session()
