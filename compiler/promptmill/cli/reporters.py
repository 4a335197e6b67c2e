"""Print diagnostics once, at the end, in one of four formats.

- `text`: `file:line:col: severity[CODE] message`, an indented hint, a summary;
- `json`: one object with the diagnostics and a summary (version 1);
- `github`: GitHub Actions workflow commands, which become annotations;
- `sarif`: SARIF 2.1.0 for code-scanning tools.

Output is deterministic: diagnostics are deduplicated and sorted by
`diagnostics.sort_diagnostics`. No click here; the CLI passes a stream.
"""

from __future__ import annotations

import json
import os
import pathlib
import urllib.parse
from collections.abc import Callable, Sequence
from typing import Any, TextIO

from ..core.codes import CODES
from ..core.diagnostics import Diagnostic, sort_diagnostics
from ..core.showtext import one_line, visible

HELP_URI = "https://github.com/promptmill/promptmill/blob/main/docs/errors.md#{anchor}"
INFORMATION_URI = "https://github.com/promptmill/promptmill"
SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"

_COLORS = {"error": "\x1b[1;31m", "warning": "\x1b[1;33m", "info": "\x1b[1;36m"}
_BOLD, _RESET = "\x1b[1m", "\x1b[0m"
_GITHUB_COMMAND = {"error": "error", "warning": "warning", "info": "notice"}
_SARIF_LEVEL = {"error": "error", "warning": "warning", "info": "note"}


def report(
    diagnostics: Sequence[Diagnostic],
    fmt: str,
    stream: TextIO,
    *,
    color: bool = False,
    files_checked: int | None = None,
) -> None:
    """Write `diagnostics` to `stream` in format `fmt` (one of FORMATS)."""
    if fmt not in WRITERS:
        raise ValueError(f"unknown report format {fmt!r}; expected one of {', '.join(FORMATS)}")
    stream.write(WRITERS[fmt](sort_diagnostics(diagnostics), files_checked, color))


def _counts(diags: Sequence[Diagnostic]) -> dict[str, int]:
    counts = {"error": 0, "warning": 0, "info": 0}
    for diag in diags:
        counts[diag.severity] += 1
    return counts


def summary_line(diags: Sequence[Diagnostic], files_checked: int | None = None) -> str:
    """`2 errors, 1 warning in 14 files`, or `no problems in 14 files`."""
    counts = _counts(diags)
    parts = [f"{n} {word}{'' if n == 1 else 's'}" for word, n in counts.items() if n]
    text = ", ".join(parts) if parts else "no problems"
    if files_checked is not None:
        text += f" in {files_checked} file{'' if files_checked == 1 else 's'}"
    return text


def _location(diag: Diagnostic) -> str:
    """`file:line:col`, leaving out a line or column that is unknown (0); a name's control, invisible and
    reordering characters, newline and tab included, as escapes (a name can hold any of them)."""
    where = one_line(diag.file)
    if diag.line:
        where += f":{diag.line}"
        if diag.col:
            where += f":{diag.col}"
    return where


def _text(diags: list[Diagnostic], files_checked: int | None, color: bool) -> str:
    lines = []
    for diag in diags:
        severity: str = diag.severity
        code = diag.code
        if color:
            severity = f"{_COLORS[severity]}{severity}{_RESET}"
            code = f"{_BOLD}{code}{_RESET}"
        message = visible(diag.message).replace("\n", "\n    ")  # keep continuation lines under the entry
        lines.append(f"{_location(diag)}: {severity}[{code}] {message}")
        if diag.hint:
            lines.append("    hint: " + visible(diag.hint).replace("\n", "\n    "))
    lines.append(summary_line(diags, files_checked))
    return "\n".join(lines) + "\n"


def _json(diags: list[Diagnostic], files_checked: int | None, color: bool) -> str:
    counts = _counts(diags)
    payload = {
        "version": 1,
        "diagnostics": [
            {
                "code": d.code,
                "name": _name(d.code),
                "severity": d.severity,
                "file": d.file,
                "line": d.line,
                "col": d.col,
                "message": d.message,
                "hint": d.hint,
            }
            for d in diags
        ],
        "summary": {
            "errors": counts["error"],
            "warnings": counts["warning"],
            "infos": counts["info"],
            "files": files_checked,
        },
    }
    return json.dumps(payload, indent=2, ensure_ascii=False) + "\n"


def _name(code: str) -> str:
    entry = CODES.get(code)
    return entry.name if entry else "unknown"


def escape_data(text: str) -> str:
    """Escape a workflow-command message (GitHub: %, CR, LF)."""
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    """Escape a workflow-command property value (also `:` and `,`)."""
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def _github(diags: list[Diagnostic], files_checked: int | None, color: bool) -> str:
    lines = []
    for d in diags:
        props = [f"file={escape_property(d.file)}"]
        if d.line:
            props.append(f"line={d.line}")
        if d.col:
            props.append(f"col={d.col}")
        props.append(f"title={escape_property(f'{d.code} {_name(d.code)}')}")
        message = d.message + (f"\nhint: {d.hint}" if d.hint else "")
        lines.append(f"::{_GITHUB_COMMAND[d.severity]} {','.join(props)}::{escape_data(message)}")
    return "".join(line + "\n" for line in lines)


def _artifact_uri(file: str) -> dict[str, str]:
    """A SARIF artifactLocation: a relative, percent-encoded posix path against %SRCROOT%."""
    path = pathlib.PurePath(file)
    if path.is_absolute():
        try:
            path = pathlib.Path(file).relative_to(pathlib.Path(os.getcwd()))
        except ValueError:
            return {"uri": pathlib.Path(file).as_uri()}
    return {"uri": urllib.parse.quote(path.as_posix(), safe="/"), "uriBaseId": "%SRCROOT%"}


def _sarif(diags: list[Diagnostic], files_checked: int | None, color: bool) -> str:
    from ..core.version import __version__

    codes = sorted({d.code for d in diags})
    index = {code: i for i, code in enumerate(codes)}
    rules = []
    for code in codes:
        entry = CODES.get(code)
        rule: dict[str, Any] = {
            "id": code,
            "name": entry.name if entry else "unknown",
            "shortDescription": {"text": entry.summary if entry else code},
            "helpUri": HELP_URI.format(anchor=code.lower()),
        }
        if entry:
            rule["defaultConfiguration"] = {"level": _SARIF_LEVEL.get(entry.severity, "error")}
        rules.append(rule)
    results = []
    for d in diags:
        physical: dict[str, Any] = {"artifactLocation": _artifact_uri(d.file)}
        region = {k: v for k, v in (("startLine", d.line), ("startColumn", d.col)) if v}
        if d.line and region:
            physical["region"] = region
        results.append(
            {
                "ruleId": d.code,
                "ruleIndex": index[d.code],
                "level": _SARIF_LEVEL[d.severity],
                "message": {"text": d.message + (f"\nhint: {d.hint}" if d.hint else "")},
                "locations": [{"physicalLocation": physical}],
            }
        )
    log = {
        "$schema": SARIF_SCHEMA,
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "promptmill",
                        "version": __version__,
                        "informationUri": INFORMATION_URI,
                        "rules": rules,
                    }
                },
                "columnKind": "unicodeCodePoints",
                "results": results,
            }
        ],
    }
    return json.dumps(log, indent=2, ensure_ascii=False) + "\n"


# format -> its writer; FORMATS, the CLI's --format choices, are its keys
WRITERS: dict[str, Callable[[list[Diagnostic], int | None, bool], str]] = {
    "text": _text,
    "json": _json,
    "github": _github,
    "sarif": _sarif,
}
FORMATS: tuple[str, ...] = tuple(WRITERS)
