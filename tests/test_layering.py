"""The folders of compiler/promptmill/ are the pipeline's stages, and imports go one way.

- every subpackage is a known stage (a new folder must be added to STAGES here and to
  docs/ARCHITECTURE.md);
- a module imports only from its own stage and the stages it may use (ALLOWED), read
  from the source with `ast`, including imports inside functions; imports under
  `if TYPE_CHECKING:` are annotations only and are not followed;
- the module import graph has no circles;
- the runtime (core/ and runtime/) imports no compile-time package at import time, and
  rendering loads only modules of those two folders, no more of them than RENDER_BUDGET.
"""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "compiler" / "promptmill"

# stage -> the stages its modules may import (besides their own). Ordered along the pipeline:
# core < runtime < source < compose < lints < compiling < cli. batch/ and web/ are the next rooms:
# batch renders datasets with the runtime; web previews in a browser and may rebuild.
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
    "web": {"core", "runtime", "runtime.jinja", "runtime.schema", "runtime.renderers", "source", "compose",
            "lints", "compiling"},
    "cli": {"core", "runtime", "runtime.jinja", "runtime.schema", "runtime.renderers", "source", "compose",
            "lints", "compiling", "batch", "web"},
    "": {"core", "runtime", "compiling"},  # promptmill/__init__.py: the public surface
}
# single modules a stage may use from a higher one: the web preview reuses the watcher
EXCEPTIONS = {"web": {"promptmill.cli.watch", "promptmill.cli.livepreview"}}
STAGES = set(ALLOWED)
RUNTIME_STAGES = {"core", "runtime", "runtime.jinja", "runtime.schema", "runtime.renderers"}
FORBIDDEN_AT_RUNTIME = ("yaml", "jsonschema", "watchdog", "click")
RENDER_BUDGET = 45  # promptmill modules loaded to render every shipped role for every provider


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
        return ""
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
    assert "promptmill.runtime.engine" in GRAPH["promptmill.runtime.engine"] | GRAPH["promptmill"]
    assert "promptmill.runtime.fill" in GRAPH["promptmill.runtime.engine"]
    assert "promptmill.compiling.api" in GRAPH["promptmill"]


def test_every_folder_is_a_known_stage() -> None:
    unknown = sorted({_stage(m) for m in MODULES} - STAGES)
    assert not unknown, f"new folders must be added to ALLOWED in {Path(__file__).name} and to docs/ARCHITECTURE.md: {unknown}"


@pytest.mark.parametrize("module", sorted(MODULES))
def test_imports_go_one_way(module: str) -> None:
    stage = _stage(module)
    allowed = ALLOWED[stage] | {stage}
    bad = sorted(
        m for m in GRAPH[module] if _stage(m) not in allowed and m not in EXCEPTIONS.get(stage, set())
        and not (m == "promptmill" and stage != "core")  # `from .. import __version__`
    )
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


def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(ROOT / "compiler")}


def test_runtime_folders_import_no_compile_time_package() -> None:
    """Each module of core/ and runtime/ imported alone, in one fresh interpreter per module."""
    runtime = sorted(m for m in MODULES if _stage(m) in RUNTIME_STAGES)
    code = (
        "import importlib, json, sys\n"
        "importlib.import_module(sys.argv[1])\n"
        f"print(json.dumps(sorted(set({FORBIDDEN_AT_RUNTIME!r}) & set(sys.modules))))\n"
    )
    procs = {
        m: subprocess.Popen([sys.executable, "-c", code, m], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env=_env(), cwd=ROOT)
        for m in runtime
    }
    bad = {}
    for m, proc in procs.items():
        out, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, f"importing {m} failed:\n{err}"
        imported = json.loads(out.strip().splitlines()[-1])
        if imported:
            bad[m] = imported
    assert not bad, f"runtime modules that import compile-time packages: {bad}"


def test_rendering_stays_in_the_runtime_folders_and_budget() -> None:
    code = (
        "import json, sys, promptmill\n"
        "from pathlib import Path\n"
        "from promptmill.runtime.wire import PROVIDERS\n"
        f"rt = promptmill.load({str(ROOT / 'build')!r})\n"
        "for role in rt.roles:\n"
        "    for provider in PROVIDERS:\n"
        "        try:\n"
        "            rt.render(role, {}, provider=provider).to_payload()\n"
        "        except promptmill.PromptmillError:\n"
        "            pass\n"
        "print(json.dumps(sorted(m for m in sys.modules if m.split('.')[0] == 'promptmill')))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=_env(), cwd=ROOT,
                         timeout=300)
    assert out.returncode == 0, out.stderr
    loaded = json.loads(out.stdout.strip().splitlines()[-1])
    outside = [m for m in loaded if m in MODULES and m != "promptmill" and _stage(m) not in RUNTIME_STAGES]
    assert not outside, f"rendering imported modules outside core/ and runtime/: {outside}"
    assert len(loaded) <= RENDER_BUDGET, f"rendering loads {len(loaded)} promptmill modules (budget {RENDER_BUDGET})"
