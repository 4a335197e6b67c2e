"""Source positions recorded by the loader: pos, key_pos and text_pos."""

from __future__ import annotations

import pathlib

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from promptmill.core.diagnostics import Position
from promptmill.source import loader
from promptmill.source.yamlbuild import CParser

BACKENDS = ["c", "python"] if CParser is not None else ["python"]
POSITIVE = pathlib.Path(__file__).parent / "cases" / "loader" / "positive"

ROLE = """\
kind: role
id: roles/x
budget:
  max_tokens: 8000
sections:
  - id: literal
    template: |
      Hello {{ name }}
        indented
      bye
  - id: strip
    template: |-
      one
      two
  - id: folded
    text: >
      folded one
      folded two

      para two
  - id: indicator
    text: |2
        two extra
      base
  - id: quoted
    text: "quoted {{ x }}"
  - id: plain
    text: plain {{ y }}
  - id: tagged
    text: !!str |
      after a tag
  - id: multi
    text: "first
      second line"
"""


@pytest.fixture(params=BACKENDS)
def role(request) -> loader.Document:
    doc, diags = loader._load(ROLE, "roles/x.yaml", loader.DEFAULT_LIMITS, request.param)
    assert diags == []
    return doc


def at(line: int, col: int) -> Position:
    return Position("roles/x.yaml", line, col)


def test_value_and_key_positions(role):
    assert role.pos(("kind",)) == at(1, 7)
    assert role.key_pos(("kind",)) == at(1, 1)
    assert role.pos(("budget",)) == at(4, 3)
    assert role.pos(("budget", "max_tokens")) == at(4, 15)
    assert role.key_pos(("budget", "max_tokens")) == at(4, 3)
    assert role.pos(("sections",)) == at(6, 3)
    assert role.pos(("sections", 0)) == at(6, 5)
    assert role.pos(("sections", 0, "id")) == at(6, 9)
    assert role.key_pos(("sections", 1, "template")) == at(12, 5)


def test_missing_paths_fall_back_to_the_nearest_ancestor(role):
    assert role.pos(()) == at(1, 1)
    assert role.pos(("budget", "reserve")) == role.pos(("budget",))
    assert role.pos(("sections", 99, "id")) == role.pos(("sections",))
    assert role.pos(("nope", "deeper")) == at(1, 1)
    assert role.key_pos(("budget", "reserve")) == role.pos(("budget",))
    assert role.key_pos(()) == at(1, 1)
    assert role.key_pos(("sections", 0)) == role.pos(("sections", 0))  # a list step has no key


def test_text_pos_in_a_literal_block(role):
    path = ("sections", 0, "template")
    assert role.data["sections"][0]["template"] == "Hello {{ name }}\n  indented\nbye\n"
    assert role.pos(path) == at(7, 15)
    assert role.text_pos(path, 1) == at(8, 7)
    assert role.text_pos(path, 1, 10) == at(8, 16)
    assert role.text_pos(path, 2, 3) == at(9, 9)
    assert role.text_pos(path, 3, 1) == at(10, 7)


def test_text_pos_in_a_stripped_block(role):
    assert role.text_pos(("sections", 1, "template"), 2, 2) == at(14, 8)


def test_text_pos_in_a_folded_block(role):
    path = ("sections", 2, "text")
    assert role.data["sections"][2]["text"] == "folded one folded two\npara two\n"
    assert role.text_pos(path, 1, 1) == at(17, 7)
    assert role.text_pos(path, 1, 12) == at(18, 7)  # 'folded two' was folded onto line 1
    assert role.text_pos(path, 1, 19) == at(18, 14)
    assert role.text_pos(path, 2, 6) == at(20, 12)


def test_text_pos_with_an_indentation_indicator(role):
    path = ("sections", 3, "text")
    assert role.data["sections"][3]["text"] == "  two extra\nbase\n"
    assert role.text_pos(path, 1, 1) == at(23, 7)
    assert role.text_pos(path, 1, 3) == at(23, 9)
    assert role.text_pos(path, 2, 1) == at(24, 7)


def test_text_pos_in_quoted_plain_and_tagged_scalars(role):
    assert role.text_pos(("sections", 4, "text"), 1, 8) == at(26, 19)  # after the opening quote
    assert role.text_pos(("sections", 5, "text"), 1, 7) == at(28, 17)
    assert role.text_pos(("sections", 6, "text"), 1, 7) == at(31, 13)
    assert role.text_pos(("sections", 7, "text"), 2, 1) == at(34, 7)  # best effort


def test_text_pos_on_a_non_string_falls_back_to_pos(role):
    assert role.text_pos(("budget", "max_tokens"), 3, 3) == role.pos(("budget", "max_tokens"))
    assert role.text_pos(("nope",), 1, 1) == at(1, 1)


@pytest.mark.parametrize("header", ["|", "|-", "|+", "|2", "|2-", ">", ">-", "|  # comment"])
def test_text_pos_first_line_for_every_block_header(header):
    text = f"a:\n  b: {header}\n     x {{{{ y }}}}\n     z\n"
    doc, diags = loader.load_text(text, "t.yaml")
    assert diags == []
    value = doc.data["a"]["b"]
    line = value.split("\n")[0]
    col = line.index("{") + 1
    assert doc.text_pos(("a", "b"), 1, col) == Position("t.yaml", 3, 8)


def test_positions_inside_aliases_point_at_the_anchor():
    doc, _ = loader.load_text("base: &b\n  model: gpt\n  text: |\n    hi\nuse: *b\nlist: [*b]\n", "t.yaml")
    assert doc.pos(("use",)) == Position("t.yaml", 5, 6)
    assert doc.pos(("use", "model")) == doc.pos(("base", "model")) == Position("t.yaml", 2, 10)
    assert doc.key_pos(("list", 0, "model")) == Position("t.yaml", 2, 3)
    assert doc.text_pos(("use", "text"), 1, 2) == Position("t.yaml", 4, 6)


def test_positions_with_crlf_and_bom():
    crlf, _ = loader.load_file(POSITIVE / "crlf.yaml", "crlf.yaml")
    assert crlf.pos(("list", 1)) == Position("crlf.yaml", 8, 5)
    assert crlf.text_pos(("text",), 2, 1) == Position("crlf.yaml", 5, 3)
    bom, _ = loader.load_file(POSITIVE / "bom.yaml", "bom.yaml")
    assert bom.pos(("kind",)) == Position("bom.yaml", 1, 7)
    assert bom.pos(("id",)) == Position("bom.yaml", 2, 5)


def test_columns_count_characters_not_bytes():
    doc, _ = loader.load_file(POSITIVE / "unicode.yaml", "u.yaml")
    assert doc.pos(("日本語",)) == Position("u.yaml", 4, 6)
    assert doc.key_pos(("clé",)) == Position("u.yaml", 3, 1)
    assert doc.text_pos(("text",), 1, 8) == Position("u.yaml", 9, 10)


_LINE = st.text(alphabet="ab {}#:", min_size=0, max_size=12).map(str.rstrip)


@settings(max_examples=200, deadline=None)
@given(
    lines=st.lists(_LINE, min_size=1, max_size=8),
    style=st.sampled_from(["|", ">", "|-", ">+", "|2", ">2"]),
    nested=st.booleans(),
)
def test_every_character_of_a_block_scalar_maps_back_to_itself(lines, style, nested):
    indent = "      " if nested else "  "
    header = "a:\n  b: " if nested else "b: "
    body = "".join((indent + line if line else "") + "\n" for line in ["x"] + lines)
    doc, diags = loader.load_text(header + style + "\n" + body, "t.yaml")
    assume(doc is not None)
    path = ("a", "b") if nested else ("b",)
    value = doc.data["a"]["b"] if nested else doc.data["b"]
    source = doc.text.split("\n")
    for number, value_line in enumerate(value.split("\n"), 1):
        for col, char in enumerate(value_line, 1):
            if char == " ":
                continue  # spaces may stand for folded line breaks
            pos = doc.text_pos(path, number, col)
            assert source[pos.line - 1][pos.col - 1] == char, (number, col, pos)
