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
REVIEWED: dict[str, tuple[int, str]] = {
    "web/app.py": (1, "package data only: the page's three static files, read through importlib.resources; no user path"),
    "lsp/__init__.py": (1, "os.fdopen of a duplicate of file descriptor 1: the protocol's own output stream, no user path"),
    "runtime/models.py": (1, "reads promptmill's own package data (data/models.json) through importlib.resources, never a user path"),
    "batch/outdir.py": (
        4,
        "_sha256 opens an output file O_NOFOLLOW after lstat said it is a regular file in --out (os.open, os.fdopen); "
        "shutil.rmtree removes only a staging folder promptmill made (mkdtemp's name, a real folder holding only "
        "files named like its output; rmtree refuses a link) and its own staging folder at the end",
    ),
    "batch/shards.py": (
        5,
        "AtomicFile streams a batch file too large to hold for userfiles.write_bytes: it creates its temporary file "
        "exclusively (os.open O_EXCL|O_NOFOLLOW in the private staging folder, or tempfile.mkstemp beside the target), "
        "renames it into place (os.replace replaces a link, never writes through it) and unlinks only that temporary file",
    ),
    "cli/main.py": (
        2,
        "os.devnull only: opened to stand in for a standard stream that is closed or whose reader went away",
    ),
    "cli/scaffold.py": (
        2,
        "reads the starter project shipped inside the package (importlib.resources); under --force removes a "
        "symbolic link that stands where a starter file goes (the link itself, never its target) before write_bytes",
    ),
    "compiling/writer.py": (
        2,
        "opens the build folder itself O_RDONLY|O_DIRECTORY only to fsync its entries after the manifest's rename; "
        "rmdir removes only roles/ and tokenizers/ subfolders its own removals emptied (rmdir never removes a "
        "non-empty folder or follows a link)",
    ),
    "core/filelock.py": (
        3,
        "the lock file of a build or --out folder: opened O_NOFOLLOW (never through a link), read for the holder's "
        "note; unlinked only by its holder (batch, remove=True) after checking it is the file it locked",
    ),
    "runtime/tokenizers.py": (
        5,
        "reads the encodings shipped inside the package (importlib.resources); builds quicktok's vocabulary in a "
        "private folder of its own (tempfile.mkdtemp) and removes that folder",
    ),
    "source/schemacheck.py": (1, "reads the JSON Schemas shipped inside the package (importlib.resources)"),
    "source/textcheck.py": (
        1,
        "the template reader: opens O_NONBLOCK and checks fstat (regular files only, PM100), size cap before and "
        "while reading (PM105) - the same rules as userfiles.read_bytes, returned as (code, message) for diagnostics",
    ),
}


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
