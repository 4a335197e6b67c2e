"""Renderers: golden payloads of the shipped roles, and each provider's shape rules.

Goldens live in tests/golden/renderers/: <role>.<provider>.json (tokens and
payload) and <role>.prompt.txt (the text prompt, for readable diffs), one set
for every shipped role with its example state. After an intended change,
refresh them with

    PROMPTMILL_UPDATE_GOLDEN=1 pytest tests/test_renderers.py

and review the diff in git. A mismatch fails with a unified diff.
"""

from __future__ import annotations

import difflib
import json
import os
from pathlib import Path

import pytest

from promptmill.core.errors import ProviderError
from promptmill.wires.gemini import genai_kwargs
from providers_support import PROVIDERS, SHIPPED, render, runtime, state

GOLDEN = Path(__file__).resolve().parent / "golden" / "renderers"
UPDATE = os.environ.get("PROMPTMILL_UPDATE_GOLDEN") == "1"


def _dump(data) -> str:
    return json.dumps(data, ensure_ascii=False, indent=2, sort_keys=False) + "\n"


def check_golden(path: Path, got: str) -> None:
    """Compare `got` with the golden file at `path` (write it with PROMPTMILL_UPDATE_GOLDEN=1);
    a mismatch fails with a unified diff."""
    if UPDATE:
        path.write_text(got, encoding="utf-8")
        return
    if not path.exists():
        pytest.fail(f"no golden file {path.name}; create it with PROMPTMILL_UPDATE_GOLDEN=1")
    want = path.read_text(encoding="utf-8")
    if got != want:
        diff = "".join(difflib.unified_diff(want.splitlines(True), got.splitlines(True), f"golden/{path.name}", "rendered"))
        pytest.fail(f"{path.name} differs from the golden file (refresh: PROMPTMILL_UPDATE_GOLDEN=1):\n{diff}")


@pytest.mark.parametrize("provider", PROVIDERS)
@pytest.mark.parametrize(("role", "state_file"), SHIPPED)
def test_golden_payload(role, state_file, provider):
    req = render(role, state_file, provider)
    check_golden(GOLDEN / f"{role}.{provider}.json", _dump({"tokens": req.tokens, "exact": req.exact, "payload": req.to_payload()}))


@pytest.mark.parametrize(("role", "state_file"), SHIPPED)
def test_golden_prompt_text(role, state_file):
    """The text prompt as plain text too, so a change shows as a readable line diff."""
    check_golden(GOLDEN / f"{role}.prompt.txt", render(role, state_file, "text").to_text()["prompt"] + "\n")


def test_every_golden_file_is_used():
    expected = {f"{r}.{p}.json" for r, _ in SHIPPED for p in PROVIDERS} | {f"{r}.prompt.txt" for r, _ in SHIPPED}
    assert {p.name for p in GOLDEN.iterdir()} == expected


def test_a_changed_golden_fails_with_a_readable_diff(tmp_path, monkeypatch):
    monkeypatch.setitem(globals(), "UPDATE", False)  # also when goldens are being refreshed
    path = tmp_path / "r.prompt.txt"
    path.write_text("GOAL:\nAdd type hints\n---\nCONSTRAINTS:\n", encoding="utf-8")
    with pytest.raises(pytest.fail.Exception) as failed:
        check_golden(path, "GOAL:\nAdd tests\n---\nCONSTRAINTS:\n")
    text = str(failed.value)
    assert "PROMPTMILL_UPDATE_GOLDEN=1" in text
    assert "--- golden/r.prompt.txt\n+++ rendered\n" in text
    assert "-Add type hints\n+Add tests\n" in text
    check_golden(path, "GOAL:\nAdd type hints\n---\nCONSTRAINTS:\n")  # equal: passes


# -- shape rules ------------------------------------------------------------------
def test_openai_system_first_and_history_as_messages():
    req = render("companion-chat", "companion-chat.state.yaml", "openai")
    msgs = req.to_openai()["messages"]
    assert msgs[0]["role"] == "system" and msgs[0]["content"].startswith("You are Juniper")
    history = state("companion-chat.state.yaml")["history"]
    assert [m["content"] for m in msgs[1 : 1 + len(history)]] == [t["content"] for t in history]
    assert msgs[-1]["role"] == "user" and msgs[-1]["content"].endswith("here's the route")


def test_native_tools_leave_the_text_and_keep_their_order():
    req = render("companion-chat", "companion-chat.state.yaml", "openai")
    names = [t["function"]["name"] for t in req.to_openai()["tools"]]
    assert names == ["message_send", "message_react", "calendar_add"]
    assert "calendar_add" not in "".join(m.content for m in req.messages)
    assert [t["name"] for t in req.tools] == names
    section = req.section("app_tools")
    assert section.present and section.text == "" and section.tokens > 0


def test_native_tools_fall_back_to_inline_text_on_the_text_wire():
    req = render("companion-chat", "companion-chat.state.yaml", "text")
    assert req.tools == ()
    prompt = req.to_text()["prompt"]
    assert "- calendar_add: Add an event to the group calendar." in prompt
    assert "- message_send: Send a message to the current chat." in prompt


def test_anthropic_cache_breakpoint_on_the_last_stable_block():
    payload = render("companion-chat", "companion-chat.state.yaml", "anthropic").to_anthropic()
    system = payload["system"]
    assert len(system) == 2  # the stable prefix, then the semi-stable summary
    assert system[0]["cache_control"] == {"type": "ephemeral"}
    assert "cache_control" not in system[1]
    assert system[1]["text"].startswith("What you remember about this chat:")
    flat = json.dumps(payload["messages"])
    assert "cache_control" not in flat


def test_anthropic_without_caching_has_no_breakpoint():
    import dataclasses

    req = render("companion-chat", "companion-chat.state.yaml", "anthropic")
    req = dataclasses.replace(req, cache=False)
    assert "cache_control" not in json.dumps(req.to_anthropic())


def test_anthropic_merges_consecutive_user_messages_into_one_turn():
    payload = render("companion-chat", "companion-chat.state.yaml", "anthropic").to_anthropic()
    roles = [m["role"] for m in payload["messages"]]
    assert all(a != b for a, b in zip(roles, roles[1:], strict=False)), roles
    assert roles[0] == "user"


def test_anthropic_native_contract_is_a_forced_tool():
    payload = render("companion-beat", "companion-beat.state.yaml", "anthropic").to_anthropic()
    assert payload["tool_choice"] == {"type": "tool", "name": "return_result"}
    tool = payload["tools"][-1]
    assert tool["name"] == "return_result" and tool["input_schema"]["required"] == ["action", "reason"]
    assert payload["max_tokens"] == 1500


def test_openai_native_contract_is_a_strict_response_format():
    payload = render("companion-beat", "companion-beat.state.yaml", "openai").to_openai()
    fmt = payload["response_format"]
    assert fmt["type"] == "json_schema" and fmt["json_schema"]["strict"] is True
    schema = fmt["json_schema"]["schema"]
    assert schema["required"] == ["action", "text", "reason"]
    assert schema["properties"]["text"]["type"] == ["string", "null"]
    assert schema["additionalProperties"] is False


def test_gemini_roles_parts_and_response_schema():
    payload = render("companion-chat", "companion-chat.state.yaml", "gemini").to_gemini()
    assert {c["role"] for c in payload["contents"]} == {"user", "model"}
    assert len(payload["system_instruction"]["parts"]) == 2
    decls = payload["tools"][0]["function_declarations"]
    assert decls[0]["parameters"]["type"] == "OBJECT"
    beat = render("companion-beat", "companion-beat.state.yaml", "gemini").to_gemini()
    config = beat["generation_config"]
    assert config["response_mime_type"] == "application/json"
    assert config["response_schema"]["properties"]["action"]["enum"] == ["send_message", "write_note", "stay_quiet"]
    kwargs = genai_kwargs(beat)
    assert set(kwargs) == {"contents", "config"} and "response_schema" in kwargs["config"]


def test_return_call_contract_declares_its_tool_without_forcing_it():
    for provider in ("openai", "anthropic", "gemini"):
        payload = render("companion-delivery", "companion-delivery.state.yaml", provider).to_payload()
        assert "delivery_done" in json.dumps(payload["tools"]), provider
        assert "tool_choice" not in payload


def test_native_contract_falls_back_to_json_instructions_on_text():
    text = render("companion-beat", "companion-beat.state.yaml", "text").to_text()["prompt"]
    assert "Respond with only a JSON object" in text and '"action": "send_message|write_note|stay_quiet"' in text
    chat = render("companion-beat", "companion-beat.state.yaml", "openai")
    assert "Respond with only a JSON object" not in "".join(m.content for m in chat.messages)
    assert chat.section("decision.json").status == "skipped"


def test_live_is_one_flat_string():
    payload = render("companion-live", "companion-live.state.yaml", "live").to_live()
    assert set(payload) == {"instructions"} and isinstance(payload["instructions"], str)
    assert "You are speaking, not writing:" in payload["instructions"]
    assert "message_send" not in payload["instructions"]


def test_parts_split_by_stability():
    parts = render("companion-chat", "companion-chat.state.yaml", "openai").parts
    assert [s.id for s in parts["stable"]] == ["persona", "voice", "message_tools"]
    assert [s.id for s in parts["semi"]] == ["context_summary"]
    assert "message" in [s.id for s in parts["dynamic"]]


def test_a_request_refuses_another_provider():
    req = render("executor", "executor.state.yaml", "openai")
    with pytest.raises(ProviderError) as err:
        req.to_anthropic()
    assert err.value.code == "PM841"


@pytest.mark.parametrize("name", ["mistral", "", "OpenAI"])
def test_unknown_provider_lists_the_valid_ones(name):
    # "" is not "the role's provider" (that is None): an empty setting must not pass silently
    with pytest.raises(ProviderError) as err:
        runtime().render("executor", state("executor.state.yaml"), provider=name)
    assert err.value.code == "PM840"
    assert "text, live, openai, anthropic, gemini" in err.value.hint


def test_all_system_role_cannot_be_sent_to_anthropic(tmp_path):
    from promptmill.compiling.api import build_in_memory

    (tmp_path / "prompts").mkdir()
    (tmp_path / "prompts" / "r.yaml").write_text("kind: role\nid: r\nsections:\n  - id: a\n    text: only a system prompt\n")
    rt, _ = build_in_memory(tmp_path)
    for provider in ("anthropic", "gemini"):
        with pytest.raises(ProviderError) as err:
            rt.render("r", {}, provider=provider).to_payload()
        assert err.value.code == "PM842"
    assert rt.render("r", {}, provider="openai").to_openai()["messages"][0]["role"] == "system"


def test_cli_render_format(tmp_path):
    from click.testing import CliRunner

    from promptmill.cli.main import main
    from providers_support import EXAMPLES, ROOT

    result = CliRunner().invoke(
        main,
        [
            "render",
            "companion-chat",
            "--project",
            str(ROOT),
            "--state",
            str(EXAMPLES / "companion-chat.state.yaml"),
            "--format",
            "anthropic",
        ],
    )
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)["system"][0]["cache_control"] == {"type": "ephemeral"}
    text = CliRunner().invoke(
        main,
        ["render", "companion-beat", "--project", str(ROOT), "--state", str(EXAMPLES / "companion-beat.state.yaml"), "--format", "text"],
    )
    assert text.exit_code == 0 and "Respond with only a JSON object" in text.output  # fitted for the text wire
    bad = CliRunner().invoke(main, ["render", "executor", "--project", str(ROOT), "--format", "cohere"])
    assert bad.exit_code == 2 and "'openai'" in bad.output


def _project(make_project, files: dict[str, str]):
    from promptmill.compiling.api import build_in_memory

    return build_in_memory(make_project({f"prompts/{name}": text for name, text in files.items()}))


def test_cache_breakpoint_moves_into_a_stable_user_message(make_project):
    rt, _ = _project(
        make_project,
        {
            "r.yaml": """kind: role
id: r
inputs: {type: object, properties: {q: {type: string}}}
sections:
  - {id: persona, text: You are terse.}
  - {id: examples, text: "Q: 2+2? A: 4", message: user}
  - {id: question, template: "{{ q }}"}
"""
        },
    )
    payload = rt.render("r", {"q": "3+3?"}, provider="anthropic").to_anthropic()
    assert "cache_control" not in payload["system"][0]
    first = payload["messages"][0]["content"]
    assert first[0] == {"type": "text", "text": "Q: 2+2? A: 4", "cache_control": {"type": "ephemeral"}}
    assert first[1] == {"type": "text", "text": "3+3?"}


def test_a_history_that_starts_with_the_assistant(make_project):
    rt, _ = _project(
        make_project,
        {
            "r.yaml": """kind: role
id: r
inputs: {type: object, properties: {h: {type: array, items: {type: object}}}}
sections:
  - {id: persona, text: You are terse.}
  - {id: h, history: h}
"""
        },
    )
    req = rt.render("r", {"h": [{"role": "assistant", "content": "Hello!"}, {"role": "user", "content": "hi"}]}, provider="anthropic")
    with pytest.raises(ProviderError) as err:
        req.to_anthropic()
    assert err.value.code == "PM842" and "assistant" in err.value.message


def test_openai_sends_a_schema_strict_mode_cannot_express_without_strict(make_project):
    from test_sdk_types import openai_problems

    rt, diags = _project(
        make_project,
        {
            "c.yaml": """kind: output
id: scores
style: native
schema:
  type: object
  required: [scores]
  properties:
    scores: {type: object, additionalProperties: {type: number}}
""",
            "r.yaml": """kind: role
id: r
output: scores
sections:
  - {id: ask, text: Score each answer., message: user}
""",
        },
    )
    assert [d.code for d in diags] == ["PM705"]
    payload = rt.render("r", {}, provider="openai").to_openai()
    fmt = payload["response_format"]["json_schema"]
    assert fmt["strict"] is False and fmt["schema"]["properties"]["scores"]["additionalProperties"] == {"type": "number"}
    assert openai_problems(payload) == []


def test_payloads_carry_the_roles_model_and_reply_limit_and_both_can_be_overridden():
    s = state("directive-triage.state.yaml")  # the role declares model: gpt-4o-mini, budget.reserve 512
    openai = render("directive-triage", "directive-triage.state.yaml", "openai")
    assert openai.to_openai()["model"] == "gpt-4o-mini" and openai.to_openai()["max_completion_tokens"] == 512
    assert openai.to_openai(model="gpt-4o", max_tokens=100) | {"messages": None} == {
        **openai.to_openai(),
        "model": "gpt-4o",
        "max_completion_tokens": 100,
        "messages": None,
    }
    anthropic = runtime().render("directive-triage", s, provider="anthropic")
    assert anthropic.to_anthropic()["model"] == "gpt-4o-mini" and anthropic.to_anthropic()["max_tokens"] == 512
    assert anthropic.to_anthropic(model="claude-sonnet-4-6")["model"] == "claude-sonnet-4-6"
    gemini = runtime().render("directive-triage", s, provider="gemini")
    assert "model" not in gemini.to_gemini()  # the REST body has none: the model is in the URL
    assert gemini.to_gemini()["generation_config"]["max_output_tokens"] == 512
    kwargs = genai_kwargs(gemini.to_gemini(max_tokens=64), gemini.model)
    assert kwargs["model"] == "gpt-4o-mini" and kwargs["config"]["max_output_tokens"] == 64


def test_a_role_without_a_model_leaves_model_to_the_caller():
    req = render("companion-chat", "companion-chat.state.yaml", "openai")
    assert req.model is None and "model" not in req.to_openai()
    assert req.to_openai(model="gpt-4o")["model"] == "gpt-4o"
