"""PM410: Jinja syntax in a section's literal `title` or `text` (literals.py)."""

from __future__ import annotations

from pathlib import Path

import promptmill

ROLE = """\
kind: role
id: r
inputs:
  type: object
  properties:
    diff: {type: object, properties: {lines: {type: integer}, text: {type: string}}}
sections:
  - id: intro
    text: |
      You review diffs.
      Mention {% if big %}splitting{% endif %} when needed.
  - id: diff
    title: "Diff ({{ diff.lines }} lines):"
    template: "{{ diff.text }}"
  - id: literal
    text: "Braces alone are fine: {x} and { {y} }."
"""


def test_jinja_in_a_title_or_text_is_a_warning_at_the_braces(tmp_path: Path) -> None:
    (tmp_path / "prompts").mkdir()
    (tmp_path / "prompts" / "r.yaml").write_text(ROLE, encoding="utf-8")
    result = promptmill.lint(tmp_path)
    assert [(d.code, d.severity, d.line, d.col) for d in result.diagnostics] == [
        ("PM410", "warning", 11, 15),
        ("PM410", "warning", 13, 19),
    ]
    text, title = result.diagnostics
    assert "its `text` holds Jinja syntax '{% if big %}'" in text.message
    assert "its `title` holds Jinja syntax '{{ diff.lines }}'" in title.message
    assert "template" in title.hint
    assert result.ok() and not result.ok(strict=True)


def test_an_inherited_section_is_reported_once_in_its_own_file(tmp_path: Path) -> None:
    (tmp_path / "prompts").mkdir()
    (tmp_path / "prompts" / "r.yaml").write_text(ROLE, encoding="utf-8")
    (tmp_path / "prompts" / "c.yaml").write_text("kind: role\nid: c\nextends: r\n", encoding="utf-8")
    codes = [(d.code, Path(d.file).name) for d in promptmill.lint(tmp_path).diagnostics]
    assert codes == [("PM410", "r.yaml"), ("PM410", "r.yaml")]
