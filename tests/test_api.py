"""compile() and lint(): deterministic, incremental, atomic, and honest with --check."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

import promptmill
from promptmill.compiling.writer import bundle_path
from promptmill.core.errors import CompileError

ROOT = Path(__file__).resolve().parent.parent

ROLE = """\
kind: role
id: {id}
inputs:
  type: object
  properties:
    topic: {{type: string}}
sections:
  - id: intro
    text: You write short notes.
  - id: topic
    template: "Topic: {{{{ topic }}}}"
  - id: rules
    constraints: [{rules}]
"""
RULES = """\
kind: constraints
id: house
title: "House rules:"
rules:
  - id: short
    text: {text}
"""


def notes(roles=("alpha", "beta"), rules_text="Be brief.") -> dict[str, str]:
    """Roles that share the constraints file house.yaml, for make_project."""
    files = {f"prompts/{rid}.yaml": ROLE.format(id=rid, rules="house") for rid in roles}
    return {**files, "prompts/house.yaml": RULES.format(text=rules_text)}


def build_bytes(build: Path) -> dict[str, bytes]:
    return {p.relative_to(build).as_posix(): p.read_bytes() for p in sorted(build.rglob("*")) if p.is_file() and p.name != ".lock"}


def test_compile_is_deterministic(tmp_path, make_project):
    a = make_project(notes(), tmp_path / "a")
    b = make_project(notes(), tmp_path / "b")
    promptmill.compile(a)
    promptmill.compile(b)
    assert build_bytes(a / "build") == build_bytes(b / "build")
    first = build_bytes(a / "build")
    promptmill.compile(a, force=True)
    assert build_bytes(a / "build") == first


def test_shipped_build_is_up_to_date():
    result = promptmill.compile(ROOT, check=True)
    assert result.stale == (), "run `promptmill compile` and commit build/"


def test_incremental_recompiles_only_what_changed(make_project):
    root = make_project(notes())
    first = promptmill.compile(root)
    assert first.compiled == ("alpha", "beta")
    assert promptmill.compile(root).up_to_date
    (root / "prompts" / "alpha.yaml").write_text(ROLE.format(id="alpha", rules="house").replace("short notes", "long notes"))
    second = promptmill.compile(root)
    assert second.compiled == ("alpha",)
    assert second.reused == ("beta",)
    # a shared dependency changes: every role using it is recompiled
    (root / "prompts" / "house.yaml").write_text(RULES.format(text="Be very brief."))
    third = promptmill.compile(root)
    assert third.compiled == ("alpha", "beta")
    assert len(list((root / "build" / "roles").iterdir())) == 2  # stale bundles removed


def test_a_new_file_that_shadows_a_library_id_recompiles_its_users(make_project):
    root = make_project({"prompts/r.yaml": ROLE.format(id="r", rules="common")})
    promptmill.compile(root)
    text = promptmill.load(root / "build").render("r", {"topic": "x"}).text
    assert "Never describe what a file contains" in text
    (root / "prompts" / "common.yaml").write_text(RULES.format(text="Our own rule.").replace("id: house", "id: common"))
    assert promptmill.compile(root).compiled == ("r",)
    text = promptmill.load(root / "build").render("r", {"topic": "x"}).text
    assert "Our own rule." in text
    assert "Never describe" not in text


def test_check_reports_stale_missing_and_extra_files(make_project):
    root = make_project(notes())
    promptmill.compile(root)
    assert promptmill.compile(root, check=True).stale == ()
    build = root / "build"
    bundle = next((build / "roles").glob("alpha.*.json"))
    bundle.write_text(bundle.read_text().replace("short notes", "edited by hand"))
    leftover = bundle_path("zzz", b"{}")  # a bundle a killed compile left behind
    (build / leftover).write_text("{}")
    (build / "roles" / "notes.json").write_text("{}")  # not promptmill's: neither stale nor removed
    stale = promptmill.compile(root, check=True).stale
    assert bundle.relative_to(build).as_posix() in stale
    assert leftover in stale
    assert "roles/notes.json" not in stale
    bundle.unlink()
    assert bundle.relative_to(build).as_posix() in promptmill.compile(root, check=True).stale


def test_failed_compile_leaves_the_previous_build(make_project):
    root = make_project(notes())
    promptmill.compile(root)
    before = build_bytes(root / "build")
    (root / "prompts" / "beta.yaml").write_text(ROLE.format(id="beta", rules="nosuchset"))
    with pytest.raises(CompileError) as err:
        promptmill.compile(root)
    assert any(d.code == "PM302" and "nosuchset" in d.message for d in err.value.diagnostics)
    assert build_bytes(root / "build") == before
    rt = promptmill.load(root / "build")
    assert rt.roles == ["alpha", "beta"]


def test_lint_collects_everything_and_never_raises(make_project):
    root = make_project(notes())
    (root / "prompts" / "broken.yaml").write_text("kind: role\nid: broken\nsections:\n  - id: a\n    txt: hi\n")
    (root / "prompts" / "dup.yaml").write_text(ROLE.format(id="alpha", rules="house"))
    result = promptmill.lint(root)
    codes = {d.code for d in result.diagnostics}
    assert {"PM202", "PM301"} <= codes
    assert not result.ok()
    unknown = next(d for d in result.diagnostics if d.code == "PM202")
    assert unknown.hint == "did you mean 'text'?"
    assert unknown.file.endswith("prompts/broken.yaml")
    assert (unknown.line, unknown.col) == (5, 5)


def test_render_from_sources_equals_render_from_build(make_project):
    root = make_project(notes())
    promptmill.compile(root)
    from promptmill.compiling.api import build_in_memory

    in_memory, _ = build_in_memory(root)
    state = {"topic": "tides"}
    assert in_memory.render("alpha", state).text == promptmill.load(root / "build").render("alpha", state).text


def test_compile_from_a_copy_elsewhere_is_identical(tmp_path):
    """Paths in bundles are project-relative, so a clone compiles to the same bytes."""
    copy = tmp_path / "copy"
    shutil.copytree(ROOT / "prompts", copy / "prompts")
    shutil.copy(ROOT / "promptmill.yaml", copy / "promptmill.yaml")
    promptmill.compile(copy)
    assert build_bytes(copy / "build") == build_bytes(ROOT / "build")


def test_a_folder_without_a_project_is_pm011_and_gets_no_build(tmp_path):
    # the wrong folder: no promptmill.yaml, no prompts/, no templates (other files are not templates)
    (tmp_path / "notes.txt").write_text("hello\n")
    lint = promptmill.lint(tmp_path)
    assert [(d.code, d.severity) for d in lint.diagnostics] == [("PM011", "error")]
    assert "no project here" in lint.diagnostics[0].message
    assert "promptmill init" in (lint.diagnostics[0].hint or "")
    with pytest.raises(CompileError) as err:
        promptmill.compile(tmp_path)
    assert [d.code for d in err.value.diagnostics] == ["PM011"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["notes.txt"]  # no build/ folder appeared


def test_an_empty_prompts_folder_is_a_project(tmp_path):
    # a project just started: prompts/ exists, holds nothing yet; that is not an error
    (tmp_path / "prompts").mkdir()
    assert promptmill.lint(tmp_path).diagnostics == ()
    assert promptmill.compile(tmp_path).compiled == ()


def test_a_build_folder_passed_as_a_project_is_told_to_use_build(tmp_path, make_project):
    promptmill.compile(make_project(notes()))
    diags = promptmill.lint(tmp_path / "build").diagnostics
    assert [d.code for d in diags] == ["PM011"]
    assert "--build" in (diags[0].hint or "")
