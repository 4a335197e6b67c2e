"""Every read, write, rename and removal of a user's path goes through `promptmill.core.userfiles`.

The test walks the package's syntax trees and lists each call that touches the
file system by itself (open(), Path.read_text/read_bytes/write_text/write_bytes/
open/unlink/rename/replace/rmdir, os.open/replace/rename/unlink/remove,
shutil.rmtree/copy*/move, tempfile.mkstemp). A module may do so only when it is
in REVIEWED below with the number of such calls and the reason; a new call, or
a new module, fails until it goes through the guard or is reviewed here.
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "compiler" / "promptmill"

PATH_METHODS = {"read_text", "read_bytes", "write_text", "write_bytes", "unlink", "rename", "replace", "rmdir", "touch"}
MODULE_CALLS = {
    "os": {"open", "replace", "rename", "unlink", "remove", "rmdir", "removedirs", "fdopen"},
    "shutil": {"rmtree", "copy", "copy2", "copyfile", "copytree", "move"},
    "tempfile": {"mkstemp", "NamedTemporaryFile", "TemporaryFile"},
    "io": {"open"},
}

# module (relative to the package) -> (calls, why it may make them itself)
REVIEWED: dict[str, tuple[int, str]] = {}


def file_calls(tree: ast.AST) -> list[tuple[int, str]]:
    """(line, call) of each call that touches the file system without the guard."""
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        if isinstance(func, ast.Name) and func.id == "open":
            found.append((node.lineno, "open"))
        elif isinstance(func, ast.Attribute):
            owner = func.value
            if isinstance(owner, ast.Name) and owner.id in MODULE_CALLS:
                if func.attr in MODULE_CALLS[owner.id]:
                    found.append((node.lineno, f"{owner.id}.{func.attr}"))
            elif func.attr in PATH_METHODS and not (isinstance(owner, ast.Name) and owner.id in {"self", "str", "text", "s", "userfiles"}):
                if func.attr == "replace" and node.args and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str):
                    continue  # str.replace("a", "b")
                if func.attr == "replace" and len(node.args) >= 2:
                    continue  # str.replace(old, new): a path's replace takes one argument
                if func.attr == "replace" and node.keywords:
                    continue  # dataclasses.replace / NamedTuple._replace style calls
                found.append((node.lineno, f".{func.attr}"))
    return sorted(found)


def package_calls() -> dict[str, list[tuple[int, str]]]:
    out = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE).as_posix()
        if rel == "core/userfiles.py":
            continue
        calls = file_calls(ast.parse(path.read_text(encoding="utf-8"), rel))
        if calls:
            out[rel] = calls
    return out


def test_no_module_touches_a_path_without_the_guard():
    unreviewed = []
    for rel, calls in package_calls().items():
        allowed = REVIEWED.get(rel, (0, ""))[0]
        if len(calls) > allowed:
            unreviewed.append(f"{rel}: {len(calls)} call(s), {allowed} reviewed: " + ", ".join(f"{c}@{n}" for n, c in calls))
    assert unreviewed == [], "go through promptmill.core.userfiles, or review the call in REVIEWED:\n" + "\n".join(unreviewed)


def test_reviewed_counts_are_not_stale():
    calls = package_calls()
    stale = [f"{rel}: reviewed {n}, found {len(calls.get(rel, []))}" for rel, (n, _) in REVIEWED.items() if len(calls.get(rel, [])) != n]
    assert stale == [], "lower the counts in REVIEWED (a call moved to the guard):\n" + "\n".join(stale)


def test_the_walk_finds_what_it_looks_for():
    tree = ast.parse("open(p)\nPath(p).write_text(t)\nos.unlink(p)\nshutil.rmtree(p)\n'a'.replace('a', 'b')\nx.replace(y)\n")
    assert [c for _, c in file_calls(tree)] == ["open", ".write_text", "os.unlink", "shutil.rmtree", ".replace"]
