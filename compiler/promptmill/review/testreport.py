"""`promptmill test`'s result as text, JSON, GitHub annotations or JUnit XML (pure functions to text).

- `text`: a unified diff per changed case, each failed render with its state file, a summary line;
- `json`: one object, version 1: every case with its status, diff lines and error;
- `github`: an `::error` workflow command per case that is not `pass`, on the snapshot file
  (the state file for a failed render), then the text report;
- `junit`: JUnit XML, one `<testcase>` per case in one `<testsuite>`; a changed snapshot is a
  `<failure>` holding the diff, a failed render an `<error>`.
"""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from collections.abc import Callable

from . import TEST_FORMATS
from .snapshots import Outcome, SnapshotCheck

_ESCAPE_DATA = {"%": "%25", "\r": "%0D", "\n": "%0A"}


def error_text(o: Outcome) -> str:
    """A failed render: `STATE: error[CODE] message` (the message names the state path)."""
    assert o.error is not None
    return f"{o.state}: error[{o.error.code}] role {o.role}: {o.error.message}" + (f"\n    hint: {o.error.hint}" if o.error.hint else "")


def summary_line(result: SnapshotCheck) -> str:
    """`11 snapshots: 10 passed, 1 changed` and so on (only the counts that are not zero)."""
    words = (("pass", "passed"), ("fail", "changed"), ("new", "new"), ("obsolete", "obsolete"), ("error", "failed to render"))
    parts = [f"{result.count(status)} {word}" for status, word in words if result.count(status)]
    total = len(result.outcomes)
    line = f"{total} snapshot{'' if total == 1 else 's'} in {result.folder}/: " + (", ".join(parts) or "none")
    if result.updated:
        line += f"; updated {len(result.updated)} file{'' if len(result.updated) == 1 else 's'}"
    return line


def _hint(result: SnapshotCheck) -> list[str]:
    if any(o.status in ("fail", "new", "obsolete") for o in result.outcomes):
        return ["run `promptmill test --update` (or `promptmill snapshot`) to accept these changes, and commit them"]
    return []


def text(result: SnapshotCheck) -> str:
    lines: list[str] = []
    for o in result.outcomes:
        if o.status == "error":
            lines.append(error_text(o))
        elif o.status != "pass":
            lines.append(f"{o.status}: {o.name}")
            lines.extend(o.diff)
            lines.append("")
    lines.append(summary_line(result))
    lines += _hint(result)
    return "\n".join(lines) + "\n"


def as_json(result: SnapshotCheck) -> str:
    cases = []
    for o in result.outcomes:
        entry: dict = {"name": o.name, "role": o.role or None, "state": o.state or None, "snapshot": o.file, "status": o.status}
        entry["diff"] = list(o.diff)
        entry["error"] = {"code": o.error.code, "message": o.error.message, "hint": o.error.hint} if o.error is not None else None
        cases.append(entry)
    summary = {s: result.count(s) for s in ("pass", "fail", "new", "obsolete", "error")}
    payload = {"version": 1, "folder": result.folder, "ok": result.ok, "cases": cases, "summary": summary, "updated": list(result.updated)}
    return json.dumps(payload, indent=2, ensure_ascii=False) + "\n"


def _data(s: str) -> str:
    return "".join(_ESCAPE_DATA.get(c, c) for c in s)


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
            title = {"fail": "snapshot changed", "new": "snapshot missing", "obsolete": "snapshot obsolete"}[o.status]
            lines.append(f"::error file={_prop(o.file)},title={_prop(title)}::{_data(o.name + chr(10) + chr(10).join(o.diff))}")
    return "".join(line + "\n" for line in lines) + text(result)


def junit(result: SnapshotCheck) -> str:
    suite = ET.Element(
        "testsuite",
        {
            "name": "promptmill snapshots",
            "tests": str(len(result.outcomes)),
            "failures": str(sum(o.status in ("fail", "new", "obsolete") for o in result.outcomes)),
            "errors": str(result.count("error")),
            "skipped": "0",
        },
    )
    for o in result.outcomes:
        case = ET.SubElement(
            suite, "testcase", {"classname": f"snapshots.{o.role}" if o.role else "snapshots", "name": o.name, "file": o.file}
        )
        if o.status == "error":
            assert o.error is not None
            node = ET.SubElement(case, "error", {"type": o.error.code, "message": o.error.message.splitlines()[0]})
            node.text = error_text(o)
        elif o.status != "pass":
            node = ET.SubElement(case, "failure", {"type": o.status, "message": f"snapshot {o.file}: {o.status}"})
            node.text = "\n".join(o.diff)
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
