"""PM408 reads the inputs schema: values pinned to plain text need no escaping inside markup."""

from __future__ import annotations

from pathlib import Path

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
# one printed expression per line, each inside markup; (expression, warned?)
PRINTED = [
    ("level", False),  # an enum of plain words
    ("odd", True),  # its enum holds "a<b"
    ("free", True),
    ("files[0].n", False),  # integer
    ("files[0].ok", False),  # boolean or null
    ("files[0].name", True),
    ("files[0].meta", True),
    ("files[0].n.real", True),  # past the schema: not pinned
]


def _role(printed: list[str], item: str = "") -> str:
    body = "".join(f"      <v a=\"{{{{ {expr} }}}}\"/>\n" for expr in printed)
    out = SCHEMA + "sections:\n  - id: head\n    template: |\n" + body
    if item:
        out += f"  - id: each\n    each: files\n    as: f\n    template: |\n      <file>{{{{ {item} }}}}</file>\n"
    return out


def _warned_lines(tmp_path: Path, role: str) -> list[int]:
    (tmp_path / "prompts").mkdir(exist_ok=True)
    (tmp_path / "prompts" / "files.yaml").write_text(role)
    return sorted(d.line for d in promptmill.lint(tmp_path).diagnostics if d.code == "PM408")


def test_numbers_booleans_and_plain_enums_need_no_escaping(tmp_path):
    first = SCHEMA.count("\n") + 4  # the line of the first printed expression
    expected = [first + i for i, (_, warned) in enumerate(PRINTED) if warned]
    assert _warned_lines(tmp_path, _role([e for e, _ in PRINTED])) == expected


def test_without_the_schema_every_value_is_warned(tmp_path):
    role = _role([e for e, _ in PRINTED]).replace("n: {type: integer}", "n: {}").replace(
        "level: {type: string, enum: [low, high]}", "level: {type: string}"
    ).replace('ok: {type: [boolean, "null"]}', "ok: {}")
    first = SCHEMA.count("\n") + 4
    assert _warned_lines(tmp_path, role) == [first + i for i in range(len(PRINTED))]


def test_the_item_variable_is_read_through_its_schema(tmp_path):
    assert _warned_lines(tmp_path, _role([], item="f.n")) == []
    assert _warned_lines(tmp_path, _role([], item="f.name")) == [SCHEMA.count("\n") + 8]


def test_names_the_template_binds_itself_are_not_the_inputs(tmp_path):
    role = SCHEMA + (
        "sections:\n  - id: head\n    template: |\n"
        "      {% for level in [free] %}<x>{{ level }}</x>{% endfor %}\n"
        "      {% set level2 = free %}<y>{{ level2 }}</y>\n"
        "      {% macro m(level) %}<z>{{ level }}</z>{% endmacro %}{{ m(free) }}\n"
    )
    first = SCHEMA.count("\n") + 4
    assert _warned_lines(tmp_path, role) == [first, first + 1, first + 2]


def test_a_pinned_value_renders_as_the_schema_says(tmp_path):
    _warned_lines(tmp_path, _role(["level", "files[0].n"]))
    promptmill.compile(tmp_path)
    rt = promptmill.load(tmp_path / "build")
    text = rt.render("files", {"level": "high", "files": [{"n": 3}]}).text
    assert text == '<v a="high"/>\n<v a="3"/>'
