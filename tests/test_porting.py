"""`promptmill port-format`: a str.format prompt becomes a role that renders the same text."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

import promptmill
from promptmill.cli.main import main
from promptmill.compiling.porting import PortError, port_format
from promptmill.core.fieldnames import split_field_name

CASES = [
    ('Task: {task}\nReply with JSON like {{"ok": true}}.', {"task": "fix the build"}),
    (
        "x {{{y}}}\n  z {a.b} {c[0]} {d[k]} {s!r} {n:>8.2f}",
        {"y": "5", "a": {"b": "B"}, "c": ["zero"], "d": {"k": "kay"}, "s": "q", "n": 3.14159},
    ),
    ("{{% raw %}} {{# c #}} {{{{ {t} }}}}\n\n    indented {t}\n", {"t": "T"}),
    ("no fields at all", {}),
]


@pytest.mark.parametrize(("text", "state"), CASES)
def test_the_skeleton_renders_what_str_format_gave(tmp_path: Path, text: str, state: dict):
    (tmp_path / "prompts").mkdir()
    (tmp_path / "prompts" / "ported.yaml").write_text(port_format(text, "ported"))
    promptmill.compile(tmp_path)
    fmt_state = dict(state)
    # str.format's {a.b} reads an attribute; the state holds JSON objects, so compare against a namespace
    if "a" in fmt_state:
        from types import SimpleNamespace

        fmt_state["a"] = SimpleNamespace(**fmt_state["a"])
    expected = text.format(**fmt_state).rstrip("\n")  # a rendered section has no trailing newline
    assert promptmill.load(tmp_path / "build").render("ported", state).text == expected


def test_inputs_are_declared_from_the_fields():
    assert port_format("{a} {b.c} {n:.1f}", "r") == (
        'kind: role\nid: r\ninputs:\n  type: object\n  required:\n    - a\n    - b\n    - "n"\n  properties:\n'
        '    a:\n      type: string\n    b:\n      type: object\n    "n": {}\nsections:\n  - id: body\n'
        "    template: \"{{ a }} {{ b.c }} {{ '{:.1f}'.format(n) }}\"\n"
    )
    assert "    c:\n      type: array\n" in port_format("{c[0]}", "r")
    assert "    c: {}\n" in port_format("{c[0]} {c.x}", "r")


@pytest.mark.parametrize(
    ("text", "where", "message"),
    [
        ("line one\nTask: {}", "2:7", "positional fields have no counterpart"),
        ("a\n  b }", "2:5", "single '}' in the template"),
        ("a {b", "1:3", "'{' is never closed"),
        ("{x:{w}}", "1:1", "a field inside a format spec"),
        ("{x!z}", "1:1", "unknown conversion '!z'"),
    ],
)
def test_templates_without_a_counterpart_are_pm015_at_their_position(text: str, where: str, message: str):
    with pytest.raises(PortError) as err:
        port_format(text, "r", where="p.txt")
    assert err.value.code == "PM015"
    assert err.value.message.startswith(f"p.txt:{where}: ") and message in err.value.message


def test_the_command_prints_the_role_or_a_coded_error(tmp_path: Path):
    (tmp_path / "prompt.txt").write_text("Hello {name}!\n")
    result = CliRunner().invoke(main, ["port-format", str(tmp_path / "prompt.txt")])
    assert result.exit_code == 0, result.output
    assert result.output == port_format("Hello {name}!\n", "prompt")
    (tmp_path / "bad.txt").write_text("Hello {}!\n")
    result = CliRunner().invoke(main, ["port-format", str(tmp_path / "bad.txt"), "--id", "greeter"])
    assert result.exit_code == 1
    assert "error[PM015]" in result.output and "bad.txt:1:7: field {}: positional fields" in result.output
    assert "Traceback" not in result.output


@pytest.mark.parametrize("name", ["a", "a.b[0]", "0", "a[x].y", "a[", "a..b", "", "a[0]b", "a.b.c", "a[1][k].z", "a[]", "a."])
def test_field_names_split_as_str_format_splits_them(name):
    """porting reads field names itself (not through CPython's private `_string`), the same way."""
    from _string import formatter_field_name_split  # the reference, in the test only

    try:
        first, rest = formatter_field_name_split(name)
        want = (first, list(rest))
    except ValueError as exc:
        want = ("error", str(exc))
    try:
        got = split_field_name(name)
    except ValueError as exc:
        got = ("error", str(exc))
    assert got == want


@pytest.mark.parametrize("field", ["{a..b}", "{a[}", "{a[0]b}", "{a[]}"])
def test_a_malformed_field_name_is_pm015_at_its_position(field):
    with pytest.raises(PortError) as info:
        port_format(f"Line one\nsay {field} now", "r")
    assert info.value.code == "PM015" and "<template>:2:5" in str(info.value)


@pytest.mark.parametrize("role_id", ["1-intro", "agents/planner", "a.b_c-d"])
def test_any_id_the_role_schema_takes_is_taken(role_id):
    assert f"id: {role_id}" in port_format("hi {x}", role_id)


@pytest.mark.parametrize("role_id", ["a/", "_x", "a//b", "-a", "", "x" * 201])
def test_an_id_the_role_schema_refuses_is_pm010(role_id):
    with pytest.raises(promptmill.PromptmillError) as err:
        port_format("hi {x}", role_id)
    assert err.value.code == "PM010"
