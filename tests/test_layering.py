"""The folders of compiler/promptmill/ are the pipeline's stages, and imports go one way.

- every subpackage is a known stage (a new folder must be added to STAGES here and to
  docs/ARCHITECTURE.md);
- a module imports only from its own stage and the stages it may use (ALLOWED), read
  from the source with `ast`: imports at module level, inside functions and under
  `if TYPE_CHECKING:` all count (a type is a dependency too);
- the module import graph has no circle; the public facade's lazy imports
  (promptmill/__init__.py's `_LAZY`) count as imports;
- the render path (runtime/) reaches the stages after it (wires/, explain/, replies/) only by
  a name in runtime/registry.py, never by an import: every such name leads to a later stage,
  and no other module imports by name (`importlib.import_module`);
- outside wires/ no module imports a wire module: wires are looked up by name
  (`runtime.registry.get_wire`).

tests/test_architecture_doc.py checks the runtime side at run time: each module of
the runtime side imported alone loads no compile-time package, and rendering loads
only modules of those folders, within a budget.
"""

from __future__ import annotations

import ast
import functools
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "compiler" / "promptmill"
sys.path.insert(0, str(ROOT / "tools"))
import graph_svg  # noqa: E402
import import_graph  # noqa: E402  (tools/import_graph.py: the one reader of the imports, also behind docs/ARCHITECTURE.md's picture)

# stage -> the stages its modules may import (besides their own). Ordered along the pipeline:
# core < runtime < wires < explain, replies < source < compose < lints < compiling < cli. The render path
# (runtime/) fits a request; the wires (one API dialect each), the account of a render (explain/) and the
# reply reader (replies/) build on it, and it hands over to them by name (runtime/registry.py).
# batch/ and web/ are the next rooms: batch renders datasets with the runtime; web previews in a
# browser and may rebuild. A module at the top of the package (promptmill/watch.py) is a stage of its
# own, named after it.
RUNTIME = {"core", "runtime", "runtime.jinja", "runtime.schema", "runtime.filters"}
AFTER_RUNTIME = RUNTIME | {"wires", "explain", "replies"}
ALLOWED: dict[str, set[str]] = {
    "core": set(),
    "runtime.filters": {"core"},  # the filters without Jinja: plans apply them, the sandbox registers them
    "runtime.jinja": {"core", "runtime.filters"},
    "runtime.schema": {"core"},
    "runtime": {"core", "runtime.jinja", "runtime.schema", "runtime.filters"},
    "wires": RUNTIME,
    "explain": RUNTIME,
    "replies": RUNTIME,
    "runtime.renderers": {"wires"},  # deprecated re-export of wires.gemini.genai_kwargs; removed next release
    "source": {"core"},
    "compose": AFTER_RUNTIME | {"source"},
    "lints": AFTER_RUNTIME | {"source", "compose"},
    "compiling": AFTER_RUNTIME | {"source", "compose", "lints"},
    "batch": AFTER_RUNTIME,
    # review renders whole projects (snapshots, diffs between revisions) with what compiling gives it
    "review": AFTER_RUNTIME | {"source", "compose", "lints", "compiling"},
    "watch": set(),  # runs a callable when files change; knows nothing of promptmill
    "web": AFTER_RUNTIME | {"source", "compose", "lints", "compiling", "watch"},
    # the language server (the only importer of pygls): lints with compiling/'s Workspace, never a copy of it
    "lsp": AFTER_RUNTIME | {"source", "compose", "lints", "compiling", "watch"},
    "cli": AFTER_RUNTIME | {"source", "compose", "lints", "compiling", "batch", "web", "review", "lsp", "watch"},
    "": AFTER_RUNTIME | {"source", "compiling", "batch", "cli", "review", "watch"},  # __init__.py: the public surface
}
STAGES = set(ALLOWED)
# the modules that import by name: the public facade (its `_LAZY` counts as imports) and the render
# path's hand-over to the stages after it (runtime/registry.py: a plugin lookup, checked below)
BY_NAME = {"promptmill", "promptmill.runtime.registry"}


MODULES = import_graph.modules()
_stage = import_graph.stage
_imports = import_graph.imports


def _imports_by_name(module: str) -> bool:
    tree = ast.parse(MODULES[module].read_text(encoding="utf-8"))
    return any(isinstance(n, ast.Call) and getattr(n.func, "attr", "") == "import_module" for n in ast.walk(tree))


@functools.cache
def _graph() -> dict[str, set[str]]:
    """The import graph, read when a test first needs it: not at import, where every pytest-xdist
    process would parse the whole package (0.5 s) while collecting, the one that does not run this file too."""
    return import_graph.graph()


def test_the_parser_sees_the_imports() -> None:
    # guards the checks below: an empty graph would pass them vacuously
    assert len(MODULES) > 70
    assert "promptmill.runtime.engine" in _graph()["promptmill"]  # the lazy exports of __init__.py
    assert "promptmill.runtime.fill" in _graph()["promptmill.runtime.engine"]
    assert "promptmill.compiling.api" in _graph()["promptmill"]
    assert "promptmill.runtime.request" in _graph()["promptmill.wires.anthropic"]  # under TYPE_CHECKING: counted
    assert "promptmill.runtime.fill" in _graph()["promptmill.runtime.fit"]  # function-level imports count too
    assert "promptmill.runtime.registry" in _graph()["promptmill.runtime.request"]


def test_every_folder_is_a_known_stage() -> None:
    unknown = sorted({_stage(m) for m in MODULES} - STAGES)
    assert not unknown, f"new folders must be added to ALLOWED in {Path(__file__).name} and to docs/ARCHITECTURE.md: {unknown}"


@pytest.mark.parametrize("module", sorted(MODULES))
def test_imports_go_one_way(module: str) -> None:
    stage = _stage(module)
    allowed = ALLOWED[stage] | {stage}
    bad = sorted(m for m in _graph()[module] if _stage(m) not in allowed)
    assert not bad, f"{module} ({stage or 'top'}) imports a later stage: {bad}"


def _circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Tarjan's strongly connected components of more than one module (or a module importing itself)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    circles: list[list[str]] = []

    def connect(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, set())):
            if w not in index:
                connect(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1 or v in graph.get(v, set()):
                circles.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            connect(v)
    return circles


def test_the_circle_finder_finds_circles() -> None:
    assert _circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert _circles({"a": {"a"}}) == [["a"]]
    assert _circles({"a": {"b"}, "b": set()}) == []


def test_no_import_circles() -> None:
    """No promptmill modules import each other, directly or round a longer circle: imports at module
    and function level, under `if TYPE_CHECKING:` and the facade's lazy ones all count."""
    circles = _circles(_graph())
    assert not circles, f"modules that import each other: {circles}"


def test_the_render_path_hands_over_by_name_only_to_later_stages() -> None:
    """runtime/registry.py names the modules after the render path that a request hands over to
    (`req.to_openai()`, `req.explain()`, `req.parse_reply()`); each is a module of a later stage, so
    the lookup is a plug-in, not a hidden way back. Nothing else imports by name."""
    from promptmill.runtime import registry

    targets = [*registry.WIRES.values(), registry.EXPLAIN, registry.PARSE_REPLY]
    assert len(targets) >= 12
    for target in targets:
        module = target.split(":")[0]
        assert module in MODULES, f"runtime/registry.py names {module}, which does not exist"
        assert _stage(module) in {"wires", "explain", "replies"}, f"runtime/registry.py hands over to {module}, not a later stage"
    by_name = sorted(m for m in MODULES if _imports_by_name(m))
    assert by_name == sorted(BY_NAME), f"only {sorted(BY_NAME)} may import by name (importlib.import_module): {by_name}"


def test_only_the_registry_reaches_a_wire() -> None:
    """A wire is found by name (`get_wire`): outside wires/ nothing imports a wire module but the
    package root (it re-exports `genai_kwargs` and `anthropic_bedrock_kwargs`) and the deprecated path."""
    wires = {m for m in MODULES if m.startswith("promptmill.wires.")}
    assert {"promptmill.wires.openai_chat", "promptmill.wires.gemini"} <= wires
    exempt = ("wires", "runtime.renderers", "")
    bad = sorted(f"{m} -> {w}" for m in MODULES if _stage(m) not in exempt for w in _graph()[m] & wires)
    assert not bad, f"import the wire by name (runtime.registry.get_wire), not its module: {bad}"


def test_the_architecture_picture_is_the_graph() -> None:
    """docs/ARCHITECTURE.md's import graph is drawn from this graph (`python tools/import_graph.py` redraws it)."""
    doc = (ROOT / "docs" / "ARCHITECTURE.md").read_text(encoding="utf-8")
    assert import_graph.START in doc
    assert import_graph.updated(doc) == doc, "the picture is stale: run python tools/import_graph.py"
    for path, svg in import_graph.pictures().items():  # the SVG pictures the page shows
        assert path.read_text(encoding="utf-8") == svg, f"{path.name} is stale: run python tools/import_graph.py"
    # guards the drawing itself: every stage is a box, an import a path of arrows implies is not drawn
    stages = (ROOT / "docs" / "img" / "architecture" / "stages.svg").read_text(encoding="utf-8")
    assert all(f">{import_graph._name(s)}</text>" in stages for s in {_stage(m) for m in MODULES})
    (_, edges, _), _ = import_graph._graphs()
    assert ("cli", "runtime") in edges and stages.count("marker-end=") == len(graph_svg.reduced(edges)) < len(edges)
