"""`promptmill.Workspace` (compiling/workspace.py): in-memory recompiles that redo only what an edit touched.

The property that matters: after any sequence of edits, a refresh gives the
same bundles and diagnostics as compiling from scratch.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from promptmill import Workspace
from promptmill.compiling.api import build_in_memory, lint
from promptmill.core.errors import CompileError

CASES = Path(__file__).parent / "cases" / "render"

SHARED = """\
kind: fragment
id: shared/tone
name: Tone
description: How to sound.
text: Be brief and polite.
"""

USES_SHARED = """\
kind: role
id: polite
description: Uses the shared fragment.
sections:
  - id: intro
    text: Answer the customer.
  - id: tone
    fragment: shared/tone
"""

UNUSED_INPUT = """\
kind: role
id: unused
description: Declares an input no template uses (a warning).
inputs:
  type: object
  properties:
    forgotten: {type: string}
sections:
  - id: intro
    text: Nothing dynamic here.
"""


@pytest.fixture
def project(tmp_path, monkeypatch, make_project) -> Path:
    """The render cases' project plus a shared fragment, a role using it and one with an unused input."""
    root = tmp_path / "project"
    shutil.copytree(CASES / "project", root)
    extra = {"fragments/tone.yaml": SHARED, "roles/polite.yaml": USES_SHARED, "roles/unused.yaml": UNUSED_INPUT}
    make_project(extra, root / "prompts")
    monkeypatch.chdir(root)
    return root


def roles_dir(project: Path) -> Path:
    return project / "prompts" / "roles"


def assert_same_as_scratch(ws: Workspace, project: Path) -> None:
    runtime, diags = ws.refresh()
    try:
        fresh, fresh_diags = build_in_memory(project)
    except CompileError as exc:
        assert runtime is None
        assert [d.format() for d in diags] == [d.format() for d in exc.diagnostics]
        return
    assert runtime is not None
    assert runtime.roles == fresh.roles
    for rid in fresh.roles:
        assert runtime.bundle(rid).to_json() == fresh.bundle(rid).to_json()
    assert [d.format() for d in diags] == [d.format() for d in fresh_diags]


def test_first_refresh_matches_build_in_memory(project):
    ws = Workspace(project)
    assert_same_as_scratch(ws, project)
    assert ws.project is not None and ws.project.root == project


def test_unchanged_project_redoes_nothing(project):
    ws = Workspace(project)
    ws.refresh()
    runtime, _ = ws.refresh()
    assert runtime is not None
    assert ws.reparsed == () and ws.recompiled == ()


def test_editing_a_role_reparses_and_recompiles_only_it(project):
    ws = Workspace(project)
    ws.refresh()
    role = roles_dir(project) / "triage-short.yaml"
    role.write_text(role.read_text().replace("Sort this ticket", "Sort this one ticket"))
    runtime, _ = ws.refresh()
    assert ws.reparsed == ("prompts/roles/triage-short.yaml",)
    assert ws.recompiled == ("triage-short",)
    req = runtime.render("triage-short", {"ticket": {"id": 1, "title": "t"}})
    assert "Sort this one ticket" in req.text
    assert_same_as_scratch(ws, project)


def test_editing_a_shared_fragment_recompiles_the_roles_that_use_it(project):
    ws = Workspace(project)
    ws.refresh()
    (project / "prompts" / "fragments" / "tone.yaml").write_text(SHARED.replace("brief", "very brief"))
    runtime, _ = ws.refresh()
    assert ws.recompiled == ("polite",)
    assert "very brief" in runtime.render("polite").text
    assert_same_as_scratch(ws, project)


def test_saving_the_same_bytes_redoes_nothing(project):
    ws = Workspace(project)
    ws.refresh()
    role = roles_dir(project) / "triage.yaml"
    role.write_text(role.read_text())
    os.utime(role, (1, 1))
    ws.refresh()
    assert ws.reparsed == () and ws.recompiled == () and ws.removed == ()


def test_warnings_of_unchanged_roles_are_kept(project):
    ws = Workspace(project)
    _, first = ws.refresh()
    assert any(d.code == "PM404" for d in first)
    role = roles_dir(project) / "triage.yaml"
    role.write_text(role.read_text().replace("into queues", "into the right queue"))
    _, second = ws.refresh()
    assert "unused" not in ws.recompiled
    assert [d.format() for d in second] == [d.format() for d in first]


def test_broken_edit_then_fix(project):
    ws = Workspace(project)
    ws.refresh()
    role = roles_dir(project) / "triage.yaml"
    good = role.read_text()
    role.write_text(good.replace("id: triage\n", "id: [triage\n"))
    runtime, diags = ws.refresh()
    assert runtime is None
    assert any(d.code == "PM101" and d.file.endswith("triage.yaml") and d.line >= 2 for d in diags)
    assert_same_as_scratch(ws, project)
    role.write_text(good.replace("{{ ticket.title }}", "{{ ticket.title | upper }}"))
    runtime, diags = ws.refresh()
    assert runtime is not None
    assert "LOGIN" in runtime.render("triage", {"ticket": {"id": 1, "title": "login"}, "history": []}).text
    assert_same_as_scratch(ws, project)


def test_template_error_then_fix(project):
    ws = Workspace(project)
    ws.refresh()
    role = roles_dir(project) / "triage.yaml"
    good = role.read_text()
    role.write_text(good.replace("{{ ticket.title }}", "{{ ticket.title }"))
    runtime, diags = ws.refresh()
    assert runtime is None and any(d.code == "PM401" for d in diags)
    role.write_text(good)
    runtime, _ = ws.refresh()
    assert runtime is not None
    assert_same_as_scratch(ws, project)


def test_deleted_renamed_and_new_files(project):
    ws = Workspace(project)
    ws.refresh()
    (roles_dir(project) / "triage-short.yaml").unlink()
    runtime, _ = ws.refresh()
    assert "triage-short" not in runtime.roles
    assert ws.removed == ("prompts/roles/triage-short.yaml",)
    assert_same_as_scratch(ws, project)
    os.rename(roles_dir(project), project / "prompts" / "agents")
    runtime, _ = ws.refresh()
    assert "triage" in runtime.roles
    assert ws.reparsed  # new paths are new files, even with the same bytes
    assert "prompts/roles/triage.yaml" in ws.removed
    assert_same_as_scratch(ws, project)
    (project / "prompts" / "agents" / "extra.yaml").write_text(USES_SHARED.replace("id: polite", "id: extra"))
    runtime, _ = ws.refresh()
    assert ws.recompiled == ("extra",)
    assert_same_as_scratch(ws, project)
    (project / "prompts" / "fragments" / "tone.yaml").unlink()
    runtime, diags = ws.refresh()
    assert runtime is None and any(d.code == "PM302" for d in diags)
    assert_same_as_scratch(ws, project)


def test_missing_project_folder_is_a_diagnostic(tmp_path):
    runtime, diags = Workspace(tmp_path / "nowhere").refresh()
    assert runtime is None and diags[0].code == "PM011"


def test_lint_and_compile_are_unaffected(project):
    result = lint(project)
    assert result.ok() and any(d.code == "PM404" for d in result.diagnostics)


def test_workspace_is_exported_lazily():
    import promptmill
    from promptmill import Workspace

    assert promptmill.Workspace is Workspace


def test_editing_promptmill_yaml_recompiles_every_role(project):
    ws = Workspace(project)
    ws.refresh()
    config = project / "promptmill.yaml"
    config.write_text(config.read_text().replace("o200k_base", "cl100k_base"))
    runtime, _ = ws.refresh()
    assert set(ws.recompiled) == set(runtime.roles)
    assert runtime.render("polite").tokenizer == "cl100k_base"
    assert_same_as_scratch(ws, project)


def test_source_paths_are_what_a_watcher_needs(project):
    ws = Workspace(project)
    assert ws.source_paths() == [Path(project)]  # no project found yet
    ws.refresh()
    paths = ws.source_paths()
    assert project / "promptmill.yaml" in paths
    assert any(p.resolve() == (project / "prompts").resolve() for p in paths)
    assert not any("library" in p.parts and "promptmill" in p.parts for p in paths)  # the shipped library never changes


def test_refresh_reads_an_overlay_instead_of_the_disk(make_project, monkeypatch):
    """An editor's unsaved buffer (resolved path -> bytes) replaces the file's text; the file is untouched,
    and without the overlay the disk counts again."""
    root = make_project({"promptmill.yaml": "prompts: prompts\n", "prompts/f.yaml": SHARED, "prompts/r.yaml": USES_SHARED})
    monkeypatch.chdir(root)
    frag = (root / "prompts" / "f.yaml").resolve()
    ws = Workspace(".")
    runtime, diags = ws.refresh({frag: SHARED.replace("id: shared/tone", "id: shared/tune").encode()})
    assert runtime is None and [(d.code, d.file) for d in diags if d.severity == "error"] == [("PM302", "prompts/r.yaml")]
    assert frag.read_text() == SHARED
    runtime, diags = ws.refresh()
    assert runtime is not None and not [d for d in diags if d.severity == "error"]
