"""Native tool declarations and structured output are counted in the budget.

The counting model (docs/providers.md):
- text: tokens == count(prompt) (exact);
- openai: tokens == 3 + sum(3 + count(role) + count(content)) over messages (OpenAI's cookbook);
- anthropic, gemini: tokens == 3 + sum(3 + count(content)) over messages
  + wire.tool_cost(declarations sent) + wire.output_cost(contract).
The message part is exact with tiktoken; the declaration and schema parts are
the documented estimates.
"""

from __future__ import annotations

import copy

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from promptmill import build_in_memory
from promptmill.core.errors import BudgetError, StateError
from promptmill.runtime.counting import Counter
from promptmill.wires import _tools, get_wire
from providers_support import SHIPPED, TOK, documented_total, render, runtime, state


@pytest.mark.parametrize(("role", "state_file"), SHIPPED)
def test_text_tokens_are_the_count_of_the_prompt(role, state_file):
    req = render(role, state_file, "text")
    assert req.tokens == TOK.count(req.to_text()["prompt"])
    live = render(role, state_file, "live")
    assert live.tokens == TOK.count(live.to_live()["instructions"])


@pytest.mark.parametrize("provider", ["openai", "anthropic", "gemini", "openai-responses"])
@pytest.mark.parametrize(("role", "state_file"), SHIPPED)
def test_chat_tokens_follow_the_documented_model(role, state_file, provider):
    req = render(role, state_file, provider)
    assert req.tokens == documented_total(req)
    assert req.tokens <= req.budget


def test_openai_without_estimates_is_exact():
    req = render("executor", "executor.state.yaml", "openai")
    assert req.exact and req.tools == ()
    native = render("companion-chat", "companion-chat.state.yaml", "openai")
    assert not native.exact  # the tool declarations are an estimate


def test_declarations_cost_what_the_model_is_sent():
    req = render("companion-chat", "companion-chat.state.yaml", "openai")
    counter = Counter(TOK)
    without_tools = sum(3 + TOK.count(m.role) + TOK.count(m.content) for m in req.messages) + 3
    assert req.tokens - without_tools == get_wire("openai").tool_cost(counter, list(req.tools)) > 0


def test_openai_function_rendering():
    tool = {
        "name": "calendar_add",
        "description": "Add an event.",
        "parameters": {
            "type": "object",
            "required": ["title"],
            "properties": {
                "title": {"type": "string", "description": "what happens"},
                "kind": {"enum": ["party", "race"]},
                "guests": {"type": "array", "items": {"type": "string"}},
                "where": {"type": "object", "properties": {"city": {"type": "string"}}},
            },
        },
    }
    assert _tools.openai_function_text(tool) == (
        "// Add an event.\n"
        "type calendar_add = (_: {\n"
        "// what happens\n"
        "title: string,\n"
        'kind?: "party" | "race",\n'
        "guests?: string[],\n"
        "where?: {\n"
        "  city?: string,\n"
        "},\n"
        "}) => any;\n\n"
    )
    assert _tools.openai_function_text({"name": "ping", "parameters": {"type": "object"}}) == "type ping = () => any;\n\n"


@settings(max_examples=60, deadline=None)
# from 1,100: the never-trimmed part (about 600 o200k tokens) fits at Claude's 1.53 ratio too
@given(budget=st.integers(min_value=1100, max_value=2000), provider=st.sampled_from(["openai", "anthropic", "gemini", "openai-responses"]))
def test_never_over_budget_with_native_tools(budget, provider):
    s = state("companion-chat.state.yaml")
    s = copy.deepcopy(s)
    s["tools"] = s["tools"] * 1 + [
        {
            "name": f"app_{i}",
            "description": "An app tool " * (i + 1),
            "parameters": {"type": "object", "properties": {"x": {"type": "string"}}},
        }
        for i in range(6)
    ]
    req = runtime().render("companion-chat", s, provider=provider, budget=budget)
    assert req.tokens <= req.budget
    assert req.tokens == documented_total(req)
    tools = req.section("app_tools")
    assert [t["name"] for t in req.tools][2:] == [s["tools"][i]["name"] for i in tools.items_kept]


def test_untrimmable_tools_over_budget_are_named():
    with pytest.raises(BudgetError) as err:
        runtime().render("companion-beat", state("companion-beat.state.yaml"), provider="anthropic", budget=300)
    assert err.value.code == "PM830"
    assert "message_tools (" in err.value.message and "contract 'companion-beat-decision'" in err.value.message


def test_app_tools_go_before_history_and_stable_tools_stay():
    req = runtime().render("companion-chat", state("companion-chat.state.yaml"), provider="openai", budget=470)
    assert req.section("message_tools").status == "kept"
    assert req.section("app_tools").status == "dropped"
    assert req.section("history").status in ("kept", "trimmed")
    assert [t["name"] for t in req.tools] == ["message_send", "message_react"]


LOOSE_TOOLS = """\
kind: role
id: r
inputs: {type: object, properties: {tools: {type: array, items: {type: object}}}}
sections:
  - {id: tools, tools: tools}
"""


@pytest.mark.parametrize(
    ("tool", "said"),
    [
        ({"description": "d"}, "is required"),  # was "must be 1-64 letters, ...": the name is missing, not misspelt
        ({"name": "bad name!"}, "must be 1-64 letters, digits, '_' or '-'"),
        ({"name": 7}, "must be 1-64 letters, digits, '_' or '-'"),
    ],
)
def test_a_state_tool_without_a_name_is_told_the_name_is_required(tool, said, make_project):
    rt, _ = build_in_memory(make_project({"prompts/r.yaml": LOOSE_TOOLS}))
    with pytest.raises(StateError) as err:
        rt.render("r", {"tools": [tool]}, provider="openai")
    assert err.value.errors == (("state.tools[0].name", said),)


@pytest.mark.parametrize(
    ("tool", "path"),
    [
        ({"name": "x", "description": "d", "parameters": {"type": "strng"}}, "state.tools[0].parameters"),
        (
            {"name": "x", "description": "d", "parameters": {"type": "object", "properties": {"a": {"type": 3}}}},
            "state.tools[0].parameters.properties.a.type",
        ),
        ({"name": "bad name!", "description": "d", "parameters": {"type": "object"}}, "state.tools[0].name"),
    ],
)
@pytest.mark.parametrize("provider", ["openai", "text"])
def test_state_tools_with_a_bad_schema_are_refused(tool, path, provider):
    s = dict(state("companion-chat.state.yaml"), tools=[tool])
    with pytest.raises(StateError) as err:
        runtime().render("companion-chat", s, provider=provider)
    assert err.value.code == "PM810"
    assert any(p.startswith(path) for p, _ in err.value.errors), err.value.errors
