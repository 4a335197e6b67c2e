"""PM410: Jinja syntax in a section's literal `title` or `text` (literals.py).

Its cases (positions, messages, inheritance) are in tests/cases/lint/PM410.yaml."""

from __future__ import annotations

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


def test_jinja_in_a_literal_is_a_warning_that_points_at_template(make_project) -> None:
    result = promptmill.lint(make_project({"prompts/r.yaml": ROLE}))
    assert [(d.code, d.severity) for d in result.diagnostics] == [("PM410", "warning")] * 2
    assert "template" in result.diagnostics[1].hint
    assert result.ok()
    assert not result.ok(strict=True)
