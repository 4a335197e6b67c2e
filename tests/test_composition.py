"""Composition on generated projects: deep extends chains, context semantics,
conditional first-wins, events, `which`, the user folder and the shipped roles.

Fixed example projects live in tests/cases/composition/ (test_composition_cases.py).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

import promptmill
from promptmill.cli.main import main
from promptmill.cli.preview import pretty
from promptmill.compiling.api import build_in_memory, load_project
from promptmill.compiling.which import which
from promptmill.compose.extends import MAX_CHAIN, merge_inputs
from promptmill.compose.resolve import Composer
from promptmill.lints.conditions import schema_at, value_problem
from promptmill.runtime import conditions
from promptmill.source.loader import load_data_file

REPO = Path(__file__).resolve().parent.parent


CONFIG = {"promptmill.yaml": "prompts: prompts\n"}  # each project's, unless its files give their own


def chain_files(depth: int, *, sections: bool) -> dict[str, str]:
    """r0 <- r1 <- ... <- r{depth-1}; with `sections`, each role adds one after its parent's."""
    files = {"prompts/r0000.yaml": "kind: role\nid: r0\nsections:\n  - {id: s0, text: Level 0.}\n"}
    for i in range(1, depth):
        text = f"kind: role\nid: r{i}\nextends: r{i - 1}\n"
        if sections:
            text += f"sections:\n  - {{id: s{i}, after: s{i - 1}, text: Level {i}.}}\n"
            if i % 10 == 0:  # every tenth role also overrides the root section
                text += f"  - {{id: s0, text: Root as of level {i}.}}\n"
        files[f"prompts/r{i:04d}.yaml"] = text
    return {**CONFIG, **files}


# -- extends chains -------------------------------------------------------------


@pytest.mark.timeout(60)
def test_a_100_deep_chain_composes_root_first(tmp_path, make_project):
    make_project(chain_files(100, sections=True))
    runtime, diags = build_in_memory(tmp_path)
    assert not [d for d in diags if d.severity == "error"]
    req = runtime.render("r99")
    assert [s.id for s in req.sections] == [f"s{i}" for i in range(100)]
    assert req.sections[0].text == "Root as of level 90."
    assert req.sections[99].text == "Level 99."


@pytest.mark.timeout(60)
def test_a_1000_deep_chain_is_one_clear_error_not_a_recursion_error(tmp_path, make_project):
    make_project(chain_files(1000, sections=False))
    result = promptmill.lint(tmp_path)
    errors = [d for d in result.diagnostics if d.severity == "error"]
    assert [(d.code, Path(d.file).name, d.line) for d in errors] == [("PM601", f"r{MAX_CHAIN:04d}.yaml", 3)]
    assert f"is {MAX_CHAIN + 1} roles deep" in errors[0].message
    assert "r0 (" in errors[0].message and "more ..." in errors[0].message  # both ends of the chain, shortened
    with pytest.raises(promptmill.CompileError):
        promptmill.compile(tmp_path, output=tmp_path / "build")


def test_chains_are_walked_once_per_role(tmp_path, make_project):
    """Composing every role of a chain reuses the ancestors' chains (no quadratic walk)."""
    make_project(chain_files(150, sections=False))
    loaded = load_project(tmp_path)
    composer = Composer(loaded.index, loaded.project.config, loaded.project.config_doc)
    leaf = loaded.index.get("role", "r149")
    composed, diags = composer.compose(leaf)
    assert not diags and [r.id for r in composed.chain] == [f"r{i}" for i in range(150)]
    assert len(composer.chains._done) == 150  # every ancestor memoised by one walk
    mid = loaded.index.get("role", "r70")
    assert composer.chains.resolve(mid)[0] == composed.chain[:71]


def test_inputs_extend_recursively_and_union_required():
    class Fake:  # merge_inputs reads only `get("inputs")`
        def __init__(self, inputs):
            self.data = {"inputs": inputs}

        def get(self, key, default=None):
            return self.data.get(key, default)

    parent = {
        "type": "object",
        "required": ["task"],
        "properties": {"task": {"type": "object", "required": ["goal"], "properties": {"goal": {"type": "string"}}}},
    }
    child = {
        "required": ["notes"],
        "properties": {"task": {"properties": {"files": {"type": "array"}}, "required": ["files"]}, "notes": {"type": "array"}},
    }
    merged = merge_inputs([Fake(parent), Fake(child)])  # type: ignore[list-item]
    assert merged["required"] == ["task", "notes"]
    assert merged["properties"]["task"]["required"] == ["goal", "files"]
    assert set(merged["properties"]["task"]["properties"]) == {"goal", "files"}
    # a child that changes a property's type replaces it
    again = merge_inputs([Fake(parent), Fake({"properties": {"task": {"type": "string"}}})])  # type: ignore[list-item]
    assert again["properties"]["task"] == {"type": "string"}


# -- context semantics ----------------------------------------------------------

INJECT_PROJECT = {
    "promptmill.yaml": """
        prompts: prompts
        inject:
          - id: resume
            event: continue
            fragment: note/resume
            position: before
          - id: everywhere
            fragment: note/everywhere
            position: after
    """,
    "prompts/frags.yaml": "kind: fragment\nid: note/resume\ntext: Resume.\n",
    "prompts/frags2.yaml": "kind: fragment\nid: note/everywhere\ntext: Everywhere.\n",
}


def test_a_conditional_injection_does_not_hide_a_later_placement(tmp_path, make_project):
    """First wins at run time: the role's own placement shows when the rule does not fire."""
    make_project(
        {
            **CONFIG,
            **INJECT_PROJECT,
            "prompts/role.yaml": """
        kind: role
        id: r
        context:
          before: [note/resume]
        sections:
          - {id: body, text: Body.}
    """,
        },
        dedent=True,
    )
    runtime, _ = build_in_memory(tmp_path)
    for event in ("start", "continue"):
        req = runtime.render("r", event=event)
        present = [s for s in req.sections if s.present and s.id.startswith("context:before")]
        assert len(present) == 1 and "Resume." in present[0].text
        by = [e["by"] for e in req.events if e["type"] == "context_injected" and e["id"] == "note/resume"]
        assert by == (["role:r"] if event == "start" else ["inject:resume"])


def test_suppress_drops_injections_and_ancestors_but_not_own_placements(tmp_path, make_project):
    make_project(
        {
            **CONFIG,
            **INJECT_PROJECT,
            "prompts/roles.yaml": """
        kind: role
        id: base
        context:
          system: [note/resume]
        sections:
          - {id: body, text: Body.}
    """,
            "prompts/child.yaml": """
        kind: role
        id: child
        extends: base
        context:
          suppress: [note/everywhere, note/resume]
          after: [note/resume]
    """,
        },
        dedent=True,
    )
    runtime, diags = build_in_memory(tmp_path)
    assert not [d for d in diags if d.code == "PM603"]
    req = runtime.render("child", event="continue")
    assert [s.id for s in req.sections if s.present] == ["body", "context:after:note/resume"]
    suppressed = sorted((e["id"], e["from"]) for e in req.events if e["type"] == "context_suppressed")
    assert suppressed == [("note/everywhere", "inject:everywhere"), ("note/resume", "inject:resume"), ("note/resume", "role:base")]
    # the parent is unaffected by its child's suppressions
    assert [s.id for s in runtime.render("base").sections if s.present] == [
        "context:system:note/resume",
        "body",
        "context:after:note/everywhere",
    ]


def test_role_and_project_injection_layers_order(tmp_path, make_project):
    make_project(
        {
            **CONFIG,
            "promptmill.yaml": """
            prompts: prompts
            inject:
              - {id: p3, fragment: n/c}
              - {id: p0, fragment: n/a, layer: 0}
              - {id: p4, fragment: n/e, layer: 4}
              - {id: p3b, fragment: n/d}
        """,
            **{f"prompts/{x}.yaml": f"kind: fragment\nid: n/{x}\ntext: {x}.\n" for x in "abcde"},
            "prompts/role.yaml": """
            kind: role
            id: r
            inject:
              - {id: own, fragment: n/b}
            sections:
              - {id: body, text: Body.}
        """,
        },
        dedent=True,
    )
    runtime, _ = build_in_memory(tmp_path)
    req = runtime.render("r")
    assert [e["id"] for e in req.events if e["type"] == "context_injected"] == ["n/a", "n/b", "n/c", "n/d", "n/e"]
    assert [e["layer"] for e in req.events if e["type"] == "context_injected"] == [0, 1, 3, 3, 4]


def test_role_conditions_are_decided_at_compile_time_and_model_ones_per_render(tmp_path, make_project):
    make_project(
        {
            **CONFIG,
            "promptmill.yaml": """
            prompts: prompts
            inject:
              - when: {any: [{path: role.category, op: eq, value: ops}, {path: model, op: regex, value: "^gpt-4o"}]}
                fragment: n/ops
        """,
            "prompts/f.yaml": "kind: fragment\nid: n/ops\ntext: Ops.\n",
            "prompts/a.yaml": "kind: role\nid: a\ncategory: ops\nsections:\n  - {id: body, text: A.}\n",
            "prompts/b.yaml": "kind: role\nid: b\nmodel: gpt-4o-mini\nsections:\n  - {id: body, text: B.}\n",
            "prompts/c.yaml": "kind: role\nid: c\nsections:\n  - {id: body, text: C.}\n",
        },
        dedent=True,
    )
    runtime, _ = build_in_memory(tmp_path)
    # role.* is decided at compile time; `model` is left for the render (render(model=...) may change it)
    for role, when in (
        ("a", None),
        ("b", {"path": "model", "op": "regex", "value": "^gpt-4o"}),
        ("c", {"path": "model", "op": "regex", "value": "^gpt-4o"}),
    ):
        bundle = runtime.bundle(role)
        whens = {s.id: s.when for s in bundle.sections}
        assert whens["context:before:n/ops"] == when, role
        assert all(s.stability == "stable" for s in bundle.sections), role
    for role, model, present in (("a", None, True), ("a", "claude-opus-4-7", True), ("b", None, True), ("b", "claude-opus-4-7", False)):
        assert ("Ops." in runtime.render(role, model=model).text) is present, (role, model)
    assert "Ops." not in runtime.render("c").text and "Ops." in runtime.render("c", model="gpt-4o").text


def test_partial_evaluation():
    facts = {"role": {"id": "x", "category": "ops"}, "model": "gpt-4o"}
    state_leaf = {"path": "state.n", "op": "gt", "value": 1}
    assert conditions.partial({"path": "role.category", "op": "eq", "value": "ops"}, facts) is True
    assert conditions.partial({"all": [{"path": "model", "op": "eq", "value": "x"}, state_leaf]}, facts) is False
    assert conditions.partial({"any": [{"path": "model", "op": "eq", "value": "x"}, state_leaf]}, facts) == state_leaf
    assert conditions.partial({"not": {"any": [state_leaf, {"path": "role.id", "op": "eq", "value": "x"}]}}, facts) is False
    assert conditions.conjoin(None, state_leaf, None) == state_leaf
    assert conditions.conjoin(None) is None


# -- observability ------------------------------------------------------------


def test_events_and_pretty_show_every_context_item_and_the_system_prompt(tmp_path, make_project):
    make_project(
        {
            **CONFIG,
            **INJECT_PROJECT,
            "prompts/own.yaml": "kind: fragment\nid: note/own\ntext: Own.\n",
            "prompts/role.yaml": """
        kind: role
        id: r
        context:
          system: [note/own]
        sections:
          - {id: body, text: Body.}
    """,
        },
        dedent=True,
    )
    runtime, _ = build_in_memory(tmp_path)
    for provider in ("text", "openai", "anthropic"):
        req = runtime.render("r", provider=provider)
        system = next(e for e in req.events if e["type"] == "system_prompt")
        # the conditional `before` injection changes with the event, so the body after it
        # leaves the cacheable system prefix and goes to the user message
        assert system["sections"] == ["context:system:note/own"]
        if provider == "text":
            assert system["tokens"] == req.section("context:system:note/own").tokens
        else:
            assert system["tokens"] == sum(m.tokens for m in req.messages if m.role == "system")
        injected = [e for e in req.events if e["type"] == "context_injected"]
        assert [(e["id"], e["position"], e["layer"]) for e in injected] == [("note/own", "system", None), ("note/everywhere", "after", 3)]
        for e in injected:
            assert e["tokens"] == req.section(e["section"]).tokens > 0
    text = pretty(runtime.render("r"))
    assert "context_injected    note/own  at system  own context" in text
    assert "context_skipped     note/resume  at before  layer 3  by inject:resume  (condition false)" in text
    assert "context_injected    note/everywhere  at after  layer 3" in text
    assert "system_prompt       " in text


def test_render_pretty_cli_shows_budget_origins_and_events():
    result = CliRunner().invoke(
        main,
        [
            "render",
            "executor",
            "--project",
            str(REPO),
            "--state",
            str(REPO / "prompts/examples/executor.state.yaml"),
            "--budget",
            "5000",
            "--event",
            "continue",
        ],
    )
    assert result.exit_code == 0, result.output
    out = result.output
    assert re.search(r"max_tokens\s+from role executor \(prompts/roles/executor\.yaml:", out)
    assert re.search(r"budget\s+from render-time budget 5000", out)
    assert re.search(r"context_injected\s+agent/core/identity\s+at system\s+own context", out)
    assert re.search(r"context_injected\s+agent/core/continuation\s+at after\s+layer 3", out)
    assert "system_prompt" in out


# -- the shipped roles and the cascade ---------------------------------------------


def test_shipped_executor_is_composed_from_library_pieces():
    runtime, diags = build_in_memory(REPO)
    # one note: companion-beat's 200-character reason is lost on most wires and stated in its prompt (PM708, info)
    assert [(d.code, d.severity, d.file) for d in diags] == [("PM708", "info", "prompts/modes/beat.yaml")]
    state = load_data_file(REPO / "prompts/examples/executor.state.yaml")
    req = runtime.render("executor", state)
    body = [s.id for s in req.sections if not s.id.startswith("context:")]
    assert body == ["role", "task_state", "subtask", "memory", "tools", "output_format", "constraints"]
    for tag in ("Identity", "Behaviour", "Environment"):
        assert f'<{tag} id="agent/core/{tag.lower()}" type="fragment">' in req.text
    assert req.text.index("<Identity") < req.text.index("You carry out a single subtask")
    for title in ("Ground rules:", "While executing:", "Safety:"):  # the three library constraint sets
        assert title in req.section("constraints").text


def test_a_project_overrides_a_shipped_fragment_without_touching_roles(tmp_path, make_project):
    make_project(
        {
            **CONFIG,
            "prompts/role.yaml": """
        kind: role
        id: r
        context:
          system: [agent/core/identity]
        sections:
          - {id: body, text: Body.}
    """,
        },
        dedent=True,
    )
    runtime, _ = build_in_memory(tmp_path)
    assert "autonomous software agent" in runtime.render("r").text
    make_project({**CONFIG, "prompts/mine.yaml": "kind: fragment\nid: agent/core/identity\nname: Identity\ntext: Ours.\n"}, dedent=True)
    runtime, diags = build_in_memory(tmp_path)
    assert '<Identity id="agent/core/identity" type="fragment">\nOurs.\n</Identity>' in runtime.render("r").text
    assert [d.code for d in diags] == ["PM306"]


def test_user_folder_comes_from_the_environment(tmp_path, monkeypatch, make_project):
    user = tmp_path / "me"
    make_project({"f.yaml": "kind: fragment\nid: agent/core/behaviour\ntext: Mine.\n"}, user)
    make_project({**CONFIG, "prompts/r.yaml": "kind: role\nid: r\nsections:\n  - {id: b, text: B.}\n"}, tmp_path / "proj", dedent=True)
    (found,) = which("agent/core/behaviour", tmp_path / "proj")
    assert found.winner.layer == "library" and not found.shadows  # the test's empty user folder
    monkeypatch.setenv("PROMPTMILL_USER_DIR", str(user))
    (found,) = which("agent/core/behaviour", tmp_path / "proj")
    assert found.winner.layer == "user" and [s.layer for s in found.shadows] == ["library"]
    monkeypatch.delenv("PROMPTMILL_USER_DIR")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    make_project({"g.yaml": "kind: fragment\nid: agent/core/behaviour\ntext: X.\n"}, tmp_path / "xdg" / "promptmill")
    (found,) = which("agent/core/behaviour", tmp_path / "proj")
    assert found.winner.source == "user:g.yaml"


def test_the_test_suite_never_sees_a_real_user_folder():
    import os

    folder = Path(os.environ["PROMPTMILL_USER_DIR"])
    assert folder.is_dir() and not any(folder.iterdir())


def test_which_cli(tmp_path, make_project):
    make_project({**CONFIG, "prompts/mine.yaml": "kind: fragment\nid: agent/core/identity\ntext: Ours.\n"}, dedent=True)
    runner = CliRunner()
    result = runner.invoke(main, ["which", "agent/core/identity", str(tmp_path)])
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[0] == "fragment agent/core/identity"
    assert lines[1].split()[:3] == ["resolves", "to", "project"] and lines[1].endswith("mine.yaml:2:5")
    assert lines[2].split()[:2] == ["shadows", "library"] and lines[2].endswith("fragments/identity.yaml:3:5")
    result = runner.invoke(main, ["which", "executor", str(REPO), "--kind", "constraints"])
    assert result.exit_code == 0 and result.output.startswith("constraints executor\n")
    result = runner.invoke(main, ["which", "identity", str(tmp_path)])
    assert result.exit_code == 1
    assert "PM302" in result.output and "did you mean 'agent/core/identity'?" in result.output


def test_bundles_stay_json_data(tmp_path, make_project):
    """Folded conditions and context metadata survive the bundle round trip."""
    make_project(
        {
            **CONFIG,
            **INJECT_PROJECT,
            "prompts/role.yaml": """
        kind: role
        id: r
        context:
          before: [note/resume]
        sections:
          - {id: body, text: Body.}
    """,
        },
        dedent=True,
    )
    result = promptmill.compile(tmp_path)
    data = json.loads(
        (result.build_dir / next(iter(json.loads((result.build_dir / "manifest.json").read_text())["roles"].values()))["file"]).read_text()
    )
    second = next(s for s in data["sections"] if s["id"] == "context:before:note/resume#2")
    assert second["when"] == {"not": {"path": "event", "op": "eq", "value": "continue"}}
    assert second["context"]["yields_to"] == ["inject:resume"]
    req = promptmill.load(result.build_dir).render("r", event="start")
    assert req.section("context:before:note/resume#2").present


# -- condition lint ---------------------------------------------------------------

INPUTS = {
    "type": "object",
    "properties": {
        "memory": {"type": "array", "items": {"type": "object", "properties": {"kind": {"enum": ["a", "b"]}}}},
        "labels": {"type": "object", "additionalProperties": {"type": "integer"}},
        "free": {"type": "object"},
        "either": {"anyOf": [{"type": "string"}, {"type": "object"}]},
        "tags": {"type": "array", "items": {"type": "string"}},
        "count": {"type": "integer"},
    },
}


@pytest.mark.parametrize(
    ("path", "found"),
    [
        ("state.memory.0.kind", True),
        ("state.labels.anything", True),
        ("state.free.x.y", None),  # an object without properties: open
        ("state.either.x", None),  # anyOf: not followed
        ("state.memory.kind", "is a list"),
        ("state.count.x", "is integer and has no fields"),
        ("state.memory.0.knd", "has no property 'knd'"),
        ("state.nope", "the state has no property 'nope'"),
    ],
)
def test_schema_at(path, found):
    node, missing = schema_at(INPUTS, path)
    if found is True:
        assert node is not None and missing is None
    elif found is None:
        assert node is None and missing is None
    else:
        assert node is None and found in missing[0]


@pytest.mark.parametrize(
    ("path", "op", "value", "problem"),
    [
        ("state.memory.0.kind", "eq", "a", None),
        ("state.memory.0.kind", "in", ["a", "c"], "'c' can never equal it"),
        ("state.tags", "contains", "x", None),
        ("state.tags", "contains", 3, "can never contain 3"),
        ("state.count", "eq", 3.0, None),  # 3.0 equals 3
        ("state.count", "eq", 3.5, "can never equal it"),
        ("state.count", "gte", 2, None),
        ("state.count", "contains", 2, "contains needs a string, list or mapping"),
        ("state.labels.x", "lt", "b", "cannot be compared"),
    ],
)
def test_value_problem(path, op, value, problem):
    node, _ = schema_at(INPUTS, path)
    got = value_problem(op, value, node, path)
    assert (got is None) if problem is None else (problem in got)


def test_suppress_counts_rules_that_cannot_fire_for_this_role(tmp_path, make_project):
    """A base's suppress of a fragment injected only for one child warns for no child."""
    make_project(
        {
            **CONFIG,
            "promptmill.yaml": """
            prompts: prompts
            inject:
              - {fragment: n/x, when: {path: role.id, op: eq, value: a}}
        """,
            "prompts/x.yaml": "kind: fragment\nid: n/x\ntext: X.\n",
            "prompts/base.yaml": """
            kind: role
            id: base
            abstract: true
            context:
              suppress: [n/x]
            sections:
              - {id: body, text: Body.}
        """,
            "prompts/a.yaml": "kind: role\nid: a\nextends: base\n",
            "prompts/b.yaml": "kind: role\nid: b\nextends: base\n",
        },
        dedent=True,
    )
    result = promptmill.lint(tmp_path)
    assert not result.diagnostics
    runtime, _ = build_in_memory(tmp_path)
    assert [e["by"] for e in runtime.render("a").events if e["type"] == "context_suppressed"] == ["role:base"]
    assert not [e for e in runtime.render("b").events if e["type"] == "context_suppressed"]


# -- the documentation's worked example is real output ------------------------------

DOC = REPO / "docs" / "composition.md"


def _blocks(marker: str) -> list[tuple[str, str]]:
    """(marker argument, the fenced block after it) for each `<!-- marker ... -->`."""
    text = DOC.read_text(encoding="utf-8")
    out = []
    for part in text.split(f"<!-- {marker}")[1:]:
        arg, _, rest = part.partition("-->")
        fence = rest.split("```", 2)[1]
        out.append((arg.strip(" :"), fence.split("\n", 1)[1]))
    return out


def test_docs_cli_outputs_are_what_the_commands_print(monkeypatch):
    monkeypatch.chdir(REPO)
    blocks = _blocks("output")
    assert len(blocks) == 2
    for command, block in blocks:
        args = command.split()[1:]
        result = CliRunner().invoke(main, args)
        assert result.exit_code == 0, result.output
        assert block == f"$ {command}\n{result.output}", command


def test_docs_python_example_prints_what_the_page_says(monkeypatch, capsys):
    monkeypatch.chdir(REPO)
    ((_, code),) = _blocks("python-events")
    exec(compile(code, "docs/composition.md", "exec"), {})  # our own documentation
    printed = capsys.readouterr().out
    text = DOC.read_text(encoding="utf-8")
    after = text.split("<!-- python-events -->", 1)[1].split("prints\n\n```text\n", 1)[1].split("```", 1)[0]
    assert printed == after


# -- section composition against a plain-list reference ---------------------------

from hypothesis import given  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from promptmill.compose.extends import compose_sections  # noqa: E402
from promptmill.compose.model import Role, SectionDef  # noqa: E402
from promptmill.source.loader import Document  # noqa: E402
from promptmill.source.project import Layer  # noqa: E402

IDS = ["a", "b", "c", "d", "e", "f"]
OPS = st.lists(
    st.tuples(
        st.sampled_from(["add", "patch", "remove", "before", "after", "move"]),
        st.sampled_from(IDS),
        st.sampled_from(IDS),
    ),
    max_size=8,
)


def _role(n: int, ops) -> Role:
    doc = Document(f"r{n}.yaml", {}, "", "")
    sections = []
    for i, (op, sid, anchor) in enumerate(ops):
        data: dict = {"id": sid}
        if op in ("add", "before", "after"):
            data["text"] = f"{sid}@{n}.{i}"
        if op in ("before", "after", "move"):
            data["before" if op != "after" else "after"] = anchor
        if op == "patch" or op == "move":
            data["priority"] = n * 10 + i
        if op == "remove":
            data["remove"] = True
        source = "text" if "text" in data else None
        sections.append(SectionDef(doc, ("sections", i), sid, source, data))
    return Role(doc, (), "role", f"r{n}", Layer("project", Path("."), ""), f"r{n}.yaml", {}, tuple(sections))


def _reference(chain) -> list[tuple[str, str, int | None]]:
    """The same rules on a plain list (slow but obvious)."""
    out: list[dict] = []

    def find(sid):
        return next((i for i, x in enumerate(out) if x["id"] == sid), None)

    for role in chain:
        for s in role.sections:
            at = find(s.id)
            if s.get("remove"):
                if at is not None:
                    del out[at]
                continue
            anchor = s.get("before") or s.get("after")
            new = dict(s.data)
            if at is not None:
                if s.source is None:
                    new = {**out[at], **{k: v for k, v in s.data.items() if k not in ("before", "after")}}
                if anchor is None:
                    out[at] = new
                    continue
                del out[at]
            elif s.source is None:
                continue
            target = find(anchor) if anchor else None
            if target is None:
                out.append(new)
            else:
                out.insert(target if s.get("before") else target + 1, new)
    return [(x["id"], x.get("text", ""), x.get("priority")) for x in out]


@given(st.lists(OPS, min_size=1, max_size=5))
def test_compose_sections_matches_a_plain_list(chain_ops):
    chain = [_role(n, ops) for n, ops in enumerate(chain_ops)]
    # a section id used twice in one role is PM305 before composition; keep the first
    chain = [
        Role(
            r.doc,
            r.path,
            r.kind,
            r.id,
            r.layer,
            r.source_file,
            r.data,
            tuple({s.id: s for s in reversed(r.sections)}[sid] for sid in dict.fromkeys(s.id for s in r.sections)),
        )
        for r in chain
    ]
    sections, _ = compose_sections(chain)
    got = [(s.id, s.data.get("text", ""), s.data.get("priority")) for s in sections]
    assert got == _reference(chain)


def test_a_role_without_parent_gets_each_problem_once_and_no_empty_hint(tmp_path):
    (tmp_path / "prompts").mkdir()
    (tmp_path / "prompts" / "r.yaml").write_text(
        "kind: role\nid: r\nsections:\n  - {id: b}\n  - {id: c, text: x, before: nowhere}\n  - {id: a, remove: true}\n"
    )
    diags = promptmill.lint(tmp_path).diagnostics
    assert [d.code for d in diags if d.code == "PM204"] == ["PM204"]
    placed = [d for d in diags if d.code == "PM602"]
    assert len(placed) == 2 and all(d.hint != "inherited sections: " for d in placed)


def test_a_placement_that_yields_to_an_earlier_one_says_why_it_was_skipped(make_project):
    # the role's own system placement has no `when`; it is skipped because the rule placed the fragment first
    root = make_project(
        {
            **CONFIG,
            "promptmill.yaml": "inject:\n  - {id: env-hook, event: start, fragment: env, position: before}\n",
            "prompts/env.yaml": "kind: fragment\nid: env\ntext: Linux.\n",
            "prompts/r.yaml": "kind: role\nid: r\ncontext: {system: [env]}\nsections: [{id: body, text: B}]\n",
        },
        dedent=True,
    )
    runtime, _ = build_in_memory(root)
    skipped = next(s for s in runtime.render("r", {}).sections if s.id == "context:system:env")
    assert skipped.status == "skipped"
    assert skipped.reason == "its `when` condition is false, or inject:env-hook placed the fragment first"
    kept = next(s for s in runtime.render("r", {}, event="continue").sections if s.id == "context:system:env")
    assert kept.status == "kept"
