"""Compile-time behaviour of `promptmill.compiling.bundler` found by QA: what lints clean must render."""

from __future__ import annotations

from promptmill.compiling.api import build_in_memory


def test_a_declared_tool_without_description_renders_inline(make_project):
    # `declare[].description` is optional in the schema; the inline tool template
    # reads it, so the compiler must fill the default ("") as native tools do.
    project = make_project(
        {"prompts/r.yaml": "kind: role\nid: r\nsections:\n"
        "  - id: t\n    title: 'Tools:'\n    declare:\n      - name: ping\n        parameters: {type: object}\n"
        "  - {id: a, text: hi}\n"}
    )
    runtime, diags = build_in_memory(project)
    assert diags == []
    req = runtime.render("r", {})
    assert req.text == 'Tools:\n- ping: \n  parameters: {"type": "object"}\n\nhi'
    native = runtime.render("r", {}, provider="openai")
    assert native.to_openai()["messages"]

