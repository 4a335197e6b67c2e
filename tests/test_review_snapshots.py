"""`promptmill snapshot` and `promptmill test` (review/snapshots.py, review/testreport.py): one
deterministic file per role and example state, compared as unified diffs, reported as text, JSON,
GitHub annotations or JUnit XML; a state that no longer fits its role fails alone."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET

import pytest
from click.testing import CliRunner

from promptmill import check_snapshots, format_check, snapshot
from promptmill.cli.main import main

GREET = """\
kind: role
id: greet
provider: anthropic
budget: {max_tokens: 1000, reserve: 100}
inputs:
  type: object
  required: [name]
  properties:
    name: {type: string}
    notes: {type: array, items: {type: string}}
sections:
  - id: persona
    message: system
    text: You are a friendly greeter.
  - id: ask
    template: "Greet {{ name }}."
  - id: notes
    each: notes
    as: note
    template: "- {{ note }}"
    priority: 10
"""
PLAIN = """\
kind: role
id: plain
inputs: {type: object, properties: {topic: {type: string}}}
sections:
  - id: body
    template: "Write about {{ topic }}."
"""


@pytest.fixture
def project(make_project):
    return make_project(
        {
            "promptmill.yaml": "prompts: prompts\n",
            "prompts/greet.yaml": GREET,
            "prompts/plain.yaml": PLAIN,
            "examples/greet.state.yaml": "name: Ada\nnotes: [likes tea]\n",
            "examples/greet.bob.state.yaml": "name: Bob\n",
            "examples/plain.state.json": '{"topic": "rivers"}',
        }
    )


def run(*args: str):
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


def test_one_file_per_role_and_state_with_each_wire_and_stable_bytes(project):
    first = snapshot(project)
    assert first.written == (
        "snapshots/greet/greet.bob.txt",
        "snapshots/greet/greet.txt",
        "snapshots/plain/plain.txt",
    )
    text = (project / "snapshots/greet/greet.txt").read_text(encoding="utf-8")
    assert text.startswith("# promptmill snapshot of role greet with examples/greet.state.yaml\n")
    # the role's provider, then text; each with explain()'s rows, the cache prefix and the messages line by line
    assert text.index("=== greet → anthropic") < text.index("=== greet → text")
    assert "  persona  kept" in text and "dropped: nothing" in text
    assert "[message 1] system, 7 tokens, stable; sections persona\n| You are a friendly greeter.\n" in text
    assert "| Greet Ada.\n" in text and "| - likes tea" in text
    assert "cache prefix: 7 tokens, sha256 " in text
    plain = (project / "snapshots/plain/plain.txt").read_text(encoding="utf-8")
    assert plain.count("=== ") == 1 and "=== plain → text" in plain  # a text role: one wire
    before = {p: p.read_bytes() for p in (project / "snapshots").rglob("*.txt")}
    again = snapshot(project)
    assert again.written == () and len(again.unchanged) == 3
    assert {p: p.read_bytes() for p in (project / "snapshots").rglob("*.txt")} == before


def test_test_passes_fails_with_a_diff_and_passes_after_update(project, monkeypatch):
    monkeypatch.chdir(project)
    assert run("snapshot").exit_code == 0
    ok = run("test")
    assert ok.exit_code == 0, ok.output
    assert "3 snapshots in snapshots/: 3 passed" in ok.output
    (project / "prompts/greet.yaml").write_text(GREET.replace("a friendly greeter", "a terse greeter"), encoding="utf-8")
    changed = run("test")
    assert changed.exit_code == 1
    assert "fail: greet with examples/greet.state.yaml" in changed.output
    assert "--- a/snapshots/greet/greet.txt\n+++ b/snapshots/greet/greet.txt\n" in changed.output
    assert "-| You are a friendly greeter.\n+| You are a terse greeter.\n" in changed.output
    assert "3 snapshots in snapshots/: 1 passed, 2 changed" in changed.output
    assert "promptmill test --update" in changed.output
    updated = run("test", "--update")
    assert updated.exit_code == 0, updated.output
    assert "updated 2 files" in updated.output
    assert run("test").exit_code == 0


def test_a_state_that_no_longer_fits_its_role_fails_alone(project, monkeypatch):
    monkeypatch.chdir(project)
    assert run("snapshot").exit_code == 0
    (project / "examples/greet.bob.state.yaml").write_text("nickname: Bob\n", encoding="utf-8")
    result = run("test")
    assert result.exit_code == 1
    assert "examples/greet.bob.state.yaml: error[PM810] role greet:" in result.output
    assert "state.name: is required" in result.output  # the state path
    assert "2 passed, 1 failed to render" in result.output
    again = run("snapshot")  # the others are still written; the broken one keeps its old file
    assert again.exit_code == 1
    assert "examples/greet.bob.state.yaml: error[PM810]" in again.output
    assert (project / "snapshots/greet/greet.bob.txt").exists()


def test_junit_is_junit_xml(project, monkeypatch):
    monkeypatch.chdir(project)
    snapshot(project)
    (project / "prompts/plain.yaml").write_text(PLAIN.replace("Write about", "Write a poem about"), encoding="utf-8")
    (project / "examples/greet.bob.state.yaml").write_text("name: 7\n", encoding="utf-8")
    result = run("test", "--format", "junit")
    assert result.exit_code == 1
    root = ET.fromstring(result.output.encode("utf-8"))
    assert root.tag == "testsuites"
    (suite,) = root.findall("testsuite")
    cases = suite.findall("testcase")
    assert (suite.get("tests"), suite.get("failures"), suite.get("errors")) == ("3", "1", "1")
    assert len(cases) == 3
    by_name = {c.get("name"): c for c in cases}
    failure = by_name["plain with examples/plain.state.json"].find("failure")
    assert failure is not None and "+| Write a poem about rivers." in (failure.text or "")
    error = by_name["greet with examples/greet.bob.state.yaml"].find("error")
    assert error is not None and error.get("type") == "PM810" and "state.name" in (error.text or "")
    assert list(by_name["greet with examples/greet.state.yaml"]) == []  # passed: no child


def test_json_and_github_formats(project, monkeypatch):
    monkeypatch.chdir(project)
    snapshot(project)
    (project / "prompts/plain.yaml").write_text(PLAIN.replace("Write about", "Write a poem about"), encoding="utf-8")
    data = json.loads(run("test", "--format", "json").output)
    assert data["ok"] is False
    assert data["summary"] == {"pass": 2, "fail": 1, "new": 0, "obsolete": 0, "damaged": 0, "blocked": 0, "error": 0}
    (changed,) = [c for c in data["cases"] if c["status"] != "pass"]
    assert changed["snapshot"] == "snapshots/plain/plain.txt" and "+| Write a poem about rivers." in changed["diff"]
    github = run("test", "--format", "github").output
    assert github.startswith("::error file=snapshots/plain/plain.txt,title=snapshot changed::plain with examples/plain.state.json%0A")


def test_new_and_obsolete_snapshots_and_files_promptmill_did_not_write(project):
    snapshot(project)
    (project / "examples/plain.state.json").unlink()
    (project / "examples/greet.carol.state.yaml").write_text("name: Carol\n", encoding="utf-8")
    mine = project / "snapshots/README.txt"
    mine.write_text("notes of my own\n", encoding="utf-8")
    check = check_snapshots(project)
    assert {o.file: o.status for o in check.outcomes if o.status != "pass"} == {
        "snapshots/greet/greet.carol.txt": "new",
        "snapshots/plain/plain.txt": "obsolete",
    }
    assert "+| Greet Carol." in format_check(check, "text")
    done = snapshot(project)
    assert done.removed == ("snapshots/plain/plain.txt",) and done.written == ("snapshots/greet/greet.carol.txt",)
    assert mine.read_text(encoding="utf-8") == "notes of my own\n"  # not promptmill's: left alone
    assert check_snapshots(project).ok
    # a file of the user's where a snapshot goes is not overwritten
    (project / "examples/greet.dan.state.yaml").write_text("name: Dan\n", encoding="utf-8")
    (project / "snapshots/greet/greet.dan.txt").write_text("mine\n", encoding="utf-8")
    result = CliRunner().invoke(main, ["snapshot", str(project)])
    assert result.exit_code == 1 and "not a snapshot promptmill wrote" in result.output
    assert (project / "snapshots/greet/greet.dan.txt").read_text(encoding="utf-8") == "mine\n"


def test_roles_and_states_that_do_not_pair_are_named(project, monkeypatch):
    monkeypatch.chdir(project)
    (project / "examples/plain.state.json").rename(project / "examples/plian.state.json")
    result = run("snapshot")
    assert result.exit_code == 0
    assert "roles without an example state (ROLE.state.yaml): plain\n" in result.output
    assert "example states named after no role (not snapshotted): examples/plian.state.json\n" in result.output


def test_the_folder_comes_from_promptmill_yaml(project):
    (project / "promptmill.yaml").write_text("prompts: prompts\nsnapshots: review/rendered\n", encoding="utf-8")
    done = snapshot(project)
    assert done.written[0].startswith("review/rendered/greet/")
    assert not (project / "snapshots").exists()
    assert check_snapshots(project).folder == "review/rendered"


def test_the_shipped_prompts_match_their_committed_snapshots():
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    check = check_snapshots(root)
    assert len(check.outcomes) >= 11
    assert check.ok, format_check(check)


def test_a_folder_that_cannot_be_written_is_pm014(project, monkeypatch):
    monkeypatch.chdir(project)
    (project / "snapshots").write_text("a file where the folder goes\n", encoding="utf-8")
    result = run("snapshot")
    assert result.exit_code == 1
    said = "snapshots: a file is where the snapshot's folder goes; promptmill does not replace it"
    assert result.output.startswith(f"promptmill: error[PM014]: {said}\n")
    assert "move it aside" in run("test").output  # test does not ask for an update that would refuse
    assert (project / "snapshots").read_text(encoding="utf-8") == "a file where the folder goes\n"


def test_a_role_renders_the_states_its_examples_key_lists(project, monkeypatch):
    (project / "prompts/plain.yaml").write_text(PLAIN + "examples: [../shared/long-read.yaml, ../examples/greet.bob.state.yaml]\n")
    (project / "shared").mkdir()
    (project / "shared/long-read.yaml").write_text("topic: the longest rivers of the world\n", encoding="utf-8")
    done = snapshot(project)
    assert "snapshots/plain/long-read.txt" in done.written and "snapshots/plain/greet.bob.txt" in done.written
    text = (project / "snapshots/plain/long-read.txt").read_text(encoding="utf-8")
    assert text.startswith("# promptmill snapshot of role plain with shared/long-read.yaml\n")
    assert "| Write about the longest rivers of the world.\n" in text
    assert "snapshots/greet/greet.bob.txt" in done.written  # still greet's example too
    monkeypatch.chdir(project)
    assert "named after no role" not in run("snapshot").output
    assert run("test").exit_code == 0


def test_a_listed_example_that_does_not_exist_is_pm011_at_its_entry(project, monkeypatch):
    (project / "prompts/plain.yaml").write_text(PLAIN + "examples:\n  - ../examples/plain.state.json\n  - ../shared/gone.yaml\n")
    monkeypatch.chdir(project)
    for command in ("compile", "lint"):
        out = run(command)
        assert out.exit_code == 1
        assert "prompts/plain.yaml:9:5: error[PM011] role 'plain': example state ../shared/gone.yaml does not exist" in out.output
    (project / "prompts/plain.yaml").write_text(PLAIN + "examples: [../../outside.state.yaml]\n")
    (project.parent / "outside.state.yaml").write_text("topic: x\n", encoding="utf-8")
    out = run("snapshot")
    assert out.exit_code == 1 and "prompts/plain.yaml:7:12: error[PM011]" in out.output and "outside the project" in out.output
