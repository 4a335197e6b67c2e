"""`runtimes: [python, typescript]` in promptmill.yaml: a template without a plan (one only Jinja can render)
is a positioned error, PM411, that names what needs Jinja; without the setting such templates compile."""

from __future__ import annotations

from pathlib import Path

import pytest

from cli_inprocess import run_cli
from promptmill.runtime.plans import build_plan, why_no_plan

ROLE = """\
kind: role
id: r
inputs:
  type: object
  properties:
    question: {{type: string}}
    items: {{type: array, items: {{type: object}}}}
sections:
  - id: intro
    text: Answer briefly.
  - id: question
    template: |
      Question:
      {template}
"""


def _project(tmp_path: Path, template: str, runtimes: str | None) -> Path:
    (tmp_path / "prompts").mkdir()
    (tmp_path / "prompts" / "r.yaml").write_text(ROLE.format(template=template), encoding="utf-8")
    config = "prompts: prompts\n" + (f"runtimes: {runtimes}\n" if runtimes is not None else "")
    (tmp_path / "promptmill.yaml").write_text(config, encoding="utf-8")
    return tmp_path


NEEDS_JINJA = [
    ("{{ question | wordcount }} words", 3, "the filter 'wordcount'"),
    ("{% set q = question %}{{ q }}", 1, "{% set %}"),
    ("{{ question.split() }}", 1, "a function or method call"),
    ("{{ items | length + 1 }}", 1, "the operator '+'"),
    ("{% for k, v in items %}{{ k }}{% endfor %}", 1, "a for loop with unpacking, a filter or recursion"),
    ("{{ question if question else 'none' }}", 1, "an inline if (x if c else y)"),
    ("{{ question | default(items) }}", 1, "the filter 'default' with keyword or computed arguments"),
]


@pytest.mark.parametrize(("template", "col", "what"), NEEDS_JINJA)
def test_a_template_without_a_plan_is_pm411_where_it_needs_jinja(tmp_path, template, col, what):
    project = _project(tmp_path, template, "[python, typescript]")
    done = run_cli(project, "compile")
    assert done.returncode == 1, done.stdout + done.stderr
    # the template's second line is line 14 of the file, indented by 6
    named = what.split("'")[1] if what.count("'") == 2 and "filter" in what else None
    expected_col = 7 + (template.index(named) if named else template.index("{"))
    assert f"prompts/r.yaml:14:{expected_col}: error[PM411] section 'question' needs Jinja for {what}, " in done.stderr
    assert "so it cannot render in the typescript runtime (promptmill.yaml: runtimes)" in done.stderr
    assert "hint: use what a plan runs" in done.stderr
    assert not (project / "build" / "manifest.json").exists()  # an error writes no build


@pytest.mark.parametrize("runtimes", [None, "[python]"])
def test_without_typescript_the_same_template_compiles(tmp_path, runtimes):
    project = _project(tmp_path, NEEDS_JINJA[0][0], runtimes)
    done = run_cli(project, "compile")
    assert done.returncode == 0, done.stderr
    assert (project / "build" / "manifest.json").is_file()


def test_a_template_with_a_plan_compiles_for_typescript(tmp_path):
    template = "{% for i in items %}{{ loop.index }}. {{ i.name | upper }}{% else %}none{% endfor %} {{ question | default('?') }}"
    project = _project(tmp_path, template, "[python, typescript]")
    done = run_cli(project, "compile")
    assert done.returncode == 0, done.stderr


def test_an_unknown_runtime_is_a_schema_error(tmp_path):
    project = _project(tmp_path, "{{ question }}", "[python, perl]")
    done = run_cli(project, "compile")
    assert done.returncode == 1
    assert 'runtimes[1]: "perl" is not allowed; expected one of: "python", "typescript"' in done.stderr


def test_the_starter_project_is_portable(tmp_path):
    assert run_cli(tmp_path, "init", ".").returncode == 0
    with open(tmp_path / "promptmill.yaml", "a", encoding="utf-8") as fh:
        fh.write("runtimes: [python, typescript]\n")
    done = run_cli(tmp_path, "compile")
    assert done.returncode == 0, done.stderr


def _shipped_templates() -> list[str]:
    import json

    root = Path(__file__).resolve().parents[1] / "build"
    found = []
    for bundle in sorted((root / "roles").glob("*.json")):
        for section in json.loads(bundle.read_text(encoding="utf-8"))["sections"]:
            if section.get("template"):
                found.append(section["template"])
    return found


@pytest.mark.parametrize("template", _shipped_templates() + [t for t, _, _ in NEEDS_JINJA])
def test_why_no_plan_answers_exactly_when_there_is_no_plan(template):
    assert (build_plan(template) is None) == (why_no_plan(template) is not None)
