"""Anthropic cache breakpoints: the stable prefix first, then the stable tools, within the model's limit.

Anthropic caches in the order tools, system, messages, and takes at most 4 `cache_control`
blocks a request (the model table's `cache.breakpoints`). A request marks the end of its
stable prefix, then the last declaration of its stable tools; a model row that takes fewer
gets the prefix one first (lint says so at compile time: PM614).
"""

from __future__ import annotations

import json

import pytest

from promptmill.compiling.api import build_in_memory

CACHE = {"type": "ephemeral"}
ROLE = """kind: role
id: r
model: {model}
tool_mode: native
inputs: {{type: object, properties: {{q: {{type: string}}, extra: {{type: array, items: {{type: object}}}}}}}}
sections:
  - id: persona
    text: You are terse.
  - id: tools
    declare:
      - {{name: ping, description: Ping a host., parameters: {{type: object, properties: {{host: {{type: string}}}}}}}}
      - {{name: pong, description: Answer a ping., parameters: {{type: object, properties: {{host: {{type: string}}}}}}}}
  - id: extra
    tools: extra
  - id: q
    template: "{{{{ q }}}}"
    message: user
"""


def _runtime(make_project, model: str, breakpoints: int):
    cache = f"cache: {{min_tokens: 0, breakpoints: {breakpoints}}}"
    row = f"  - {{pattern: claude-tiny*, provider: anthropic, context_window: 200000, {cache}}}\n"
    root = make_project(
        {"promptmill.yaml": "prompts: prompts\nlibrary: false\nmodels:\n" + row, "prompts/r.yaml": ROLE.format(model=model)}
    )
    rt, diags = build_in_memory(root)
    return rt, diags


def _marked(payload: dict) -> list[str]:
    out = [f"system[{i}]" for i, b in enumerate(payload.get("system", [])) if "cache_control" in b]
    return out + [t["name"] for t in payload.get("tools", []) if "cache_control" in t]


EXTRA = [{"name": "lookup", "description": "Look a word up.", "parameters": {"type": "object", "properties": {"word": {"type": "string"}}}}]


@pytest.mark.parametrize(("breakpoints", "marked"), [(4, ["system[0]", "pong"]), (2, ["system[0]", "pong"]), (1, ["system[0]"]), (0, [])])
@pytest.mark.parametrize("wire", ["anthropic", "anthropic-vertex"])
def test_breakpoints_stay_within_the_models_limit(make_project, breakpoints, marked, wire):
    rt, _ = _runtime(make_project, "claude-tiny-1", breakpoints)
    req = rt.render("r", {"q": "hi", "extra": EXTRA}, provider=wire)
    assert req.cache_breakpoints == breakpoints
    payload = req.to_payload()
    assert _marked(payload) == marked
    assert [t["name"] for t in payload["tools"]] == ["ping", "pong", "lookup"]  # the changing tool after the stable ones
    assert all(m == CACHE for m in (b.get("cache_control") for b in [*payload["system"], *payload["tools"]]) if m is not None)


def test_all_stable_tools_put_the_breakpoint_on_the_last_declaration(make_project):
    rt, _ = _runtime(make_project, "claude-tiny-1", 4)
    payload = rt.render("r", {"q": "hi"}, provider="anthropic").to_anthropic()
    assert [t["name"] for t in payload["tools"]] == ["ping", "pong"] and _marked(payload) == ["system[0]", "pong"]


def test_a_model_the_table_does_not_know_gets_the_apis_limit(make_project):
    rt, diags = _runtime(make_project, "claude-unknown-9", 1)  # matches the shipped `claude*` row: 4
    req = rt.render("r", {"q": "hi", "extra": EXTRA}, provider="anthropic")
    assert req.cache_breakpoints == 4 and _marked(req.to_anthropic()) == ["system[0]", "pong"]
    other = rt.render("r", {"q": "hi", "extra": EXTRA}, provider="anthropic", model="gpt-4o")  # not a Claude row: no limit known
    assert other.cache_breakpoints is None and _marked(other.to_anthropic()) == ["system[0]", "pong"]


def test_without_caching_nothing_is_marked(make_project):
    root = make_project(
        {"prompts/r.yaml": ROLE.format(model="claude-sonnet-4-5").replace("tool_mode: native\n", "tool_mode: native\ncache: false\n")}
    )
    rt, _ = build_in_memory(root)
    payload = rt.render("r", {"q": "hi"}, provider="anthropic").to_anthropic()
    assert "cache_control" not in json.dumps(payload)


def test_the_lint_warns_where_the_render_leaves_a_breakpoint_out(make_project):
    _, diags = _runtime(make_project, "claude-tiny-1", 1)
    found = [d for d in diags if d.code == "PM614"]
    assert len(found) == 1 and "renders leave out the stable tools (section 'tools')" in found[0].message
    _, fine = _runtime(make_project, "claude-tiny-1", 2)
    assert not [d for d in fine if d.code == "PM614"]
