"""The language server: pygls' `LanguageServer` and thin handlers; the work is in `features/`."""

from __future__ import annotations

import asyncio
import traceback
from collections.abc import Generator
from pathlib import Path
from typing import Any
from urllib.parse import unquote

from lsprotocol import types
from pygls.lsp.server import LanguageServer
from pygls.protocol import LanguageServerProtocol, lsp_method

from ..compose.index import Index
from ..core.version import __version__
from .convert import file_path
from .documents import MAX_DOCUMENT, Overlay, path_of, read_closed
from .features.code_actions import quick_fixes
from .features.completion import complete_ids
from .features.definition import definition
from .features.diagnostics import Checker
from .features.hover import hover
from .features.preview import METHOD as PREVIEW
from .features.preview import preview
from .features.references import references, rename
from .features.sections import budget_hover, section_hover
from .features.statepaths import complete_state_paths

DEBOUNCE_SECONDS = 0.15  # a change waits this long for the next keystroke before the project is linted


class PromptmillProtocol(LanguageServerProtocol):
    """pygls' text synchronisation, except for a buffer over MAX_DOCUMENT characters: it is not kept
    and its edits are not applied (each would copy the whole text), until the editor sends a whole text
    under the limit again (a full change, a save under the limit, or close and open)."""

    _server: PromptmillServer

    @lsp_method(types.TEXT_DOCUMENT_DID_OPEN)
    def lsp_text_document__did_open(self, params: types.DidOpenTextDocumentParams) -> Generator[Any, Any, None]:
        doc = params.text_document
        if len(doc.text) > MAX_DOCUMENT:
            self.workspace.remove_text_document(doc.uri)
            self._server.big[doc.uri] = len(doc.text)
        else:
            self._server.big.pop(doc.uri, None)
            self.workspace.put_text_document(doc)
        if (handler := self.fm.features.get(types.TEXT_DOCUMENT_DID_OPEN)) is not None:
            yield handler, (params,), None

    @lsp_method(types.TEXT_DOCUMENT_DID_CHANGE)
    def lsp_text_document__did_change(self, params: types.DidChangeTextDocumentParams) -> Generator[Any, Any, None]:
        uri, big = params.text_document.uri, self._server.big
        changes = list(params.content_changes)
        if uri in big:
            whole = [n for n, c in enumerate(changes) if isinstance(c, types.TextDocumentContentChangeWholeDocument)]
            if not whole:
                return  # not followed: the buffer stays over the limit as far as promptmill knows
            text = changes[whole[-1]].text
            if len(text) > MAX_DOCUMENT:
                big[uri] = len(text)
                return
            del big[uri]
            self.workspace.put_text_document(
                types.TextDocumentItem(uri=uri, language_id="yaml", version=params.text_document.version, text=text)
            )
            changes = changes[whole[-1] + 1 :]
        elif unquote(uri) not in self.workspace.text_documents:
            return  # a change to a buffer that was never opened: nothing to apply it to
        for change in changes:
            self.workspace.update_text_document(params.text_document, change)
            size = len(self.workspace.text_documents[unquote(uri)].source)
            if size > MAX_DOCUMENT:
                self.workspace.remove_text_document(uri)
                big[uri] = size
                break
        if (handler := self.fm.features.get(types.TEXT_DOCUMENT_DID_CHANGE)) is not None:
            yield handler, (params,), None

    @lsp_method(types.TEXT_DOCUMENT_DID_CLOSE)
    def lsp_text_document__did_close(self, params: types.DidCloseTextDocumentParams) -> Generator[Any, Any, None]:
        self._server.big.pop(params.text_document.uri, None)
        self.workspace.remove_text_document(params.text_document.uri)
        if (handler := self.fm.features.get(types.TEXT_DOCUMENT_DID_CLOSE)) is not None:
            yield handler, (params,), None


class PromptmillServer(LanguageServer):
    """Holds the open buffers and the one `Checker`; lints run one at a time in a worker thread,
    so requests are answered while a lint runs, and a lint overtaken by an edit publishes nothing."""

    def __init__(self) -> None:
        super().__init__("promptmill", __version__, protocol_cls=PromptmillProtocol)
        self.overlay = Overlay()
        self.big: dict[str, int] = {}  # open buffers over MAX_DOCUMENT: URI -> characters
        self._checker: Checker | None = None
        self._lint_lock: asyncio.Lock | None = None
        self._waiting: asyncio.Task[None] | None = None

    @property
    def checker(self) -> Checker:
        if self._checker is None:
            root = self.workspace.root_path if self.workspace is not None else None
            self._checker = Checker(Path(root or "."))
        return self._checker

    def index(self) -> Index | None:
        """The id index of the last lint (None before the first)."""
        loaded = self.checker.workspace.loaded
        return loaded.index if loaded is not None else None

    def role_of(self, uri: str) -> str | None:
        """The id of the role defined in `uri`'s file (None when it defines none)."""
        index, path = self.index(), path_of(uri)
        if index is None or path is None:
            return None
        for (kind, tid), template in index.templates.items():
            if kind == "role" and file_path(template.pos("id").file).resolve() == path:
                return tid
        return None

    def inputs(self, uri: str) -> dict[str, Any] | None:
        """The inputs schema of the role defined in `uri`'s file, as its last good compile merged it along extends."""
        role = self.role_of(uri)
        return self.checker.inputs.get(role) if role is not None else None

    def root(self) -> Path:
        project = self.checker.workspace.project
        return project.root if project is not None else self.checker.workspace.path

    def folder(self) -> Path:
        """The workspace folder: the only place a file that is not open is read from."""
        return self.checker.workspace.path

    def is_open(self, uri: str) -> bool:
        return unquote(uri) in self.workspace.text_documents

    def text(self, uri: str) -> str:
        """A buffer's text: the editor's when it is open (empty over MAX_DOCUMENT); else a regular file's
        inside the workspace folder, at most MAX_DOCUMENT bytes; else empty. Never a FIFO, a device, or a
        file outside the workspace (docs/hostile-lsp.md)."""
        if uri in self.big:
            return ""
        doc = self.workspace.text_documents.get(unquote(uri))
        if doc is not None:
            return doc.source
        path = path_of(uri)
        return (read_closed(path, self.folder()) if path is not None else None) or ""

    def read(self, path: Path) -> str | None:
        """A file's text: the open buffer's, else the disk's inside the workspace folder (None when unreadable)."""
        text = self.overlay.text(path.resolve())
        if text is not None:
            return text
        return read_closed(path, self.folder())

    def sync(self, uri: str) -> None:
        """The overlay takes an open buffer's text (an empty stand-in for one over MAX_DOCUMENT)."""
        if uri in self.big:
            self.overlay.put_oversize(uri, self.big[uri])
        elif self.is_open(uri):
            self.overlay.put(uri, self.text(uri))

    async def settled(self) -> None:
        """Return once no lint waits nor runs: what a request answered after it sees includes every edit so far."""
        while self._waiting is not None and not self._waiting.done():
            await asyncio.wait({self._waiting})  # cancelled by a newer edit: the loop waits for that one's
        if self._lint_lock is not None:
            async with self._lint_lock:
                pass

    def schedule_check(self, delay: float) -> None:
        """Lint after `delay`; a later call before the delay is over replaces this one (debounce)."""
        if self._waiting is not None and not self._waiting.done():
            self._waiting.cancel()
        self._waiting = asyncio.get_running_loop().create_task(self._check_after(delay))

    async def _check_after(self, delay: float) -> None:
        await asyncio.sleep(delay)
        self._waiting = None  # from here on, not cancelled: a newer edit schedules a check of its own
        if self._lint_lock is None:
            self._lint_lock = asyncio.Lock()
        async with self._lint_lock:
            generation = self.overlay.generation
            try:
                found = await asyncio.to_thread(self.checker.lint, self.overlay.snapshot(), dict(self.overlay.oversize))
            except Exception:  # a bug in promptmill: say so, keep serving
                self.window_log_message(types.LogMessageParams(types.MessageType.Error, traceback.format_exc()))
                return
            if generation != self.overlay.generation:
                return  # overtaken by an edit whose own check publishes
            for uri, diagnostics in self.checker.to_publish(found).items():
                self.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=uri, diagnostics=diagnostics))


def build_server() -> PromptmillServer:
    server = PromptmillServer()

    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    async def did_open(ls: PromptmillServer, params: types.DidOpenTextDocumentParams) -> None:
        ls.sync(params.text_document.uri)
        ls.schedule_check(0)

    @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    async def did_change(ls: PromptmillServer, params: types.DidChangeTextDocumentParams) -> None:
        ls.sync(params.text_document.uri)
        ls.schedule_check(DEBOUNCE_SECONDS)

    @server.feature(types.TEXT_DOCUMENT_DID_SAVE)
    async def did_save(ls: PromptmillServer, params: types.DidSaveTextDocumentParams) -> None:
        uri = params.text_document.uri
        if uri in ls.big:  # saved: the file is the buffer; under the limit, it is followed again
            path = path_of(uri)
            text = params.text if params.text is not None else (read_closed(path, ls.folder()) if path is not None else None)
            if text is None or len(text) > MAX_DOCUMENT:
                return
            del ls.big[uri]
            ls.workspace.put_text_document(types.TextDocumentItem(uri=uri, language_id="yaml", version=0, text=text))
        elif not ls.is_open(uri):
            return
        ls.sync(uri)
        ls.schedule_check(0)

    @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    async def did_close(ls: PromptmillServer, params: types.DidCloseTextDocumentParams) -> None:
        ls.overlay.drop(params.text_document.uri)  # the file on disk counts again
        ls.schedule_check(0)

    @server.feature(types.TEXT_DOCUMENT_DEFINITION)
    def goto_definition(ls: PromptmillServer, params: types.DefinitionParams) -> list[types.Location]:
        return definition(ls.index(), ls.text(params.text_document.uri), params.position)

    @server.feature(types.TEXT_DOCUMENT_HOVER)
    def on_hover(ls: PromptmillServer, params: types.HoverParams) -> types.Hover | None:
        uri, text = params.text_document.uri, ls.text(params.text_document.uri)
        bundles = ls.checker.workspace.bundles
        role, root, where = ls.role_of(uri), ls.root(), params.position
        return (
            section_hover(bundles, role, root, text, where)
            or budget_hover(bundles, role, root, text, where)
            or hover(ls.index(), text, where)
        )

    @server.feature(types.TEXT_DOCUMENT_REFERENCES)
    def find_references(ls: PromptmillServer, params: types.ReferenceParams) -> list[types.Location]:
        return references(ls.index(), ls.text(params.text_document.uri), params.position, ls.read)

    @server.feature(types.TEXT_DOCUMENT_RENAME)
    def rename_id(ls: PromptmillServer, params: types.RenameParams) -> types.WorkspaceEdit | None:
        return rename(ls.index(), ls.text(params.text_document.uri), params.position, params.new_name, ls.read)

    @server.feature(types.TEXT_DOCUMENT_COMPLETION, types.CompletionOptions(trigger_characters=["[", ",", " ", "."]))
    def completion(ls: PromptmillServer, params: types.CompletionParams) -> list[types.CompletionItem]:
        text = ls.text(params.text_document.uri)
        return complete_ids(ls.index(), text, params.position) or complete_state_paths(
            ls.inputs(params.text_document.uri), text, params.position
        )

    @server.feature(types.TEXT_DOCUMENT_CODE_ACTION, types.CodeActionOptions(code_action_kinds=[types.CodeActionKind.QuickFix]))
    def code_actions(ls: PromptmillServer, params: types.CodeActionParams) -> list[types.CodeAction]:
        text = ls.text(params.text_document.uri)
        return quick_fixes(params.text_document.uri, text, list(params.context.diagnostics))

    @server.feature(PREVIEW)
    async def on_preview(ls: PromptmillServer, params: Any) -> dict[str, Any]:
        """promptmill's own request (features/preview.py): a role rendered as the editor's preview shows it,
        after the edits so far are linted, so the render is that of the buffers as they are now."""
        if ls.checker.workspace.loaded is None and (ls._waiting is None or ls._waiting.done()):
            ls.schedule_check(0)  # asked before any buffer was opened: lint once first
        await ls.settled()
        get = (lambda key: getattr(params, key, None)) if not isinstance(params, dict) else params.get
        asked = {key: get(key) for key in ("uri", "role", "wire", "model", "state")}
        uri = asked["uri"]
        return preview(
            asked,
            bundles=ls.checker.workspace.bundles,
            root=ls.root(),
            role_of_file=ls.role_of(uri) if isinstance(uri, str) else None,
            read=ls.read,
            compiled=bool(ls.checker.workspace.bundles),
        )

    return server
