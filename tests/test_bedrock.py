"""Amazon Bedrock: the Converse wire (`bedrock`), Claude's InvokeModel body (`anthropic-bedrock`),
Bedrock model ids in the model table, and the bytes boto3 and `AnthropicBedrock` really send.

Goldens live in tests/golden/bedrock/<role>.<wire>.json (refresh with PROMPTMILL_UPDATE_GOLDEN=1,
as tests/test_renderers.py's).
"""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
from pathlib import Path

import pytest

from promptmill import anthropic_bedrock_kwargs
from promptmill.core.errors import ProviderError, TokenizerError
from promptmill.runtime.models import bedrock_claude, default_table, resolve_model
from providers_support import SHIPPED, render, state
from test_renderers import check_golden

GOLDEN = Path(__file__).resolve().parent / "golden" / "bedrock"
REPLIES = Path(__file__).resolve().parent / "cases" / "library_replies"
WIRES = ("bedrock", "anthropic-bedrock")
SONNET = "us.anthropic.claude-sonnet-4-5-20250929-v1:0"
CACHE_POINT = {"cachePoint": {"type": "default"}}


# -- model ids ------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("model", "claude", "pattern"),
    [
        ("anthropic.claude-sonnet-4-5-20250929-v1:0", "claude-sonnet-4-5-20250929", "claude-sonnet-4*"),
        ("us.anthropic.claude-opus-4-1-20250805-v1:0", "claude-opus-4-1-20250805", "claude-opus-4*"),
        ("global.anthropic.claude-haiku-4-5-20251001-v1:0", "claude-haiku-4-5-20251001", "claude-haiku-4*"),
        ("us-gov.anthropic.claude-3-7-sonnet-20250219-v1:0", "claude-3-7-sonnet-20250219", "claude-3*"),
        ("apac.anthropic.claude-3-5-sonnet-20241022-v2:0", "claude-3-5-sonnet-20241022", "claude-3*"),
        ("eu.anthropic.claude-opus-4-7", "claude-opus-4-7", "claude-opus-4-7*"),
    ],
)
def test_a_bedrock_id_finds_the_claude_row(model, claude, pattern):
    assert bedrock_claude(model) == claude
    info = resolve_model(model)
    assert info is not None and info.pattern == pattern and info.model == model
    assert info.provider == "anthropic" and info.wire == "bedrock"
    assert info.ratio == resolve_model(claude).ratio


def test_a_non_claude_bedrock_model_is_pm502_saying_so():
    for model in ("amazon.nova-pro-v1:0", "us.meta.llama3-3-70b-instruct-v1:0"):
        assert bedrock_claude(model) is None and resolve_model(model) is None
        with pytest.raises(TokenizerError) as err:
            default_table().lookup(model)
        assert err.value.code == "PM502" and "on Bedrock promptmill knows Claude" in (err.value.hint or "")
    assert resolve_model("claude-sonnet-4-5").wire == ""  # a plain Claude id is the anthropic wire's


def test_a_render_for_a_bedrock_id_fits_for_bedrock_with_the_claude_ratio():
    req = render("companion-chat", "companion-chat.state.yaml", None, model=SONNET)
    assert req.provider == "bedrock" and req.model == SONNET
    assert req.ratio == resolve_model("claude-sonnet-4-5").ratio and SONNET in req.count_note
    plain = render("companion-chat", "companion-chat.state.yaml", "bedrock")
    assert plain.ratio == default_table().max_ratio("anthropic")  # no model: the largest Claude ratio
    same = render("companion-chat", "companion-chat.state.yaml", "anthropic", model="claude-sonnet-4-5")
    assert req.tokens == same.tokens  # the anthropic wire's counting model


# -- the Converse payload ------------------------------------------------------------
def test_converse_shape_and_cache_point_after_the_stable_prefix():
    req = render("companion-chat", "companion-chat.state.yaml", "bedrock")
    payload = req.to_bedrock(model=SONNET)
    assert payload["modelId"] == SONNET and payload["inferenceConfig"] == {"maxTokens": req.reserve}
    system = payload["system"]
    assert system[0]["text"].startswith("You are Juniper") and system[1] == CACHE_POINT
    assert system[2]["text"].startswith("What you remember about this chat:")
    assert CACHE_POINT not in [b for m in payload["messages"] for b in m["content"]]
    assert [m["role"] for m in payload["messages"]][0] == "user"
    tools = payload["toolConfig"]["tools"]
    assert [t["toolSpec"]["name"] for t in tools] == [t["name"] for t in req.tools]  # app_tools is dynamic: no cache point
    assert tools[0]["toolSpec"]["inputSchema"] == {"json": req.tools[0]["parameters"]}
    assert "toolChoice" not in payload["toolConfig"]


def test_stable_tools_end_with_a_cache_point():
    req = render("companion-beat", "companion-beat.state.yaml", "bedrock")
    tools = req.to_bedrock()["toolConfig"]["tools"]
    names = [t["name"] for t in req.tools] + ["return_result"]  # the native contract's tool, forced
    assert tools[-1] == CACHE_POINT and [t["toolSpec"]["name"] for t in tools[:-1]] == names
    assert "cachePoint" not in json.dumps(dataclasses.replace(req, cache=False).to_bedrock()["toolConfig"])


def test_no_cache_point_without_caching_or_for_a_model_that_takes_none():
    req = render("companion-chat", "companion-chat.state.yaml", "bedrock")
    uncached = dataclasses.replace(req, cache=False).to_bedrock()
    assert "cachePoint" not in json.dumps(uncached)
    assert "cachePoint" not in json.dumps(req.to_bedrock(model="amazon.nova-pro-v1:0"))  # not in the table
    assert "cachePoint" in json.dumps(req.to_bedrock())  # no model: Claude's rules
    assert "modelId" not in req.to_bedrock() or req.model


def test_a_native_contract_is_a_forced_tool():
    from promptmill.runtime.tooldecl import return_tool

    req = render("companion-beat", "companion-beat.state.yaml", "bedrock")
    config = req.to_bedrock()["toolConfig"]
    tool = return_tool(req.output)
    assert config["toolChoice"] == {"tool": {"name": tool["name"]}}
    assert config["tools"][-2]["toolSpec"]["name"] == tool["name"]
    # the contract's schema less what Bedrock's tool schemas reject (schemaprofiles.py): maxLength goes
    assert config["tools"][-2]["toolSpec"]["inputSchema"] == {"json": req.wire.contract_tool(req.output)["parameters"]}
    assert "maxLength" in str(tool["parameters"]) and "maxLength" not in str(config["tools"][-2])


def test_the_cache_point_moves_into_a_stable_user_message(make_project):
    from test_renderers import _project

    role = """kind: role
id: r
inputs: {type: object, properties: {q: {type: string}}}
sections:
  - {id: persona, text: You are terse.}
  - {id: examples, text: "Q: 2+2? A: 4", message: user}
  - {id: question, template: "{{ q }}"}
"""
    rt, _ = _project(make_project, {"r.yaml": role})
    payload = rt.render("r", {"q": "3+3?"}, provider="bedrock").to_bedrock()
    assert payload["system"] == [{"text": "You are terse."}]
    assert payload["messages"] == [{"role": "user", "content": [{"text": "Q: 2+2? A: 4"}, CACHE_POINT, {"text": "3+3?"}]}]


def test_the_anthropic_bedrock_body_is_the_anthropic_one_without_model():
    for role, state_file in SHIPPED[:4]:
        bedrock = render(role, state_file, "anthropic-bedrock").to_anthropic_bedrock()
        anthropic = render(role, state_file, "anthropic").to_anthropic(model="claude-sonnet-4-5")
        assert bedrock == {"anthropic_version": "bedrock-2023-05-31", **{k: v for k, v in anthropic.items() if k != "model"}}
        assert next(iter(bedrock)) == "anthropic_version"


def test_a_request_fitted_for_another_wire_is_pm841():
    req = render("companion-chat", "companion-chat.state.yaml", "anthropic")
    with pytest.raises(ProviderError) as err:
        req.to_bedrock()
    assert err.value.code == "PM841"


@pytest.mark.parametrize("wire", WIRES)
@pytest.mark.parametrize(("role", "state_file"), SHIPPED)
def test_golden_payload(role, state_file, wire):
    req = render(role, state_file, wire)
    got = json.dumps({"tokens": req.tokens, "exact": req.exact, "payload": req.to_payload()}, ensure_ascii=False, indent=2) + "\n"
    check_golden(GOLDEN / f"{role}.{wire}.json", got)


def test_every_golden_file_is_used():
    assert {p.name for p in GOLDEN.iterdir()} == {f"{r}.{w}.json" for r, _ in SHIPPED for w in WIRES}


# -- real clients -----------------------------------------------------------------------
def _reply(req) -> tuple[dict | None, str]:
    """A valid reply for the role: (tool input, "") when the contract is a forced tool, else (None, text);
    from the role's first `ok` library case."""
    if req.role == "companion-beat":  # no library cases: a native contract, a forced tool
        return {"action": "stay_quiet", "reason": "Nothing new since the last message."}, ""
    cases = sorted((REPLIES / req.role).glob("ok*.txt")) if (REPLIES / req.role).is_dir() else []
    text = cases[0].read_text(encoding="utf-8").split("\n", 1)[1] if cases else "Sounds good!"
    if req.wire.forced_tool(req.output) is not None:
        return json.loads(text), ""
    return None, text


def _checked(req) -> bool:
    """Whether the reply `_reply` gives is one the contract accepts (roles without cases get chat text)."""
    return req.output is not None and (req.role == "companion-beat" or (REPLIES / req.role).is_dir())


@pytest.mark.parametrize(("role", "state_file"), SHIPPED)
def test_boto3_converse_sends_the_payload(role, state_file, wire_server):
    boto3 = pytest.importorskip("boto3")  # the `bedrock` extra; CI installs it
    req = render(role, state_file, "bedrock")
    payload = req.to_bedrock(model=SONNET)
    data, text = _reply(req)
    forced = req.wire.forced_tool(req.output)
    content = [{"toolUse": {"toolUseId": "tu_1", "name": forced, "input": data}}] if data is not None else [{"text": text}]
    usage = {"inputTokens": 10, "outputTokens": 5, "totalTokens": 15}
    answer = {
        "output": {"message": {"role": "assistant", "content": content}},
        "stopReason": "end_turn",
        "usage": usage,
        "metrics": {"latencyMs": 1},
    }
    wire_server.answer("/converse", answer)
    client = boto3.client(
        "bedrock-runtime",
        endpoint_url=wire_server.url,
        region_name="us-east-1",
        aws_access_key_id="test",
        aws_secret_access_key="test",
    )
    out = client.converse(**payload)
    sent = wire_server.last
    assert sent.path == "/model/" + SONNET.replace(":", "%3A") + "/converse"
    assert sent.json == {k: v for k, v in payload.items() if k != "modelId"}
    points = json.dumps(payload).count('"cachePoint"')
    assert sent.body.count(b'{"cachePoint": {"type": "default"}}') == points  # boto3 writes JSON with ", " and ": "
    assert points >= (2 if role == "companion-beat" else 1 if req.cache and role != "directive-triage" else 0)
    got = out["output"]["message"]["content"][0]
    reply = got["toolUse"]["input"] if data is not None else got["text"]
    if _checked(req):
        assert req.parse_reply(reply, state=state(state_file)) is not None
    else:
        assert reply == text


@pytest.mark.parametrize(("role", "state_file"), SHIPPED)
def test_anthropic_bedrock_sends_the_body(role, state_file, wire_server):
    anthropic = pytest.importorskip("anthropic")
    req = render(role, state_file, "anthropic-bedrock")
    body = req.to_anthropic_bedrock()
    data, text = _reply(req)
    forced = req.wire.forced_tool(req.output)
    content = [{"type": "tool_use", "id": "tu_1", "name": forced, "input": data}] if data is not None else [{"type": "text", "text": text}]
    usage = {"input_tokens": 10, "output_tokens": 5}
    message = {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": SONNET,
        "content": content,
        "stop_reason": "end_turn",
        "usage": usage,
    }
    wire_server.answer("/invoke", message)
    client = anthropic.AnthropicBedrock(base_url=wire_server.url, aws_access_key="test", aws_secret_key="test", aws_region="us-east-1")
    out = client.messages.create(model=SONNET, **anthropic_bedrock_kwargs(body))
    sent = wire_server.last
    assert sent.path == "/model/" + SONNET + "/invoke"
    assert sent.json == body
    assert sent.json["anthropic_version"] == "bedrock-2023-05-31"
    assert sent.body.count(b'"cache_control"') == json.dumps(body).count('"cache_control"')
    block = out.content[0]
    reply = block.input if data is not None else block.text
    if _checked(req):
        assert req.parse_reply(reply, state=state(state_file)) is not None
    else:
        assert reply == text


def test_without_the_kwargs_helper_the_sdk_sends_a_version_of_its_own(wire_server):
    """Why `anthropic_bedrock_kwargs` exists: the SDK fills in `anthropic_version` when the body has none."""
    anthropic = pytest.importorskip("anthropic")
    body = render("companion-chat", "companion-chat.state.yaml", "anthropic-bedrock").to_anthropic_bedrock()
    wire_server.answer("/invoke", {"id": "m", "type": "message", "role": "assistant", "model": "x", "content": [], "usage": {}})
    client = anthropic.AnthropicBedrock(base_url=wire_server.url, aws_access_key="test", aws_secret_key="test", aws_region="us-east-1")
    client.messages.create(model=SONNET, **{k: v for k, v in body.items() if k != "anthropic_version"})
    assert "anthropic_version" in wire_server.last.json  # the SDK's own choice, whatever it is


def test_rendering_never_imports_boto3():
    code = (
        "import sys\n"
        "sys.path.insert(0, 'tests')\n"
        "from providers_support import render\n"
        "req = render('extractor', 'extractor.state.yaml', 'bedrock')\n"
        "req.to_bedrock(model='us.anthropic.claude-sonnet-4-5-20250929-v1:0')\n"
        "render('extractor', 'extractor.state.yaml', 'anthropic-bedrock').to_anthropic_bedrock()\n"
        "bad = sorted(m for m in sys.modules if m.split('.')[0] in ('boto3', 'botocore', 'anthropic'))\n"
        "assert not bad, bad\n"
    )
    root = Path(__file__).resolve().parent.parent
    done = subprocess.run([sys.executable, "-c", code], cwd=root, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr


def test_a_role_may_name_a_bedrock_wire_and_the_cli_renders_it(make_project):
    from click.testing import CliRunner

    from promptmill.cli.main import main
    from promptmill.compiling.api import build_in_memory

    role = "kind: role\nid: r\nprovider: bedrock\nbudget: {max_tokens: 2000, reserve: 100}\n"
    role += "sections:\n  - {id: ask, text: Say hi., message: user}\n"
    root = make_project({"prompts/r.yaml": role})  # `provider: bedrock` is valid in a role (the schema lists every wire)
    rt, _ = build_in_memory(root)
    req = rt.render("r", {})
    content = [{"text": "Say hi."}, CACHE_POINT]  # the whole prompt is stable
    assert req.provider == "bedrock" and req.to_payload() == {
        "messages": [{"role": "user", "content": content}],
        "inferenceConfig": {"maxTokens": 100},
    }
    CliRunner().invoke(main, ["compile", "--project", str(root)])
    for fmt, method in (("bedrock", "to_bedrock"), ("anthropic-bedrock", "to_anthropic_bedrock")):
        result = CliRunner().invoke(main, ["render", "r", "--project", str(root), "--format", fmt, "--model", SONNET])
        assert result.exit_code == 0, result.output
        want = getattr(rt.render("r", {}, provider=fmt, model=SONNET), method)()
        assert json.loads(result.output) == want


def test_trace_attributes_name_aws_bedrock():
    for wire in WIRES:
        attrs = render("companion-chat", "companion-chat.state.yaml", wire, model=SONNET).trace_attributes
        assert attrs["gen_ai.provider.name"] == "aws.bedrock" and attrs["promptmill.wire"] == wire
        assert attrs["gen_ai.request.model"] == SONNET
