"""The public surface (`promptmill/__init__.py`): every public name importable from `promptmill`,
the deprecated deep paths still the same objects, the docs importing only public paths, and
`import promptmill` with the render names still free of compile-time packages.
"""

from __future__ import annotations

import importlib
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

import promptmill

ROOT = Path(__file__).resolve().parents[1]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]  # docs/**/*.md: the site's pages too
# modules that are public as a whole (README: "Public and internal module paths")
PUBLIC_MODULES = {"promptmill", "promptmill.batch", "promptmill.batch.ray", "promptmill.batch.spark", "promptmill.web", "promptmill.watch"}
# deep path -> the top-level name it re-exports, for one release
DEPRECATED = {
    "promptmill.compiling.api.build_in_memory": "build_in_memory",
    "promptmill.compiling.which.which": "which",
    "promptmill.compiling.which.format_which": "format_which",
    "promptmill.compiling.writer.build_lock": "build_lock",
    "promptmill.source.loader.load_data_file": "load_data_file",
    "promptmill.runtime.tokenizers.get_tokenizer": "get_tokenizer",
    "promptmill.runtime.renderers.gemini.genai_kwargs": "genai_kwargs",
    "promptmill.cli.scaffold.init": "init",
    "promptmill.compiling.porting.port_format": "port_format",
    "promptmill.source.statefile.read_state": "read_state",
    "promptmill.runtime.reply.parse_reply": "parse_reply",  # moved to promptmill.replies.parse
    "promptmill.cli.preview.request_data": "request_data",
    "promptmill.cli.preview.pretty": "pretty",
    "promptmill.cli.preview.event_line": "event_line",
    "promptmill.batch.collect.read_result": "read_result",
    "promptmill.cli.watch.Watcher": "Watcher",
}


def test_all_lists_every_name_and_each_resolves():
    lazy = set(promptmill._LAZY)
    eager = {n for n in promptmill.__all__ if n not in lazy}
    assert lazy <= set(promptmill.__all__), "a lazy name missing from __all__"
    assert len(promptmill.__all__) == len(set(promptmill.__all__))
    assert {"load", "__version__", "PromptmillError", "CompileError"} <= eager
    for name in promptmill.__all__:
        assert getattr(promptmill, name) is not None, name
    assert set(promptmill.__all__) <= set(dir(promptmill))
    with pytest.raises(AttributeError):
        promptmill.no_such_name  # noqa: B018


@pytest.mark.parametrize("path", sorted(DEPRECATED))
def test_a_deprecated_deep_path_is_the_public_object(path):
    module, _, attr = path.rpartition(".")
    assert getattr(importlib.import_module(module), attr) is getattr(promptmill, DEPRECATED[path])


def test_the_moved_watcher_module_still_answers():
    from promptmill.cli import watch as old
    from promptmill.watch import Watcher, watch

    assert (old.Watcher, old.watch) == (Watcher, watch)


def _doc_imports() -> list[tuple[str, str, list[str]]]:
    found = []
    for doc in DOCS:
        for match in re.finditer(r"^\s*from (promptmill[\w.]*) import ([\w, ]+)$", doc.read_text(encoding="utf-8"), re.M):
            found.append((doc.name, match.group(1), [n.strip() for n in match.group(2).split(",")]))
    return found


def test_the_docs_import_only_public_paths():
    imports = _doc_imports()
    assert len(imports) >= 10, "the docs' imports were not found: the check would be vacuous"
    deep = [(doc, module) for doc, module, _ in imports if module not in PUBLIC_MODULES]
    assert not deep, f"docs import from internal paths; import from promptmill instead: {deep}"
    for doc, module, names in imports:
        if module == "promptmill":
            missing = [n for n in names if n not in promptmill.__all__]
            assert not missing, f"{doc} imports {missing} from promptmill, which does not export them"


def test_importing_the_render_names_loads_no_compile_time_package():
    code = (
        "import json, sys, promptmill\n"
        "for name in ('Runtime', 'PromptRequest', 'load', 'parse_reply', 'get_tokenizer', 'genai_kwargs', 'ReplyError'):\n"
        "    getattr(promptmill, name)\n"
        "print(json.dumps(sorted(m for m in sys.modules if m.split('.')[0] in ('yaml', 'jsonschema', 'click', 'watchdog'))))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT / "compiler")},
    )
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout.strip().splitlines()[-1]) == []
