"""Claude and Gemini on Vertex AI, sent by the official SDKs to a local server (tests/wire_server.py).

`anthropic.AnthropicVertex` and google-genai's `Client(vertexai=True)` are pointed at the
recording server; for every shipped role the body on the wire must be the payload promptmill
rendered (the model in the URL path, not in the body), and the SDK must read the server's answer,
shaped as the provider answers, back into its own types. The Anthropic cache breakpoints
(`cache_control`, on the stable prefix and on the stable tools) must survive the SDK, on the
`anthropic` wire and on `anthropic-vertex`.
"""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING, Any

import pytest

from promptmill.runtime.models import resolve_model
from promptmill.wires.gemini import genai_kwargs
from providers_support import SHIPPED, render

if TYPE_CHECKING:
    import anthropic

CLAUDE = "claude-sonnet-4-5@20250929"  # a Vertex model id: the version after `@`
GEMINI = "gemini-2.5-flash"
CACHE = {"type": "ephemeral"}


def _message(content: list[dict]) -> dict:
    """A Messages API answer, as Anthropic (and Claude on Vertex) sends it."""
    usage = {"input_tokens": 1200, "output_tokens": 20, "cache_read_input_tokens": 1024}
    return {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": "claude-sonnet-4-5",
        "content": content,
        "stop_reason": "end_turn",
        "stop_sequence": None,
        "usage": usage,
    }


def _claude_answer(payload: dict) -> tuple[dict, Any]:
    """The server's answer for `payload`: a call of the forced tool, else text; and what it carries."""
    forced = payload.get("tool_choice", {}).get("name")
    if forced is not None:
        data = {"action": "stay_quiet", "reason": "nobody asked"}
        return _message([{"type": "tool_use", "id": "toolu_1", "name": forced, "input": data}]), data
    return _message([{"type": "text", "text": "Hello there."}]), "Hello there."


# anthropic and google-genai are imported in the tests that use them: every pytest-xdist process
# collects this file, and those imports cost seconds in the process that does not run it.
def _vertex_client(server) -> anthropic.AnthropicVertex:
    import anthropic

    return anthropic.AnthropicVertex(base_url=server.url, region="us-east5", project_id="proj", access_token="test", max_retries=0)


def _send_vertex(client: anthropic.AnthropicVertex, body: dict, model: str = CLAUDE):
    """`messages.create` with the body as the docs show it: `anthropic_version` through `extra_body`."""
    kwargs = dict(body)
    version = kwargs.pop("anthropic_version")
    return client.messages.create(model=model, **kwargs, extra_body={"anthropic_version": version})


@pytest.mark.parametrize(("role", "state_file"), SHIPPED)
def test_anthropic_vertex_sends_the_body_and_reads_the_answer(wire_server, role, state_file):
    req = render(role, state_file, "anthropic-vertex")
    body = req.to_anthropic_vertex()
    assert "model" not in body and body["anthropic_version"] == "vertex-2023-10-16"
    answer, carried = _claude_answer(body)
    wire_server.answer(":rawPredict", answer)
    message = _send_vertex(_vertex_client(wire_server), body)
    sent = wire_server.last
    assert sent.method == "POST"
    assert sent.path == f"/projects/proj/locations/us-east5/publishers/anthropic/models/{CLAUDE}:rawPredict"
    assert sent.json == body  # every key and value, nothing added or dropped
    assert sent.headers["authorization"] == "Bearer test"
    block = message.content[0]
    if block.type == "tool_use":
        assert block.input == carried
        if req.output is not None and req.output.style == "native":
            assert req.parse_reply(block.input) == carried
    else:
        assert block.text == carried
    assert message.usage.cache_read_input_tokens == 1024


@pytest.mark.parametrize(("role", "state_file"), SHIPPED)
def test_gemini_vertex_sends_the_body_and_reads_the_answer(wire_server, role, state_file):
    req = render(role, state_file, "gemini-vertex")
    body = req.to_gemini_vertex()
    assert "model" not in body and all(c.get("role") in ("user", "model") for c in body["contents"])  # Vertex wants a role on each
    native = req.output is not None and req.output.style == "native"
    data = {"action": "stay_quiet", "reason": "nobody asked"}
    text = json.dumps(data) if native else "Hello there."
    wire_server.answer(
        ":generateContent",
        {
            "candidates": [{"content": {"role": "model", "parts": [{"text": text}]}, "finishReason": "STOP"}],
            "usageMetadata": {"promptTokenCount": 1200, "candidatesTokenCount": 20},
        },
    )
    from google import genai
    from google.genai import types
    from google.oauth2.credentials import Credentials

    client = genai.Client(
        vertexai=True,
        project="proj",
        location="us-central1",
        credentials=Credentials(token="test"),
        http_options=types.HttpOptions(base_url=wire_server.url),
    )
    reply = client.models.generate_content(**genai_kwargs(body, GEMINI))
    sent = wire_server.last
    assert re.fullmatch(
        rf"/v1[a-z0-9]*/projects/proj/locations/us-central1/publishers/google/models/{GEMINI}:generateContent", sent.path
    ), sent.path
    assert sent.headers["authorization"] == "Bearer test"
    # google-genai sends the proto JSON names (systemInstruction); Vertex AI reads both spellings
    assert _proto_names(sent.json) == _proto_names(body)
    assert reply.text == text
    if native:
        assert reply.parsed == data and req.parse_reply(reply.text) == data


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


def _proto_names(data: Any, under_properties: bool = False) -> Any:
    """`data` with every field name in proto JSON's lowerCamelCase; the names of a schema's
    `properties` (the caller's own field names) are left as they are."""
    if isinstance(data, dict):
        return {
            (k if under_properties else _camel(k)): _proto_names(v, k == "properties" and not under_properties) for k, v in data.items()
        }
    if isinstance(data, list):
        return [_proto_names(v) for v in data]
    return data


def test_the_proto_name_comparison_can_fail():
    body = render("companion-beat", "companion-beat.state.yaml", "gemini-vertex").to_gemini_vertex()
    assert _proto_names(body) != _proto_names({**body, "contents": body["contents"][:-1] + [{"role": "user", "parts": [{"text": "x"}]}]})
    renamed = json.loads(json.dumps(body).replace('"reply_to"', '"replyTo"'))
    assert _proto_names(body) != _proto_names(renamed)  # a caller's property name is data, not a field name


def test_cache_breakpoints_reach_the_bytes_the_anthropic_sdk_sends(wire_server):
    # companion-beat: a stable system prefix, stable message tools and the forced return tool
    payload = render("companion-beat", "companion-beat.state.yaml", "anthropic").to_anthropic(model="claude-sonnet-4-6")
    wire_server.answer("/v1/messages", _claude_answer(payload)[0])
    import anthropic

    anthropic.Anthropic(base_url=wire_server.url, api_key="test", max_retries=0).messages.create(**payload)
    sent = wire_server.last.json
    assert sent == payload
    assert sent["system"][0]["cache_control"] == CACHE
    assert sent["tools"][-1]["cache_control"] == CACHE and sent["tools"][-1]["name"] == "return_result"
    assert json.dumps(sent).count("cache_control") == 2


def test_cache_breakpoints_reach_the_bytes_the_vertex_sdk_sends(wire_server):
    body = render("companion-chat", "companion-chat.state.yaml", "anthropic-vertex").to_anthropic_vertex()
    wire_server.answer(":rawPredict", _claude_answer(body)[0])
    _send_vertex(_vertex_client(wire_server), body)
    sent = wire_server.last.json
    assert sent["system"][0]["cache_control"] == CACHE
    # the stable message tools end with a breakpoint; the app tools after them change, and carry none
    assert [t["name"] for t in sent["tools"] if "cache_control" in t] == ["message_react"]
    assert "cache_control" not in sent["tools"][-1]


@pytest.mark.parametrize("model", [CLAUDE, "claude-opus-4-5@20251101", "claude-haiku-4-5@20251001", "claude-3-5-haiku@20241022"])
def test_vertex_model_ids_find_their_claude_row(model):
    info = resolve_model(model)
    assert info is not None and info.provider == "anthropic" and info.cache_breakpoints == 4
    plain = resolve_model(model.split("@")[0])
    assert plain is not None and info.pattern == plain.pattern


def test_a_vertex_render_counts_with_the_claude_row():
    # the ratio and the breakpoint limit of the Claude row reach a render on the Vertex wire
    req = render("companion-chat", "companion-chat.state.yaml", "anthropic-vertex", model=CLAUDE)
    assert req.ratio == resolve_model(CLAUDE).ratio == 1.2 and req.ratio_for == CLAUDE
    assert req.cache_breakpoints == 4
    unnamed = render("companion-chat", "companion-chat.state.yaml", "anthropic-vertex")
    assert unnamed.ratio == 1.53 and unnamed.ratio_for == "any anthropic model"  # the table's largest Claude ratio
    gemini = render("companion-chat", "companion-chat.state.yaml", "gemini-vertex", model=GEMINI)
    assert gemini.ratio == 1.2 and gemini.ratio_for == GEMINI


def test_vertex_requests_name_vertex_ai_in_their_trace_attributes():
    for wire in ("anthropic-vertex", "gemini-vertex"):
        attrs = render("companion-chat", "companion-chat.state.yaml", wire).trace_attributes
        assert attrs["gen_ai.provider.name"] == "gcp.vertex_ai" and attrs["promptmill.wire"] == wire


@pytest.mark.parametrize(("fmt", "key"), [("anthropic-vertex", "anthropic_version"), ("gemini-vertex", "system_instruction")])
def test_render_prints_the_vertex_bodies(fmt, key):
    from click.testing import CliRunner

    from promptmill.cli.main import main
    from providers_support import EXAMPLES, ROOT

    args = ["render", "companion-beat", "--project", str(ROOT), "--state", str(EXAMPLES / "companion-beat.state.yaml"), "--format", fmt]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    printed = json.loads(result.output)
    assert key in printed and "model" not in printed
    assert printed == render("companion-beat", "companion-beat.state.yaml", fmt).to_payload()


@pytest.mark.parametrize(("role", "state_file"), SHIPPED)
def test_vertex_bodies_match_the_sdk_request_types(role, state_file):
    from test_sdk_types import anthropic_problems, gemini_problems

    claude = render(role, state_file, "anthropic-vertex").to_anthropic_vertex()
    assert claude.pop("anthropic_version") == "vertex-2023-10-16"
    claude.pop("max_tokens", None)
    assert anthropic_problems(claude) == []
    assert gemini_problems(render(role, state_file, "gemini-vertex").to_gemini_vertex()) == []
