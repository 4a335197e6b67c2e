"""Run the examples of docs/errors.md and keep their printed output in step.

    PYTHONPATH=compiler python tools/errors_doc.py           # check: exit 1 when an example is stale
    PYTHONPATH=compiler python tools/errors_doc.py --update  # rewrite the output blocks

Each code has a `## PMnnn name` entry. Its example is made of fenced blocks:
`yaml PATH` blocks are files of a fresh project (PATH relative to the project
root), an optional `python` block runs in that folder with `promptmill`
imported, and the `text` block after them shows what promptmill reports for
the entry's code: the first diagnostic with that code from `promptmill lint .`
(or from the `result` the python block leaves), or the `PromptmillError` the
python block raises. tests/test_errors_doc.py runs every example, so the
catalog cannot drift from the code.
"""

from __future__ import annotations

import contextlib
import os
import re
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "errors.md"
_HEAD = re.compile(r"^## (PM\d{3}) ([a-z0-9-]+)\s*$", re.M)
_FENCE = re.compile(r"^```([^\n]*)\n(.*?)^```\s*$", re.M | re.S)


@dataclass
class Entry:
    code: str
    name: str
    body: str  # the markdown of the entry, heading excluded
    files: dict[str, str] = field(default_factory=dict)
    python: str | None = None
    output: str | None = None  # the text block as written in the page


def entries(text: str) -> list[Entry]:
    """The entries of the page, in order."""
    heads = list(_HEAD.finditer(text))
    out = []
    for i, head in enumerate(heads):
        end = heads[i + 1].start() if i + 1 < len(heads) else len(text)
        body = text[head.end() : end]
        entry = Entry(head.group(1), head.group(2), body)
        for fence in _FENCE.finditer(body):
            info, content = fence.group(1).split(), fence.group(2)
            if info[:1] == ["yaml"] and len(info) == 2:
                entry.files[info[1]] = content
            elif info[:1] == ["python"]:
                entry.python = content
            elif info[:1] == ["text"]:
                entry.output = content
        out.append(entry)
    return out


def run(entry: Entry) -> str:
    """What promptmill reports for `entry.code` on the entry's example (raises if it reports nothing)."""
    with tempfile.TemporaryDirectory() as tmp, _cwd(Path(tmp)):
        return _normalize(_run(entry, Path(tmp)), Path(tmp))


def _normalize(text: str, tmp: Path) -> str:
    """Output as a reader's own project would show it: no temporary folder in paths."""
    from promptmill.source.project import library_dir

    for root in {str(tmp.resolve()), str(tmp)}:
        text = text.replace(root + "/", "").replace(root, ".")
    return text.replace(str(library_dir()), "<promptmill>/library")


def _run(entry: Entry, tmp: Path) -> str:
    import promptmill
    from promptmill.core.errors import CompileError, PromptmillError

    for rel, content in entry.files.items():
        path = tmp / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(content, encoding="utf-8")
    scope: dict = {"promptmill": promptmill}
    try:
        if entry.python is not None:
            exec(compile(entry.python, f"docs/errors.md ({entry.code})", "exec"), scope)
            result = scope.get("result")
        else:
            result = promptmill.lint(".")
    except PromptmillError as exc:
        if exc.code == entry.code:
            lines = str(exc).splitlines()
            shown = lines[:2] if lines[0].endswith(":") else lines[:1]  # a summary ends in ':' before its first detail
            return f"{type(exc).__name__}: " + "\n".join(shown) + "\n"
        if not isinstance(exc, CompileError):
            raise AssertionError(f"{entry.code}: the example raised {exc.code}: {exc}") from exc
        result = exc
    found = [d for d in getattr(result, "diagnostics", ()) if d.code == entry.code]
    if not found:
        codes = sorted({d.code for d in getattr(result, "diagnostics", ())})
        raise AssertionError(f"{entry.code}: the example does not report it (reported: {codes})")
    return found[0].format().splitlines()[0] + "\n"


@contextlib.contextmanager
def _cwd(path: Path):
    before = Path.cwd()
    os.chdir(path)
    try:
        yield
    finally:
        os.chdir(before)


def update(text: str) -> tuple[str, list[str]]:
    """The page with every output block refreshed, and the codes whose block changed."""
    changed = []
    problems = []
    for entry in entries(text):
        if not entry.files and entry.python is None:
            continue
        try:
            output = run(entry)
        except AssertionError as exc:
            problems.append(str(exc))
            continue
        if entry.output != output:
            changed.append(entry.code)
            if entry.output is None:
                raise AssertionError(f"{entry.code}: add an empty ```text block after the example")
            new_body = entry.body.replace(f"```text\n{entry.output}```", f"```text\n{output}```", 1)
            text = text.replace(f"## {entry.code} {entry.name}\n{entry.body}", f"## {entry.code} {entry.name}\n{new_body}", 1)
    if problems:
        raise AssertionError("\n".join(problems))
    return text, changed


def main() -> int:
    text = DOC.read_text(encoding="utf-8")
    new, changed = update(text)
    if "--update" in sys.argv[1:]:
        DOC.write_text(new, encoding="utf-8")
        print(f"updated {len(changed)} output block(s): {', '.join(changed) or 'none'}")
        return 0
    if changed:
        print(f"stale output in docs/errors.md for: {', '.join(changed)} (run with --update)")
        return 1
    print("docs/errors.md: every example reports its code as shown")
    return 0


if __name__ == "__main__":
    sys.exit(main())
