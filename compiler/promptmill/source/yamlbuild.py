"""Plain data with source positions, built from a stream of YAML parse events.

The loader parses with libyaml when it is available (PyYAML's pure-Python
parser otherwise) but never lets PyYAML compose or construct: its composers
recurse once per nesting level (the C one overflows the C stack on deep input)
and its constructors follow YAML 1.1. `Builder` consumes parse events in one
loop with an explicit stack, and on the way

- resolves plain scalars by the YAML 1.2 core schema (true/false, null/~,
  decimal/0o/0x integers, decimal floats; everything else stays a string);
- refuses tags other than the standard ones, merge keys, non-string keys,
  duplicate keys and non-finite floats;
- counts nesting depth, alias nodes and nodes after alias expansion, and stops
  at the first limit it passes, before doing the work the limit protects;
- records the position of every value node and every mapping key.

Positions are 1-based `(line, col)` pairs keyed by the path of the node.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from yaml import Mark, MarkedYAMLError, reader, scanner
from yaml import parser as yaml_parser
from yaml.events import (
    AliasEvent,
    DocumentEndEvent,
    DocumentStartEvent,
    MappingEndEvent,
    MappingStartEvent,
    ScalarEvent,
    SequenceEndEvent,
    SequenceStartEvent,
    StreamEndEvent,
)

try:
    from yaml._yaml import CParser
except ImportError:  # pragma: no cover - depends on how PyYAML was built
    CParser = None  # type: ignore[assignment,misc]

from ..core.typenames import phrase
from .scalartext import split_lines
from .surrogates import escape_position, pair_up
from .surrogates import message as surrogate_message
from .yamlscalars import STD, ScalarProblem, resolve_plain, resolve_tagged, tag_problem

Path = tuple[Any, ...]
Pos = tuple[int, int]


class Refusal(Exception):
    """Stop building: a problem after which the rest of the file is not worth reading."""

    def __init__(self, code: str, pos: Pos, message: str, hint: str | None = None):
        super().__init__(message)
        self.problem = (code, pos, message, hint)


class _PyParser(reader.Reader, scanner.Scanner, yaml_parser.Parser):
    """PyYAML's pure-Python reader, scanner and parser, without composer or constructor."""

    def __init__(self, text: str):
        reader.Reader.__init__(self, text)
        scanner.Scanner.__init__(self)
        yaml_parser.Parser.__init__(self)


def make_parser(text: str, backend: str = "auto") -> Any:
    """An event parser over `text`: libyaml ("c") or pure Python ("python")."""
    if backend == "c" or (backend == "auto" and CParser is not None):
        if CParser is None:  # pragma: no cover
            raise RuntimeError("libyaml is not available")
        return CParser(text)
    return _PyParser(text)


@dataclass
class _Frame:
    container: Any
    path: Path
    is_map: bool
    start: Pos
    anchor: str | None
    first_node: int
    key: Any = None
    has_key: bool = False
    height: int = 1


class _BadKey:
    """A stand-in for a refused key, so the value under it still parses and is dropped."""


@dataclass
class Built:
    """What one document produced: data, position tables and non-fatal problems."""

    data: Any = None
    positions: dict[Path, Pos] = field(default_factory=dict)
    key_positions: dict[Path, Pos] = field(default_factory=dict)
    styles: dict[Path, str] = field(default_factory=dict)
    aliases: dict[Path, Path] = field(default_factory=dict)
    problems: list[tuple[str, Pos, str, str | None]] = field(default_factory=list)


class Builder:
    """Consumes the events of one YAML stream; `run()` fills `self.out` or raises `Refusal`."""

    def __init__(self, parser: Any, *, max_depth: int, max_aliases: int, max_nodes: int, source: str = ""):
        self.get_event = parser.get_event
        self.source = source  # the text parsed: positions of problems inside a scalar
        self.max_depth, self.max_aliases, self.max_nodes = max_depth, max_aliases, max_nodes
        self.out = Built()
        self.stack: list[_Frame] = []
        self.anchors: dict[str, tuple[Any, int, Path | None, int] | _Frame] = {}
        self.nodes = 0
        self.alias_count = 0
        self.done = False

    def run(self) -> Built:
        get = self.get_event
        get()  # StreamStartEvent
        event = get()
        if type(event) is StreamEndEvent:
            raise Refusal(
                "PM103",
                (1, 1),
                "the file holds no YAML document (it is empty or only comments)",
                "write a mapping such as 'kind: role'",
            )
        self._document()
        event = get()
        if type(event) is DocumentStartEvent:
            mark = event.start_mark
            assert mark is not None  # the parser marks every event
            raise Refusal(
                "PM104",
                (mark.line + 1, mark.column + 1),
                "a second YAML document starts here; a file holds exactly one document",
                "remove the '---' line, or split the documents into separate files",
            )
        return self.out

    def _document(self) -> None:
        get = self.get_event
        stack = self.stack
        positions, styles = self.out.positions, self.out.styles
        while True:
            event = get()
            kind = type(event)
            if kind is ScalarEvent:
                mark = event.start_mark
                pos = (mark.line + 1, mark.column + 1)
                self._count(1, pos)
                value = self._scalar(event, pos)
                if event.anchor is not None:
                    self.anchors[event.anchor] = (value, 1, self._value_path(), 0)
                path = self._attach(value, pos, event)
                if path is not None:
                    positions[path] = pos
                    if event.style and type(value) is str:
                        styles[path] = event.style
            elif kind is MappingStartEvent or kind is SequenceStartEvent:
                self._open(event, kind is MappingStartEvent)
            elif kind is MappingEndEvent or kind is SequenceEndEvent:
                frame = stack.pop()
                if frame.anchor is not None and self.anchors.get(frame.anchor) is frame:
                    size = self.nodes - frame.first_node
                    self.anchors[frame.anchor] = (frame.container, size, frame.path, frame.height)
                if stack:
                    parent = stack[-1]
                    if frame.height + 1 > parent.height:
                        parent.height = frame.height + 1
                self._attach(frame.container, frame.start, None)
            elif kind is AliasEvent:
                self._alias(event)
            elif kind is DocumentEndEvent:
                return

    # -- nodes --------------------------------------------------------------

    def _value_path(self) -> Path | None:
        """The path of the node about to start, or None when it is a mapping key."""
        if not self.stack:
            return ()
        top = self.stack[-1]
        if top.is_map:
            return top.path + (top.key,) if top.has_key else None
        return top.path + (len(top.container),)

    def _open(self, event: Any, is_map: bool) -> None:
        mark = event.start_mark
        pos = (mark.line + 1, mark.column + 1)
        self._count(1, pos)
        if len(self.stack) >= self.max_depth:
            raise Refusal(
                "PM108",
                pos,
                f"the YAML nesting is deeper than {self.max_depth} levels of mappings and lists",
                "flatten the structure",
            )
        tag = event.tag
        if tag is not None and tag != "!" and tag != STD + ("map" if is_map else "seq"):
            self.out.problems.append(("PM109", pos, *tag_problem(tag)))
        path = self._value_path()
        if path is None:  # a collection used as a mapping key; refused when it closes
            path = self.stack[-1].path + (_BadKey(),)
        else:
            self.out.positions[path] = pos
        frame = _Frame({} if is_map else [], path, is_map, pos, event.anchor, self.nodes - 1)
        if event.anchor is not None:
            self.anchors[event.anchor] = frame  # open: an alias to it now would recurse
        self.stack.append(frame)

    def _scalar(self, event: Any, pos: Pos) -> Any:
        text = event.value
        if not text.isascii():
            text, lone = pair_up(text)
            if lone is not None:  # an escape wrote half a surrogate pair: PM102 there, U+FFFD in the value
                end = event.end_mark
                where = escape_position(self.source, pos, (end.line + 1, end.column + 1), lone) if self.source else pos
                self.out.problems.append(("PM102", where, *surrogate_message(lone)))
        try:
            if event.tag is not None:
                return resolve_tagged(event.tag, text)
            if event.style:  # quoted or block scalars are strings
                return text
            return resolve_plain(text)
        except ScalarProblem as problem:
            self.out.problems.append((problem.code, pos, problem.message, problem.hint))
            return text

    def _alias(self, event: Any) -> None:
        mark = event.start_mark
        pos = (mark.line + 1, mark.column + 1)
        name = event.anchor
        self.alias_count += 1
        if self.alias_count > self.max_aliases:
            raise Refusal(
                "PM107",
                pos,
                f"the file uses more than {self.max_aliases} YAML aliases (*name); so many suggest an alias-expansion bomb",
                "write the values out, or share text with fragments",
            )
        entry = self.anchors.get(name)
        if entry is None:
            raise Refusal(
                "PM101",
                pos,
                f"the alias *{name} refers to no anchor; define '&{name}' before using it",
            )
        if isinstance(entry, _Frame):
            raise Refusal(
                "PM111",
                pos,
                f"the alias *{name} refers to a node that contains it; it would expand forever",
            )
        value, size, anchor_path, height = entry
        self._count(size, pos)
        if height and len(self.stack) + height > self.max_depth:
            raise Refusal(
                "PM108",
                pos,
                f"expanding the alias *{name} nests the data deeper than {self.max_depth} levels",
                "flatten the structure",
            )
        if height and self.stack and height + 1 > self.stack[-1].height:
            self.stack[-1].height = height + 1
        path = self._attach(_copy(value) if height else value, pos, None, alias=name)
        if path is not None:
            self.out.positions[path] = pos
            if anchor_path is not None:
                self.out.aliases[path] = anchor_path

    def _count(self, added: int, pos: Pos) -> None:
        self.nodes += added
        if self.nodes > self.max_nodes:
            raise Refusal(
                "PM111",
                pos,
                f"the document has more than {self.max_nodes} nodes after expanding aliases",
                "split the file, or write out fewer aliased values",
            )

    def _attach(self, value: Any, pos: Pos, event: Any, alias: str | None = None) -> Path | None:
        """Put a finished node in its parent; return its path (None for keys)."""
        stack = self.stack
        if not stack:
            self.out.data = value
            return ()
        top = stack[-1]
        if not top.is_map:
            path = top.path + (len(top.container),)
            top.container.append(value)
            return path
        if top.has_key:
            path = top.path + (top.key,)
            if type(top.key) is not _BadKey:
                top.container[top.key] = value
            top.has_key = False
            return path
        top.key = self._key(top, value, pos, event, alias)
        top.has_key = True
        return None

    def _key(self, top: _Frame, key: Any, pos: Pos, event: Any, alias: str | None) -> Any:
        problems = self.out.problems
        if type(key) is not str:
            hint = None
            if alias is not None:
                shown = f"*{alias}, an alias to {phrase(key)}"
            elif event is None:
                shown = phrase(key)
            elif event.value:
                shown = f"'{event.value}', which YAML reads as {phrase(key)}"
                hint = f'quote the key to make it a string: "{event.value}":'
            else:
                shown = "empty (null)"
            problems.append(("PM205", pos, f"mapping keys must be strings; this key is {shown}", hint))
            return _BadKey()
        if key == "<<" and event is not None and not event.style and event.tag is None:
            problems.append(("PM109", pos, *tag_problem(STD + "merge")))
            return _BadKey()
        key_path = top.path + (key,)
        first = self.out.key_positions.get(key_path)
        if first is not None:
            problems.append(
                (
                    "PM106",
                    pos,
                    f"duplicate key '{key}': it is already defined at line {first[0]}, column {first[1]}",
                    "remove or rename one of the two entries",
                )
            )
            return _BadKey()
        self.out.key_positions[key_path] = pos
        return key


def _copy(value: Any) -> Any:
    """A deep copy of plain data, without recursion (aliases expand to copies)."""
    root: Any = {} if type(value) is dict else []
    work = [(value, root)]
    while work:
        source, target = work.pop()
        items = source.items() if type(source) is dict else enumerate(source)
        for key, item in items:
            kind = type(item)
            if kind is dict or kind is list:
                item_copy: Any = {} if kind is dict else []
                work.append((item, item_copy))
                item = item_copy
            if type(target) is dict:
                target[key] = item
            else:
                target.append(item)
    return root


def syntax_problem(err: MarkedYAMLError, text: str) -> tuple[Pos, str, str | None]:
    """Position and wording for a YAML syntax error; the common ones get plainer words."""
    mark = err.problem_mark or err.context_mark
    pos = (mark.line + 1, mark.column + 1) if mark is not None else (1, 1)
    lines = split_lines(text)

    def char_at(m: Mark | None) -> str:
        if m is None or m.line >= len(lines):
            return ""
        return lines[m.line][m.column : m.column + 1]

    problem, context = (err.problem or "").strip(), (err.context or "").strip()
    char = char_at(err.problem_mark)
    if char == "\t" or "tab character" in problem:
        return (
            pos,
            "a tab is used for indentation; YAML does not allow tabs for indentation",
            "indent with spaces",
        )
    if "cannot start any token" in problem:
        return pos, f"the character {char!r} cannot start a YAML value", "quote the value"
    if context.startswith("while scanning a quoted scalar") and err.context_mark is not None:
        quote = char_at(err.context_mark) or '"'
        kind = "double" if quote == '"' else "single"
        opened = f"line {err.context_mark.line + 1}, column {err.context_mark.column + 1}"
        ending = "" if "end of stream" in problem else f" ({problem})"
        hint = 'write a " inside the string as \\"' if quote == '"' else "write a ' inside the string as ''"
        # point at the opening quote: that is where the fix goes
        return (
            (err.context_mark.line + 1, err.context_mark.column + 1),
            f"unclosed {kind}-quoted string: the {quote} at {opened} is never closed{ending}",
            hint,
        )
    if problem.startswith("mapping values are not allowed"):
        prefix = lines[err.problem_mark.line][: err.problem_mark.column] if err.problem_mark and pos[0] <= len(lines) else ""
        key = prefix.strip()
        if prefix[:1] == " " and key and ": " not in key and not key.startswith(("-", "#", "?")):
            # the first key on an indented line: YAML read the line as more of the value above
            col = len(prefix) - len(prefix.lstrip(" "))
            return (
                (pos[0], col + 1),
                f"bad indentation: this line starts at column {col + 1}, deeper than the key of the value above it, "
                f"so YAML reads '{key}' as more of that value",
                _indent_hint(lines, pos[0] - 1, "keys"),
            )
        return (
            pos,
            "a ': ' is not allowed inside this plain value",
            "quote the value, or put a nested mapping on its own indented lines",
        )
    if problem.startswith("expected <block end>") and err.problem_mark is not None and err.context_mark is not None:
        return (pos, *_block_end_problem(err.problem_mark, err.context_mark, problem, context, lines))
    message = problem or context or "invalid YAML"
    if context and problem and err.context_mark is not None:
        cm = err.context_mark
        message += f" ({context} at line {cm.line + 1}, column {cm.column + 1})"
    return pos, message, None


def _block_end_problem(pm: Mark, cm: Mark, problem: str, context: str, lines: list[str]) -> tuple[str, str]:
    """Plain words for PyYAML's "expected <block end>, but found ...": a line that does not
    fit the block mapping or list around it (its indentation), or text after a finished value."""
    what = "list" if "collection" in context or "sequence" in context else "mapping"
    opened = f"the {what} that starts at line {cm.line + 1}, column {cm.column + 1}"
    line = lines[pm.line] if pm.line < len(lines) else ""
    if line[: pm.column].strip():  # something finished before it on the same line
        return (
            f"unexpected text at column {pm.column + 1}: the value before it is already complete "
            f"(a quoted string or a [...] or {{...}} ends it), inside {opened}",
            "quote the whole value, or put the rest on a line of its own",
        )
    if pm.column == cm.column and what == "mapping" and problem.endswith("'-'"):
        return (
            f"a list item at the column of the keys of {opened}",
            "a list goes under a key, on lines indented deeper than the key; else remove the '- '",
        )
    if pm.column == cm.column and what == "list":
        return (
            f"this line is not a list item ('- ...') but stands at the column of the items of {opened}",
            "start the line with '- ' to make it an item, or indent it under the item it belongs to",
        )
    return (
        f"bad indentation: this line starts at column {pm.column + 1}, which does not line up with the lines above it (inside {opened})",
        _indent_hint(lines, pm.line, "lines"),
    )


def _indent_hint(lines: list[str], before: int, what: str) -> str:
    """The hint for a line `before` (0-based) indented wrong: the columns of the lines above it could line up with."""
    columns = ", ".join(f"column {col + 1} (like line {no + 1})" for col, no in _enclosing_columns(lines, before))
    return f"YAML nests by indentation: start the line at the column of the {what} it belongs with" + (f": {columns}" if columns else "")


def _enclosing_columns(lines: list[str], before: int, most: int = 4) -> list[tuple[int, int]]:
    """(column, line) of the lines above line `before` that a line there could line up with:
    the line just above, then each line further up that starts further left (0-based)."""
    out: list[tuple[int, int]] = []
    for no in range(min(before, len(lines)) - 1, -1, -1):
        stripped = lines[no].lstrip(" ")
        if not stripped.strip() or stripped.startswith("#"):
            continue
        col = len(lines[no]) - len(stripped)
        if not out or col < out[-1][0]:
            out.append((col, no))
            if col == 0 or len(out) == most:
                break
    return out
