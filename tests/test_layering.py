"""The folders of compiler/promptmill/ are the pipeline's stages, and imports go one way.

- every subpackage is a known stage (a new folder must be added to STAGES here and to
  docs/ARCHITECTURE.md);
- a module imports only from its own stage and the stages it may use (ALLOWED), read
  from the source with `ast`, including imports inside functions; imports under
  `if TYPE_CHECKING:` are annotations only and are not followed;
- the module import graph has no circles.

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
ALLOWED: dict[str, set[str]] = {
    "core": set(),
    "runtime.jinja": {"core"},
    "runtime.schema": {"core"},
    "runtime": {"core", "runtime.jinja", "runtime.schema", "runtime.renderers"},
    "runtime.renderers": {"core", "runtime", "runtime.jinja", "runtime.schema"},
    "source": {"core"},
    "compose": {"core", "runtime", "runtime.jinja", "runtime.schema", "source"},
    "lints": {"core", "runtime", "runtime.jinja", "runtime.schema", "source", "compose"},
    "compiling": {"core", "runtime", "runtime.jinja", "runtime.schema", "source", "compose", "lints"},
    "batch": {"core", "runtime", "runtime.jinja", "runtime.schema", "runtime.renderers"},
    "watch": set(),  # runs a callable when files change; knows nothing of promptmill
    "web": {"core", "runtime", "runtime.jinja", "runtime.schema", "runtime.renderers", "source", "compose",
            "lints", "compiling", "watch"},
    "cli": {"core", "runtime", "runtime.jinja", "runtime.schema", "runtime.renderers", "source", "compose",
            "lints", "compiling", "batch", "web", "watch"},
    "": {"core", "runtime", "runtime.renderers", "source", "compiling", "batch", "cli", "watch"},  # __init__.py: the public surface
}
STAGES = set(ALLOWED)


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
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


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
            # promptmill/__init__.py's lazy exports: importlib.import_module(f".{target}", __name__)
            found.update(_lazy_targets(path))
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(ast.parse(path.read_text(encoding="utf-8")))
    found.discard(module)
    return {m for m in found if m in MODULES}


def _lazy_targets(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and any(getattr(t, "id", "") == "_LAZY" for t in node.targets):
            return {f"promptmill.{v[0]}" for v in ast.literal_eval(node.value).values()}
    return set()


GRAPH = {m: _imports(m) for m in MODULES}


def test_the_parser_sees_the_imports() -> None:
    # guards the check below: an empty graph would pass it vacuously
    assert len(MODULES) > 70
    assert "promptmill.runtime.engine" in GRAPH["promptmill"]  # the lazy exports of __init__.py
    assert "promptmill.runtime.fill" in GRAPH["promptmill.runtime.engine"]
    assert "promptmill.compiling.api" in GRAPH["promptmill"]


def test_every_folder_is_a_known_stage() -> None:
    unknown = sorted({_stage(m) for m in MODULES} - STAGES)
    assert not unknown, f"new folders must be added to ALLOWED in {Path(__file__).name} and to docs/ARCHITECTURE.md: {unknown}"


@pytest.mark.parametrize("module", sorted(MODULES))
def test_imports_go_one_way(module: str) -> None:
    stage = _stage(module)
    allowed = ALLOWED[stage] | {stage}
    bad = sorted(m for m in GRAPH[module] if _stage(m) not in allowed)
    assert not bad, f"{module} ({stage or 'top'}) imports a later stage: {bad}"


def test_no_import_circles() -> None:
    """Tarjan's strongly connected components over the module graph."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    circles: list[list[str]] = []

    def connect(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(GRAPH[v] - {"promptmill"}):
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
            if len(component) > 1:
                circles.append(sorted(component))

    for v in sorted(MODULES):
        if v not in index:
            connect(v)
    assert not circles, f"modules that import each other: {circles}"
