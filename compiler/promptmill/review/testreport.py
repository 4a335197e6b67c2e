"""`promptmill test`'s result as text, JSON, GitHub annotations or JUnit XML (pure functions to text).

- `text`: a unified diff per changed case, each failed render with its state file, each damaged
  or blocked snapshot with what is wrong, a summary line;
- `json`: one object, version 1: every case with its status, diff lines and error;
- `github`: an `::error` workflow command per case that is not `pass`, on the snapshot file
  (the state file for a failed render), then the text report;
- `junit`: JUnit XML, one `<testcase>` per case in one `<testsuite>`; a changed snapshot is a
  `<failure>` holding the diff, a failed render or a damaged or blocked snapshot an `<error>`.

Whatever a snapshot or a file name holds, the output stays valid: control, invisible and
reordering characters (and lone surrogates) are shown as escapes (`\x01`, `\u202e`,
`core.showtext.visible`) in text, annotations and XML, where XML 1.0 forbids most C0
controls even as character references; the annotations' own `%`, CR and LF rules apply
after that; JSON escapes them itself.
"""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from collections.abc import Callable

from ..core.showtext import one_line, visible
from . import TEST_FORMATS
from .snapshots import REPAIRABLE, STATUSES, Outcome, SnapshotCheck

_ESCAPE_DATA = {"%": "%25", "\r": "%0D", "\n": "%0A"}
_SURROGATE = re.compile("[\ud800-\udfff]")
_WORDS = {
    "pass": "passed",
    "fail": "changed",
    "new": "new",
    "obsolete": "obsolete",
    "damaged": "damaged",
    "blocked": "blocked",
    "error": "failed to render",
}
_TITLES = {
    "fail": "snapshot changed",
    "new": "snapshot missing",
    "obsolete": "snapshot obsolete",
    "damaged": "snapshot damaged",
    "blocked": "snapshot blocked",
}


def error_text(o: Outcome) -> str:
    """A failed render: `STATE: error[CODE] message` (the message names the state path); a damaged
    or blocked snapshot: `error[CODE] message` (the message names the snapshot file)."""
    assert o.error is not None
    hint = f"\n    hint: {o.error.hint}" if o.error.hint else ""
    if o.status in ("damaged", "blocked"):
        return f"error[{o.error.code}] {o.error.message}{hint}"
    return f"{one_line(o.state)}: error[{o.error.code}] role {o.role}: {o.error.message}{hint}"


def summary_line(result: SnapshotCheck) -> str:
    """`11 snapshots: 10 passed, 1 changed` and so on (only the counts that are not zero)."""
    parts = [f"{result.count(status)} {_WORDS[status]}" for status in STATUSES if result.count(status)]
    total = len(result.outcomes)
    line = f"{total} snapshot{'' if total == 1 else 's'} in {result.folder}/: " + (", ".join(parts) or "none")
    if result.updated:
        line += f"; updated {len(result.updated)} file{'' if len(result.updated) == 1 else 's'}"
    return line


def _hint(result: SnapshotCheck) -> list[str]:
    out = []
    if any(o.status in REPAIRABLE for o in result.outcomes):
        out.append("run `promptmill test --update` (or `promptmill snapshot`) to accept these changes, and commit them")
    if result.count("blocked"):
        out.append("`promptmill test --update` does not touch a blocked snapshot's file: move it aside first")
    return out


def text(result: SnapshotCheck) -> str:
    lines: list[str] = []
    for o in result.outcomes:
        if o.status == "error":
            lines.append(error_text(o))
        elif o.status != "pass":
            lines.append(f"{o.status}: {one_line(o.name)}")
            if o.error is not None:
                lines.append("  " + error_text(o))
            lines.extend(o.diff)
            lines.append("")
    lines.append(summary_line(result))
    lines += _hint(result)
    return "".join(visible(line) + "\n" for line in lines)


def as_json(result: SnapshotCheck) -> str:
    cases = []
    for o in result.outcomes:
        entry: dict = {"name": o.name, "role": o.role or None, "state": o.state or None, "snapshot": o.file, "status": o.status}
        entry["diff"] = list(o.diff)
        entry["error"] = {"code": o.error.code, "message": o.error.message, "hint": o.error.hint} if o.error is not None else None
        cases.append(entry)
    summary = {s: result.count(s) for s in STATUSES}
    payload = {"version": 1, "folder": result.folder, "ok": result.ok, "cases": cases, "summary": summary, "updated": list(result.updated)}
    out = json.dumps(payload, indent=2, ensure_ascii=False) + "\n"
    return _SURROGATE.sub(lambda m: f"\\u{ord(m[0]):04x}", out)  # a lone surrogate cannot be written as UTF-8


def _data(s: str) -> str:
    return "".join(_ESCAPE_DATA.get(c, c) for c in visible(s))


def _prop(s: str) -> str:
    return _data(s).replace(":", "%3A").replace(",", "%2C")


def github(result: SnapshotCheck) -> str:
    lines = []
    for o in result.outcomes:
        if o.status == "pass":
            continue
        if o.status == "error":
            assert o.error is not None
            title = f"{o.error.code} snapshot render failed"
            lines.append(f"::error file={_prop(o.state)},title={_prop(title)}::{_data(error_text(o))}")
        else:
            title = _TITLES[o.status] + (f" ({o.error.code})" if o.error is not None else "")
            said = [o.name] + ([error_text(o)] if o.error is not None else []) + list(o.diff)
            lines.append(f"::error file={_prop(o.file)},title={_prop(title)}::{_data(chr(10).join(said))}")
    return "".join(line + "\n" for line in lines) + text(result)


def junit(result: SnapshotCheck) -> str:
    x = visible  # XML 1.0 forbids most C0 controls even as references: every text and attribute is shown visible
    suite = ET.Element(
        "testsuite",
        {
            "name": "promptmill snapshots",
            "tests": str(len(result.outcomes)),
            "failures": str(sum(o.status in ("fail", "new", "obsolete") for o in result.outcomes)),
            "errors": str(sum(o.status in ("error", "damaged", "blocked") for o in result.outcomes)),
            "skipped": "0",
        },
    )
    for o in result.outcomes:
        case = ET.SubElement(
            suite, "testcase", {"classname": x(f"snapshots.{o.role}" if o.role else "snapshots"), "name": x(o.name), "file": x(o.file)}
        )
        if o.error is not None:
            node = ET.SubElement(case, "error", {"type": o.error.code, "message": x((o.error.message.splitlines() or [""])[0])})
            node.text = x("\n".join([error_text(o), *o.diff]))
        elif o.status != "pass":
            node = ET.SubElement(case, "failure", {"type": o.status, "message": x(f"snapshot {o.file}: {o.status}")})
            node.text = x("\n".join(o.diff))
    root = ET.Element("testsuites", {"name": "promptmill test"})
    root.append(suite)
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


# format -> writer, for each of TEST_FORMATS (the CLI's --format choices)
WRITERS: dict[str, Callable[[SnapshotCheck], str]] = {"text": text, "json": as_json, "github": github, "junit": junit}
assert tuple(WRITERS) == TEST_FORMATS


def format_check(result: SnapshotCheck, fmt: str = "text") -> str:
    """`result` as `fmt` (one of TEST_FORMATS)."""
    if fmt not in WRITERS:
        raise ValueError(f"unknown format {fmt!r}; expected one of {', '.join(TEST_FORMATS)}")
    return WRITERS[fmt](result)
