"""Find the template files of a prompts folder.

Every `*.yaml` / `*.yml` below the root, in a deterministic order (by posix
path relative to the root). Hidden files and folders (names starting with '.')
are skipped; `exclude` globs (`*`, `?`, `[...]`, `**`) are matched against the
relative posix path of files and folders. Symbolic links inside the root are
followed; a link that loops, escapes the root, or leads to a folder already
listed is skipped with a PM110 warning, so the walk always ends and lists each
folder once.
"""

from __future__ import annotations

import errno
import os
import pathlib
import re
from collections.abc import Callable, Sequence

from ..core.diagnostics import Diagnostic, Position
from .surrogates import SURROGATE

YAML_SUFFIXES = (".yaml", ".yml")


def discover(root: os.PathLike[str] | str, *, exclude: Sequence[str] = ()) -> tuple[list[pathlib.Path], list[Diagnostic]]:
    """List the YAML files under `root`, sorted by relative posix path, with diagnostics."""
    root_path = pathlib.Path(root)
    shown = root_path.as_posix()
    try:
        real_root = pathlib.Path(os.path.realpath(root_path, strict=True))
    except OSError:
        return [], [Diagnostic.at(Position(shown, 0, 0), "PM011", f"the prompts folder '{shown}' does not exist")]
    if real_root.is_file():
        return [root_path], []
    if not real_root.is_dir():
        return [], [Diagnostic.at(Position(shown, 0, 0), "PM100", f"'{shown}' is not a folder")]

    excluded = _matcher(exclude)
    found: list[tuple[str, pathlib.Path]] = []
    diags: list[Diagnostic] = []
    walked: dict[pathlib.Path, str] = {real_root: "."}
    links: list[tuple[str, pathlib.Path]] = []  # (relative path, path) of folder links, for later
    pending: list[tuple[str, pathlib.Path, pathlib.Path]] = [("", root_path, real_root)]

    def warn(path: pathlib.Path, message: str) -> None:
        diags.append(Diagnostic.at(Position(path.as_posix(), 0, 0), "PM110", message))

    while pending or links:
        if not pending:  # real folders first, so a link never shadows the folder it points to
            links.sort()
            rel, path = links.pop(0)
            target = _follow(path, real_root, walked, warn)
            if target is not None:
                walked[target] = rel
                pending.append((rel, path, target))
            continue
        rel, folder, real = pending.pop()
        try:
            with os.scandir(folder) as listing:
                entries = sorted(listing, key=lambda e: e.name)
        except OSError as err:
            message = f"the folder cannot be listed: {err.strerror or err}"
            diags.append(Diagnostic.at(Position(folder.as_posix(), 0, 0), "PM100", message))
            continue
        for entry in entries:
            name = entry.name
            if name.startswith("."):
                continue
            child_rel = f"{rel}/{name}" if rel else name
            if excluded(child_rel):
                continue
            child = folder / name
            is_yaml = name.lower().endswith(YAML_SUFFIXES)
            if SURROGATE.search(name) is not None and (is_yaml or entry.is_dir()):
                diags.append(_name_not_utf8(child))  # it would reach bundles and payloads, which UTF-8 cannot hold
                continue
            try:
                if entry.is_symlink():
                    if _is_dir(child):
                        links.append((child_rel, child))
                    elif is_yaml:
                        if _link_ok(child, real_root, warn):
                            found.append((child_rel, child))
                elif entry.is_dir(follow_symlinks=False):
                    walked[real / name] = child_rel
                    pending.append((child_rel, child, real / name))
                elif is_yaml and entry.is_file(follow_symlinks=False):
                    found.append((child_rel, child))
            except OSError as err:
                diags.append(Diagnostic.at(Position(child.as_posix(), 0, 0), "PM100", f"cannot read: {err.strerror}"))
    found.sort(key=lambda item: item[0])
    return [path for _, path in found], diags


def _name_not_utf8(path: pathlib.Path) -> Diagnostic:
    """PM102 for a file or folder whose name is not UTF-8 (Python holds its bytes as lone surrogates)."""
    shown = os.fsencode(path.as_posix()).decode("utf-8", "backslashreplace")
    raw = os.fsencode(path.name)
    try:
        raw.decode("utf-8")
        byte = ""
    except UnicodeDecodeError as err:
        byte = f" (byte 0x{raw[err.start]:02X})"
    return Diagnostic.at(
        Position(shown, 0, 0),
        "PM102",
        f"the name is not UTF-8 text{byte}; promptmill copies names into bundles and messages, which are UTF-8",
        hint="rename it with UTF-8 characters only",
    )


def _is_dir(path: pathlib.Path) -> bool:
    try:
        return path.is_dir()
    except OSError:
        return False


def _link_ok(link: pathlib.Path, real_root: pathlib.Path, warn: Callable[[pathlib.Path, str], None]) -> bool:
    """A file link is kept when it resolves to a file inside the root (load_file reports the rest)."""
    try:
        target = pathlib.Path(os.path.realpath(link, strict=True))
    except OSError as err:
        if err.errno == errno.ELOOP:
            warn(link, "the symbolic link loops; it was skipped")
            return False
        return True  # broken link: load_file reports PM100 when it is read
    if not target.is_relative_to(real_root):
        warn(
            link,
            f"the symbolic link points outside the prompts folder (to {target.as_posix()}); it was skipped",
        )
        return False
    return True


def _follow(
    link: pathlib.Path,
    real_root: pathlib.Path,
    walked: dict[pathlib.Path, str],
    warn: Callable[[pathlib.Path, str], None],
) -> pathlib.Path | None:
    """The real folder a folder link leads to, or None (with a warning) if it must be skipped."""
    try:
        target = pathlib.Path(os.path.realpath(link, strict=True))
    except OSError:
        warn(link, "the symbolic link loops or cannot be resolved; it was skipped")
        return None
    if not target.is_relative_to(real_root):
        warn(
            link,
            f"the symbolic link points outside the prompts folder (to {target.as_posix()}); it was skipped",
        )
        return None
    real_parent = pathlib.Path(os.path.realpath(link.parent))
    if real_parent == target or real_parent.is_relative_to(target):
        warn(
            link,
            "the symbolic link points back to a folder that contains it (a loop); it was skipped",
        )
        return None
    if target in walked:
        warn(
            link,
            f"the symbolic link points to a folder already listed as '{walked[target]}'; it was skipped",
        )
        return None
    return target


def _matcher(patterns: Sequence[str]) -> Callable[[str], bool]:
    """A predicate: does a relative posix path match any of the exclude globs?

    Globs are matched by a set-of-states walk over the path (each character
    once, each pattern state at most once per character), never by a
    backtracking regex: twelve `**/` on a 30-level path cost microseconds.
    """
    if not patterns:
        return lambda _path: False
    globs = [glob_tokens(p) for p in patterns]
    return lambda path: any(_glob_match(tokens, path) for tokens in globs)


Token = tuple[str, object]  # ("lit", "a") ("one", None) ("class", re.Pattern) ("star", None) ("any", None) ("dirs", None)


def glob_tokens(pattern: str) -> list[Token]:
    """A path glob as tokens: `*` and `?` stay within one path segment, `**` spans any,
    `**/` is zero or more whole folders."""
    pattern = pattern.replace("\\", "/").strip("/")
    while pattern.startswith("./"):
        pattern = pattern[2:]
    out: list[Token] = []
    i, n = 0, len(pattern)
    while i < n:
        if pattern.startswith("**/", i):
            if not out or out[-1][0] != "dirs":  # `**/**/` is `**/`
                out.append(("dirs", None))
            i += 3
        elif pattern.startswith("**", i):
            out.append(("any", None))
            i += 2
        elif pattern[i] == "*":
            out.append(("star", None))
            i += 1
        elif pattern[i] == "?":
            out.append(("one", None))
            i += 1
        elif pattern[i] == "[" and (end := pattern.find("]", i + 2)) != -1:
            body = pattern[i + 1 : end]
            negate = body.startswith("!")
            body = body[1:] if negate else body
            out.append(("class", re.compile("[" + ("^/" if negate else "") + body.replace("\\", "\\\\") + "]")))
            i = end + 1
        else:
            out.append(("lit", pattern[i]))
            i += 1
    return out


def _glob_match(tokens: list[Token], path: str) -> bool:
    """Whether `path` matches the whole glob: states are (token index, inside a `**/`)."""
    m = len(tokens)

    def closure(states: set[tuple[int, bool]]) -> set[tuple[int, bool]]:
        stack, seen = list(states), set(states)
        while stack:
            k, inside = stack.pop()
            if k < m and not inside and tokens[k][0] in ("star", "any", "dirs") and (k + 1, False) not in seen:
                seen.add((k + 1, False))
                stack.append((k + 1, False))
        return seen

    states = closure({(0, False)})
    for ch in path:
        nxt: set[tuple[int, bool]] = set()
        for k, _inside in states:
            if k == m:
                continue
            kind, arg = tokens[k]
            if kind == "dirs":
                nxt.add((k, True))  # still inside the folders part
                if ch == "/":
                    nxt.add((k + 1, False))
            elif kind == "any":
                nxt.add((k, False))
            elif kind == "star":
                if ch != "/":
                    nxt.add((k, False))
            elif kind == "one":
                if ch != "/":
                    nxt.add((k + 1, False))
            elif kind == "class":
                if arg.fullmatch(ch):  # type: ignore[attr-defined]
                    nxt.add((k + 1, False))
            elif ch == arg:
                nxt.add((k + 1, False))
        if not nxt:
            return False
        states = closure(nxt)
    return (m, False) in states
