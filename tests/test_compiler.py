"""Compile-time behaviour of `promptmill.compiling.bundler` found by QA: what lints clean must render."""

from __future__ import annotations

from promptmill.compiling.api import build_in_memory


def test_a_declared_tool_without_description_renders_inline(make_project):
    # `declare[].description` is optional in the schema; the inline tool template
    # reads it, so the compiler must fill the default ("") as native tools do.
    project = make_project(
        {
            "prompts/r.yaml": "kind: role\nid: r\nsections:\n"
            "  - id: t\n    title: 'Tools:'\n    declare:\n      - name: ping\n        parameters: {type: object}\n"
            "  - {id: a, text: hi}\n"
        }
    )
    runtime, diags = build_in_memory(project)
    assert diags == []
    req = runtime.render("r", {})
    assert req.text == 'Tools:\n- ping: \n  parameters: {"type": "object"}\n\nhi'
    native = runtime.render("r", {}, provider="openai")
    assert native.to_openai()["messages"]


def test_every_section_source_has_a_compile_function():
    # _section looks the source up in this table: a source the model accepts but the table lacks
    # would compile to nothing, silently
    from promptmill.compiling.bundler import SECTION_SOURCES
    from promptmill.compose.model import SOURCES

    assert set(SECTION_SOURCES) == set(SOURCES)


def test_the_role_lint_passes_share_one_shape(tmp_path):
    import inspect

    from promptmill.lints.passes import LINTS

    assert len(LINTS) >= 7
    for lint in LINTS:
        assert lint.__module__.startswith("promptmill.lints."), lint
        assert list(inspect.signature(lint).parameters) in (["role", "ctx"], ["composed", "ctx"]), lint


def test_the_lint_passes_see_what_compiling_the_role_read(make_project):
    # PM404 runs after assembly, on the inputs compiling read (here a template and a section
    # condition); `spare` alone is never read
    project = make_project(
        {
            "prompts/r.yaml": "kind: role\nid: r\n"
            "inputs:\n  type: object\n  properties:\n    a: {type: string}\n    b: {type: string}\n    spare: {type: string}\n"
            "sections:\n"
            "  - {id: one, template: '{{ a }}'}\n"
            "  - {id: two, text: hi, when: {path: state.b, op: eq, value: x}}\n"
        }
    )
    from promptmill.compiling.api import lint

    found = [(d.code, d.message) for d in lint(project).diagnostics]
    assert [code for code, _ in found] == ["PM404"], found
    assert "'spare'" in found[0][1]
