"""Map a (line, col) inside a YAML string value back to the source file.

A Jinja error says "line 3" of a template; the template is the value of a
YAML scalar, usually a block scalar (`|` or `>`). These helpers turn that
value-relative position into a file position. Literal block scalars map line
for line; folded ones are aligned line by line against the source; plain and
quoted scalars are best effort (their lines are folded and unescaped).
"""

from __future__ import annotations

import re

# YAML line breaks as PyYAML and libyaml count them (YAML 1.1 includes NEL, LS, PS).
_BREAK = re.compile("\r\n|[\r\n\x85\u2028\u2029]")

Pos = tuple[int, int]


def split_lines(text: str) -> list[str]:
    """Source lines as the YAML parser numbers them (0-based index = mark.line)."""
    return _BREAK.split(text)


def _leading_spaces(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


def header_line(lines: list[str], start: Pos) -> int:
    """0-based index of the line holding a block scalar's `|`/`>` indicator.

    `start` is the node's 1-based start, which may be at a tag or anchor that
    precedes the indicator (possibly on an earlier line).
    """
    row, col = start[0] - 1, start[1] - 1
    while row < len(lines):
        line = lines[row]
        while col < len(line):
            char = line[col]
            if char in "|>":
                return row
            if char in " \t":
                col += 1
            elif char in "!&":  # a tag or anchor: skip to the next blank
                while col < len(line) and line[col] not in " \t":
                    col += 1
            elif char == "#":
                break
            else:
                return start[0] - 1
        row, col = row + 1, 0
    return start[0] - 1


def block_scalar_pos(lines: list[str], start: Pos, value: str, folded: bool, line: int, col: int) -> Pos:
    """File position of (line, col) in the value of a block scalar starting at `start`."""
    first = header_line(lines, start) + 1  # 0-based index of the value's first line
    value_lines = value.split("\n")
    indent = _indent(lines, first, value_lines)
    if folded:
        found = _folded_pos(lines, first, indent, value_lines, line, col)
        if found is not None:
            return found
    return first + line, indent + col


def _indent(lines: list[str], first: int, value_lines: list[str]) -> int:
    """Content indentation: source leading spaces minus the value's, on the first text line."""
    value_first = next((v for v in value_lines if v.strip(" ")), None)
    source_first = next((s for s in lines[first:] if s.strip(" \t")), None)
    if value_first is None or source_first is None:
        return 0
    return max(_leading_spaces(source_first) - _leading_spaces(value_first), 0)


def _folded_pos(lines: list[str], first: int, indent: int, value_lines: list[str], line: int, col: int) -> Pos | None:
    """Align value lines of a folded scalar with source lines; None if they do not align."""
    row = first  # next unconsumed source line
    for number, value_line in enumerate(value_lines, 1):
        segments: list[tuple[int, int]] = []  # (offset in value line, source row)
        if not value_line:
            segments.append((0, row))
            row += 1
        else:
            offset, rest = 0, value_line
            while rest:
                if row >= len(lines):
                    return None
                source = lines[row][indent:]
                if not source.strip(" "):
                    row += 1
                    continue
                if not rest.startswith(source):
                    return None
                segments.append((offset, row))
                offset, rest, row = offset + len(source), rest[len(source) :], row + 1
                if rest.startswith(" "):  # a folded line break
                    offset, rest = offset + 1, rest[1:]
        if number == line:
            seg_offset, seg_row = segments[0]
            for candidate in segments:
                if candidate[0] <= col - 1:
                    seg_offset, seg_row = candidate
            return seg_row + 1, indent + col - seg_offset
    return None


def flow_scalar_pos(lines: list[str], start: Pos, quoted: bool, line: int, col: int) -> Pos:
    """Best-effort file position of (line, col) in a plain or quoted scalar."""
    if line == 1:
        return start[0], start[1] + int(quoted) + col - 1
    row = start[0] - 1 + line - 1
    lead = _leading_spaces(lines[row]) if 0 <= row < len(lines) else 0
    return row + 1, lead + col
