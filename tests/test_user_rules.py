"""The user rules file: `inject:` rules in `$PROMPTMILL_USER_DIR/promptmill.yaml`, layer 0.

Real files in tmp folders; the user folder is set per test with monkeypatch
(tests/conftest.py points it at an empty folder otherwise).
"""

from __future__ import annotations

import textwrap
import threading
from pathlib import Path

import pytest
from click.testing import CliRunner

import promptmill
from promptmill import Workspace
from promptmill.cli.livepreview import LivePreview
from promptmill.cli.main import main
from promptmill.compiling.api import build_in_memory
from promptmill.compiling.which import which
from promptmill.core.errors import CompileError
from promptmill.watch import Watcher

PROJECT = {
    "promptmill.yaml": """
        prompts: prompts
        inject:
          - {id: proj, fragment: n/project}
    """,
    **{
        f"prompts/frags/{x}.yaml": f"kind: fragment\nid: n/{x}\ntext: {x.capitalize()}.\n"
        for x in ("project", "user", "late", "own", "rolerule", "resume", "state")
    },
    "prompts/role.yaml": """
        kind: role
        id: r
        inputs:
          type: object
          properties:
            level: {type: integer}
        inject:
          - {id: rr, fragment: n/rolerule}
        context:
          before: [n/own]
        sections:
          - {id: body, template: "Level {{ level }}."}
    """,
    "prompts/other.yaml": "kind: role\nid: other\nsections:\n  - {id: body, text: Other.}\n",
}


@pytest.fixture
def user(tmp_path, monkeypatch) -> Path:
    folder = tmp_path / "me"
    folder.mkdir()
    monkeypatch.setenv("PROMPTMILL_USER_DIR", str(folder))
    return folder


@pytest.fixture
def layered(tmp_path, make_project) -> Path:
    """The project PROJECT; the user's own rules are written by each test."""
    return make_project(PROJECT, tmp_path / "proj", dedent=True)


def rules(user: Path, text: str) -> Path:
    path = user / "promptmill.yaml"
    path.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
    return path


def injected(req) -> list[tuple[str, int | None, str]]:
    return [(e["id"], e["layer"], e["by"]) for e in req.events if e["type"] == "context_injected"]


def test_a_user_rule_comes_first_at_layer_0(layered, user):
    rules(
        user,
        """
        inject:
          - {id: mine, fragment: n/user}
    """,
    )
    runtime, diags = build_in_memory(layered)
    assert not [d for d in diags if d.severity == "error"]
    req = runtime.render("r", {"level": 1})
    assert injected(req) == [
        ("n/user", 0, "user:inject:mine"),
        ("n/rolerule", 1, "inject:rr"),
        ("n/project", 3, "inject:proj"),
        ("n/own", None, "role:r"),
    ]
    assert req.text.index("<User ") < req.text.index("<Rolerule ") < req.text.index("<Project ") < req.text.index("<Own ")
    # the bundle names the user file by its stable source id, never by its path on this machine
    section = next(s for s in runtime.bundle("r").sections if s.id == "context:before:n/user")
    assert (section.origin.file, section.origin.line, section.origin.role) == ("user:promptmill.yaml", 2, "user:inject:mine")
    assert "user:promptmill.yaml" in [s.file for s in runtime.bundle("r").sources]
    # every role gets it
    assert injected(runtime.render("other"))[0] == ("n/user", 0, "user:inject:mine")


def test_an_explicit_layer_wins_and_the_rule_id_defaults_to_the_fragment(layered, user):
    rules(
        user,
        """
        inject:
          - {fragment: n/late, layer: 4, position: after}
          - {id: two, fragment: n/user, layer: 2}
    """,
    )
    runtime, _ = build_in_memory(layered)
    req = runtime.render("r", {"level": 1})
    assert injected(req) == [
        ("n/rolerule", 1, "inject:rr"),
        ("n/user", 2, "user:inject:two"),
        ("n/project", 3, "inject:proj"),
        ("n/own", None, "role:r"),
        ("n/late", 4, "user:inject:n/late"),
    ]
    assert req.sections[-1].id == "context:after:n/late"


def test_event_and_when_conditions(layered, user):
    rules(
        user,
        """
        inject:
          - {id: resume, event: continue, fragment: n/resume}
          - id: high
            fragment: n/state
            when: {path: state.level, op: gt, value: 5}
          - id: only-other
            fragment: n/user
            when: {path: role.id, op: eq, value: other}
    """,
    )
    runtime, diags = build_in_memory(layered)
    assert not [d for d in diags if d.severity == "error"]
    ids = lambda req: [e[0] for e in injected(req)]  # noqa: E731
    assert ids(runtime.render("r", {"level": 1})) == ["n/rolerule", "n/project", "n/own"]
    assert ids(runtime.render("r", {"level": 9}))[:1] == ["n/state"]
    assert ids(runtime.render("r", {"level": 1}, event="continue"))[:1] == ["n/resume"]
    # role.id is decided at compile time: the rule is not even in r's bundle
    assert not any(s.id == "context:before:n/user" for s in runtime.bundle("r").sections)
    assert ids(runtime.render("other"))[:1] == ["n/user"]


def test_a_role_can_suppress_a_user_injection(layered, user, make_project):
    rules(user, "inject:\n  - {id: mine, fragment: n/user}\n")
    make_project({"prompts/child.yaml": "kind: role\nid: child\nextends: r\ncontext:\n  suppress: [n/user]\n"}, layered)
    runtime, diags = build_in_memory(layered)
    assert not [d for d in diags if d.code == "PM603"]
    req = runtime.render("child", {"level": 1})
    assert "n/user" not in [e[0] for e in injected(req)]
    assert [(e["id"], e["from"]) for e in req.events if e["type"] == "context_suppressed"] == [("n/user", "user:inject:mine")]


def test_pretty_render_names_the_user_rule(layered, user, monkeypatch):
    rules(user, "inject:\n  - {id: mine, fragment: n/user}\n")
    monkeypatch.chdir(layered)
    result = CliRunner().invoke(main, ["render", "other", "--format", "pretty"])
    assert result.exit_code == 0, result.output
    assert "context_injected    n/user  at before  layer 0  " in result.output
    assert "by user:inject:mine" in result.output


@pytest.mark.parametrize(
    ("text", "code", "line", "col", "words"),
    [
        ("model: gpt-4o\ninject: []\n", "PM202", 1, 1, "unknown key 'model' in the user rules file"),
        ("inject: []\ninjct: []\n", "PM202", 2, 1, "unknown key 'injct'"),
        ("inject:\n  - {fragment: n/user, position: middle}\n", "PM201", 2, 34, "inject[0].position"),
        ("inject:\n  - {fragment: n/user, layr: 0}\n", "PM202", 2, 24, "unknown key 'layr'"),
        ("inject:\n  - fragment: n/user\n    layer: 7\n", "PM201", 3, 12, "inject[0].layer"),
        ("inject:\n  - fragment: n/usr\n", "PM302", 2, 15, "unknown fragment 'n/usr'"),
        ("inject:\n  - fragment: n/user\n    when: {path: state.x, op: regex, value: '('}\n", "PM606", 3, 45, "invalid regex"),
        ("- fragment: n/user\n", "PM200", 1, 1, "must be a mapping"),
        ("inject: [\n", "PM101", 2, 1, ""),
    ],
)
def test_mistakes_point_into_the_user_file(layered, user, text, code, line, col, words):
    path = rules(user, text)
    found = [d for d in promptmill.lint(layered).diagnostics if d.severity == "error"]
    assert [(Path(d.file), d.code, d.line, d.col) for d in found] == [(path, code, line, col)], found
    assert words in found[0].message
    with pytest.raises(CompileError) as err:
        build_in_memory(layered)  # this machine's renders and previews use the file
    assert code in [d.code for d in err.value.diagnostics]
    assert promptmill.compile(layered).compiled == ("other", "r")  # a personal file never breaks the build


def test_a_project_setting_in_the_user_file_says_where_it_belongs(layered, user):
    rules(user, "budget: {max_tokens: 100}\n")
    (diag,) = promptmill.lint(layered).diagnostics
    assert diag.code == "PM202"
    assert "project's promptmill.yaml" in (diag.hint or "")


def test_an_empty_user_file_holds_no_rules(layered, user):
    rules(user, "# nothing yet\n")
    runtime, diags = build_in_memory(layered)
    assert not diags
    assert [e[0] for e in injected(runtime.render("r", {"level": 1}))] == ["n/rolerule", "n/project", "n/own"]
    assert "user:promptmill.yaml" not in [s.file for s in runtime.bundle("r").sources]  # as if there were none


def test_user_rules_stay_out_of_the_build_and_reach_this_machines_renders(layered, user, monkeypatch):
    promptmill.compile(layered)  # no user file yet
    before = {p.name: p.read_bytes() for p in (layered / "build").rglob("*") if p.is_file() and p.name != ".lock"}
    path = rules(user, "inject:\n  - {id: mine, fragment: n/user}\n")
    assert promptmill.compile(layered, check=True).stale == ()  # CI's build and this one agree
    assert promptmill.compile(layered).up_to_date
    path.write_text("inject:\n  - {id: mine, fragment: n/user, position: after}\n")
    assert promptmill.compile(layered, force=True).compiled == ("other", "r")
    after = {p.name: p.read_bytes() for p in (layered / "build").rglob("*") if p.is_file() and p.name != ".lock"}
    assert after == before  # byte for byte what a machine without the file builds
    assert all(e.get("by") != "user:inject:mine" for e in promptmill.load(layered / "build").render("other").events)
    runtime, _ = build_in_memory(layered)  # this machine's renders and previews have it
    assert runtime.render("other").sections[-1].id == "context:after:n/user"
    monkeypatch.chdir(layered)
    shown = CliRunner().invoke(main, ["render", "other", "--format", "pretty"])
    assert "by user:inject:mine" in shown.output
    built = CliRunner().invoke(main, ["render", "other", "--build", "build", "--format", "pretty"])
    assert built.exit_code == 0
    assert "user:inject:mine" not in built.output


def test_the_build_does_not_depend_on_where_the_user_folder_is(layered, tmp_path, monkeypatch):
    builds = []
    for name in ("a", "b"):
        folder = tmp_path / name / "deeper"
        folder.mkdir(parents=True)
        rules(folder, "inject:\n  - {id: mine, fragment: n/user}\n")
        monkeypatch.setenv("PROMPTMILL_USER_DIR", str(folder))
        promptmill.compile(layered, output=tmp_path / name / "build")
        build = tmp_path / name / "build"
        builds.append(
            {p.relative_to(build).as_posix(): p.read_bytes() for p in sorted(build.rglob("*")) if p.is_file() and p.name != ".lock"}
        )
    assert builds[0] == builds[1]


def test_the_workspace_recompiles_after_an_edit_of_the_user_file(layered, user):
    path = rules(user, "inject:\n  - {id: mine, fragment: n/user}\n")
    ws = Workspace(layered)
    ws.refresh()
    ws.refresh()
    assert ws.recompiled == ()
    path.write_text("inject:\n  - {id: mine, fragment: n/late}\n")
    runtime, _ = ws.refresh()
    assert ws.recompiled == ("other", "r")
    assert injected(runtime.render("other"))[0] == ("n/late", 0, "user:inject:mine")


def test_watch_sees_edits_of_the_user_file(layered, user):
    path = rules(user, "inject:\n  - {id: mine, fragment: n/user}\n")
    screens: list[str] = []
    changed = threading.Event()

    def write_screen(text: str) -> None:
        screens.append(text)
        if "n/late" in text:
            changed.set()

    lp = LivePreview(Workspace(layered), "other", write=write_screen)
    lp.refresh()
    assert user in lp.watch_paths()
    with Watcher(lp.watch_paths(), lp.refresh, debounce=0.03):
        path.write_text("inject:\n  - {id: mine, fragment: n/late}\n")
        assert changed.wait(15), screens[-1]
    assert "by user:inject:mine" in screens[-1]


def test_user_dir_false_ignores_the_user_file(layered, user):
    rules(user, "model: nope\ninject:\n  - {id: mine, fragment: n/missing}\n")  # broken, but not read
    (layered / "promptmill.yaml").write_text("prompts: prompts\nuser_dir: false\n")
    runtime, diags = build_in_memory(layered)
    assert not diags
    assert injected(runtime.render("other")) == []
    assert "user:promptmill.yaml" not in [s.file for s in runtime.bundle("other").sources]


def test_the_user_file_is_not_a_template(layered, user, make_project):
    rules(user, "inject:\n  - {id: mine, fragment: n/user}\n")
    make_project({"fragments/mine.yaml": "kind: fragment\nid: n/mine\ntext: Mine.\n"}, user)
    result = promptmill.lint(layered)
    assert not result.diagnostics  # no PM203 'missing kind' for the rules file
    assert which("n/mine", layered)[0].winner.source == "user:fragments/mine.yaml"
