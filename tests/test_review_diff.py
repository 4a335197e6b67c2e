"""`promptmill diff BASE [HEAD]` (review/diff.py, review/revisions.py, review/diffreport.py): two
revisions of a real temporary git repository, or two folders; a changed stable section breaks the
cache prefix, a change to dynamic content does not; the working tree is never touched."""

from __future__ import annotations

import json
import subprocess

import pytest
from click.testing import CliRunner

from git_support import git
from promptmill import PromptmillError, diff, format_diff
from promptmill.cli.main import main

ROLE = """\
kind: role
id: greet
provider: anthropic
budget: {max_tokens: 1000, reserve: 100}
output: reply
inputs:
  type: object
  required: [name]
  properties:
    name: {type: string}
sections:
  - id: persona
    message: system
    text: You are a friendly greeter.
  - id: ask
    template: "Greet {{ name }}."
  - id: format
    output: true
"""
CONTRACT = """\
kind: output
id: reply
style: json
schema:
  type: object
  required: [greeting]
  properties:
    greeting: {type: string}
"""
OTHER = """\
kind: role
id: other
sections:
  - id: body
    text: Hello.
"""


@pytest.fixture
def repo(make_project, git_identity):
    root = make_project(
        {
            "promptmill.yaml": "prompts: prompts\n",
            "prompts/greet.yaml": ROLE,
            "prompts/reply.yaml": CONTRACT,
            "examples/greet.state.yaml": "name: Ada\n",
        }
    )
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "one")
    return root


def commit(root, path, text):
    (root / path).write_text(text, encoding="utf-8")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", f"change {path}")


def test_a_changed_stable_section_breaks_the_cache_prefix(repo):
    commit(repo, "prompts/greet.yaml", ROLE.replace("a friendly greeter", "a terse greeter"))
    result = diff("HEAD~1", "HEAD", project=repo)
    assert result.cache_breaks == ("greet (anthropic)",)  # text has no cacheable prefix
    changed = {(c.role, c.wire): c for c in result.changed}
    assert set(changed) == {("greet", "anthropic"), ("greet", "text")}
    assert "-| You are a friendly greeter." in changed["greet", "anthropic"].diff
    assert "+| You are a terse greeter." in changed["greet", "anthropic"].diff
    assert result.contracts_changed == () and result.roles_added == () == result.roles_removed
    out = CliRunner().invoke(main, ["diff", "HEAD~1", "HEAD", "--project", str(repo), "--fail-on-cache-break"])
    assert out.exit_code == 1
    assert "policy: the cacheable prefix changed for greet (anthropic)" in out.output


def test_a_change_to_dynamic_content_only_keeps_the_prefix(repo):
    commit(repo, "prompts/greet.yaml", ROLE.replace("Greet {{ name }}.", "Greet {{ name }} warmly, in one short sentence."))
    result = diff("HEAD~1", "HEAD", project=repo)
    assert result.cache_breaks == ()
    (c,) = [c for c in result.changed if c.wire == "anthropic"]
    assert [s.id for s in c.sections] == ["ask"] and c.sections[0].delta > 0
    assert c.tokens_after - c.tokens_before == c.sections[0].delta
    out = CliRunner().invoke(main, ["diff", "HEAD~1", "HEAD", "--project", str(repo), "--fail-on-cache-break"])
    assert out.exit_code == 0, out.output
    grew = CliRunner().invoke(main, ["diff", "HEAD~1", "HEAD", "--project", str(repo), "--fail-on-growth", "5"])
    assert grew.exit_code == 1 and "greet/examples/greet.state.yaml → anthropic grew" in grew.output


def test_head_omitted_is_the_working_tree_and_it_is_left_alone(repo):
    (repo / "prompts/reply.yaml").write_text(CONTRACT.replace("greeting: {type: string}", "greeting: {type: string, maxLength: 80}"))
    (repo / "prompts/other.yaml").write_text(OTHER, encoding="utf-8")
    (repo / "examples/other.state.yaml").write_text("{}\n", encoding="utf-8")
    status = subprocess.run(["git", "status", "--porcelain"], cwd=repo, capture_output=True, text=True).stdout
    files = {p: p.read_bytes() for p in repo.rglob("*") if p.is_file() and ".git" not in p.parts}
    result = diff("HEAD", project=repo)
    assert result.head == "working tree"
    assert result.contracts_changed == ("greet",)
    assert result.roles_added == ("other",)
    assert {c.status for c in result.changes if c.role == "other"} == {"added"}
    assert subprocess.run(["git", "status", "--porcelain"], cwd=repo, capture_output=True, text=True).stdout == status
    assert {p: p.read_bytes() for p in repo.rglob("*") if p.is_file() and ".git" not in p.parts} == files
    assert subprocess.run(["git", "worktree", "list"], cwd=repo, capture_output=True, text=True).stdout.count("\n") == 1


def test_two_folders(make_project, tmp_path):
    files = {"promptmill.yaml": "prompts: prompts\n", "prompts/other.yaml": OTHER, "examples/other.state.yaml": "{}\n"}
    a = make_project(files, root=tmp_path / "a")
    b = make_project({**files, "prompts/other.yaml": OTHER.replace("Hello.", "Hello there, and welcome.")}, root=tmp_path / "b")
    result = diff(str(a), str(b), project=a)
    (c,) = result.changed
    assert (c.role, c.wire, c.tokens_after - c.tokens_before) == ("other", "text", c.sections[0].delta)
    data = json.loads(format_diff(result, "json"))
    assert data["changes"][0]["sections"][0]["id"] == "body" and data["tokens"]["delta"] == c.sections[0].delta
    md = format_diff(result, "markdown")
    assert "| role | state | wire | tokens | change |" in md and "```diff\n" in md


def test_a_base_that_is_not_a_revision_is_pm016(repo, tmp_path_factory):
    with pytest.raises(PromptmillError) as exc:
        diff("no-such-branch", project=repo)
    assert exc.value.code == "PM016" and "no-such-branch" in exc.value.message
    out = CliRunner().invoke(main, ["diff", "--project", str(repo), "--", "-x"])
    assert out.exit_code == 1 and "error[PM016]" in out.output
    outside = tmp_path_factory.mktemp("plain")  # outside the repository
    (outside / "promptmill.yaml").write_text("prompts: .\n", encoding="utf-8")
    with pytest.raises(PromptmillError, match="not inside a git repository"):
        diff("HEAD", project=outside)


LISTED = """\
kind: role
id: listed
budget: {max_tokens: 400, reserve: 0}
inputs: {type: object, properties: {notes: {type: array, items: {type: string}}}}
sections:
  - id: body
    text: Summarise the notes below.
  - id: notes
    each: notes
    as: note
    template: "- {{ note }}"
    priority: 10
"""


def test_items_newly_trimmed_are_reported(make_project, tmp_path):
    notes = "notes:\n" + "".join(f"  - note number {i} about a rather long and winding topic\n" for i in range(12))
    files = {"promptmill.yaml": "prompts: prompts\n", "prompts/listed.yaml": LISTED, "examples/listed.state.yaml": notes}
    a = make_project(files, root=tmp_path / "a")
    b = make_project({**files, "prompts/listed.yaml": LISTED.replace("max_tokens: 400", "max_tokens: 60")}, root=tmp_path / "b")
    (c,) = diff(str(a), str(b), project=a).changed
    assert len(c.newly_trimmed) == 1 and c.newly_trimmed[0].startswith("notes (") and c.newly_trimmed[0].endswith(" of 12 items)")
    assert c.tokens_after < c.tokens_before and c.growth is not None and c.growth < 0
    assert "Newly trimmed: notes (" in format_diff(diff(str(a), str(b), project=a), "markdown")
    assert diff(str(b), str(a), project=a).changed[0].newly_trimmed == ()  # back to all items: nothing newly trimmed


def test_a_build_folder_is_not_a_side_of_a_diff(make_project, tmp_path):
    files = {"promptmill.yaml": "prompts: prompts\n", "prompts/other.yaml": OTHER, "examples/other.state.yaml": "{}\n"}
    project = make_project(files, root=tmp_path / "p")
    assert CliRunner().invoke(main, ["compile", str(project)]).exit_code == 0
    build = project / "build"
    assert (build / "manifest.json").is_file()
    for args in ([str(build), str(project)], [str(project), str(build)]):
        with pytest.raises(PromptmillError) as exc:
            diff(*args, project=project)
        assert exc.value.code == "PM011" and "a build folder, not a project" in exc.value.message
        out = CliRunner().invoke(main, ["diff", "--project", str(project), *args])
        assert out.exit_code == 1 and "error[PM011]" in out.output and "--build" not in out.output
