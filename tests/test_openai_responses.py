"""The OpenAI Responses wire (`openai-responses`): the payload the official SDK sends, its shape rules,
its counting model, and its cache key. Goldens for every shipped role are in tests/golden/renderers/
(test_renderers.py); batch lines and results in test_batch.py and test_batch_collect.py."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from promptmill.core.errors import ProviderError
from promptmill.wires import get_wire
from providers_support import SHIPPED, documented_total, render, runtime, state
from test_sdk_types import typed_dict_problems

CASES = Path(__file__).resolve().parent / "cases" / "library_replies"
WIRE = "openai-responses"


def responses_problems(payload: dict) -> list[str]:
    from openai.types.responses.response_create_params import ResponseCreateParamsNonStreaming  # not at the top: see test_sdk_types

    return typed_dict_problems(ResponseCreateParamsNonStreaming, {"model": "gpt-5", **payload})


def _good_reply(role: str) -> tuple[str, str | None]:
    """(reply text, name of the function it is the arguments of) of a reply the role's contract accepts."""
    if role == "companion-beat":  # strict mode: an optional property comes back as null
        return json.dumps({"action": "stay_quiet", "text": None, "reason": "it is late"}), None
    if role == "companion-delivery":  # return_call: the arguments of the return tool
        return json.dumps({"delivered": True, "summary": "sent the route"}), "delivery_done"
    for path in sorted((CASES / role).glob("ok*.txt")):
        lines = path.read_text(encoding="utf-8").splitlines(True)
        return "".join(line for line in lines if not line.startswith("# ")), None
    return "Hello!", None  # no contract: plain text


def _response(model: str, text: str, function: str | None) -> dict:
    """A Response object as the API returns it: one message, or one function call."""
    if function is None:
        item: dict = {
            "type": "message",
            "id": "msg_1",
            "status": "completed",
            "role": "assistant",
            "content": [{"type": "output_text", "text": text, "annotations": []}],
        }
    else:
        item = {"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": function, "arguments": text, "status": "completed"}
    return {
        "id": "resp_1",
        "object": "response",
        "created_at": 1764115200,
        "model": model,
        "status": "completed",
        "output": [item],
        "parallel_tool_calls": True,
        "tool_choice": "auto",
        "tools": [],
        "usage": {
            "input_tokens": 10,
            "input_tokens_details": {"cached_tokens": 0},
            "output_tokens": 5,
            "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": 15,
        },
    }


@pytest.mark.parametrize(("role", "state_file"), SHIPPED)
def test_the_sdk_sends_exactly_the_payload_and_reads_the_answer(wire_server, role, state_file):
    req = render(role, state_file, WIRE)
    payload = req.to_openai_responses(model=None if req.model else "gpt-5")
    text, function = _good_reply(role)
    wire_server.answer("/v1/responses", _response(payload["model"], text, function))
    from openai import OpenAI

    client = OpenAI(base_url=wire_server.url + "/v1", api_key="test", max_retries=0)
    response = client.responses.create(**payload)
    sent = wire_server.last
    assert sent.method == "POST" and sent.path == "/v1/responses"
    assert sent.json == payload
    assert responses_problems(payload) == []
    if function is None:
        assert response.output_text == text
    else:
        call = response.output[0]
        assert call.type == "function_call" and call.name == function
        text = call.arguments
    if req.output is not None:
        assert req.parse_reply(text) is not None


@pytest.mark.parametrize(("role", "state_file"), SHIPPED)
def test_the_count_is_the_chat_wires_and_the_documented_one(role, state_file):
    req = render(role, state_file, WIRE)
    chat = render(role, state_file, "openai")
    assert req.tokens == chat.tokens == documented_total(req)
    assert req.budget == chat.budget and req.exact == chat.exact
    assert len(req.to_openai_responses()["input"]) + 1 == len(chat.to_openai()["messages"])  # + instructions


def test_the_check_against_the_sdk_types_can_fail():
    good = render("companion-chat", "companion-chat.state.yaml", WIRE).to_openai_responses()
    assert responses_problems(good) == []
    chat_tools = render("companion-chat", "companion-chat.state.yaml", "openai").to_openai()["tools"]
    assert responses_problems({**good, "tools": chat_tools})  # nested under "function": the chat shape
    assert responses_problems({**good, "input": [{"role": "model", "content": "hi"}]})
    assert responses_problems({**good, "messages": []}) == ["$.messages: unknown key"]


# -- shape rules ------------------------------------------------------------------------------
def test_instructions_then_input_items_in_layout_order():
    req = render("companion-chat", "companion-chat.state.yaml", WIRE)
    payload = req.to_openai_responses()
    chat = render("companion-chat", "companion-chat.state.yaml", "openai").to_openai()["messages"]
    assert payload["instructions"] == chat[0]["content"] and payload["instructions"].startswith("You are Juniper")
    assert payload["input"] == chat[1:]
    history = state("companion-chat.state.yaml")["history"]
    assert [i["content"] for i in payload["input"][: len(history)]] == [t["content"] for t in history]
    assert list(payload) == ["instructions", "input", "max_output_tokens", "tools", "prompt_cache_key"]


def test_a_system_message_after_the_conversation_started_stays_a_system_item(make_project):
    from promptmill.compiling.api import build_in_memory

    rt, _ = build_in_memory(
        make_project(
            {
                "prompts/r.yaml": """kind: role
id: r
inputs: {type: object, properties: {q: {type: string}}}
sections:
  - {id: persona, text: You are terse.}
  - {id: question, template: "{{ q }}", message: user}
  - {id: reminder, text: Answer in one line., message: system}
"""
            }
        )
    )
    payload = rt.render("r", {"q": "3+3?"}, provider=WIRE).to_openai_responses(model="gpt-5")
    assert payload["instructions"] == "You are terse."
    assert payload["input"] == [{"role": "user", "content": "3+3?"}, {"role": "system", "content": "Answer in one line."}]
    assert responses_problems(payload) == []


def test_a_role_that_is_all_system_text_sends_it_as_input(make_project):
    from promptmill.compiling.api import build_in_memory

    rt, _ = build_in_memory(make_project({"prompts/r.yaml": "kind: role\nid: r\nsections:\n  - id: a\n    text: only a system prompt\n"}))
    payload = rt.render("r", {}, provider=WIRE).to_openai_responses()
    assert "instructions" not in payload
    assert payload["input"] == [{"role": "system", "content": "only a system prompt"}]


def test_tools_are_flat_functions_that_say_they_are_not_strict():
    payload = render("companion-chat", "companion-chat.state.yaml", WIRE).to_openai_responses()
    chat = render("companion-chat", "companion-chat.state.yaml", "openai").to_openai()["tools"]
    assert [t["name"] for t in payload["tools"]] == ["message_send", "message_react", "calendar_add"]
    for tool, old in zip(payload["tools"], chat, strict=True):
        # the Responses API makes a function strict when `strict` is left out, and would refuse these schemas
        assert tool == {"type": "function", **old["function"], "strict": False}
    delivery = render("companion-delivery", "companion-delivery.state.yaml", WIRE).to_openai_responses()
    assert delivery["tools"][-1]["name"] == "delivery_done" and "tool_choice" not in delivery


def test_a_native_contract_is_a_strict_text_format():
    payload = render("companion-beat", "companion-beat.state.yaml", WIRE).to_openai_responses()
    chat = render("companion-beat", "companion-beat.state.yaml", "openai").to_openai()["response_format"]
    assert payload["text"] == {"format": {"type": "json_schema", **chat["json_schema"]}}
    fmt = payload["text"]["format"]
    assert fmt["strict"] is True and fmt["name"] == "companion-beat-decision"
    assert fmt["schema"]["required"] == ["action", "text", "reason"] and fmt["schema"]["additionalProperties"] is False
    assert "response_format" not in payload


def test_a_strict_reply_is_read_back_without_the_nulls_strict_mode_added():
    req = render("companion-beat", "companion-beat.state.yaml", WIRE)
    assert req.parse_reply('{"action": "stay_quiet", "text": null, "reason": "it is late"}') == {
        "action": "stay_quiet",
        "reason": "it is late",
    }


def test_model_and_reply_limit_come_from_the_role_and_can_be_overridden():
    req = render("directive-triage", "directive-triage.state.yaml", WIRE)  # model: gpt-4o-mini, reserve 512
    payload = req.to_openai_responses()
    assert payload["model"] == "gpt-4o-mini" and payload["max_output_tokens"] == 512
    other = req.to_openai_responses(model="gpt-5", max_tokens=100)
    assert other == {**payload, "model": "gpt-5", "max_output_tokens": 100}
    assert "model" not in render("companion-chat", "companion-chat.state.yaml", WIRE).to_openai_responses()


@pytest.mark.parametrize("limit", [1, 15])
def test_a_reply_limit_the_api_refuses_is_pm842(limit):
    req = render("directive-triage", "directive-triage.state.yaml", WIRE)
    with pytest.raises(ProviderError) as err:
        req.to_openai_responses(max_tokens=limit)
    assert err.value.code == "PM842" and f"reply limit of {limit} tokens" in err.value.message
    assert req.to_openai_responses(max_tokens=16)["max_output_tokens"] == 16


def test_a_request_for_another_wire_is_refused_both_ways():
    with pytest.raises(ProviderError) as err:
        render("executor", "executor.state.yaml", "openai").to_openai_responses()
    assert err.value.code == "PM841"
    with pytest.raises(ProviderError) as err:
        render("executor", "executor.state.yaml", WIRE).to_openai()
    assert err.value.code == "PM841"


def test_the_wire_is_openais_and_counts_like_the_chat_wire():
    wire, chat = get_wire(WIRE), get_wire("openai")
    assert wire.provider == "openai" and wire.name == WIRE
    assert (wire.message_overhead, wire.fixed_overhead, wire.schema_form) == (chat.message_overhead, chat.fixed_overhead, chat.schema_form)
    req = runtime().render("executor", state("executor.state.yaml"), model="gpt-5", provider=WIRE)
    assert req.exact and req.count_note == "exact" and req.to_openai_responses()["model"] == "gpt-5"
    assert req.trace_attributes["gen_ai.provider.name"] == "openai"
    assert req.trace_attributes["promptmill.wire"] == WIRE


# -- prompt_cache_key -----------------------------------------------------------------------
def test_the_cache_key_is_shared_by_a_roles_renders_with_one_stable_prefix():
    s = state("companion-chat.state.yaml")
    one = runtime().render("companion-chat", s, provider=WIRE).to_openai_responses()
    changed = dict(s, message="something else entirely", history=s["history"][:2])
    two = runtime().render("companion-chat", changed, provider=WIRE).to_openai_responses()
    assert one["input"] != two["input"]
    assert one["prompt_cache_key"] == two["prompt_cache_key"]
    keys = {render(role, f, WIRE).to_openai_responses()["prompt_cache_key"] for role, f in SHIPPED}
    assert len(keys) == len(SHIPPED)  # one per role
    assert all(k.startswith("pm-") and len(k) <= 64 for k in keys)


def test_the_cache_key_follows_the_stable_prefix_and_keeps_within_64_characters(make_project):
    from promptmill.compiling.api import build_in_memory

    role_id = "a-role-whose-id-is-much-longer-than-forty-characters-" + "x" * 20

    def key(persona: str) -> str:
        rt, _ = build_in_memory(
            make_project(
                {
                    "prompts/r.yaml": f"""kind: role
id: {role_id}
inputs: {{type: object, properties: {{q: {{type: string}}}}}}
sections:
  - {{id: persona, text: {persona}}}
  - {{id: question, template: "{{{{ q }}}}", message: user}}
"""
                }
            )
        )
        return rt.render(role_id, {"q": "hi"}, provider=WIRE).to_openai_responses()["prompt_cache_key"]

    terse, chatty = key("You are terse."), key("You are chatty.")
    assert terse != chatty and terse[:43] == chatty[:43] == "pm-" + role_id[:40]
    assert len(terse) == 60 and key("You are terse.") == terse


def test_a_role_without_caching_sends_no_cache_key():
    req = render("companion-chat", "companion-chat.state.yaml", WIRE)
    assert "prompt_cache_key" in req.to_openai_responses()
    assert "prompt_cache_key" not in dataclasses.replace(req, cache=False).to_openai_responses()


def test_cli_render_format_openai_responses():
    from click.testing import CliRunner

    from promptmill.cli.main import main
    from providers_support import EXAMPLES, ROOT

    args = ["render", "companion-beat", "--project", str(ROOT), "--state", str(EXAMPLES / "companion-beat.state.yaml")]
    result = CliRunner().invoke(main, [*args, "--format", WIRE])
    assert result.exit_code == 0, result.output
    assert json.loads(result.output) == render("companion-beat", "companion-beat.state.yaml", WIRE).to_openai_responses()


def test_a_role_or_project_can_name_the_wire_as_its_provider(make_project, tmp_path):
    from promptmill.batch import run_batch
    from promptmill.compiling.api import build_in_memory, compile

    files = {
        "promptmill.yaml": "provider: openai-responses\n",
        "prompts/r.yaml": """kind: role
id: r
model: gpt-5
inputs: {type: object, properties: {q: {type: string}}}
sections:
  - {id: persona, text: You are terse.}
  - {id: question, template: "{{ q }}", message: user}
""",
    }
    root = make_project(files)
    rt, diags = build_in_memory(root)
    assert [d for d in diags if d.severity == "error"] == []
    req = rt.render("r", {"q": "hi"})
    assert req.provider == WIRE and req.to_payload()["instructions"] == "You are terse."
    compile(root, output=tmp_path / "build")
    rows = tmp_path / "rows.jsonl"
    rows.write_text('{"q": "hi"}\n', encoding="utf-8")
    summary = run_batch("r", rows, tmp_path / "out", build=tmp_path / "build")
    assert summary["provider"] == WIRE
    line = json.loads((tmp_path / "out" / "requests-00001.jsonl").read_text(encoding="utf-8"))
    assert line["url"] == "/v1/responses" and line["body"]["model"] == "gpt-5"
