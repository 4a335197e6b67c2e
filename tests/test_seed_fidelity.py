"""Seed fidelity (issue 15): prompts the seed documents show are reproduced byte for
byte from templates alone, and behaviours the seeds define hold."""

from __future__ import annotations

from pathlib import Path

import pytest

import promptmill

RYE_LEAD = "When you have completed all steps, return structured results:\n"
RYE_CALL = 'rye_execute(item_type="tool", item_id="rye/agent/threads/directive_return", parameters='

RYE_CONTRACT = """\
kind: output
id: directive-return
style: return_call
return_tool: {name: directive_return}
call:
  lead: "When you have completed all steps, return structured results:"
  call: 'rye_execute(item_type="tool", item_id="rye/agent/threads/{tool}", parameters={arguments})'
"""
ROLE = """\
kind: role
id: directive
output: directive-return
sections:
  - id: returns
    output: true
"""


def _render(tmp_path: Path, contract: str) -> str:
    (tmp_path / "prompts").mkdir(exist_ok=True)
    (tmp_path / "prompts" / "role.yaml").write_text(ROLE)
    (tmp_path / "prompts" / "contract.yaml").write_text(contract)
    result = promptmill.compile(tmp_path)
    assert not [d for d in result.diagnostics if d.severity == "error"], result.diagnostics
    return promptmill.load(tmp_path / "build").render("directive", {}).text


def test_rye_v1_2_list_outputs_with_types_and_required(tmp_path: Path):
    # the v1.2 builder: "description (type)", " [required]", the type alone without a description
    contract = RYE_CONTRACT + (
        '  placeholder: "<{description}{type_label}{required}>"\n'
        '  placeholder_bare: "<{type}{required}>"\n'
        "outputs:\n"
        "  - {name: directive_path, description: Path to the created file, required: true}\n"
        "  - {name: signed, description: Whether signing succeeded, type: boolean}\n"
        "  - {name: count, type: integer}\n"
    )
    assert _render(tmp_path, contract) == (
        RYE_LEAD + "`" + RYE_CALL + '{"directive_path": "<Path to the created file (string) [required]>", '
        '"signed": "<Whether signing succeeded (boolean)>", "count": "<integer>"})`'
    )


def test_rye_v1_2_list_outputs_as_its_document_shows_them(tmp_path: Path):
    # the document's own example: the description alone, or the field name without one
    contract = RYE_CONTRACT + (
        '  placeholder: "<{text}>"\n'
        "outputs:\n"
        "  - {name: directive_path, description: Path to the created file}\n"
        "  - {name: signed, description: Whether signing succeeded}\n"
        "  - {name: count}\n"
    )
    assert _render(tmp_path, contract) == (
        RYE_LEAD + "`" + RYE_CALL + '{"directive_path": "<Path to the created file>", '
        '"signed": "<Whether signing succeeded>", "count": "<count>"})`'
    )


def test_rye_v1_2_mapping_outputs_carry_no_type_label(tmp_path: Path):
    # outputs as a mapping name -> description: the default placeholder shows the description alone
    contract = RYE_CONTRACT + 'outputs: {score: "Numeric score 0-100", tier: "hot, warm, cold"}\n'
    assert _render(tmp_path, contract) == (RYE_LEAD + "`" + RYE_CALL + '{"score": "<Numeric score 0-100>", "tier": "<hot, warm, cold>"})`')


def test_a_mapping_output_given_a_type_shows_it(tmp_path: Path):
    contract = RYE_CONTRACT + "outputs:\n  score: {description: Numeric score, type: integer, required: true}\n  note: a remark\n"
    assert _render(tmp_path, contract) == (
        RYE_LEAD + "`" + RYE_CALL + '{"score": "<Numeric score (integer) [required]>", "note": "<a remark>"})`'
    )
    req = promptmill.load(tmp_path / "build").render("directive", {})
    assert req.parse_reply('{"score": 3}') == {"score": 3}
    with pytest.raises(promptmill.ReplyError):  # the type given is the reply schema's
        req.parse_reply('{"score": "3"}')


def test_the_default_wording_is_unchanged(tmp_path: Path):
    contract = (
        "kind: output\nid: directive-return\nstyle: return_call\noutputs:\n"
        "  - {name: ok, type: boolean, required: true}\n  - {name: why, description: the reason}\n"
    )
    assert _render(tmp_path, contract) == (
        "When you have finished, return your results by calling the `return_result` tool with these arguments:\n"
        '`return_result({"ok": "<ok (boolean) [required]>", "why": "<the reason (string)>"})`'
    )


def test_an_unknown_name_in_the_call_wording_is_pm707(tmp_path: Path):
    (tmp_path / "prompts").mkdir()
    (tmp_path / "prompts" / "role.yaml").write_text(ROLE)
    (tmp_path / "prompts" / "contract.yaml").write_text(RYE_CONTRACT + '  placeholder: "<{desc}> {literal braces}"\noutputs: [{name: a}]\n')
    with pytest.raises(promptmill.CompileError) as err:
        promptmill.compile(tmp_path)
    assert "contract.yaml:8:16: error[PM707] output contract 'directive-return': call.placeholder uses {desc}, which" in str(err.value)
    assert "literal" not in str(err.value)


def test_own_after_context_comes_before_injected_after_context(tmp_path: Path):
    # seed 001's first user message: hook before, own before, body, own after, hook after
    (tmp_path / "prompts").mkdir()
    (tmp_path / "promptmill.yaml").write_text(
        "inject:\n  - {id: hook-before, fragment: hb, position: before}\n  - {id: hook-after, fragment: ha, position: after}\n"
    )
    for fid in ("ob", "oa"):
        (tmp_path / "prompts" / f"{fid}.yaml").write_text(f"kind: fragment\nid: {fid}\ntext: {fid.upper()}\n")
    (tmp_path / "prompts" / "r.yaml").write_text(
        "kind: role\nid: r\ncontext: {before: [{id: ob, wrap: false}], after: [{id: oa, wrap: false}]}\n"
        "sections:\n  - {id: body, text: BODY}\n"
    )
    (tmp_path / "prompts" / "ha.yaml").write_text("kind: fragment\nid: ha\nwrap: false\ntext: HA\n")
    (tmp_path / "prompts" / "hb.yaml").write_text("kind: fragment\nid: hb\nwrap: false\ntext: HB\n")
    promptmill.compile(tmp_path)
    req = promptmill.load(tmp_path / "build").render("r", {})
    assert req.text.split("\n\n") == ["HB", "OB", "BODY", "OA", "HA"]
    injected = [(e["id"], e["position"]) for e in req.events if e["type"] == "context_injected"]
    assert injected == [("hb", "before"), ("ob", "before"), ("oa", "after"), ("ha", "after")]


def test_a_set_inside_an_if_compiles_and_renders(tmp_path: Path):
    (tmp_path / "prompts").mkdir()
    (tmp_path / "prompts" / "r.yaml").write_text(
        "kind: role\nid: r\ninputs: {type: object, properties: {s: {type: string}}}\n"
        "sections:\n  - id: a\n    template: '{% if s %}{% set m = s | upper %}{{ m }}{% endif %}'\n"
    )
    promptmill.compile(tmp_path)
    assert promptmill.load(tmp_path / "build").render("r", {"s": "loud"}).text == "LOUD"


def test_lint_reports_a_call_the_sandbox_refuses_at_its_line(tmp_path: Path):
    (tmp_path / "prompts").mkdir()
    (tmp_path / "prompts" / "r.yaml").write_text(
        "kind: role\nid: r\ninputs: {type: object, properties: {d: {type: object}}}\n"
        "sections:\n  - id: a\n    template: |\n      {% set fields = [] %}\n"
        "      {% for k, v in d.items() %}{{ fields.append((k, v)) or '' }}{% endfor %}\n"
    )
    with pytest.raises(promptmill.CompileError) as err:
        promptmill.compile(tmp_path)
    assert "r.yaml:8:43: error[PM405] section 'a': calls .append(), which changes its object" in str(err.value)


PARENTS = {
    "base.yaml": "kind: role\nid: base\nabstract: true\nsections:\n  - {id: who, text: You are a careful assistant.}\n",
    "terse.yaml": "kind: role\nid: terse\nabstract: true\nsections:\n  - {id: who, text: You are terse.}\n",
    "coder.yaml": (
        "kind: role\nid: coder\nabstract: true\ninputs: {type: object, properties: {diff: {type: string}}}\n"
        "sections:\n  - {id: who, text: You are a code reviewer.}\n  - {id: diff, template: '{{ diff }}'}\n"
    ),
    "task.yaml": (
        "kind: role\nid: task\nextends: base\n"
        "extends_when:\n"
        "  - {role: terse, when: {path: state.mode, op: eq, value: quick}}\n"
        "  - {role: coder, when: {path: state.category, op: eq, value: code}}\n"
        "inputs: {type: object, properties: {mode: {type: string}, category: {type: string}, task: {type: string}}}\n"
        "sections:\n  - {id: task, template: 'Task: {{ task }}'}\n"
    ),
}


def _parents_project(tmp_path: Path) -> Path:
    (tmp_path / "prompts").mkdir()
    for name, text in PARENTS.items():
        (tmp_path / "prompts" / name).write_text(text)
    promptmill.compile(tmp_path)
    return tmp_path / "build"


def test_the_parent_is_chosen_at_render_time_first_condition_that_holds(tmp_path: Path):
    rt = promptmill.load(_parents_project(tmp_path))
    quick = rt.render("task", {"mode": "quick", "category": "code", "task": "fix it"})
    assert quick.text == "You are terse.\n\nTask: fix it"
    assert quick.events[0] == {
        "type": "parent_chosen",
        "parent": "terse",
        "candidate": 0,
        "when": {"path": "state.mode", "op": "eq", "value": "quick"},
    }
    code = rt.render("task", {"category": "code", "task": "review", "diff": "+x"})
    assert code.text == "You are a code reviewer.\n\n+x\n\nTask: review"
    assert code.events[0]["parent"] == "coder"
    plain = rt.render("task", {"task": "think"})
    assert plain.text == "You are a careful assistant.\n\nTask: think"
    assert plain.events[0] == {"type": "parent_chosen", "parent": "base", "candidate": None, "when": None}


def test_a_parent_choice_bundle_is_format_2_and_other_bundles_stay_format_1(tmp_path: Path):
    import json

    build = _parents_project(tmp_path)
    manifest = json.loads((build / "manifest.json").read_text())
    data = json.loads((build / manifest["roles"]["task"]["file"]).read_text())
    assert data["format_version"] == 2
    assert [p["parent"] for p in data["parents"]] == ["terse", "coder"]
    assert all(p["bundle"]["format_version"] == 1 for p in data["parents"])
    # every candidate chain's files are sources of the role
    assert {"prompts/terse.yaml", "prompts/coder.yaml", "prompts/base.yaml"} <= set(manifest["roles"]["task"]["sources"])
    (tmp_path / "prompts" / "other.yaml").write_text("kind: role\nid: other\nsections:\n  - {id: a, text: A}\n")
    promptmill.compile(tmp_path)
    manifest = json.loads((build / "manifest.json").read_text())
    assert json.loads((build / manifest["roles"]["other"]["file"]).read_text())["format_version"] == 1


def test_every_candidate_chain_is_checked_ahead_of_time(tmp_path: Path):
    (tmp_path / "prompts").mkdir()
    for name, text in PARENTS.items():
        (tmp_path / "prompts" / name).write_text(text)
    (tmp_path / "prompts" / "task.yaml").write_text(
        PARENTS["task.yaml"].replace("role: coder", "role: codr").replace("state.mode", "state.moode")
    )
    with pytest.raises(promptmill.CompileError) as err:
        promptmill.compile(tmp_path)
    text = str(err.value)
    assert "task.yaml:6:12: error[PM302] role 'task' extends unknown role 'codr'" in text
    assert "task.yaml:5:32: error[PM607] 'state.moode' is not in the inputs schema" in text


def test_which_lists_the_candidate_parents_and_render_reports_the_choice(tmp_path: Path):
    from promptmill.cli.preview import event_line
    from promptmill.compiling.which import format_which, which

    build = _parents_project(tmp_path)
    assert format_which(which("task", tmp_path)).splitlines()[3:] == [
        '  parent       terse     when state.mode eq "quick"',
        '  parent       coder     when state.category eq "code"',
        "  parent       base      otherwise",
    ]
    rt = promptmill.load(build)
    assert event_line(rt.render("task", {"mode": "quick"}).events[0]) == 'parent_chosen       terse  (candidate 0: state.mode eq "quick")'
    assert event_line(rt.render("task", {}).events[0]) == "parent_chosen       base  (no candidate's condition holds: extends)"


def test_a_bundle_with_parents_round_trips_and_a_v1_bundle_with_parents_is_refused(tmp_path: Path):
    import json

    from promptmill.core.errors import BuildError
    from promptmill.runtime.bundle import role_from_dict

    build = _parents_project(tmp_path)
    manifest = json.loads((build / "manifest.json").read_text())
    text = (build / manifest["roles"]["task"]["file"]).read_text()
    bundle = role_from_dict(json.loads(text))
    assert bundle.to_json() == text
    with pytest.raises(BuildError, match="format version 1 goes with `parents` only in version 2"):
        role_from_dict(dict(json.loads(text), format_version=1))


def test_bundles_with_and_without_parents_match_the_published_bundle_schema(tmp_path: Path):
    import json

    from jsonschema import Draft202012Validator

    schema = json.loads((Path(__file__).parents[1] / "schemas" / "bundle.schema.json").read_text())
    build = _parents_project(tmp_path)
    (tmp_path / "prompts" / "other.yaml").write_text("kind: role\nid: other\nsections:\n  - {id: a, text: A}\n")
    promptmill.compile(tmp_path)
    manifest = json.loads((build / "manifest.json").read_text())
    for role in ("task", "other"):
        data = json.loads((build / manifest["roles"][role]["file"]).read_text())
        assert list(Draft202012Validator(schema).iter_errors(data)) == [], role


def _break_parents(data: dict, how: str) -> None:
    first = data["parents"][0]
    if how == "not a list":
        data["parents"] = {"0": first}
    elif how == "extra key":
        first["extra"] = 1
    elif how == "parent not text":
        first["parent"] = 7
    elif how == "bad when":
        first["when"] = {"path": "state.mode", "op": "sounds-like", "value": "x"}
    elif how == "nested parents":
        first["bundle"]["parents"] = []
    elif how == "inner version 2":
        first["bundle"]["format_version"] = 2
    elif how == "another role":
        first["bundle"]["id"] = "other"
    elif how == "default parent in v1":
        data.pop("parents")
        data["format_version"] = 1


@pytest.mark.parametrize(
    ("how", "message"),
    [
        ("not a list", r"\.parents: expected a list"),
        ("extra key", r"\.parents\[0\]: expected an object with parent, when and bundle"),
        ("parent not text", r"\.parents\[0\]: expected an object with parent, when and bundle"),
        ("bad when", r"\.parents\[0\]\.when: not a well-formed condition"),
        ("nested parents", r"\.parents\[0\]\.bundle: expected a version 1 bundle without parents"),
        ("inner version 2", r"\.parents\[0\]\.bundle: expected a version 1 bundle without parents"),
        ("another role", r"\.parents\[0\]\.bundle: holds role 'other', not 'task'"),
        ("default parent in v1", r"format version 1 goes with `parents` only in version 2"),
    ],
)
def test_a_hand_edited_parent_choice_is_refused_with_its_place(tmp_path: Path, how: str, message: str):
    import json

    from promptmill.core.errors import BuildError
    from promptmill.runtime.bundle import role_from_dict

    build = _parents_project(tmp_path)
    manifest = json.loads((build / "manifest.json").read_text())
    data = json.loads((build / manifest["roles"]["task"]["file"]).read_text())
    _break_parents(data, how)
    with pytest.raises(BuildError, match=message):
        role_from_dict(data, "task.json")
