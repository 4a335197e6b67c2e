"""parse_reply: find the JSON, check it against the contract, explain failures.

The corpus in tests/cases/replies/corpus/ holds one reply per file for the
replanner role of tests/cases/replies/project/. The first line says what must
happen: `# expect: ok`, or `# expect: CODE [reply paths...]`; an optional
`# message: text` line names a substring of the error. Those lines are removed
before the reply is parsed. A new case is a new file.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from promptmill.compiling.api import build_in_memory
from promptmill.core.errors import ReplyError
from promptmill.replies.parse import MAX_REPLY_CHARS, find_json, parse_reply
from providers_support import render

CASES = Path(__file__).resolve().parent / "cases" / "replies"
CORPUS = sorted((CASES / "corpus").glob("*.txt"))


@pytest.fixture(scope="module")
def replanner():
    rt, _ = build_in_memory(CASES / "project")
    state = yaml.safe_load((CASES / "state.yaml").read_text(encoding="utf-8"))
    return rt.render("replanner", state, provider="openai")


def _case(path: Path) -> tuple[list[str], str | None, str]:
    lines = path.read_text(encoding="utf-8").splitlines(True)
    expect = lines.pop(0).removeprefix("# expect:").split()
    message = None
    if lines and lines[0].startswith("# message:"):
        message = lines.pop(0).removeprefix("# message:").strip()
    return expect, message, "".join(lines)


@pytest.mark.parametrize("case", CORPUS, ids=[p.stem for p in CORPUS])
def test_reply_corpus(case, replanner, assert_reply_error):
    expect, message, reply = _case(case)
    if expect == ["ok"]:
        data = replanner.parse_reply(reply)
        assert data["subtasks"][0]["id"] == "inspect-repo"
        return
    code, *paths = expect
    with pytest.raises(ReplyError) as err:
        replanner.parse_reply(reply)
    assert_reply_error(err.value, code, paths, message)


def test_the_corpus_covers_every_reply_code():
    codes = {_case(p)[0][0] for p in CORPUS}
    assert {"ok", "PM860", "PM861", "PM863"} <= codes


def test_huge_reply(replanner):
    reply = '{"subtasks": [' + ",".join(['{"id": "a", "description": "x", "status": "done"}'] * 30_000) + "]}"
    assert len(reply) > MAX_REPLY_CHARS
    with pytest.raises(ReplyError) as err:
        replanner.parse_reply(reply)
    assert err.value.code == "PM862"
    with pytest.raises(ReplyError) as err:
        replanner.parse_reply({"subtasks": [{"id": "a" * MAX_REPLY_CHARS}]})
    assert err.value.code == "PM862"


def test_repair_message_lists_paths_and_how_to_answer(replanner):
    _, _, reply = _case(CASES / "corpus" / "missing-field.txt")
    with pytest.raises(ReplyError) as err:
        replanner.parse_reply(reply)
    text = err.value.repair_message()
    assert text.splitlines()[0] == "Your previous reply could not be used: the reply does not match output contract 'plan-update'."
    assert "- reply.subtasks[1].status: is required" in text
    assert text.splitlines()[-1] == "Reply again with only the corrected JSON object: no prose, no code fence."


def test_repair_loop(replanner):
    """The loop docs/providers.md shows: parse, send repair_message back, parse again."""
    replies = iter(
        [
            "Sure! I will add a step.",
            '{"subtasks": [{"id": "inspect-repo", "description": "Read the repository layout", "status": "done"}, '
            '{"id": "add-types", "description": "Add type hints to parser.py", "status": "done", "depends_on": ["inspect-repo"]}]}',
        ]
    )
    conversation = []
    for _attempt in range(3):
        reply = next(replies)
        try:
            data = replanner.parse_reply(reply)
            break
        except ReplyError as exc:
            conversation += [{"role": "assistant", "content": reply}, {"role": "user", "content": exc.repair_message()}]
    assert len(data["subtasks"]) == 2
    assert "holds no JSON" in conversation[1]["content"]


def test_preserve_uses_the_render_state_or_an_override(replanner):
    _, _, reply = _case(CASES / "corpus" / "changed-done.txt")
    with pytest.raises(ReplyError):
        replanner.parse_reply(reply)
    other = {"plan": {"subtasks": []}, "failure": "none"}
    assert replanner.parse_reply(reply, state=other)["subtasks"][1]["status"] == "pending"


def test_tool_call_arguments_as_a_dict():
    req = render("companion-delivery", "companion-delivery.state.yaml", "anthropic")
    assert req.parse_reply({"delivered": True, "summary": "race reminder"}) == {"delivered": True, "summary": "race reminder"}
    with pytest.raises(ReplyError) as err:
        req.parse_reply({"summary": "forgot the flag", "extra": 1})
    assert err.value.code == "PM861"
    # the missing field is named by its own path, the unexpected one at the object
    assert {p for p, _ in err.value.errors} == {"reply", "reply.delivered"}
    assert err.value.repair_message().endswith("Call the `delivery_done` tool again with corrected arguments.")
    assert req.parse_reply('{"delivered": false}') == {"delivered": False}  # OpenAI sends arguments as text


def test_openai_strict_nulls_are_removed_before_the_check():
    reply = '{"action": "stay_quiet", "text": null, "reason": "it is late"}'
    openai = render("companion-beat", "companion-beat.state.yaml", "openai")
    assert openai.parse_reply(reply) == {"action": "stay_quiet", "reason": "it is late"}
    anthropic = render("companion-beat", "companion-beat.state.yaml", "anthropic")
    with pytest.raises(ReplyError) as err:  # other providers do not add nulls: a null is an error there
        anthropic.parse_reply(reply)
    assert [p for p, _ in err.value.errors] == ["reply.text"]


def test_a_role_without_a_contract():
    req = render("companion-chat", "companion-chat.state.yaml", "openai")
    with pytest.raises(ReplyError) as err:
        parse_reply(req, "{}")
    assert err.value.code == "PM864"


@pytest.mark.parametrize(
    ("text", "data"),
    [
        ('  {"a": 1}  ', {"a": 1}),
        ("[1, 2]", [1, 2]),
        ('note {not json} then {"a": [1, {"b": "}"}]} end', {"a": [1, {"b": "}"}]}),
        ('```JSON\n{"a": 1}\n```', {"a": 1}),
        ('```python\nx = {1: 2}\n```\n```json\n{"a": 2}\n```', {"a": 2}),
        ('{"s": "a \\" quote and a { brace"}', {"s": 'a " quote and a { brace'}),
    ],
)
def test_find_json(text, data):
    assert find_json(text) == data


def test_not_a_reply_type(replanner):
    with pytest.raises(ReplyError) as err:
        replanner.parse_reply(42)  # type: ignore[arg-type]
    assert err.value.code == "PM860"


def test_deeply_nested_reply_is_refused_not_a_recursion_error(replanner):
    with pytest.raises(ReplyError) as err:
        replanner.parse_reply("[" * 100_000 + "]" * 100_000)
    assert err.value.code == "PM862"  # the depth limit (docs/limits.md), not a RecursionError
    assert "nested too deeply" in str(err.value)


def test_a_number_with_too_many_digits_is_named(replanner):
    with pytest.raises(ReplyError) as err:
        replanner.parse_reply('{"subtasks": [], "n": ' + "9" * 5000 + "}")
    assert err.value.code == "PM860"
    assert "too many digits" in str(err.value)


@pytest.mark.parametrize(
    ("text", "expected", "data"),
    [
        ('I found [1, 2] items.\n{"a": 1}', "a JSON object", {"a": 1}),
        ('Here {"note": 1} is the list: [1, 2]', "a JSON array", [1, 2]),
        ("Only [1, 2] here", "a JSON object", [1, 2]),  # the other shape when nothing else parses
    ],
)
def test_find_json_prefers_the_expected_shape(text, expected, data):
    assert find_json(text, expected) == data


FREE_FORM = """\
kind: role
id: scorer
description: Scores one answer.
output: score
budget: {max_tokens: 1000, reserve: 100}
sections:
  - id: task
    text: Score the answer.
  - id: format
    output: true
"""
SCORE = """\
kind: output
id: score
style: json
schema:
  type: object
  required: [confidence]
  properties:
    confidence: {type: number}
    notes: {}
"""


@pytest.fixture(scope="module")
def scorer(tmp_path_factory):
    root = tmp_path_factory.mktemp("scorer")
    (root / "prompts").mkdir()
    (root / "prompts" / "scorer.yaml").write_text(FREE_FORM, encoding="utf-8")
    (root / "prompts" / "score.yaml").write_text(SCORE, encoding="utf-8")
    rt, _ = build_in_memory(root)
    return rt.render("scorer", {})


@pytest.mark.parametrize(
    ("reply", "code", "path"),
    [
        ('{"confidence": 1e999}', "PM860", "reply.confidence"),  # parses to inf: not JSON data
        ('{"confidence": -1e400}', "PM860", "reply.confidence"),
        ({"confidence": float("inf")}, "PM860", "reply.confidence"),
        ({"confidence": float("nan")}, "PM860", "reply.confidence"),
        ('{"confidence": 0.5, "notes": "a \\udc00 b"}', "PM860", "reply.notes"),
        ('{"confidence": 0.5, "notes": {"\\ud800": 1}}', "PM860", "reply.notes"),
        ({"confidence": 0.5, "notes": {"when": object()}}, "PM860", "reply.notes.when"),
        ({"confidence": 10**5000}, "PM860", None),  # Python will not print an int of more than 4300 digits
        ('{"confidence": ' + "1" * 5000 + "}", "PM860", None),
        ('{"confidence": 0.5, "notes": ' + "[" * 500 + "]" * 500 + "}", "PM862", "reply.notes" + "[0]" * 127),
        ('{"confidence": 0.5, "notes": ' + "[" * 50_000 + "]" * 50_000 + "}", "PM862", "reply"),
        ("Sure: " + "[" * 50_000, "PM860", None),  # cut off, however deep
    ],
)
def test_replies_that_are_not_json_data_are_refused(scorer, reply, code, path):
    with pytest.raises(ReplyError) as err:
        scorer.parse_reply(reply)
    assert err.value.code == code, str(err.value)
    if path is not None:
        assert [p for p, _ in err.value.errors] == [path], str(err.value)
    assert err.value.summary in err.value.repair_message()


def test_deeply_nested_dict_reply_is_refused_not_a_crash(scorer):
    deep: list = []
    for _ in range(100_000):
        deep = [deep]
    with pytest.raises(ReplyError) as err:
        scorer.parse_reply({"confidence": 0.5, "notes": deep})
    assert err.value.code == "PM862"


def test_free_form_reply_within_the_limits(scorer):
    notes = {"tags": ["a", "é", "😀"], "nested": [[[[{"x": None}]]]], "big": 10**40, "tiny": 1e-300}
    assert scorer.parse_reply({"confidence": 0.5, "notes": notes}) == {"confidence": 0.5, "notes": notes}
    assert scorer.parse_reply('{"confidence": 1e308}') == {"confidence": 1e308}


@pytest.mark.parametrize(
    ("reply", "where", "what"),
    [
        ('{\n  "a": 1,\n  "b": NaN\n}', "line 3, column 8", "NaN is not valid JSON"),
        ('{\n "q": "NaN \\" Infinity",\n "v": -Infinity}', "line 3, column 7", "-Infinity is not valid JSON"),
        ('{"x": {"k": 1, "k": 2}}', "line 1, column 16", 'key "k" appears twice in one object'),
        ('{"a": 1,\n   "a": 2}', "line 2, column 4", 'key "a" appears twice in one object'),
        ('{"k": [{"k": 1}], "k": 2}', "line 1, column 19", 'key "k" appears twice in one object'),
    ],
)
def test_nan_and_duplicate_keys_are_reported_where_they_are(reply, where, what):
    req = render("extractor", "extractor.state.yaml", "openai")
    with pytest.raises(ReplyError) as err:
        req.parse_reply(reply)
    assert err.value.code == "PM860"
    assert f"the reply's JSON does not parse at {where}: {what}" in str(err.value)
