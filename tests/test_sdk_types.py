"""Every payload is checked against the official SDKs' request types (dev extras).

- openai: `CompletionCreateParamsNonStreaming` (a TypedDict) through pydantic;
- anthropic: `MessageCreateParamsNonStreaming` (a TypedDict) through pydantic;
- google-genai: `Content`, `GenerateContentConfig`, `FunctionDeclaration` and
  `Schema` (pydantic models that forbid unknown fields).

pydantic validates the SDKs' `Iterable[...]` fields lazily and ignores unknown
keys of TypedDicts, so `typed_dict_problems` consumes every iterable and then
compares the validated value with the payload: a dropped key is an unknown
key, a changed value a coercion. Each check is proven to fail on a wrong
payload below.
"""

from __future__ import annotations

from typing import Any

import pytest

from promptmill.wires.gemini import genai_kwargs
from providers_support import SHIPPED, render

# The SDKs and pydantic are imported where they are used, not at the top: every pytest-xdist process
# collects this file (and test_openai_responses.py, which imports it), and those imports cost seconds
# in the process that does not run it.
_ADAPTERS: dict[Any, Any] = {}  # SDK type -> its pydantic TypeAdapter


def _force(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _force(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)) or type(value).__name__ == "ValidatorIterator":
        return [_force(v) for v in value]
    return value


def _diff(sent: Any, valid: Any, path: str = "$") -> list[str]:
    if isinstance(sent, dict) and isinstance(valid, dict):
        out = []
        for k, v in sent.items():
            out += [f"{path}.{k}: unknown key"] if k not in valid else _diff(v, valid[k], f"{path}.{k}")
        return out
    if isinstance(sent, list) and isinstance(valid, list) and len(sent) == len(valid):
        return [p for i, (a, b) in enumerate(zip(sent, valid, strict=True)) for p in _diff(a, b, f"{path}[{i}]")]
    if type(sent) is not type(valid) or sent != valid:
        return [f"{path}: {sent!r} became {valid!r}"]
    return []


def typed_dict_problems(kind: Any, payload: dict) -> list[str]:
    """Why `payload` is not a valid `kind` (a TypedDict of an SDK); [] when it is."""
    from pydantic import TypeAdapter, ValidationError

    adapter = _ADAPTERS.setdefault(kind, TypeAdapter(kind))  # kept alive: lazy validators need it
    try:
        valid = _force(adapter.validate_python(payload))
    except ValidationError as exc:
        return [str(exc).splitlines()[0] + ": " + "; ".join(e["msg"] + " at " + ".".join(map(str, e["loc"])) for e in exc.errors()[:5])]
    return _diff(payload, valid)


def openai_problems(payload: dict) -> list[str]:
    from openai.types.chat.completion_create_params import CompletionCreateParamsNonStreaming

    return typed_dict_problems(CompletionCreateParamsNonStreaming, {"model": "gpt-4o", **payload})


def anthropic_problems(payload: dict) -> list[str]:
    from anthropic.types.message_create_params import MessageCreateParamsNonStreaming

    return typed_dict_problems(MessageCreateParamsNonStreaming, {"model": "claude-sonnet-4-5", "max_tokens": 1024, **payload})


def gemini_problems(payload: dict) -> list[str]:
    from google.genai import types as genai
    from pydantic import ValidationError

    kwargs = genai_kwargs(payload)
    problems = []
    try:
        for content in kwargs["contents"]:
            genai.Content.model_validate(content)
        config = kwargs.get("config", {})
        genai.GenerateContentConfig.model_validate(config)
        for tool in config.get("tools", ()):
            for decl in tool["function_declarations"]:
                genai.FunctionDeclaration.model_validate(decl)
        if "response_schema" in config:  # a dict passes GenerateContentConfig unchecked
            genai.Schema.model_validate(config["response_schema"])
    except ValidationError as exc:
        problems.append(str(exc))
    return problems


@pytest.mark.parametrize(("role", "state_file"), SHIPPED)
def test_openai_payloads_match_the_sdk(role, state_file):
    assert openai_problems(render(role, state_file, "openai").to_openai()) == []


@pytest.mark.parametrize(("role", "state_file"), SHIPPED)
def test_anthropic_payloads_match_the_sdk(role, state_file):
    payload = render(role, state_file, "anthropic").to_anthropic()
    payload.pop("max_tokens", None)
    assert anthropic_problems(payload) == []


@pytest.mark.parametrize(("role", "state_file"), SHIPPED)
def test_gemini_payloads_match_the_sdk(role, state_file):
    assert gemini_problems(render(role, state_file, "gemini").to_gemini()) == []


# -- the checks can fail -------------------------------------------------------------
def test_openai_check_rejects_a_wrong_payload():
    good = render("companion-chat", "companion-chat.state.yaml", "openai").to_openai()
    bad_tool = {**good, "tools": [{"type": "function", "name": "x", "parameters": {}}]}  # Responses-API shape
    assert openai_problems(bad_tool)
    assert openai_problems({**good, "messages": [{"role": "model", "content": "hi"}]})
    assert openai_problems({**good, "system": "top-level system is Anthropic's"}) == ["$.system: unknown key"]


def test_anthropic_check_rejects_a_wrong_payload():
    good = render("companion-chat", "companion-chat.state.yaml", "anthropic").to_anthropic()
    good.pop("max_tokens")
    openai_style_tools = [{"name": "x", "parameters": {"type": "object"}}]
    assert anthropic_problems({**good, "tools": openai_style_tools})
    wrong_cache = [{**good["system"][0], "cache_control": {"type": "ephemeral", "ttl_minutes": 5}}]
    assert anthropic_problems({**good, "system": wrong_cache}) == ["$.system[0].cache_control.ttl_minutes: unknown key"]
    assert anthropic_problems({**good, "tool_choice": {"type": "function", "name": "x"}})


def test_gemini_check_rejects_a_wrong_payload():
    good = render("companion-beat", "companion-beat.state.yaml", "gemini").to_gemini()
    assert gemini_problems({**good, "contents": [{"role": "user", "text": "parts are missing"}]})
    schema = dict(good["generation_config"]["response_schema"], const="JSON Schema, not Gemini's Schema")
    assert gemini_problems({**good, "generation_config": {**good["generation_config"], "response_schema": schema}})
    assert gemini_problems({**good, "tools": [{"functions": []}]})
