"""`promptmill render` and `promptmill stats` through click's CliRunner, on real files.

The project is tests/cases/render/project (two roles); bad states are the
files in tests/cases/render/negative/, named `<CODE>-<what>.<ext>`. Builds
that are broken on purpose are made by compiling the project for real and
then editing the build.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

import promptmill
from promptmill.cli.main import main
from promptmill.runtime.request import PromptRequest
from promptmill.source.statefile import MAX_STATE_FILE_BYTES

CASES = Path(__file__).parent / "cases" / "render"
NEGATIVE = sorted((CASES / "negative").iterdir())


@pytest.fixture
def build(project) -> Path:
    result = promptmill.compile(project)
    return result.build_dir


def run(*args: str):
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


def assert_fails(result, code: str, *words: str) -> None:
    assert result.exit_code == 1, result.output
    assert f"error[{code}]" in result.output, result.output
    assert "Traceback" not in result.output
    for word in words:
        assert word in result.output, result.output


# -- bad states (one file each) -------------------------------------------------


@pytest.mark.parametrize("case", NEGATIVE, ids=[p.name for p in NEGATIVE])
def test_bad_state_file(project, case):
    code = case.name.split("-")[0]
    assert_fails(run("render", "triage", "--state", str(case)), code)


@pytest.mark.parametrize("case", NEGATIVE, ids=[p.name for p in NEGATIVE])
def test_bad_state_file_from_build(build, case):
    code = case.name.split("-")[0]
    assert_fails(run("render", "triage", "--state", str(case), "--build", str(build)), code)


def test_bad_state_messages_name_the_path(project):
    r = run("render", "triage", "--state", str(CASES / "negative" / "PM810-wrong-types.yaml"))
    assert_fails(r, "PM810", "state.ticket.id")
    r = run("render", "triage", "--state", str(CASES / "negative" / "PM813-yaml-syntax.yaml"))
    assert_fails(r, "PM813", "PM813-yaml-syntax.yaml:2:8:")


def test_missing_state_file(project):
    assert_fails(run("render", "triage", "--state", "nope.yaml"), "PM813", "no such file")


def test_state_file_is_a_folder(project, tmp_path):
    (tmp_path / "dir.yaml").mkdir()
    assert_fails(run("render", "triage", "--state", str(tmp_path / "dir.yaml")), "PM813", "folder")


def test_ten_megabyte_state_is_refused_before_parsing(project, tmp_path):
    big = tmp_path / "big.json"
    note = "x" * 1000
    items = ",".join(json.dumps({"note": note, "score": i}) for i in range(10_500))
    big.write_text('{"ticket": {"id": 1, "title": "t"}, "history": [' + items + "]}")
    assert big.stat().st_size > 10_000_000 > MAX_STATE_FILE_BYTES
    assert_fails(run("render", "triage", "--state", str(big)), "PM812", "MiB")


def test_deeply_nested_state_is_an_error_not_a_crash(project, tmp_path):
    deep = tmp_path / "deep.json"
    deep.write_text('{"ticket": {"id": 1, "title": "t"}, "history": [], "x": ' + "[" * 200_000 + "]" * 200_000 + "}")
    assert_fails(run("render", "triage", "--state", str(deep)), "PM813")


def test_empty_state_file_is_an_empty_state(project, tmp_path):
    empty = tmp_path / "empty.yaml"
    empty.write_text("")
    assert_fails(run("render", "triage", "--state", str(empty)), "PM810", "ticket")


# -- budgets ------------------------------------------------------------------


@pytest.mark.parametrize("budget", ["0", "-5"])
def test_budget_zero_or_negative(project, budget):
    assert_fails(run("render", "triage", "--state", "state.yaml", "--budget", budget), "PM831", budget)


def test_budget_not_a_number_is_a_usage_error(project):
    r = run("render", "triage", "--state", "state.yaml", "--budget", "lots")
    assert r.exit_code == 2


def test_budget_below_the_never_sections(project):
    r = run("render", "triage", "--state", "state.yaml", "--budget", "20")
    assert_fails(r, "PM830", "intro", "ticket", "20")


def test_small_budget_drops_items_and_says_so(project):
    r = run("render", "triage", "--state", "state.yaml", "--budget", "80")
    assert r.exit_code == 0, r.output
    assert "kept 1 of 3 items; dropped items [1, 2]" in r.output
    assert "dropped: history (2 of 3 items)" in r.output
    assert "of 80 tokens" in r.output


def test_pretty_columns_stay_aligned_for_long_section_ids(tmp_path, monkeypatch):
    (tmp_path / "prompts").mkdir()
    fid = "rye/agent/core/DirectiveInstruction"
    (tmp_path / "prompts" / "f.yaml").write_text(f"kind: fragment\nid: {fid}\ntext: STOP.\n")
    (tmp_path / "prompts" / "r.yaml").write_text(f"kind: role\nid: r\ncontext: {{before: [{fid}]}}\nsections: [{{id: body, text: B}}]\n")
    monkeypatch.chdir(tmp_path)
    r = run("render", "r")
    assert r.exit_code == 0, r.output
    lines = r.output.splitlines()
    header = next(line for line in lines if line.startswith("section "))
    at = lines.index(f"context:before:{fid}")  # on a line of its own
    body = next(line for line in lines if line.startswith("body "))
    assert lines[at + 1].index("kept") == body.index("kept") == header.index("status")


# -- roles and builds ---------------------------------------------------------


def test_unknown_role_suggests_close_ids(project):
    assert_fails(run("render", "triag", "--state", "state.yaml"), "PM802", "'triage'", "'triage-short'")


def test_unknown_role_from_build(build):
    assert_fails(run("render", "nothing-like-it", "--build", str(build)), "PM802", "triage")


def _edit_json(path: Path, change) -> bytes:
    data = json.loads(path.read_text())
    change(data)
    raw = json.dumps(data).encode()
    path.write_bytes(raw)
    return raw


def _bundle_file(build: Path) -> Path:
    return next((build / "roles").glob("triage.*.json"))


def _rehash(build: Path, raw: bytes) -> None:
    """Make the manifest agree with an edited bundle, so only the edit itself is wrong."""
    _edit_json(build / "manifest.json", lambda m: m["roles"]["triage"].update(sha256=hashlib.sha256(raw).hexdigest()))


def test_build_from_incompatible_version(build):
    _edit_json(build / "manifest.json", lambda m: m.update(format_version=99, promptmill_version="9.0.0"))
    assert_fails(run("render", "triage", "--build", str(build)), "PM801", "9.0.0", "promptmill compile")


def test_bundle_from_incompatible_version(build):
    raw = _edit_json(_bundle_file(build), lambda b: b.update(format_version=2))
    _rehash(build, raw)
    assert_fails(run("render", "triage", "--build", str(build)), "PM801", "version 2", "promptmill compile")


def test_bundle_with_fields_from_a_newer_promptmill(build):
    raw = _edit_json(_bundle_file(build), lambda b: b.update(shiny_new_field=1))
    _rehash(build, raw)
    assert_fails(run("render", "triage", "--build", str(build)), "PM801", "shiny_new_field", "promptmill compile")


def test_missing_bundle_file(build):
    _bundle_file(build).unlink()
    assert_fails(run("render", "triage", "--build", str(build)), "PM801", "missing", "promptmill compile")


def test_corrupted_bundle_file(build):
    bundle = _bundle_file(build)
    bundle.write_bytes(bundle.read_bytes()[:-40])
    assert_fails(run("render", "triage", "--build", str(build)), "PM801", "hash", "promptmill compile")


def test_corrupted_manifest(build):
    (build / "manifest.json").write_text("{ not json")
    assert_fails(run("render", "triage", "--build", str(build)), "PM801", "manifest")


def test_missing_build_folder(project):
    assert_fails(run("render", "triage", "--build", "no-such-build"), "PM801", "promptmill compile")


def test_broken_templates_show_diagnostics(project):
    role = project / "prompts" / "roles" / "triage.yaml"
    role.write_text(role.read_text().replace("{{ ticket.title }}", "{{ ticket.title "))
    r = run("render", "triage", "--state", "state.yaml")
    assert r.exit_code == 1
    assert "triage.yaml:" in r.output and "PM401" in r.output


# -- good renders -------------------------------------------------------------


def _api_request(project: Path, **kw) -> PromptRequest:
    from promptmill.compiling.api import build_in_memory
    from promptmill.source.statefile import read_state

    runtime, _ = build_in_memory(project)
    return runtime.render("triage", read_state(project / "state.yaml"), **kw)


def test_text_is_exactly_the_prompt(project):
    r = run("render", "triage", "--state", "state.yaml", "--format", "text")
    assert r.exit_code == 0
    assert r.output == _api_request(project).text


def test_text_keeps_escape_sequences_from_the_state(project):
    # click.echo strips ANSI escapes when stdout is not a terminal; the prompt must not change
    # (the state file writes ESC as YAML's double-quoted escape \e)
    state = (project / "state.yaml").read_text(encoding="utf-8")
    (project / "state.yaml").write_text(state.replace("Login fails", "\\e[31mLogin\\e[0m fails"), encoding="utf-8")
    r = run("render", "triage", "--state", "state.yaml", "--format", "text")
    assert r.exit_code == 0, r.output
    assert "\x1b[31mLogin\x1b[0m fails" in r.output
    assert r.output == _api_request(project).text


def test_pretty_shows_control_characters_from_the_state_visibly(project):
    # a preview is for review: an escape sequence or a bidi override from the state must not
    # act on the terminal (hide or reorder text), it is shown as an escape
    state = (project / "state.yaml").read_text(encoding="utf-8")
    (project / "state.yaml").write_text(state.replace("Login fails", "\\e[8mLogin\\u202e fails\\0"), encoding="utf-8")
    r = run("render", "triage", "--state", "state.yaml")
    assert r.exit_code == 0, r.output
    assert "\\x1b[8mLogin\\u202e fails\\x00" in r.output
    assert not any(ch in r.output for ch in "\x1b\u202e\x00")


def test_state_is_data_never_template_source(project):
    r = run("render", "triage", "--state", "state.yaml", "--format", "text")
    assert "Login fails with {{ 7*7 }} in the password" in r.output
    assert "{% raw %}The user typed {{ 7*7 }} and {# this #}" in r.output
    assert "with 49 in" not in r.output


def test_json_is_complete_and_stable(project, build):
    first = run("render", "triage", "--state", "state.yaml", "--format", "json", "--budget", "80")
    second = run("render", "triage", "--state", "state.yaml", "--format", "json", "--budget", "80")
    from_build = run("render", "triage", "--state", "state.yaml", "--format", "json", "--budget", "80", "--build", str(build))
    assert first.exit_code == 0
    assert first.output == second.output == from_build.output
    data = json.loads(first.output)
    fields = [f.name for f in dataclasses.fields(PromptRequest) if f.name != "state"]
    assert list(data) == ["format", "format_version", *fields, "text"]
    req = _api_request(project, budget=80)
    assert data["text"] == req.text
    assert data["tokens"] == req.tokens and data["budget"] == 80
    history = next(s for s in data["sections"] if s["id"] == "history")
    assert history["status"] == "trimmed" and history["items_dropped"] == [1, 2]
    assert [m["role"] for m in data["messages"]] == [m.role for m in req.messages]


def test_build_and_in_memory_agree(project, build):
    a = run("render", "triage", "--state", "state.yaml", "--format", "text")
    b = run("render", "triage", "--state", "state.yaml", "--format", "text", "--build", str(build))
    assert a.exit_code == b.exit_code == 0
    assert a.output == b.output


def test_project_option_from_elsewhere(project, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    r = run("render", "triage", "--state", str(project / "state.yaml"), "--project", str(project), "--format", "text")
    assert r.exit_code == 0 and r.output.startswith("You sort support tickets")


def test_pretty_shows_sections_counts_bars_and_total(project):
    r = run("render", "triage", "--state", "state.yaml")
    assert r.exit_code == 0
    req = _api_request(project)
    lines = r.output.splitlines()
    assert lines[0].startswith(f"triage → text   {req.tokens} / {req.budget} tokens")
    for s in req.sections:
        row = next(line for line in lines if line.startswith(s.id + " "))
        assert f" {s.tokens} " in row and "%" in row and ("█" in row or "·" in row)
    assert lines[-1] == f"total: {req.tokens} of {req.budget} tokens ({100 * req.tokens / req.budget:.1f}%), {req.budget - req.tokens} left"
    assert "dropped: nothing" in r.output


def test_stats_in_memory_and_from_build(project, build):
    a = run("stats")
    b = run("stats", "--build", str(build))
    assert a.exit_code == b.exit_code == 0
    assert a.output == b.output
    rows = {line.split()[0]: line.split() for line in a.output.splitlines()[2:-1]}
    assert rows["triage"][:5] == ["triage", "3", "14", "2", "1500"]
    assert rows["triage-short"][:5] == ["triage-short", "2", "14", "1", "500"]
    assert a.output.splitlines()[-1] == "2 role(s), 28 static tokens in all"


def test_stats_of_a_broken_build(build):
    (build / "manifest.json").write_text("[]")
    assert_fails(run("stats", "--build", str(build)), "PM801")


def test_compile_into_an_unwritable_folder_is_one_line_pm014(tmp_path):
    from click.testing import CliRunner

    from promptmill.cli.main import main

    (tmp_path / "prompts").mkdir()
    (tmp_path / "prompts" / "r.yaml").write_text("kind: role\nid: r\nsections: [{id: a, text: hi}]\n")
    (tmp_path / "taken").write_text("a file")
    out = CliRunner().invoke(main, ["compile", str(tmp_path), "-o", str(tmp_path / "taken")])
    assert out.exit_code == 1
    assert "error[PM014]: cannot write the build folder" in out.output
    assert "Traceback" not in out.output and "PM000" not in out.output


def test_state_from_standard_input_as_yaml_or_json(project):
    yaml_text = (project / "state.yaml").read_text()
    from_file = run("render", "triage", "--state", "state.yaml", "--format", "text")
    assert from_file.exit_code == 0, from_file.output
    piped = CliRunner().invoke(main, ["render", "triage", "--state", "-", "--format", "text"], input=yaml_text)
    assert piped.exit_code == 0 and piped.output == from_file.output
    import yaml

    as_json = json.dumps(yaml.safe_load(yaml_text))
    piped_json = CliRunner().invoke(main, ["render", "triage", "--state", "-", "--format", "text"], input="\n  " + as_json)
    assert piped_json.exit_code == 0 and piped_json.output == from_file.output
    dup = CliRunner().invoke(main, ["render", "triage", "--state", "-"], input='{"a": 1,\n "a": 2}')
    assert_fails(dup, "PM813", "<stdin>:2:2:", "duplicate key 'a'")
    bad_yaml = CliRunner().invoke(main, ["render", "triage", "--state", "-"], input="a: [\n")
    assert_fails(bad_yaml, "PM813", "<stdin>:2:1:")
    huge = CliRunner().invoke(main, ["render", "triage", "--state", "-"], input="a" * (MAX_STATE_FILE_BYTES + 1))
    assert_fails(huge, "PM812", "<stdin>")


def test_watch_refuses_standard_input_as_its_state(project):
    result = run("watch", ".", "--role", "triage", "--state", "-")
    assert_fails(result, "PM010", "standard input")


@pytest.mark.parametrize("provider", ["openai", "anthropic", "gemini", "text"])
def test_the_pretty_preview_shows_each_history_turn_on_its_own_line(provider):
    from promptmill.cli.preview import pretty
    from providers_support import render

    req = render("companion-chat", "companion-chat.state.yaml", provider)
    shown = pretty(req)
    assert "    │ user: Maya: back from the long run, 16 km today!\n" in shown
    assert "    │ assistant: 16 km! That is your longest yet, isn't it? How did the knee hold up?\n" in shown
    assert "today!16 km" not in shown


def test_stats_and_render_agree_that_a_declare_only_tools_section_is_stable(tmp_path):
    from click.testing import CliRunner

    from promptmill.cli.main import main

    (tmp_path / "prompts").mkdir()
    (tmp_path / "prompts" / "r.yaml").write_text(
        "kind: role\nid: r\ninputs: {type: object, properties: {q: {type: string}}}\nsections:\n"
        "  - id: tools\n    declare:\n      - {name: lookup, description: Look a word up., parameters: {type: object}}\n"
        '  - id: q\n    template: "{{ q }}"\n'
    )
    from promptmill.compiling.api import build_in_memory

    req = build_in_memory(tmp_path)[0].render("r", {"q": "hi"})
    assert req.section("tools").stability == "stable" and req.section("q").stability == "dynamic"
    stats = CliRunner().invoke(main, ["stats", str(tmp_path)])
    assert stats.exit_code == 0
    assert stats.output.splitlines()[2].split()[:4] == ["r", "2", "0", "1"]  # one dynamic section: q
