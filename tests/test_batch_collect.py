"""promptmill batch collect: provider results files -> replies checked by the output contract."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from batch_support import MODELS, ROLE, compile_build, rows, write_jsonl
from promptmill.batch import collect, run_batch
from promptmill.cli.main import main
from promptmill.core.errors import PromptmillError

GOOD = 'Here it is:\n```json\n{"module": "parser.py", "culprit": "code", "explanation": "parse_list drops the last item."}\n```'
BAD = "I think the parser is broken."


@pytest.fixture(scope="module")
def build(tmp_path_factory):
    return compile_build(tmp_path_factory.mktemp("collect-build"))


def _batch(build, tmp_path, provider):
    src = write_jsonl(tmp_path / "rows.jsonl", rows(4))
    model = MODELS.get(provider)
    run_batch(ROLE, src, tmp_path / "batch", build=build, provider=provider, model=model, id_column="id")
    return tmp_path / "batch"


def _openai(cid, text):
    return {
        "id": f"batch_req_{cid}",
        "custom_id": cid,
        "response": {
            "status_code": 200,
            "request_id": "r",
            "body": {"choices": [{"index": 0, "message": {"role": "assistant", "content": text}}]},
        },
        "error": None,
    }


def _responses(cid, text, *, call=False):
    """A Responses API batch result: a Response object with one message item (or one function call)."""
    if call:
        item = {"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "report", "arguments": text, "status": "completed"}
    else:
        content = [{"type": "output_text", "text": text, "annotations": []}]
        item = {"type": "message", "id": "msg_1", "status": "completed", "role": "assistant", "content": content}
    body = {"id": f"resp_{cid}", "object": "response", "status": "completed", "model": "gpt-4o-mini", "output": [item]}
    return {"id": f"batch_req_{cid}", "custom_id": cid, "response": {"status_code": 200, "request_id": "r", "body": body}, "error": None}


def _anthropic(cid, text):
    return {
        "custom_id": cid,
        "result": {"type": "succeeded", "message": {"role": "assistant", "content": [{"type": "text", "text": text}]}},
    }


def _gemini(cid, text):
    return {"key": cid, "response": {"candidates": [{"content": {"role": "model", "parts": [{"text": text}]}}]}}


def _bedrock(cid, text):
    output = {"id": "msg_1", "type": "message", "role": "assistant", "content": [{"type": "text", "text": text}], "stop_reason": "end_turn"}
    return {
        "recordId": cid,
        "modelInput": {"anthropic_version": "bedrock-2023-05-31", "max_tokens": 512, "messages": []},
        "modelOutput": output,
    }


SHAPES = {"openai": _openai, "anthropic": _anthropic, "gemini": _gemini, "bedrock": _bedrock, "openai-responses": _responses}


def _read(path):
    return [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines()]


@pytest.mark.parametrize("provider", sorted(SHAPES))
def test_collect_checks_each_reply_and_reports_each_failure(build, tmp_path, provider):
    batch = _batch(build, tmp_path, provider)
    shape = SHAPES[provider]
    results = [shape("case-2", GOOD), shape("case-0", BAD), shape("case-9", GOOD), shape("case-2", GOOD)]
    results.append(
        {"custom_id": "case-1", "result": {"type": "errored", "error": {"type": "overloaded_error"}}}
        if provider == "anthropic"
        else {"id": "x", "custom_id": "case-1", "response": None, "error": {"code": "server_error", "message": "boom"}}
        if provider in ("openai", "openai-responses")
        else {"recordId": "case-1", "modelInput": {}, "error": {"errorCode": 500, "errorMessage": "boom"}}
        if provider == "bedrock"
        else {"key": "case-1", "error": {"code": 500, "message": "boom"}}
    )
    path = write_jsonl(tmp_path / "results.jsonl", results)
    with open(path, "a") as f:
        f.write("{broken\n")
    counts = collect(path, batch)
    assert counts == {"results": 6, "replies": 1, "failures": 6, "missing": 1}
    replies = _read(batch / "replies.jsonl")
    assert replies == [
        {"custom_id": "case-2", "data": {"module": "parser.py", "culprit": "code", "explanation": "parse_list drops the last item."}}
    ]
    failures = _read(batch / "failures.jsonl")
    assert [(f["custom_id"], f["code"]) for f in failures] == [
        ("case-0", "PM860"),
        ("case-9", "PM873"),
        ("case-2", "PM873"),
        ("case-1", "PM873"),
        (None, "PM873"),
        ("case-3", "PM873"),
    ]
    assert failures[0]["repair"].startswith("Your previous reply could not be used")
    assert "matches no request" in failures[1]["reason"] and "a second result" in failures[2]["reason"]
    assert failures[-1]["reason"] == "no result for this request"


def test_cli_collect_prints_counts_and_exits_1_on_failures(build, tmp_path):
    batch = _batch(build, tmp_path, "openai")
    path = write_jsonl(tmp_path / "results.jsonl", [_openai(f"case-{i}", GOOD) for i in range(4)])
    result = CliRunner().invoke(main, ["batch", "collect", str(path), "--batch", str(batch), "--out", str(tmp_path / "c")])
    assert result.exit_code == 0, result.output
    assert "4 results: 4 valid replies" in result.output and "0 failures" in result.output
    path = write_jsonl(tmp_path / "results.jsonl", [_openai("case-0", BAD)])
    result = CliRunner().invoke(main, ["batch", "collect", str(path), "--batch", str(batch)])
    assert result.exit_code == 1 and "4 failures (3 without a result)" in result.output
    result = CliRunner().invoke(main, ["batch", "collect", str(path), "--batch", str(tmp_path / "nowhere")])
    assert result.exit_code == 1 and "error[PM011]" in result.output and "Traceback" not in result.output


def test_a_bedrock_tool_call_and_a_malformed_record_name_the_line(build, tmp_path):
    batch = _batch(build, tmp_path, "bedrock")
    data = {"module": "parser.py", "culprit": "code", "explanation": "parse_list drops the last item."}
    tool = {"role": "assistant", "content": [{"type": "tool_use", "id": "t", "name": "return_result", "input": data}]}
    results = [
        {"recordId": "case-0", "modelOutput": tool},
        {"recordId": "case-1", "modelOutput": {"content": "not blocks"}},
        {"recordId": "case-2", "modelOutput": {"content": [{"type": "text", "text": 7}]}},
        {"recordId": 3, "modelOutput": {}},
        {"recordId": "case-3", "error": {"errorCode": 400, "errorMessage": "Malformed input request"}},
    ]
    counts = collect(write_jsonl(tmp_path / "results.jsonl", results), batch)
    assert counts == {"results": 5, "replies": 1, "failures": 4, "missing": 0}
    assert _read(batch / "replies.jsonl") == [{"custom_id": "case-0", "data": data}]
    failures = {f["line"]: f for f in _read(batch / "failures.jsonl")}
    assert failures[2]["reason"].endswith("modelOutput.content is a string, not a list")
    assert failures[3]["reason"].endswith("modelOutput.content[0].text is a number, not a string")
    assert failures[4]["reason"] == "line 4: the custom id is a number, not a string"
    assert "Malformed input request" in failures[5]["reason"] and failures[5]["custom_id"] == "case-3"
    assert all(f["code"] == "PM873" for f in failures.values())


def test_an_anthropic_result_without_an_error_says_what_happened(build, tmp_path):
    batch = _batch(build, tmp_path, "anthropic")
    path = write_jsonl(tmp_path / "results.jsonl", [{"custom_id": "case-0", "result": {"type": "expired"}}])
    collect(path, batch)
    failure = next(f for f in _read(batch / "failures.jsonl") if f["custom_id"] == "case-0")
    assert failure["code"] == "PM873" and failure["reason"].endswith("the request expired")


def test_cli_collect_a_damaged_batch_folder_is_a_pm_error_naming_file_and_line(build, tmp_path):
    batch = _batch(build, tmp_path, "openai")
    path = write_jsonl(tmp_path / "results.jsonl", [_openai("case-0", GOOD)])
    (batch / "summary.json").write_text('{\n "role": ', encoding="utf-8")
    result = CliRunner().invoke(main, ["batch", "collect", str(path), "--batch", str(batch), "--out", str(tmp_path / "c")])
    assert result.exit_code == 1 and "error[PM879]" in result.output and "Traceback" not in result.output
    assert "summary.json is not JSON" in result.output and "line 2 column 10" in result.output
    assert not (tmp_path / "c" / "replies.jsonl").exists()
    # a summary that names no role: the hint names what collect has (--batch, --build), not --role or --provider
    (batch / "summary.json").write_text("{}", encoding="utf-8")
    result = CliRunner().invoke(main, ["batch", "collect", str(path), "--batch", str(batch)])
    assert result.exit_code == 1 and "error[PM011]" in result.output and "names no role" in result.output
    assert "--batch" in result.output and "--role" not in result.output and "--provider" not in result.output


def test_every_failure_of_a_results_line_has_its_line_number(build, tmp_path):
    batch = _batch(build, tmp_path, "openai")
    path = write_jsonl(tmp_path / "results.jsonl", [_openai("case-0", BAD), "[1]", _openai("case-1", GOOD)])
    assert collect(path, batch)["replies"] == 1
    assert [(f.get("line"), f["custom_id"]) for f in _read(batch / "failures.jsonl")] == [
        (1, "case-0"),
        (2, None),
        (None, "case-2"),
        (None, "case-3"),
    ]


def test_an_output_folder_that_cannot_be_made_is_pm014(build, tmp_path):
    batch = _batch(build, tmp_path, "openai")
    path = write_jsonl(tmp_path / "results.jsonl", [_openai("case-0", GOOD)])
    (tmp_path / "file").write_text("not a folder", encoding="utf-8")
    with pytest.raises(PromptmillError) as info:
        collect(path, batch, out=tmp_path / "file" / "out")
    assert info.value.code == "PM014" and "cannot create the output folder" in info.value.message


def test_a_responses_result_is_read_from_its_output_items(build, tmp_path):
    batch = _batch(build, tmp_path, "openai-responses")
    reasoning = {"type": "reasoning", "id": "rs_1", "summary": []}
    two_parts = _responses("case-1", GOOD)
    message = two_parts["response"]["body"]["output"][0]
    message["content"] = [{"type": "output_text", "text": GOOD[:20], "annotations": []}, {"type": "output_text", "text": GOOD[20:]}]
    two_parts["response"]["body"]["output"] = [reasoning, message]
    refused = _responses("case-3", "")
    refused["response"]["body"]["output"][0]["content"] = [{"type": "refusal", "refusal": "I can't help with that."}]
    results = [
        _responses("case-0", json.dumps({"module": "a.py", "culprit": "test", "explanation": "the test is wrong"}), call=True),
        two_parts,
        _responses("case-2", {"module": 3}, call=True),  # arguments as an object: checked as data
        refused,
    ]
    path = write_jsonl(tmp_path / "results.jsonl", results)
    assert collect(path, batch) == {"results": 4, "replies": 2, "failures": 2, "missing": 0}
    assert [r["custom_id"] for r in _read(batch / "replies.jsonl")] == ["case-0", "case-1"]
    failures = _read(batch / "failures.jsonl")
    assert [(f["custom_id"], f["line"], f["code"]) for f in failures] == [("case-2", 3, "PM861"), ("case-3", 4, "PM873")]
    assert failures[1]["reason"] == "the model refused: I can't help with that."


def test_a_responses_result_of_the_wrong_shape_names_where_and_the_line(build, tmp_path):
    batch = _batch(build, tmp_path, "openai-responses")
    content_text = _responses("case-0", GOOD)
    content_text["response"]["body"]["output"][0]["content"] = "just text"
    not_a_list = _responses("case-1", GOOD)
    not_a_list["response"]["body"]["output"] = {"type": "message"}
    bad_item = _responses("case-2", GOOD)
    bad_item["response"]["body"]["output"] = ["message"]
    bad_arguments = _responses("case-3", "x", call=True)
    bad_arguments["response"]["body"]["output"][0]["arguments"] = 7
    path = write_jsonl(tmp_path / "results.jsonl", [content_text, not_a_list, bad_item, bad_arguments])
    assert collect(path, batch)["failures"] == 4
    assert [(f["line"], f["code"], f["reason"]) for f in _read(batch / "failures.jsonl")] == [
        (1, "PM873", "response.body.output[0].content is a string, not a list"),
        (2, "PM873", "response.body.output is an object, not a list"),
        (3, "PM873", "response.body.output[0] is a string, not an object"),
        (4, "PM873", "response.body.output[0].arguments is a number, not a string or an object"),
    ]
