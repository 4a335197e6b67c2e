"""Filling list sections from state: scores, tools, and what an item must be."""

from __future__ import annotations

from pathlib import Path

import pytest

import promptmill
from promptmill.core.errors import StateError

ROLE = """\
kind: role
id: shelf
budget: {max_tokens: 3000, reserve: 0}
inputs:
  type: object
  properties:
    books:
      type: array
      items:
        type: object
        required: [title]
        properties:
          title: {type: string}
          score: {type: [number, "null"]}
    tools:
      type: array
      items: {type: object}
sections:
  - id: books
    title: "BOOKS:"
    each: books
    as: book
    template: "- {{ book.title }}"
    order_by: score
  - id: tools
    title: "TOOLS:"
    tools: tools
    trim: never
    declare:
      - {name: search, description: Find a book., parameters: {type: object}}
"""


@pytest.fixture
def rt(tmp_path: Path):
    (tmp_path / "prompts").mkdir()
    (tmp_path / "prompts" / "shelf.yaml").write_text(ROLE)
    promptmill.compile(tmp_path)
    return promptmill.load(tmp_path / "build")


def _books(req) -> list[str]:
    return [line[2:] for line in req.sections[0].text.splitlines()[1:]]


def test_items_without_a_score_are_offered_last_in_list_order(rt):
    books = [{"title": "a"}, {"title": "b", "score": 1}, {"title": "c", "score": None}, {"title": "d", "score": 5}]
    req = rt.render("shelf", {"books": books})
    assert _books(req) == ["a", "b", "c", "d"]  # all fit: survivors keep their list order
    # a budget that holds the two scored books only (+1: fitting estimates each item on its own)
    room = rt.render("shelf", {"books": [books[1], books[3]]}).tokens + 1
    assert room < rt.render("shelf", {"books": books[1:]}).tokens
    tight = rt.render("shelf", {"books": books}, budget=room)
    assert _books(tight) == ["b", "d"]


def test_a_score_that_is_not_a_number_is_an_error_at_its_path(rt):
    with pytest.raises(StateError, match=r"state\.books\[1\]\.score: expected a number to order section 'books' by, got str"):
        rt.render("shelf", {"books": [{"title": "a", "score": 1}, {"title": "b", "score": "high"}]})


def test_a_huge_integer_score_orders_and_a_bad_score_beside_it_is_still_named(rt):
    """An integer too large for a float (JSON allows it) is a finite score; with a bad score beside
    it the error names the bad one (it was an OverflowError from math.isfinite, a traceback)."""
    big = 10**400
    books = [{"title": "a", "score": 1.5}, {"title": "b", "score": big}]
    room = rt.render("shelf", {"books": books[1:]}).tokens + 1  # holds one book
    assert _books(rt.render("shelf", {"books": books}, budget=room)) == ["b"]  # the best score is kept
    with pytest.raises(StateError, match=r"state\.books\[2\]\.score: is not a finite number"):
        rt.render("shelf", {"books": [{"title": "a", "score": big}, {"title": "b", "score": 2}, {"title": "c", "score": float("nan")}]})


def test_items_of_the_wrong_type_are_reported_as_such(rt):
    with pytest.raises(StateError, match=r"state\.books\[0\]: expected object, got string"):
        rt.render("shelf", {"books": ["a", "b"]})


def test_state_tools_may_leave_out_description_and_parameters(rt):
    req = rt.render("shelf", {"tools": [{"name": "lend"}]})
    tools = req.sections[-1].text
    assert "lend" in tools and "search" in tools
    assert req.tokens == rt.counter("o200k_base").count(req.text)


def test_tool_names_must_be_unique(rt):
    with pytest.raises(StateError, match=r"state\.tools\[0\]\.name: repeats the name 'search' of declare\[0\]"):
        rt.render("shelf", {"tools": [{"name": "search"}]})
    with pytest.raises(StateError, match=r"state\.tools\[2\]\.name: repeats the name 'x' of state\.tools\[0\]"):
        rt.render("shelf", {"tools": [{"name": "x"}, {"name": "y"}, {"name": "x"}]})


def test_tool_names_are_unique_across_sections():
    """Two tools sections (declared message tools, the state's app tools) send their
    declarations side by side: a state tool may not take a declared tool's name."""
    from providers_support import runtime, state

    chat = state("companion-chat.state.yaml")
    chat["tools"] = [dict(chat["tools"][0], name="message_send")]
    for provider in ("openai", "anthropic", "text"):
        with pytest.raises(StateError) as err:
            runtime().render("companion-chat", chat, provider=provider)
        assert err.value.errors == (
            ("state.tools[0].name", "repeats the name 'message_send' of section 'message_tools' declare[0]; tool names must be unique"),
        )


FINISHER = """\
kind: role
id: finisher
tool_mode: native
output: done
inputs:
  type: object
  properties:
    tools: {type: array, items: {type: object}}
sections:
  - id: task
    text: Do the work, then call finish.
  - id: tools
    tools: tools
  - id: format
    output: true
  - id: go
    text: Go.
    message: user
"""
DONE = """\
kind: output
id: done
style: return_call
return_tool: {name: finish, description: Report the result.}
outputs: [{name: ok, type: boolean, required: true}]
"""


@pytest.mark.parametrize("provider", ["openai", "anthropic", "gemini"])
def test_a_state_tool_may_not_take_the_return_tools_name(tmp_path: Path, provider):
    # return_call with tool_mode native declares `finish` natively beside the state's tools
    (tmp_path / "prompts").mkdir()
    (tmp_path / "prompts" / "finisher.yaml").write_text(FINISHER)
    (tmp_path / "prompts" / "done.yaml").write_text(DONE)
    promptmill.compile(tmp_path)
    rt = promptmill.load(tmp_path / "build")
    finish = {"name": "finish", "description": "mine", "parameters": {"type": "object", "properties": {}}}
    with pytest.raises(StateError) as err:
        rt.render("finisher", {"tools": [finish]}, provider=provider)
    assert err.value.errors == (
        ("state.tools[0].name", "repeats the name 'finish' of the return tool of output contract 'done'; tool names must be unique"),
    )
    names = [
        t["name"] for t in rt.render("finisher", {"tools": [dict(finish, name="other")]}, provider="anthropic").to_anthropic()["tools"]
    ]
    assert names == ["other", "finish"]


def test_absent_optional_inputs_are_their_schema_default_else_nothing(tmp_path: Path):
    # docs/templates.md: an optional input left out of the state is its `default`, else None (printed as nothing)
    (tmp_path / "prompts").mkdir()
    (tmp_path / "prompts" / "r.yaml").write_text(
        "kind: role\nid: r\ninputs:\n  type: object\n  properties:\n"
        "    tone: {type: string, default: calm}\n    name: {type: string}\n"
        "sections:\n  - {id: a, template: 'tone={{ tone }} name={{ name }}'}\n"
    )
    promptmill.compile(tmp_path)
    rt = promptmill.load(tmp_path / "build")
    assert rt.render("r", {}).text == "tone=calm name="
    assert rt.render("r", {"name": None}, validate=False).text == "tone=calm name="  # JSON null prints as nothing too
    assert rt.render("r", {"tone": "dry", "name": "Ada"}).text == "tone=dry name=Ada"


def test_an_absent_optional_key_of_an_object_fails_with_a_hint_to_guard_it(tmp_path: Path):
    # Only top-level inputs get defaults; a key inside an object or item is read strictly.
    (tmp_path / "prompts").mkdir()
    (tmp_path / "prompts" / "r.yaml").write_text(
        "kind: role\nid: r\ninputs:\n  type: object\n  properties:\n"
        "    files: {type: array, items: {type: object, required: [path], properties: {path: {type: string}, risk: {type: number}}}}\n"
        "sections:\n  - {id: a, each: files, as: f, template: '{{ f.path }} {{ f.risk }}'}\n"
        "  - {id: b, each: files, as: f, template: '{{ f.path }} {{ f.risk | default(\"?\") }}'}\n"
    )
    promptmill.compile(tmp_path)
    rt = promptmill.load(tmp_path / "build")
    with pytest.raises(promptmill.PromptmillError) as err:
        rt.render("r", {"files": [{"path": "x.py"}]})
    assert err.value.code == "PM820"
    assert "dict has no key or attribute 'risk'" in err.value.message
    assert err.value.hint is not None and "is defined" in err.value.hint and "default(" in err.value.hint


def test_undeclared_state_keys_do_not_shadow_template_globals(tmp_path: Path):
    """A state may carry keys the role does not declare; one named `range` or `dict`
    must not replace the sandbox's functions of that name."""
    (tmp_path / "prompts").mkdir()
    (tmp_path / "prompts" / "r.yaml").write_text(
        "kind: role\nid: r\ninputs:\n  type: object\n  properties:\n    n: {type: integer}\n"
        "sections:\n  - {id: a, template: '{% for i in range(n) %}{{ i }}{% endfor %} {{ dict(a=1).a }}'}\n"
    )
    promptmill.compile(tmp_path)
    rt = promptmill.load(tmp_path / "build")
    assert rt.render("r", {"n": 3}).text == "012 1"
    assert rt.render("r", {"n": 3, "range": "abc", "dict": None}).text == "012 1"


def test_the_globals_fill_protects_are_the_sandboxs():
    from promptmill.runtime.fill import SANDBOX_GLOBALS
    from promptmill.runtime.jinja.sandbox import compile_template

    assert set(compile_template("{{ x }}").globals) == SANDBOX_GLOBALS
