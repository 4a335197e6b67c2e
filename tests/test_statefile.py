"""`promptmill.source.statefile.read_state`: state files to data, or a coded error."""

from __future__ import annotations

from pathlib import Path

import pytest

from promptmill.core.errors import PromptmillError
from promptmill.source.statefile import read_state

NEGATIVE = sorted(p for p in (Path(__file__).parent / "cases" / "render" / "negative").iterdir() if p.name.startswith("PM813"))


@pytest.mark.parametrize(
    "name,text",
    [
        ("s.yaml", "a: [1, 2]\nb: '{{ 7*7 }}'\n"),
        ("s.yml", "{a: [1, 2], b: '{{ 7*7 }}'}"),
        ("s.json", '{"a": [1, 2], "b": "{{ 7*7 }}"}'),
    ],
)
def test_reads_yaml_yml_and_json(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text)
    assert read_state(path) == {"a": [1, 2], "b": "{{ 7*7 }}"}


def test_empty_file_is_an_empty_state(tmp_path):
    (tmp_path / "s.yaml").write_text("")
    assert read_state(tmp_path / "s.yaml") == {}


@pytest.mark.parametrize("case", NEGATIVE, ids=[p.name for p in NEGATIVE])
def test_unreadable_files(case):
    with pytest.raises(PromptmillError) as info:
        read_state(case)
    assert info.value.code == "PM813"
    assert str(case) in info.value.message


def test_size_limit_is_checked_before_reading(tmp_path):
    path = tmp_path / "s.json"
    path.write_text('{"a": "' + "x" * 2000 + '"}')
    with pytest.raises(PromptmillError) as info:
        read_state(path, max_bytes=1000)
    assert info.value.code == "PM812"
    assert read_state(path, max_bytes=4000)["a"] == "x" * 2000


def test_syntax_errors_say_where(tmp_path):
    path = tmp_path / "s.json"
    path.write_text('{\n  "a": 1,\n  "b": oops\n}')
    with pytest.raises(PromptmillError, match=r"s\.json:3:8: "):
        read_state(path)


def test_a_tag_in_a_state_file_is_explained_for_state_too(tmp_path):
    path = tmp_path / "s.yaml"
    path.write_text("task: !!binary aGVsbG8=\n", encoding="utf-8")
    with pytest.raises(PromptmillError) as err:
        read_state(path)
    assert err.value.code == "PM813"
    assert "render states are plain data" in str(err.value)


def test_a_stream_that_cannot_be_read_is_pm813():
    import io

    from promptmill.source.statefile import read_state_stream

    class Broken(io.RawIOBase):
        def read(self, size=-1):
            raise OSError(5, "Input/output error")

    with pytest.raises(PromptmillError) as err:
        read_state_stream(Broken())
    assert err.value.code == "PM813" and "state from <stdin>: cannot read it: Input/output error" in str(err.value)
    assert read_state_stream(io.BytesIO(b"# nothing yet\n\n")) == {}
    assert read_state_stream(io.BytesIO(b"\xef\xbb\xbf [1, 2]")) == [1, 2]
