"""Load YAML template files into `Document`s that remember where every value came from.

Loading is safe and bounded: YAML 1.2 core-schema scalars only, no tags beyond
the standard ones, no merge keys, no duplicate or non-string keys; limits on
file size, line length, nesting depth, aliases and expanded nodes. Bad input
never raises: `load_text` and `load_file` return `(None, diagnostics)`, each
diagnostic with `file:line:col` and a message that says what was expected.

`discover` (re-exported from `promptmill.source.discovery`) lists the template files
of a folder; `load_data_file` reads a render-state file (.json/.yaml/.yml) for
the command line and raises `StateFileError` when it cannot.
"""

from __future__ import annotations

import hashlib
import json
import os
import pathlib
import re
from dataclasses import dataclass, field
from typing import Any

import yaml

from ..core.diagnostics import Diagnostic, Position
from ..core.errors import StateFileError
from ..core.showtext import INVISIBLE, describe
from .discovery import discover
from .scalartext import block_scalar_pos, flow_scalar_pos, split_lines
from .textcheck import decode, line_col, read_bytes, text_problem
from .yamlbuild import Builder, Refusal, make_parser, syntax_problem

__all__ = [
    "DEFAULT_LIMITS",
    "DocPath",
    "Document",
    "LoadLimits",
    "discover",
    "load_data_file",
    "load_file",
    "load_text",
]


@dataclass(frozen=True)
class LoadLimits:
    """Bounds that keep loading a hostile or broken file fast and small."""

    max_file_bytes: int = 1_048_576  # 1 MiB per template file
    max_line_chars: int = 65_536
    max_depth: int = 64  # nesting of mappings/sequences
    max_aliases: int = 100  # alias nodes per document
    max_nodes: int = 200_000  # nodes after alias expansion


DEFAULT_LIMITS = LoadLimits()
DocPath = tuple[str | int, ...]
_Pos = tuple[int, int]


@dataclass(frozen=True)
class Document:
    """One loaded YAML file: plain data plus the source position of every node.

    `positions` maps the path of every value node to its 1-based (line, col);
    `key_positions` does the same for mapping keys; `styles` holds the style
    ('|', '>', '"', "'") of non-plain string scalars; `aliases` maps the path of
    an alias node to the path of its anchor, so positions inside expanded
    aliases point at the anchored text.
    """

    file: str
    data: Any
    text: str
    sha256: str
    positions: dict[DocPath, _Pos] = field(default_factory=dict, repr=False, compare=False)
    key_positions: dict[DocPath, _Pos] = field(default_factory=dict, repr=False, compare=False)
    styles: dict[DocPath, str] = field(default_factory=dict, repr=False, compare=False)
    aliases: dict[DocPath, DocPath] = field(default_factory=dict, repr=False, compare=False)

    def pos(self, path: DocPath) -> Position:
        """Start of the value node at `path`; the nearest known ancestor if absent; 1:1 for ()."""
        path = tuple(path)
        for end in range(len(path), 0, -1):
            found = self._find(self.positions, path[:end])
            if found is not None:
                return Position(self.file, *found)
        return Position(self.file, 1, 1)

    def key_pos(self, path: DocPath) -> Position:
        """Start of the key of the last mapping step in `path` (falls back to `pos`)."""
        path = tuple(path)
        found = self._find(self.key_positions, path) if path else None
        return Position(self.file, *found) if found is not None else self.pos(path)

    def text_pos(self, path: DocPath, line: int, col: int = 1) -> Position:
        """Position of (line, col), 1-based, inside the value of the string scalar at `path`.

        Exact for block scalars (| and >); best effort for plain and quoted ones.
        """
        path = tuple(path)
        real = self._real_path(path)
        start = self.positions.get(real) if real is not None else None
        value = _value_at(self.data, path)
        if real is None or start is None or not isinstance(value, str):
            return self.pos(path)
        line, col = max(line, 1), max(col, 1)
        style = self.styles.get(real, "")
        lines = split_lines(self.text)
        if style in ("|", ">"):
            found = block_scalar_pos(lines, start, value, style == ">", line, col)
        else:
            found = flow_scalar_pos(lines, start, bool(style), line, col)
        return Position(self.file, *found)

    def _find(self, table: dict[DocPath, Any], path: DocPath) -> Any:
        """Look `path` up in `table`, following alias nodes into their anchors."""
        for _ in range(len(self.aliases) + 1):
            hit = table.get(path)
            if hit is not None or not self.aliases:
                return hit
            through = self._through_alias(path)
            if through is None:
                return None
            path = through
        return None

    def _real_path(self, path: DocPath) -> DocPath | None:
        """The path of the node in the source text (through aliases), or None."""
        for _ in range(len(self.aliases) + 1):
            inner = self._through_alias(path)
            if inner is None:
                return path
            path = inner
        return None

    def _through_alias(self, path: DocPath) -> DocPath | None:
        """`path` with its longest alias prefix replaced by the anchor's path; None when no prefix is an alias."""
        for cut in range(len(path), 0, -1):
            target = self.aliases.get(path[:cut])
            if target is not None:
                return target + path[cut:]
        return None


def _value_at(data: Any, path: DocPath) -> Any:
    for step in path:
        try:
            data = data[step]
        except (KeyError, IndexError, TypeError):
            return None
    return data


def load_text(source: str | bytes, file: str, limits: LoadLimits = DEFAULT_LIMITS) -> tuple[Document | None, list[Diagnostic]]:
    """Load one YAML document from text or raw bytes; never raises for bad input."""
    return _load(source, file, limits, "auto")


def load_file(
    path: os.PathLike[str] | str, file: str | None = None, limits: LoadLimits = DEFAULT_LIMITS
) -> tuple[Document | None, list[Diagnostic]]:
    """Read and load one YAML file; `file` is the display path (default: `path`, posix)."""
    display = file if file is not None else pathlib.PurePath(path).as_posix()
    raw = read_bytes(path, limits.max_file_bytes)
    if isinstance(raw, tuple):
        code, message = raw
        return None, [Diagnostic.at(Position(display, 0, 0), code, message)]
    return _load(raw, display, limits, "auto")


def _load(source: str | bytes, file: str, limits: LoadLimits, backend: str) -> tuple[Document | None, list[Diagnostic]]:
    """`load_text` with a choice of parser ("auto", "c" or "python"; tests use both)."""

    def fail(code: str, pos: _Pos, message: str, hint: str | None = None) -> tuple[None, list[Diagnostic]]:
        return None, [Diagnostic.at(Position(file, *pos), code, message, hint=hint)]

    if isinstance(source, str):
        if len(source) > limits.max_file_bytes:  # at least as many bytes as characters
            return fail(
                "PM105",
                (0, 0),
                f"the file is larger than the limit of {limits.max_file_bytes:,} bytes",
            )
        try:
            raw = source.encode("utf-8")
        except UnicodeEncodeError as err:
            return fail(
                "PM102",
                line_col(source, err.start),
                "the text holds a lone surrogate, which is not UTF-8",
            )
    else:
        raw = bytes(source)
    if len(raw) > limits.max_file_bytes:
        return fail(
            "PM105",
            (0, 0),
            f"the file is {len(raw):,} bytes; the limit is {limits.max_file_bytes:,} bytes",
        )
    digest = hashlib.sha256(raw).hexdigest()
    text = decode(raw)
    if isinstance(text, tuple):
        return fail("PM102", *text)
    problem = text_problem(text, limits.max_line_chars)
    if problem is not None:
        return fail(*problem)

    builder, fatal = _build(text, backend, limits)
    if fatal is not None and fatal[0] == "PM101" and backend != "python":
        # libyaml's scanner reads ahead of the events it hands out and, from
        # PyYAML 6.0.4 on, stops at its own flow-nesting limit before the
        # builder sees a level past ours. PyYAML's Python parser yields the
        # same events; it decides which problem comes first, so the answer is
        # the same whichever PyYAML (and libyaml) is installed.
        builder, fatal = _build(text, "python", limits)
    problems = list(builder.out.problems)
    if fatal is not None:
        problems.append(fatal)
    if problems:
        return None, [Diagnostic.at(Position(file, *pos), code, msg, hint=hint) for code, pos, msg, hint in problems]
    return Document(
        file,
        builder.out.data,
        text,
        digest,
        builder.out.positions,
        builder.out.key_positions,
        builder.out.styles,
        builder.out.aliases,
    ), []


MAX_INVISIBLE_REPORTED = 20  # per file: a file full of them says so twenty times, not ten thousand


def invisible_characters(doc: Document) -> list[Diagnostic]:
    """PM113 warnings for characters a reviewer cannot see in the file (bidi controls,
    zero-width characters, soft hyphens, a BOM inside the text, tag characters)."""
    out: list[Diagnostic] = []
    for match in INVISIBLE.finditer(doc.text):
        if len(out) == MAX_INVISIBLE_REPORTED:
            break
        line, col = line_col(doc.text, match.start())
        out.append(
            Diagnostic.at(
                Position(doc.file, line, col),
                "PM113",
                f"the file holds {describe(match.group())}, which is invisible or reorders the text around it: "
                "a reviewer does not see what the model reads",
                hint="delete it, or write it as an escape in a double-quoted string (\\u202E) if it is meant",
            )
        )
    return out


def _build(text: str, backend: str, limits: LoadLimits) -> tuple[Builder, tuple[str, _Pos, str, str | None] | None]:
    """Run the builder over `text`; the first fatal problem, if any, beside it."""
    builder = Builder(
        make_parser(text, backend),
        max_depth=limits.max_depth,
        max_aliases=limits.max_aliases,
        max_nodes=limits.max_nodes,
        source=text,
    )
    try:
        builder.run()
    except Refusal as refusal:
        return builder, refusal.problem
    except yaml.MarkedYAMLError as err:
        return builder, ("PM101", *syntax_problem(err, text))
    except yaml.YAMLError as err:  # reader errors are caught by text_problem; kept as a guard
        return builder, ("PM101", (1, 1), str(err).replace("\n", " "), None)
    return builder, None


# Render-state files: bigger and deeper than templates (as deep as the runtime accepts), same safety.
_STATE_LIMITS = dict(max_line_chars=1 << 62, max_depth=128, max_aliases=1_000, max_nodes=2_000_000)


def load_data_file(path: os.PathLike[str] | str, *, max_bytes: int = 8_388_608) -> Any:
    """Read a render-state file (.json, .yaml or .yml) into plain data.

    Raises `StateFileError` with code PM812 when the file exceeds `max_bytes`,
    and PM813 when it cannot be read or parsed (the message holds file:line:col).
    """
    display = pathlib.PurePath(path).as_posix()
    suffix = pathlib.PurePath(path).suffix.lower()
    if suffix not in (".json", ".yaml", ".yml"):
        raise StateFileError(f"{display}: a state file must end in .json, .yaml or .yml", code="PM813")
    raw = read_bytes(path, max_bytes)
    if isinstance(raw, tuple):
        code, message = raw
        raise StateFileError(f"{display}: {message}", code="PM812" if code == "PM105" else "PM813")
    return load_data_bytes(raw, display, json_text=suffix == ".json", max_bytes=max_bytes)


def load_data_bytes(raw: bytes, display: str, *, json_text: bool, max_bytes: int = 8_388_608) -> Any:
    """Render-state data from bytes already read (JSON when `json_text`, else YAML);
    errors are `StateFileError` positioned in `display`."""
    if json_text:
        return _load_json(raw, display)
    doc, diags = load_text(raw, display, LoadLimits(max_file_bytes=max_bytes, **_STATE_LIMITS))
    if doc is None:
        first = diags[0]
        more = f" (and {len(diags) - 1} more problems)" if len(diags) > 1 else ""
        raise StateFileError(f"{first.position}: {first.message}{more}", code="PM813", hint=first.hint)
    return doc.data


def _load_json(raw: bytes, display: str) -> Any:
    text = decode(raw)
    if isinstance(text, tuple):
        (line, col), message, _hint = text
        raise StateFileError(f"{display}:{line}:{col}: {message}", code="PM813")

    def pairs(items: list[tuple[str, Any]]) -> dict[str, Any]:
        result: dict[str, Any] = {}
        for key, value in items:
            if key in result:
                raise ValueError(f"duplicate key '{key}'")
            result[key] = value
        return result

    def constant(name: str) -> Any:
        raise ValueError(f"{name} is not valid JSON")

    try:
        return json.loads(text, object_pairs_hook=pairs, parse_constant=constant)
    except json.JSONDecodeError as err:
        raise StateFileError(f"{display}:{err.lineno}:{err.colno}: {err.msg}", code="PM813") from None
    except ValueError as err:
        line, col = _json_problem_at(text)
        raise StateFileError(f"{display}:{line}:{col}: {err}", code="PM813") from None
    except RecursionError:
        raise StateFileError(f"{display}:1:1: the JSON is nested too deeply", code="PM813") from None


_JSON_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|NaN|-?Infinity|[{}:,\[\]]')


def _json_problem_at(text: str) -> tuple[int, int]:
    """Line and column (1-based) of the first `NaN`/`Infinity` outside strings or
    the first key repeated within one object, in JSON text that parsed otherwise."""
    keys: list[set[str] | None] = []
    last_string: tuple[str, int] | None = None
    for m in _JSON_TOKEN.finditer(text):
        tok = m.group()
        if tok in ("NaN", "Infinity", "-Infinity"):
            return _line_col(text, m.start())
        if tok == "{":
            keys.append(set())
        elif tok == "[":
            keys.append(None)
        elif tok in "}]":
            if keys:
                keys.pop()
        elif tok == ":" and last_string is not None and keys and keys[-1] is not None:
            key, start = last_string
            if key in keys[-1]:
                return _line_col(text, start)
            keys[-1].add(key)
        last_string = (json.loads(tok), m.start()) if tok.startswith('"') else None
    return 1, 1


def _line_col(text: str, offset: int) -> tuple[int, int]:
    line = text.count("\n", 0, offset) + 1
    return line, offset - (text.rfind("\n", 0, offset) + 1) + 1
