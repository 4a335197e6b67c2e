"""The shipped agent prompt suite (prompts/roles/): every role renders for every
provider within its budget, with its example state and with a state ten times
larger (trimmed, never over); and each role has the shape it promises.

The large states come from `providers_support.grow` (lists x10, multi-line
text x10). Goldens of the example renders are in tests/golden/renderers/
(test_renderers.py); reply contracts are checked in test_library_replies.py.
"""

from __future__ import annotations

import json
import re

import pytest
import yaml

import promptmill
from promptmill.core.errors import BudgetError, StateError
from promptmill.wires import get_wire
from providers_support import (
    EXAMPLES,
    PROVIDERS,
    ROOT,
    SHIPPED,
    TOK,
    documented_total,
    grow,
    runtime,
    state,
)

AGENT_ROLES = ("executor", "planner", "replanner", "extractor", "verifier", "directive", "directive-triage")
LOOM_ROLES = AGENT_ROLES[:5]
LIST_KINDS = ("each", "tools", "history")


def _render(role: str, st: dict, provider: str):
    return runtime().render(role, st, provider=provider)


def _check_counts(req) -> None:
    assert req.tokens <= req.budget, (req.role, req.provider, req.tokens, req.budget)
    if req.provider in ("text", "live"):
        text = req.to_payload()["prompt" if req.provider == "text" else "instructions"]
        assert req.tokens == TOK.count(text)
    else:
        assert req.tokens == documented_total(req)


def _shipped_state(role: str) -> dict:
    return state(dict(SHIPPED)[role])


# -- every shipped role, every provider, two sizes ------------------------------------------
def test_every_shipped_role_has_an_example_state_and_goldens():
    assert sorted(runtime().roles) == sorted(r for r, _ in SHIPPED)
    for role, name in SHIPPED:
        assert (EXAMPLES / name).is_file(), role
    assert set(AGENT_ROLES) <= {r for r, _ in SHIPPED}


@pytest.mark.parametrize("provider", PROVIDERS)
@pytest.mark.parametrize("role", AGENT_ROLES)
def test_example_state_fits_untrimmed(role, provider):
    req = _render(role, _shipped_state(role), provider)
    _check_counts(req)
    cut = [(s.id, s.status) for s in req.sections if s.status in ("trimmed", "truncated", "dropped")]
    assert cut == [], f"the example state of {role} should fit its budget whole: {cut}"


@pytest.mark.parametrize("provider", PROVIDERS)
@pytest.mark.parametrize(("role", "state_file"), SHIPPED)
def test_ten_times_larger_state_is_trimmed_never_over_budget(role, state_file, provider):
    small = state(state_file)
    big = grow(small)
    try:
        req = _render(role, big, provider)
    except BudgetError as exc:
        # Anthropic and Gemini count o200k_base x the model's ratio (up to 1.53): ten times the state can leave even
        # the never-trimmed sections over the role's budget on the wire. That is refused (PM830), never sent over.
        assert exc.code == "PM830" and get_wire(provider).models in ("anthropic", "gemini"), exc
        need, budget = map(int, re.search(r"need (\d+) tokens, over the budget of (\d+)", str(exc)).groups())
        assert need > budget, exc
        return
    _check_counts(req)
    if role not in AGENT_ROLES:
        return  # the companion modes have roomy budgets and few lists; they only must fit
    assert len(json.dumps(big)) >= 8 * len(json.dumps(small))  # really about ten times larger
    lists = [s for s in req.sections if s.items_total]
    assert any(s.items_dropped for s in lists), f"{role}/{provider}: nothing was trimmed: {[(s.id, s.status) for s in req.sections]}"
    for s in lists:
        assert sorted(s.items_kept) == list(s.items_kept)  # survivors keep their order
        assert len(s.items_kept) + len(s.items_dropped) == s.items_total
        if s.items_dropped:
            assert s.status in ("trimmed", "dropped")


def test_the_generator_grows_lists_and_long_text_only():
    small = _shipped_state("executor")
    big = grow(small)
    assert len(big["memory"]) == 10 * len(small["memory"]) and len(big["tools"]) == 10 * len(small["tools"])
    assert len({t["name"] for t in big["tools"]}) == len(big["tools"])  # copies are told apart
    assert big["task_state"] == small["task_state"] * 10
    assert big["subtask"] == small["subtask"]  # single-line values stay


def test_large_memory_loses_its_least_relevant_entries():
    big = grow(_shipped_state("executor"))
    req = _render("executor", big, "text")
    memory = req.section("memory")
    assert memory.items_dropped
    relevance = [e["relevance"] for e in big["memory"]]
    assert min(relevance[i] for i in memory.items_kept) >= max(relevance[i] for i in memory.items_dropped)


# -- shapes ------------------------------------------------------------------------------------
def _body(req) -> list[str]:
    return [s.id for s in req.sections if s.present and not s.id.startswith("context:")]


@pytest.mark.parametrize("provider", PROVIDERS)
def test_executor_has_the_seven_sections_in_order(provider):
    req = _render("executor", _shipped_state("executor"), provider)
    assert _body(req) == ["role", "task_state", "subtask", "memory", "tools", "output_format", "constraints"]


@pytest.mark.parametrize("role", AGENT_ROLES)
def test_constraints_are_in_every_prompt(role):
    for st in (_shipped_state(role), grow(_shipped_state(role))):
        req = _render(role, st, "text")
        constraints = req.section("constraints")
        assert constraints.status == "kept" and constraints.trim == "never"
        assert constraints.text.startswith("CONSTRAINTS:\nGround rules:\n")
        if role in LOOM_ROLES:
            assert _body(req)[-1] == "constraints"  # last, where a local model weighs it most


@pytest.mark.parametrize(
    ("role", "own_set"),
    [
        ("executor", "While executing:"),
        ("planner", "While planning:"),
        ("replanner", "While revising the plan:"),
        ("extractor", "While extracting:"),
        ("verifier", "While verifying:"),
        ("directive", "Safety:"),
    ],
)
def test_each_role_adds_its_own_rules(role, own_set):
    assert own_set in _render(role, _shipped_state(role), "text").section("constraints").text


@pytest.mark.parametrize("tools", [None, []])
def test_tools_section_vanishes_without_tools(tools):
    st = _shipped_state("executor")
    if tools is None:
        del st["tools"]
    else:
        st["tools"] = tools
    for provider in PROVIDERS:
        req = _render("executor", st, provider)
        assert req.section("tools").status == "empty" and req.section("tools").text == ""
        assert "TOOLS FOR THIS SUBTASK:" not in json.dumps(req.to_payload())
        assert "---\n\n---" not in req.text  # no empty slot between separators
        assert _body(req) == ["role", "task_state", "subtask", "memory", "output_format", "constraints"]
        _check_counts(req)


def test_tools_appear_when_the_state_has_them():
    req = _render("executor", _shipped_state("executor"), "text")
    assert req.section("tools").text.startswith("TOOLS FOR THIS SUBTASK:\n- read_file: Read a file from the workspace.\n")


def test_memory_is_one_line_per_entry_with_its_type():
    st = _shipped_state("executor")
    lines = _render("executor", st, "text").section("memory").text.splitlines()
    assert lines[0] == "WHAT EARLIER WORK FOUND:"
    assert lines[1:] == [f"- [{e['type']}] {e['summary']}" for e in st["memory"]]
    del st["memory"]
    assert _render("executor", st, "text").section("memory").status == "empty"


def test_the_roles_share_the_base():
    for role in AGENT_ROLES:
        req = _render(role, _shipped_state(role), "openai")
        system = req.to_openai()["messages"][0]
        assert system["role"] == "system" and system["content"].startswith('<Identity id="agent/core/identity"')
        assert '<Behaviour id="agent/core/behaviour"' in system["content"]
    assert "<Environment" in _render("executor", _shipped_state("executor"), "text").text
    assert "<Environment" not in _render("planner", _shipped_state("planner"), "text").text


def test_replanner_shows_each_subtask_as_one_json_line():
    st = _shipped_state("replanner")
    lines = _render("replanner", st, "text").section("plan").text.splitlines()[1:]
    assert [json.loads(line) for line in lines] == st["plan"]["subtasks"]


def test_a_state_that_misses_a_required_field_is_refused():
    st = _shipped_state("planner")
    del st["goal"]
    with pytest.raises(StateError) as err:
        _render("planner", st, "text")
    assert err.value.code == "PM810"


# -- the directive shape -----------------------------------------------------------------------
def _directive_part(text: str) -> str:
    return text[text.index("<directive ") :]


@pytest.mark.parametrize("provider", PROVIDERS)
def test_directive_shape(provider):
    st = _shipped_state("directive")
    req = _render("directive", st, provider)
    text = "\n\n".join(m.content for m in req.messages)
    part = _directive_part(text)
    d = st["directive"]
    assert part.startswith(f'<directive name="{d["name"]}">\n<description>{d["description"]}</description>\n\n')
    assert part.endswith("</directive>")
    order = [part.index(x) for x in (d["permissions"].strip(), d["body"].strip(), "<returns>", "</directive>")]
    assert order == sorted(order)
    assert d["permissions"].strip() in part  # verbatim
    assert _body(req)[-5:] == ["open", "permissions", "body", "returns", "close"]


def test_directive_returns_from_a_list_of_outputs():
    returns = _render("directive", _shipped_state("directive"), "text").section("returns").text
    assert returns == (
        "<returns>\n"
        '  <output name="status">done when every step was carried out, blocked otherwise</output>\n'
        '  <output name="summary">what the directive produced, in two or three sentences</output>\n'
        '  <output name="artifacts" />\n'
        "</returns>"
    )


def test_directive_returns_from_a_mapping_and_permissions_from_a_fragment():
    req = _render("directive-triage", _shipped_state("directive-triage"), "text")
    assert req.section("returns").text.splitlines()[1] == '  <output name="module">path of the module that holds the fault</output>'
    permissions = yaml.safe_load((ROOT / "prompts/fragments/permissions-read-and-test.yaml").read_text())["text"]
    assert req.section("permissions").text == permissions.strip()
    assert req.section("permissions").fragment == "directive/permissions/read-and-test"
    assert "tests/test_parser.py::test_nested_lists" in req.section("body").text


def test_directive_without_permissions_has_no_permissions_block():
    st = _shipped_state("directive")
    del st["directive"]["permissions"]
    req = _render("directive", st, "text")
    assert req.section("permissions").status == "skipped" and "<permissions>" not in req.text


def test_directive_name_is_escaped_in_its_attribute():
    st = _shipped_state("directive")
    st["directive"]["name"] = 'say "hi" & <leave>'
    assert '<directive name="say &quot;hi&quot; &amp; &lt;leave&gt;">' in _render("directive", st, "text").text


@pytest.mark.parametrize("provider", PROVIDERS)
@pytest.mark.parametrize("role", ["directive", "directive-triage"])
def test_infrastructure_metadata_never_reaches_the_prompt(role, provider):
    st = _shipped_state(role)
    if role == "directive":
        st["directive"]["limits"] = {"turns": 8, "spend_usd": 0.15, "marker": "LIMIT-MARKER-7"}
        st["directive"]["model"] = {"tier": "MODEL-MARKER-3", "temperature": 0.1}
        st["directive"]["hooks"] = [{"event": "HOOK-MARKER-5", "action": "stop"}]
    req = _render(role, st, provider)
    payload = json.dumps(req.to_payload())
    for marker in ("LIMIT-MARKER", "MODEL-MARKER", "HOOK-MARKER", "spend_usd", "temperature", "limits", "hooks"):
        assert marker not in payload
    if role == "directive-triage":
        fields = req.to_payload()
        model = fields.pop("model", None)  # the role's model travels as the API's model field only
        assert model in (None, "gpt-4o-mini") and (model is None) == (provider not in ("openai", "anthropic", "openai-responses"))
        assert "gpt-4o-mini" not in json.dumps(fields) and 'max_tokens": 2048' not in payload
        assert req.max_tokens == 2048 and req.reserve == 512  # the limits still shape the request


# -- docs/library.md shows real output ------------------------------------------------------
DOC = ROOT / "docs" / "library.md"


def _doc_block(marker: str, nth: int = 0) -> str:
    """The `nth` fenced block after `<!-- marker -->` in docs/library.md, without its fence line."""
    rest = DOC.read_text(encoding="utf-8").split(f"<!-- {marker} -->", 1)[1]
    return rest.split("```")[1 + 2 * nth].split("\n", 1)[1]


def test_docs_trim_example_prints_what_the_page_says(monkeypatch, capsys):
    monkeypatch.chdir(ROOT)
    exec(compile(_doc_block("python-trim"), "docs/library.md", "exec"), {})  # our own documentation
    assert capsys.readouterr().out == _doc_block("python-trim", 1)


def test_docs_repair_message_is_real():
    from promptmill.core.errors import ReplyError

    reply = (ROOT / "tests/cases/library_replies/replanner/changed-completed-subtask.txt").read_text().split("\n", 2)[2]
    req = _render("replanner", _shipped_state("replanner"), "openai")
    with pytest.raises(ReplyError) as err:
        req.parse_reply(reply)
    assert err.value.repair_message() + "\n" == _doc_block("repair-replanner")


def test_docs_preamble_section_drops_signature_and_headings(tmp_path):
    import textwrap

    block = textwrap.dedent(_doc_block("preamble-section"))
    (tmp_path / "prompts").mkdir()
    (tmp_path / "prompts" / "base.yaml").write_text(
        "kind: role\nid: base\nabstract: true\ninputs:\n  type: object\n  properties:\n"
        "    directive: {type: object, properties: {preamble: {type: string}}}\n"
        "sections:\n  - {id: body, text: BODY}\n"
    )
    (tmp_path / "prompts" / "child.yaml").write_text("kind: role\nid: child\nextends: base\nsections:\n" + textwrap.indent(block, "  "))
    assert not [d for d in promptmill.lint(tmp_path).diagnostics if d.severity != "info"]
    promptmill.compile(tmp_path)
    rt = promptmill.load(tmp_path / "build")
    preamble = "<!-- rye:signed:2026-01-01:abc -->\n# Add a changelog entry\nKeeps\nCHANGELOG.md current."
    req = rt.render("child", {"directive": {"preamble": preamble}})
    assert req.text == "Keeps\nCHANGELOG.md current.\n\nBODY"
    assert rt.render("child", {"directive": {"preamble": "# Only a title"}}).text == "BODY"
