"""Replies to the shipped agent roles, checked by their output contracts.

tests/cases/library_replies/<role>/*.txt holds one reply per file, parsed
against `<role>` rendered with its example state (so the replanner's
`preserve` check compares with prompts/examples/replanner.state.yaml). The
first line says what must happen: `# expect: ok`, or `# expect: CODE [reply
paths...]`; an optional `# message: text` names a substring of the error. A new
case is a new file. Schema failures (PM861) name reply paths only: their
wording comes from the validator.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from promptmill.core.errors import ReplyError
from providers_support import SHIPPED, render

CASES = Path(__file__).resolve().parent / "cases" / "library_replies"
FILES = sorted(CASES.glob("*/*.txt"))
STATES = dict(SHIPPED)


def _case(path: Path) -> tuple[list[str], str | None, str]:
    lines = path.read_text(encoding="utf-8").splitlines(True)
    expect = lines.pop(0).removeprefix("# expect:").split()
    message = None
    if lines and lines[0].startswith("# message:"):
        message = lines.pop(0).removeprefix("# message:").strip()
    return expect, message, "".join(lines)


@pytest.mark.parametrize("case", FILES, ids=[f"{p.parent.name}/{p.stem}" for p in FILES])
def test_reply_case(case, assert_reply_error):
    role = case.parent.name
    expect, message, reply = _case(case)
    req = render(role, STATES[role], "openai")
    if expect == ["ok"]:
        assert req.parse_reply(reply) is not None
        return
    code, *paths = expect
    with pytest.raises(ReplyError) as err:
        req.parse_reply(reply)
    assert_reply_error(err.value, code, paths, message)


def test_every_contract_role_has_good_and_bad_replies():
    by_role: dict[str, set[str]] = {}
    for path in FILES:
        by_role.setdefault(path.parent.name, set()).add(_case(path)[0][0])
    for role in ("executor", "planner", "replanner", "extractor", "verifier", "directive", "directive-triage"):
        assert "ok" in by_role[role], role
        assert len(by_role[role]) > 1, role
    assert "PM863" in by_role["planner"]
    assert "PM863" in by_role["replanner"]


def test_a_plan_comes_back_as_data():
    req = render("planner", STATES["planner"], "text")
    _, _, reply = _case(CASES / "planner" / "ok.txt")
    plan = req.parse_reply(reply)
    assert [s["id"] for s in plan["subtasks"]] == ["inspect-repo", "add-types", "run-mypy", "run-tests"]


def test_the_replanner_check_follows_the_state_it_was_rendered_with():
    req = render("replanner", STATES["replanner"], "text")
    _, _, reply = _case(CASES / "replanner" / "changed-completed-subtask.txt")
    with pytest.raises(ReplyError):
        req.parse_reply(reply)
    nothing_done = {"plan": {"subtasks": []}}
    assert len(req.parse_reply(reply, state=nothing_done)["subtasks"]) == 6


def test_an_array_contract_says_array_everywhere():
    """The extractor's reply is a top-level JSON array: the prompt, the 'no JSON'
    error and the repair instruction all say so."""
    req = render("extractor", STATES["extractor"], "text")
    assert "Respond with only a JSON array, no prose" in req.text
    with pytest.raises(ReplyError) as err:
        req.parse_reply("nothing to keep")
    assert "expected a JSON array" in err.value.summary
    assert err.value.repair_message().endswith("Reply again with only the corrected JSON array: no prose, no code fence.")
    assert req.parse_reply([{"type": "context", "summary": "already parsed"}]) == [{"type": "context", "summary": "already parsed"}]
    plan = render("planner", STATES["planner"], "text")
    with pytest.raises(ReplyError) as err:
        plan.parse_reply("no plan")
    assert "expected a JSON object" in err.value.summary
