"""PM408 reads the inputs schema: values pinned to plain text need no escaping inside markup.

Which values are warned, and where, is in tests/cases/lint/PM408.yaml; here, what a pinned value renders as."""

from __future__ import annotations

import promptmill

SCHEMA = """\
kind: role
id: files
inputs:
  type: object
  properties:
    level: {type: string, enum: [low, high]}
    odd: {type: string, enum: [low, "a<b"]}
    free: {type: string}
    files:
      type: array
      items:
        type: object
        properties:
          n: {type: integer}
          ok: {type: [boolean, "null"]}
          name: {type: string}
          meta: {type: object}
"""


def _role(printed: list[str], item: str = "") -> str:
    body = "".join(f'      <v a="{{{{ {expr} }}}}"/>\n' for expr in printed)
    out = SCHEMA + "sections:\n  - id: head\n    template: |\n" + body
    if item:
        out += f"  - id: each\n    each: files\n    as: f\n    template: |\n      <file>{{{{ {item} }}}}</file>\n"
    return out


def test_a_pinned_value_renders_as_the_schema_says(make_project):
    root = make_project({"prompts/files.yaml": _role(["level", "files[0].n"])})
    promptmill.compile(root)
    rt = promptmill.load(root / "build")
    text = rt.render("files", {"level": "high", "files": [{"n": 3}]}).text
    assert text == '<v a="high"/>\n<v a="3"/>'
