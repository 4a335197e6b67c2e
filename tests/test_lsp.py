"""`promptmill lsp` end to end: the real server started over stdio by pytest-lsp's client, as an editor starts it.

Each test opens buffers, edits them without saving, and waits for what the server publishes."""

from __future__ import annotations

import asyncio
import os
import re
import sys
import time
from pathlib import Path

import pytest

pytest.importorskip("pytest_lsp", reason="the language server tests need the dev extra (pytest-lsp)")

from lsprotocol import types
from pygls.exceptions import JsonRpcInvalidParams, JsonRpcMethodNotFound
from pytest_lsp import client_capabilities, make_test_lsp_client

ROLE = "kind: role\nid: r\ncontext:\n  system: [greet]\nsections:\n  - id: a\n    text: Answer.\n"
FRAGMENT = "kind: fragment\nid: greet\ntext: Hello there.\n"
TIMEOUT = 30.0


class Session:
    """One server process and its client; `published[uri]` is the last list the server sent for it."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.client = make_test_lsp_client()
        self.versions: dict[str, int] = {}

    async def start(self) -> Session:
        await self.client.start_io(sys.executable, "-m", "promptmill.cli", "lsp", "--stdio", cwd=str(self.root))
        await self.client.initialize_session(
            types.InitializeParams(
                capabilities=client_capabilities("neovim"),
                root_uri=self.root.as_uri(),
                workspace_folders=[types.WorkspaceFolder(uri=self.root.as_uri(), name="p")],
            )
        )
        return self

    async def stop(self) -> None:
        await self.client.shutdown_session()

    def uri(self, rel: str) -> str:
        return (self.root / rel).resolve().as_uri()

    def open(self, rel: str, text: str | None = None) -> str:
        uri = self.uri(rel) if not rel.startswith("/") else Path(rel).as_uri()
        text = text if text is not None else Path(uri.removeprefix("file://")).read_text(encoding="utf-8")
        self.versions[uri] = 1
        self.client.text_document_did_open(types.DidOpenTextDocumentParams(types.TextDocumentItem(uri, "yaml", 1, text)))
        return uri

    def change(self, uri: str, text: str) -> None:
        self.versions[uri] += 1
        self.client.text_document_did_change(
            types.DidChangeTextDocumentParams(
                types.VersionedTextDocumentIdentifier(version=self.versions[uri], uri=uri),
                [types.TextDocumentContentChangeWholeDocument(text=text)],
            )
        )

    async def until(self, check, what: str) -> None:
        """Wait until `check(client.diagnostics)` holds (the server publishes asynchronously)."""
        deadline = time.monotonic() + TIMEOUT
        while not check(self.client.diagnostics):
            if time.monotonic() > deadline:
                pytest.fail(f"no {what} within {TIMEOUT}s; last published: {self.client.diagnostics}")
            await asyncio.sleep(0.02)

    async def answers(self) -> None:
        """The server still answers a request: one it does not offer gets its "method not found" reply."""
        with pytest.raises(JsonRpcMethodNotFound):
            await asyncio.wait_for(
                self.client.text_document_document_symbol_async(
                    types.DocumentSymbolParams(types.TextDocumentIdentifier(self.uri("x.yaml")))
                ),
                TIMEOUT,
            )


def codes(diags, uri: str) -> list[str]:
    return [d.code for d in diags.get(uri, [])]


def cleared(diags, uri: str) -> bool:
    """The server published an empty list for `uri` last (it had published some before)."""
    return uri in diags and len(diags[uri]) == 0


def run(root: Path, body) -> None:
    """Run `body(session)`: on the module's shared server when `root` is the `project` fixture's folder
    (see `Shared`), else on a server of its own, started for `body` and shut down after it."""
    if root in _SHARED:
        _SHARED[root].run(body)
        return

    async def main() -> None:
        session = await Session(root).start()
        try:
            await body(session)
        finally:
            await session.stop()

    asyncio.run(main())


class Shared:
    """One server for the tests on the `project` folder: they need fresh buffers, not a fresh process (each
    start imports the server, 1-1.5 s of CPU). Before each test every buffer the last one opened is closed,
    the server has linted the files on disk again and published for them, and what the client holds is
    forgotten, so a test sees the server as a fresh one would after its first lint of the same project.
    A test that fails leaves the server behind: the next one gets a new process."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.loop = asyncio.new_event_loop()
        self.session: Session | None = None

    def run(self, body) -> None:
        self.loop.run_until_complete(self._run(body))

    async def _run(self, body) -> None:
        if self.session is None:
            self.session = await Session(self.root).start()
        try:
            await self._reset(self.session)
        except Exception:  # a server the last test left unusable: a new one
            await self._restart()
        try:
            await body(self.session)
        except BaseException:
            await self._restart()  # the next test must not inherit whatever broke this one
            raise

    async def _reset(self, s: Session) -> None:
        for uri in s.versions:
            s.client.text_document_did_close(types.DidCloseTextDocumentParams(types.TextDocumentIdentifier(uri)))
        s.versions.clear()
        # promptmill/preview is answered once every edit so far is linted (and what those lints found published)
        await asyncio.wait_for(s.client.protocol.send_request_async("promptmill/preview", {}), TIMEOUT)
        s.client.diagnostics.clear()

    async def _restart(self) -> None:
        old, self.session = self.session, None
        if old is not None:
            try:
                await asyncio.wait_for(old.stop(), 10)
            except Exception:  # already gone, or it does not answer: pytest-lsp's client ends the process
                pass
        self.session = await Session(self.root).start()

    def close(self) -> None:
        if self.session is not None:
            self.loop.run_until_complete(self.session.stop())
        self.loop.close()


_SHARED: dict[Path, Shared] = {}


@pytest.fixture(scope="module")
def _shared(tmp_path_factory):
    root = tmp_path_factory.mktemp("shared-project").resolve()
    (root / "prompts").mkdir()
    (root / "promptmill.yaml").write_text("prompts: prompts\n", encoding="utf-8")
    shared = _SHARED[root] = Shared(root)
    yield shared
    del _SHARED[root]
    shared.close()


@pytest.fixture
def project(_shared) -> Path:
    """The shared server's project, its two files as each test starts from (no test writes them; written anyway)."""
    (_shared.root / "prompts" / "r.yaml").write_text(ROLE, encoding="utf-8")
    (_shared.root / "prompts" / "f.yaml").write_text(FRAGMENT, encoding="utf-8")
    return _shared.root


def test_open_a_broken_buffer_then_fix_it_unsaved(project):
    async def body(s: Session) -> None:
        uri = s.open("prompts/r.yaml", ROLE.replace("[greet]", "[greeet]"))
        await s.until(lambda d: codes(d, uri) == ["PM302"], "PM302 for the unknown fragment")
        diag = s.client.diagnostics[uri][0]
        assert (diag.range.start.line, diag.range.start.character) == (3, 11)
        assert diag.severity == types.DiagnosticSeverity.Error and diag.source == "promptmill"
        assert "did you mean 'greet'?" in diag.message
        s.change(uri, ROLE)
        await s.until(lambda d: cleared(d, uri), "the diagnostics cleared after the fix")
        assert (project / "prompts/r.yaml").read_text(encoding="utf-8") == ROLE  # nothing written

    run(project, body)


def test_a_fragment_edit_rechecks_the_role_that_uses_it(project):
    async def body(s: Session) -> None:
        frag = s.open("prompts/f.yaml")
        role = s.uri("prompts/r.yaml")  # not open: its diagnostics come from the file on disk
        s.change(frag, FRAGMENT.replace("id: greet", "id: greeting"))
        await s.until(lambda d: codes(d, role) == ["PM302"], "PM302 on the role after its fragment was renamed")
        s.change(frag, FRAGMENT)
        await s.until(lambda d: cleared(d, role), "the role cleared after the rename was undone")

    run(project, body)


def test_a_file_that_is_not_yaml_is_reported_and_the_server_recovers(project):
    async def body(s: Session) -> None:
        uri = s.open("prompts/f.yaml", "kind: fragment\nid: [greet\n")
        await s.until(lambda d: codes(d, uri)[:1] == ["PM101"] or bool(codes(d, uri)), "a YAML diagnostic")
        assert s.client.diagnostics[uri][0].code.startswith("PM1")
        await s.answers()
        s.change(uri, FRAGMENT)
        await s.until(lambda d: cleared(d, uri), "cleared after the fix")

    run(project, body)


def test_a_huge_buffer_is_refused_and_the_server_recovers(project):
    async def body(s: Session) -> None:
        uri = s.open("prompts/f.yaml")
        s.change(uri, FRAGMENT + "# " + "x" * 2_000_000 + "\n")
        await s.until(lambda d: codes(d, uri) == ["PM105"], "PM105 for a buffer over the size limit")
        await s.answers()
        s.change(uri, FRAGMENT)
        await s.until(lambda d: cleared(d, uri), "cleared after the fix")

    run(project, body)


def test_a_binary_buffer_is_reported_and_the_server_recovers(project):
    async def body(s: Session) -> None:
        uri = s.open("prompts/f.yaml")
        s.change(uri, "\x00\x01\x02PNG\x00" * 100)
        await s.until(lambda d: bool(codes(d, uri)) and all(c.startswith("PM1") for c in codes(d, uri)), "a text diagnostic")
        await s.answers()
        s.change(uri, FRAGMENT)
        await s.until(lambda d: cleared(d, uri), "cleared after the fix")

    run(project, body)


def test_a_file_outside_the_project_is_ignored(project, tmp_path_factory):
    outside = tmp_path_factory.mktemp("elsewhere") / "stray.yaml"
    outside.write_text("kind: role\nid: [\n", encoding="utf-8")

    async def body(s: Session) -> None:
        stray = s.open(str(outside))
        s.change(stray, "not: [yaml\n")
        role = s.open("prompts/r.yaml", ROLE.replace("[greet]", "[nope]"))
        await s.until(lambda d: codes(d, role) == ["PM302"], "the project still checked")
        assert stray not in s.client.diagnostics
        await s.answers()

    run(project, body)


def test_edits_faster_than_lint_leave_only_the_last_state(project):
    async def body(s: Session) -> None:
        uri = s.open("prompts/r.yaml", ROLE.replace("[greet]", "[nope]"))
        await s.until(lambda d: codes(d, uri) == ["PM302"], "PM302 before the burst")
        for i in range(60):  # each a broken id, sent without waiting
            s.change(uri, ROLE.replace("[greet]", f"[greet{i}]"))
        s.change(uri, ROLE)
        await s.until(lambda d: cleared(d, uri), "the final, clean state")
        await asyncio.sleep(1.0)  # nothing stale arrives after it
        assert cleared(s.client.diagnostics, uri)
        await s.answers()

    run(project, body)


def test_go_to_definition_of_a_fragment_id(project):
    async def body(s: Session) -> None:
        uri = s.open("prompts/r.yaml", ROLE.replace("[greet]", "[nope]"))
        await s.until(lambda d: codes(d, uri) == ["PM302"], "the first lint")  # the index exists from here on
        s.change(uri, ROLE)
        await s.until(lambda d: cleared(d, uri), "the fix")
        found = await s.client.text_document_definition_async(
            types.DefinitionParams(types.TextDocumentIdentifier(uri), types.Position(line=3, character=13))
        )
        assert [(loc.uri, loc.range.start.line, loc.range.start.character) for loc in found] == [(s.uri("prompts/f.yaml"), 1, 4)]
        nothing = await s.client.text_document_definition_async(
            types.DefinitionParams(types.TextDocumentIdentifier(uri), types.Position(line=5, character=10))  # `a`: no template's id
        )
        assert nothing == []

    run(project, body)


PLACED = """kind: role
id: r
context:
  before: [greet]
  after: [{id: note, wrap: false}]
inject:
  - id: resume
    event: continue
    fragment: tail
sections:
  - id: a
    text: Answer.
  - id: b
    fragment: snip
"""


def test_go_to_definition_of_every_place_a_fragment_is_included(make_project):
    """What `{% include %}` is elsewhere (docs/porting.md): a fragment named by a context list, a context mapping,
    a role's injection rule and a `fragment:` section; each id leads to the fragment's file."""
    fragments = {f"prompts/{f}.yaml": f"kind: fragment\nid: {f}\ntext: The {f} text.\n" for f in ("greet", "note", "tail", "snip")}
    root = make_project({"promptmill.yaml": "prompts: prompts\n", "prompts/r.yaml": PLACED, **fragments}).resolve()

    async def body(s: Session) -> None:
        uri = s.open("prompts/r.yaml", PLACED.replace("[greet]", "[nope]"))
        await s.until(lambda d: codes(d, uri) == ["PM302"], "the first lint")  # the index exists from here on
        s.change(uri, PLACED)
        await s.until(lambda d: cleared(d, uri), "the fix")
        lines = PLACED.splitlines()

        async def target(line: str, word: str) -> list[tuple[str, int, int]]:
            at = types.Position(line=lines.index(line), character=line.index(word) + 1)
            found = await s.client.text_document_definition_async(types.DefinitionParams(types.TextDocumentIdentifier(uri), at))
            return [(loc.uri, loc.range.start.line, loc.range.start.character) for loc in found]

        assert await target("  before: [greet]", "greet") == [(s.uri("prompts/greet.yaml"), 1, 4)]
        assert await target("  after: [{id: note, wrap: false}]", "note") == [(s.uri("prompts/note.yaml"), 1, 4)]
        assert await target("    fragment: tail", "tail") == [(s.uri("prompts/tail.yaml"), 1, 4)]
        assert await target("    fragment: snip", "snip") == [(s.uri("prompts/snip.yaml"), 1, 4)]
        assert await target("  - id: a", "a") == []  # a section's id, no template's
        assert await target("  after: [{id: note, wrap: false}]", "wrap") == []  # a key, not an id

    run(root, body)


def test_a_did_you_mean_hint_is_a_quick_fix(project):
    async def body(s: Session) -> None:
        uri = s.open("prompts/r.yaml", ROLE.replace("[greet]", "[greeet]"))
        await s.until(lambda d: codes(d, uri) == ["PM302"], "PM302")
        actions = await s.client.text_document_code_action_async(
            types.CodeActionParams(
                types.TextDocumentIdentifier(uri),
                s.client.diagnostics[uri][0].range,
                types.CodeActionContext(diagnostics=list(s.client.diagnostics[uri])),
            )
        )
        [action] = actions
        assert action.title == "Replace with 'greet'" and action.kind == types.CodeActionKind.QuickFix
        [edit] = action.edit.changes[uri]
        assert (edit.range.start.line, edit.range.start.character, edit.range.end.character, edit.new_text) == (3, 11, 17, "greet")

    run(project, body)


async def _linted(s: Session) -> str:
    """Open the role broken, then fixed: the server has an index from here on. Returns the role's URI."""
    uri = s.open("prompts/r.yaml", ROLE.replace("[greet]", "[nope]"))
    await s.until(lambda d: codes(d, uri) == ["PM302"], "the first lint")
    s.change(uri, ROLE)
    await s.until(lambda d: cleared(d, uri), "the fix")
    return uri


def test_hover_on_an_id_says_where_it_resolves(project):
    async def body(s: Session) -> None:
        uri = await _linted(s)
        got = await s.client.text_document_hover_async(
            types.HoverParams(types.TextDocumentIdentifier(uri), types.Position(line=3, character=12))
        )
        assert got.contents.value == "fragment `greet` resolves to project `prompts/f.yaml:2:5`"
        assert (got.range.start.character, got.range.end.character) == (11, 16)

    run(project, body)


def test_references_and_rename_of_a_fragment_id(make_project):
    user = ROLE.replace("id: r\n", "id: r2\n").replace(
        "    text: Answer.\n", "    text: greet them, then answer.\n"
    )  # prose is no reference
    root = make_project(
        {"promptmill.yaml": "prompts: prompts\n", "prompts/r.yaml": ROLE, "prompts/r2.yaml": user, "prompts/f.yaml": FRAGMENT}
    ).resolve()

    async def body(s: Session) -> None:
        uri = await _linted(s)
        where = types.Position(line=3, character=12)
        refs = await s.client.text_document_references_async(
            types.ReferenceParams(
                context=types.ReferenceContext(include_declaration=True), text_document=types.TextDocumentIdentifier(uri), position=where
            )
        )
        assert sorted((loc.uri, loc.range.start.line, loc.range.start.character) for loc in refs) == sorted(
            [(s.uri("prompts/f.yaml"), 1, 4), (uri, 3, 11), (s.uri("prompts/r2.yaml"), 3, 11)]
        )
        edit = await s.client.text_document_rename_async(
            types.RenameParams(text_document=types.TextDocumentIdentifier(uri), position=where, new_name="salute")
        )
        assert {u: [(e.range.start.line, e.range.start.character, e.new_text) for e in edits] for u, edits in edit.changes.items()} == {
            s.uri("prompts/f.yaml"): [(1, 4, "salute")],
            uri: [(3, 11, "salute")],
            s.uri("prompts/r2.yaml"): [(3, 11, "salute")],
        }

    run(root, body)


def test_completion_offers_fragment_ids_in_a_context_list(project):
    async def body(s: Session) -> None:
        uri = await _linted(s)
        s.change(uri, ROLE.replace("[greet]", "[gr"))
        got = await s.client.text_document_completion_async(
            types.CompletionParams(text_document=types.TextDocumentIdentifier(uri), position=types.Position(line=3, character=13))
        )
        items = got.items if isinstance(got, types.CompletionList) else got
        labels = [item.label for item in items]
        assert "greet" in labels and "r" not in labels  # fragments only: the role's id is no candidate

    run(project, body)


def test_completion_of_state_paths_inside_a_jinja_expression(make_project):
    role = (
        "kind: role\nid: r\n"
        "inputs:\n  type: object\n  properties:\n    task_state:\n      type: object\n"
        "      properties: {goal: {type: string, description: What to reach}, steps: {type: array}}\n"
        'sections:\n  - id: a\n    template: "Goal: {{ task_state.goal }}"\n'
    )
    root = make_project({"promptmill.yaml": "prompts: prompts\n", "prompts/r.yaml": role}).resolve()

    async def body(s: Session) -> None:
        uri = s.open("prompts/r.yaml", role.replace("[]", "").replace("task_state.goal", "nope"))
        await s.until(lambda d: bool(codes(d, uri)), "the first lint (an undeclared variable)")
        s.change(uri, role)
        await s.until(lambda d: cleared(d, uri), "the fix")
        typing = role.replace('"Goal: {{ task_state.goal }}"', '"Goal: {{ task_state.')  # mid-typing: the template is broken
        s.change(uri, typing)
        line = typing.splitlines().index('    template: "Goal: {{ task_state.')

        async def labels(character: int) -> list[str]:
            got = await s.client.text_document_completion_async(
                types.CompletionParams(
                    text_document=types.TextDocumentIdentifier(uri), position=types.Position(line=line, character=character)
                )
            )
            return [item.label for item in (got.items if isinstance(got, types.CompletionList) else got or [])]

        assert await labels(len('    template: "Goal: {{ task_state.')) == ["goal", "steps"]
        assert await labels(len('    template: "Goal: {{ ')) == ["task_state"]
        assert await labels(len('    template: "Go')) == []  # outside an expression

    run(root, body)


def test_hover_on_a_section_and_on_the_budget(make_project):
    role = (
        "kind: role\nid: r\nbudget: {max_tokens: 1000, reserve: 100}\n"
        "inputs:\n  type: object\n  properties: {goal: {type: string}}\n"
        'sections:\n  - id: who\n    text: You help with code.\n  - id: task\n    template: "Goal: {{ goal }}"\n'
    )
    root = make_project(
        {"promptmill.yaml": "prompts: prompts\n", "prompts/r.yaml": role, "examples/r.state.yaml": "goal: ship the release\n"}
    ).resolve()

    async def body(s: Session) -> None:
        uri = s.open("prompts/r.yaml", role.replace("{{ goal }}", "{{ gaol }}"))
        await s.until(lambda d: bool(codes(d, uri)), "the first lint")
        s.change(uri, role)
        await s.until(lambda d: cleared(d, uri), "the fix")

        async def shown(line: int) -> str:
            got = await s.client.text_document_hover_async(
                types.HoverParams(types.TextDocumentIdentifier(uri), types.Position(line=line, character=10))
            )
            return got.contents.value if got is not None else ""

        lines = role.splitlines()
        static, dynamic = await shown(lines.index("  - id: who")), await shown(lines.index("  - id: task"))
        assert static.startswith("section `who` (static, ") and "static: " in static and "You help with code." in static
        assert "with `examples/r.state.yaml`: kept, " in dynamic and "Goal: ship the release" in dynamic
        tokens, budget = re.search(r"kept, (\d+) of (\d+) tokens", dynamic).groups()
        assert int(tokens) > 0 and int(budget) == 900
        line = await shown(lines.index("budget: {max_tokens: 1000, reserve: 100}"))
        assert line.startswith("budget 900: max_tokens 1000 - reserve 100") and "tokens used with `examples/r.state.yaml`" in line, line

    run(root, body)


def test_rename_refuses_what_is_not_a_valid_id_or_is_taken(project):
    """A rename to '', 'a b', '../x', text with a line break, or an id some template has is an InvalidParams
    error with the reason (it used to return a WorkspaceEdit); nothing is renamed."""

    async def body(s: Session) -> None:
        uri = await _linted(s)
        where = types.Position(line=3, character=12)
        for new, says in [
            ("", "empty"),
            ("a b", "not a valid id"),
            ("../x", "not a valid id"),
            ("salute\n", "not a valid id"),
            ("r", "already exists"),
        ]:
            with pytest.raises(JsonRpcInvalidParams) as refused:
                await s.client.text_document_rename_async(
                    types.RenameParams(text_document=types.TextDocumentIdentifier(uri), position=where, new_name=new)
                )
            assert "cannot rename 'greet'" in str(refused.value) and says in str(refused.value), (new, str(refused.value))
        edit = await s.client.text_document_rename_async(
            types.RenameParams(text_document=types.TextDocumentIdentifier(uri), position=where, new_name="team/salute")
        )
        assert sorted(edit.changes) == sorted([uri, s.uri("prompts/f.yaml")])

    run(project, body)


def test_definition_inside_constraints_offers_the_constraint_set_only(make_project):
    role = ROLE + "  - id: rules\n    constraints: [executor]\n"
    root = make_project(
        {
            "promptmill.yaml": "prompts: prompts\n",
            "prompts/r.yaml": role,
            "prompts/f.yaml": FRAGMENT,
            "prompts/roles/executor.yaml": "kind: role\nid: executor\nsections:\n  - id: a\n    text: Do it.\n",
            "prompts/constraints/executor.yaml": "kind: constraints\nid: executor\nrules:\n  - id: short\n    text: Be short.\n",
        }
    ).resolve()

    async def body(s: Session) -> None:
        uri = s.open("prompts/r.yaml", role.replace("[greet]", "[nope]"))
        await s.until(lambda d: codes(d, uri) == ["PM302"], "the first lint")
        s.change(uri, role)
        await s.until(lambda d: cleared(d, uri), "the fix")
        line = role.splitlines().index("    constraints: [executor]")
        found = await s.client.text_document_definition_async(
            types.DefinitionParams(types.TextDocumentIdentifier(uri), types.Position(line=line, character=20))
        )
        assert [loc.uri for loc in found] == [s.uri("prompts/constraints/executor.yaml")]
        role_file = s.open("prompts/roles/executor.yaml")
        found = await s.client.text_document_definition_async(  # on a role's own `id:` line: the role
            types.DefinitionParams(types.TextDocumentIdentifier(role_file), types.Position(line=1, character=6))
        )
        assert [loc.uri for loc in found] == [role_file]

    run(root, body)


def test_a_buffer_over_the_limit_is_not_followed_until_its_whole_text_comes_back(project):
    """Over MAX_DOCUMENT a buffer gets one PM105 and its keystrokes are not applied; a whole text under the
    limit is analysed again."""

    async def body(s: Session) -> None:
        uri = s.open("prompts/f.yaml", FRAGMENT + "# " + "x" * 3_000_000 + "\n")
        await s.until(lambda d: codes(d, uri) == ["PM105"], "PM105 for a buffer over the limit")
        assert "not analyse" in s.client.diagnostics[uri][0].message
        at = types.Position(line=0, character=0)
        s.client.text_document_did_change(
            types.DidChangeTextDocumentParams(
                types.VersionedTextDocumentIdentifier(version=2, uri=uri),
                [types.TextDocumentContentChangePartial(range=types.Range(at, at), text="x")],
            )
        )
        await s.answers()
        hover = await s.client.text_document_hover_async(
            types.HoverParams(types.TextDocumentIdentifier(uri), types.Position(line=1, character=5))
        )
        assert hover is None  # nothing is analysed in it
        s.versions[uri] = 2
        s.change(uri, FRAGMENT)
        await s.until(lambda d: cleared(d, uri), "cleared once the whole text is under the limit")

    run(project, body)


def test_a_never_opened_fifo_or_device_is_not_read(project, tmp_path_factory):
    pipe = tmp_path_factory.mktemp("outside") / "pipe.yaml"
    os.mkfifo(pipe)

    async def body(s: Session) -> None:
        for uri in (pipe.as_uri(), "file:///dev/zero"):
            got = await asyncio.wait_for(
                s.client.text_document_hover_async(
                    types.HoverParams(types.TextDocumentIdentifier(uri), types.Position(line=0, character=0))
                ),
                5,
            )
            assert got is None
        role = s.uri("prompts/r.yaml")  # a never-opened regular file inside the workspace is read from disk
        got = await s.client.text_document_hover_async(
            types.HoverParams(types.TextDocumentIdentifier(role), types.Position(line=3, character=12))
        )
        assert got is None or "greet" in got.contents.value

    run(project, body)
