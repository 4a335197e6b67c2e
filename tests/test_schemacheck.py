"""Schema diagnostics as a user reads them (schemacheck.py): values shown as written."""

from __future__ import annotations

from pathlib import Path

import promptmill


def _lint(tmp_path: Path, text: str) -> list[tuple[str, int, int, str, str | None]]:
    (tmp_path / "prompts").mkdir()
    (tmp_path / "prompts" / "r.yaml").write_text(text, encoding="utf-8")
    return [(d.code, d.line, d.col, d.message, d.hint) for d in promptmill.lint(tmp_path).diagnostics]


def test_an_id_with_a_non_ascii_letter_is_shown_as_written_and_the_letter_named(tmp_path: Path) -> None:
    found = _lint(tmp_path, "kind: role\nid: rôle\nsections:\n  - id: ä\n    text: hi\n")
    assert found == [
        (
            "PM206", 2, 5,
            "id: \"rôle\" is not a valid id (ASCII letters, digits, '_', '.' and '-', starting with a letter or digit;"
            " segments separated by '/')",
            "'ô' is not allowed (only ASCII letters are)",
        ),
        (
            "PM206", 4, 9,
            "sections[0].id: \"ä\" is not a valid id (ASCII letters, digits, '_', '.' and '-', starting with a letter"
            " or digit)",
            "'ä' is not allowed (only ASCII letters are)",
        ),
    ]  # fmt: skip


def test_a_section_id_cannot_have_segments(tmp_path: Path) -> None:
    ((code, _, _, message, hint),) = _lint(tmp_path, "kind: role\nid: r\nsections:\n  - id: a/b\n    text: hi\n")
    assert code == "PM206" and "segments" not in message and hint == "'/' is not allowed"


def test_an_enum_value_is_shown_as_written(tmp_path: Path) -> None:
    ((code, _, _, message, _),) = _lint(tmp_path, "kind: role\nid: r\nprovider: ópenai\nsections: [{id: a, text: hi}]\n")
    assert code == "PM201" and message.startswith('provider: "ópenai" is not allowed')
