"""TEMPORARY minimal loader (replaced by the loader branch). Same public API."""

from __future__ import annotations

import hashlib
import os
import pathlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import yaml

from .diagnostics import Diagnostic, Position

DocPath = tuple[str | int, ...]


@dataclass(frozen=True)
class Limits:
    max_file_bytes: int = 1_048_576
    max_line_chars: int = 65_536
    max_depth: int = 64
    max_aliases: int = 100
    max_nodes: int = 200_000


DEFAULT_LIMITS = Limits()


@dataclass(frozen=True)
class Document:
    file: str
    data: Any
    text: str
    sha256: str
    _pos: dict = field(default_factory=dict, repr=False, compare=False)
    _keys: dict = field(default_factory=dict, repr=False, compare=False)
    _style: dict = field(default_factory=dict, repr=False, compare=False)

    def pos(self, path: DocPath) -> Position:
        p = tuple(path)
        while p and p not in self._pos:
            p = p[:-1]
        line, col = self._pos.get(p, (1, 1))
        return Position(self.file, line, col)

    def key_pos(self, path: DocPath) -> Position:
        p = tuple(path)
        if p in self._keys:
            line, col = self._keys[p]
            return Position(self.file, line, col)
        return self.pos(p)

    def text_pos(self, path: DocPath, line: int, col: int = 1) -> Position:
        p = tuple(path)
        style = self._style.get(p)
        base = self.pos(p)
        if style in ("|", ">"):
            lines = self.text.splitlines()
            first = base.line  # indicator line (1-based); content starts next line
            content_line = first + line
            indent = 0
            if content_line - 1 < len(lines):
                raw = lines[content_line - 1]
                indent = len(raw) - len(raw.lstrip(" "))
            return Position(self.file, content_line, indent + col)
        if line == 1:
            return Position(self.file, base.line, base.col + col - 1 + (1 if style in ("'", '"') else 0))
        return Position(self.file, base.line + line - 1, col)


def _convert(node, path, pos, keys, style):
    pos[path] = (node.start_mark.line + 1, node.start_mark.column + 1)
    if isinstance(node, yaml.MappingNode):
        out = {}
        for k, v in node.value:
            key = k.value
            keys[path + (key,)] = (k.start_mark.line + 1, k.start_mark.column + 1)
            out[key] = _convert(v, path + (key,), pos, keys, style)
        return out
    if isinstance(node, yaml.SequenceNode):
        return [_convert(v, path + (i,), pos, keys, style) for i, v in enumerate(node.value)]
    style[path] = node.style
    return yaml.SafeLoader("").construct_object(node) if False else _scalar(node)


def _scalar(node):
    loader = yaml.SafeLoader("")
    return loader.construct_object(node, deep=True)


def load_text(source: str | bytes, file: str, limits: Limits = DEFAULT_LIMITS):
    raw = source.encode() if isinstance(source, str) else source
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return None, [Diagnostic("PM102", "error", file, 1, 1, "file is not UTF-8 text")]
    try:
        node = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line, col = (mark.line + 1, mark.column + 1) if mark else (1, 1)
        return None, [Diagnostic("PM101", "error", file, line, col, str(exc).splitlines()[0])]
    if node is None:
        return None, [Diagnostic("PM103", "error", file, 1, 1, "file holds no YAML document")]
    pos, keys, style = {}, {}, {}
    data = _convert(node, (), pos, keys, style)
    return Document(file, data, text, hashlib.sha256(raw).hexdigest(), pos, keys, style), []


def load_file(path, file: str | None = None, limits: Limits = DEFAULT_LIMITS):
    p = pathlib.Path(path)
    display = file or p.as_posix()
    try:
        raw = p.read_bytes()
    except OSError as exc:
        return None, [Diagnostic("PM100", "error", display, 0, 0, f"cannot read file: {exc.strerror}")]
    return load_text(raw, display, limits)


def discover(root, *, exclude: Sequence[str] = ()):
    import fnmatch

    rootp = pathlib.Path(root)
    out = []
    for dirpath, dirnames, filenames in os.walk(rootp):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
        for f in filenames:
            if f.startswith(".") or not f.endswith((".yaml", ".yml")):
                continue
            full = pathlib.Path(dirpath) / f
            rel = full.relative_to(rootp).as_posix()
            if any(fnmatch.fnmatch(rel, pat) for pat in exclude):
                continue
            out.append(full)
    return sorted(out, key=lambda p: p.relative_to(rootp).as_posix()), []


def load_data_file(path, *, max_bytes: int = 8_388_608):
    import json

    p = pathlib.Path(path)
    text = p.read_text()
    if p.suffix == ".json":
        return json.loads(text)
    return yaml.safe_load(text)
