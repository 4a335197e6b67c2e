"""The folders of compiler/promptmill/ are the pipeline's stages, and imports go one way.

- every subpackage is a known stage (a new folder must be added to STAGES here and to
  docs/ARCHITECTURE.md);
- a module imports only from its own stage and the stages it may use (ALLOWED), read
  from the source with `ast`, including imports inside functions; imports under
  `if TYPE_CHECKING:` are annotations only and are not followed;
- the module import graph has no circles (the registries' lazy imports count as imports);
- outside runtime/wires/ no module imports a wire module: wires are looked up by name
  (`runtime.wires.get_wire`), and only the protocol (`base`) and the shared schema forms
  (`schemaforms`) may be imported from there.

tests/test_architecture_doc.py checks the runtime side at run time: each module of
core/ and runtime/ imported alone loads no compile-time package, and rendering loads
only modules of those folders, within a budget.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "compiler" / "promptmill"

# stage -> the stages its modules may import (besides their own). Ordered along the pipeline:
# core < runtime < source < compose < lints < compiling < cli. batch/ and web/ are the next rooms:
# batch renders datasets with the runtime; web previews in a browser and may rebuild. A module at the
# top of the package (promptmill/watch.py) is a stage of its own, named after it.
# runtime.wires builds on the runtime (fit's containers); the runtime reaches a wire only by name,
# through the registry (see WIRE_ENTRY below), so no module circle can form.
ALLOWED: dict[str, set[str]] = {
    "core": set(),
    "runtime.jinja": {"core"},
    "runtime.schema": {"core"},
    "runtime": {"core", "runtime.jinja", "runtime.schema", "runtime.wires"},
    "runtime.wires": {"core", "runtime", "runtime.jinja", "runtime.schema"},
    "runtime.renderers": {"runtime.wires"},  # deprecated re-export of wires.gemini.genai_kwargs; removed next release
    "source": {"core"},
    "compose": {"core", "runtime", "runtime.jinja", "runtime.schema", "runtime.wires", "source"},
    "lints": {"core", "runtime", "runtime.jinja", "runtime.schema", "runtime.wires", "source", "compose"},
    "compiling": {"core", "runtime", "runtime.jinja", "runtime.schema", "runtime.wires", "source", "compose", "lints"},
    "batch": {"core", "runtime", "runtime.jinja", "runtime.schema", "runtime.wires"},
    # review renders whole projects (snapshots, diffs between revisions) with what compiling gives it
    "review": {"core", "runtime", "runtime.jinja", "runtime.schema", "runtime.wires", "source", "compose", "lints", "compiling"},
    "watch": set(),  # runs a callable when files change; knows nothing of promptmill
    "web": {"core", "runtime", "runtime.jinja", "runtime.schema", "runtime.wires", "source", "compose", "lints", "compiling", "watch"},
    # the language server (the only importer of pygls): lints with compiling/'s Workspace, never a copy of it
    "lsp": {"core", "runtime", "runtime.jinja", "runtime.schema", "runtime.wires", "source", "compose", "lints", "compiling", "watch"},
    "cli": {
        "core",
        "runtime",
        "runtime.jinja",
        "runtime.schema",
        "runtime.wires",
        "source",
        "compose",
        "lints",
        "compiling",
        "batch",
        "web",
        "review",
        "lsp",
        "watch",
    },
    "": {"core", "runtime", "runtime.wires", "source", "compiling", "batch", "cli", "review", "watch"},  # __init__.py: the public surface
}
STAGES = set(ALLOWED)
# what a module outside runtime/wires/ may import from it: the registry, the protocol, the schema forms
WIRE_ENTRY = {
    "promptmill.runtime.wires",
    "promptmill.runtime.wires.base",
    "promptmill.runtime.wires.schemaforms",
    "promptmill.runtime.wires.schemaprofiles",  # data and pure functions, read by compose/ and lints/ like schemaforms
}


def _modules() -> dict[str, Path]:
    out = {}
    for p in sorted(PACKAGE.rglob("*.py")):
        parts = ["promptmill", *p.relative_to(PACKAGE).with_suffix("").parts]
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = p
    return out


MODULES = _modules()


def _stage(module: str) -> str:
    """The stage of a module: its folder under promptmill/, `runtime.<sub>` for runtime's subfolders."""
    parts = module.split(".")[1:]
    is_package = MODULES[module].name == "__init__.py"
    folders = parts if is_package else parts[:-1]
    if not folders:
        return "" if is_package else parts[0]  # the package itself, or a module at its top
    if folders[0] == "runtime" and len(folders) > 1:
        return f"runtime.{folders[1]}"
    return folders[0]


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _imports(module: str) -> set[str]:
    """promptmill modules `module` imports (anywhere in its code, TYPE_CHECKING blocks excepted)."""
    path = MODULES[module]
    package = module.split(".") if path.name == "__init__.py" else module.split(".")[:-1]
    found: set[str] = set()

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.If) and _is_type_checking(node.test):
            for child in node.orelse:
                visit(child)
            return
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if target.split(".")[0] == "promptmill":
                for alias in node.names:
                    full = f"{target}.{alias.name}"
                    found.add(full if full in MODULES else target)
        elif isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name.split(".")[0] == "promptmill")
        elif isinstance(node, ast.Call) and getattr(node.func, "attr", "") == "import_module":
            # a registry's lazy imports: importlib.import_module(f".{target}", __name__)
            found.update(_lazy_targets(path, module))
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(ast.parse(path.read_text(encoding="utf-8")))
    found.discard(module)
    return {m for m in found if m in MODULES}


def _lazy_targets(path: Path, module: str) -> set[str]:
    """The modules a registry imports by name: promptmill/__init__.py's `_LAZY` (name -> (module, attr))
    and runtime/wires/__init__.py's `WIRES` (name -> "module:attr", relative to the package)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names = {getattr(t, "id", "") for t in targets}
            if "_LAZY" in names:
                found |= {f"promptmill.{v[0]}" for v in ast.literal_eval(node.value).values()}  # type: ignore[arg-type]
            elif "WIRES" in names:
                found |= {f"{module}.{v.split(':')[0]}" for v in ast.literal_eval(node.value).values()}  # type: ignore[arg-type]
    return found


GRAPH = {m: _imports(m) for m in MODULES}


def test_the_parser_sees_the_imports() -> None:
    # guards the check below: an empty graph would pass it vacuously
    assert len(MODULES) > 70
    assert "promptmill.runtime.engine" in GRAPH["promptmill"]  # the lazy exports of __init__.py
    assert "promptmill.runtime.fill" in GRAPH["promptmill.runtime.engine"]
    assert "promptmill.compiling.api" in GRAPH["promptmill"]
    assert "promptmill.runtime.wires.openai_chat" in GRAPH["promptmill.runtime.wires"]  # the wire registry
    assert "promptmill.runtime.explain" in GRAPH["promptmill.runtime.request"]
    assert "promptmill.runtime.request" not in GRAPH["promptmill.runtime.wires.anthropic"]  # under TYPE_CHECKING
    assert "promptmill.runtime.fill" in GRAPH["promptmill.runtime.fit"]  # function-level imports count too


def test_every_folder_is_a_known_stage() -> None:
    unknown = sorted({_stage(m) for m in MODULES} - STAGES)
    assert not unknown, f"new folders must be added to ALLOWED in {Path(__file__).name} and to docs/ARCHITECTURE.md: {unknown}"


@pytest.mark.parametrize("module", sorted(MODULES))
def test_imports_go_one_way(module: str) -> None:
    stage = _stage(module)
    allowed = ALLOWED[stage] | {stage}
    bad = sorted(m for m in GRAPH[module] if _stage(m) not in allowed)
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


def _version_only(module: str) -> bool:
    """`module` takes nothing from the package but `__version__` (`from .. import __version__`)."""
    tree = ast.parse(MODULES[module].read_text(encoding="utf-8"))
    return all(
        [a.name for a in node.names] == ["__version__"]
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom) and node.module is None and node.level == module.count(".")
    )


def test_the_circle_finder_finds_circles() -> None:
    assert _circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert _circles({"a": {"a"}}) == [["a"]]
    assert _circles({"a": {"b"}, "b": set()}) == []


def test_no_import_circles() -> None:
    """No promptmill modules import each other, directly or round a longer circle: imports at module
    and function level and the registries' lazy ones count, `if TYPE_CHECKING:` imports do not.
    The only edge left out is `from .. import __version__` into the package (the version is moving
    to a module of its own)."""
    graph = {m: {w for w in deps if not (w == "promptmill" and _version_only(m))} for m, deps in GRAPH.items()}
    circles = _circles(graph)
    assert not circles, f"modules that import each other: {circles}"


def test_only_the_registry_reaches_a_wire() -> None:
    """A wire is found by name (`get_wire`): outside runtime/wires/ nothing imports a wire module."""
    wires = {m for m in MODULES if m.startswith("promptmill.runtime.wires.")}
    assert {"promptmill.runtime.wires.openai_chat", "promptmill.runtime.wires.gemini"} <= wires
    exempt = ("runtime.wires", "runtime.renderers", "")  # "": the package root re-exports genai_kwargs
    bad = sorted(f"{m} -> {w}" for m in MODULES if _stage(m) not in exempt for w in GRAPH[m] & wires - WIRE_ENTRY)
    assert not bad, f"import the wire by name (runtime.wires.get_wire), not its module: {bad}"
