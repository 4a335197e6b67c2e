"""load_data_file: render-state files for the command line (.json, .yaml, .yml)."""

from __future__ import annotations

import pathlib

import pytest

from promptmill.core.errors import PromptmillError, StateFileError
from promptmill.source.loader import load_data_file

STATE = {"task": {"id": "t-1", "title": "Fix the bug"}, "items": [1, 2.5, True, None, "yes"]}


@pytest.mark.parametrize(
    "name, content",
    [
        (
            "state.json",
            '{"task": {"id": "t-1", "title": "Fix the bug"}, "items": [1, 2.5, true, null, "yes"]}',
        ),
        ("state.yaml", "task: {id: t-1, title: Fix the bug}\nitems: [1, 2.5, true, null, 'yes']\n"),
        (
            "state.yml",
            "task:\n  id: t-1\n  title: Fix the bug\nitems:\n  - 1\n  - 2.5\n  - true\n  - ~\n  - 'yes'\n",
        ),
        (
            "STATE.JSON",
            '\ufeff{"task": {"id": "t-1", "title": "Fix the bug"}, "items": [1, 2.5, true, null, "yes"]}',
        ),
    ],
)
def test_reads_json_and_yaml(tmp_path: pathlib.Path, name: str, content: str):
    path = tmp_path / name
    path.write_text(content, encoding="utf-8")
    assert load_data_file(path) == STATE


def test_yaml_state_uses_the_core_schema(tmp_path: pathlib.Path):
    path = tmp_path / "s.yaml"
    path.write_text("answer: yes\nwhen: 2024-01-01\nn: 0o10\n")
    assert load_data_file(path) == {"answer": "yes", "when": "2024-01-01", "n": 8}


def test_long_json_lines_are_fine(tmp_path: pathlib.Path):
    path = tmp_path / "s.yaml"
    path.write_text('{"text": "' + "x" * 200_000 + '"}')
    assert len(load_data_file(path)["text"]) == 200_000


def raises(path: pathlib.Path, code: str, *fragments: str, **kwargs) -> StateFileError:
    with pytest.raises(StateFileError) as info:
        load_data_file(path, **kwargs)
    err = info.value
    assert isinstance(err, PromptmillError) and err.code == code
    for fragment in fragments:
        assert fragment in err.message, err.message
    return err


@pytest.mark.parametrize(
    "name, content, fragments",
    [
        ("bad.json", '{\n  "a": 1,\n  "b": \n}', ["bad.json:4:1:", "Expecting value"]),
        ("nan.json", '{"a": NaN}', ["nan.json:1:7:", "NaN is not valid JSON"]),
        ("inf.json", '{"s": "NaN \\" x",\n "k": [-Infinity]}', ["inf.json:2:8:", "-Infinity is not valid JSON"]),
        ("dup.json", '{"a": 1, "a": 2}', ["dup.json:1:10:", "duplicate key 'a'"]),
        ("dup2.json", '{"x": {"a": 1}, "b": {"a": 2,\n "c": [{"a": 0}], "a": 3}}', ["dup2.json:2:19:", "duplicate key 'a'"]),
        ("esc.json", '{"a": 1,\n "\\u0061": 2}', ["esc.json:2:2:", "duplicate key 'a'"]),
        ("deep.json", "[" * 100_000 + "]" * 100_000, ["deep.json:1:1:", "nested too deeply"]),
        ("bad.yaml", "a: 1\nb: [\n", ["bad.yaml:3:1:"]),
        ("dup.yaml", "a: 1\na: 2\n", ["dup.yaml:2:1:", "duplicate key 'a'"]),
        ("tab.yml", "a:\n\tb: 1\n", ["tab.yml:2:1:", "tab"]),
        ("empty.yaml", "", ["empty.yaml:1:1:", "no YAML document"]),
        ("tagged.yaml", "a: !!python/name:os.system x\n", ["tagged.yaml:1:4:"]),
        ("state.txt", "a: 1\n", ["must end in .json, .yaml or .yml"]),
    ],
)
def test_unparseable_state_is_pm813_with_a_position(tmp_path: pathlib.Path, name, content, fragments):
    path = tmp_path / name
    path.write_text(content, encoding="utf-8")
    raises(path, "PM813", *fragments)


def test_binary_and_missing_state_files_are_pm813(tmp_path: pathlib.Path):
    path = tmp_path / "latin.json"
    path.write_bytes('{"a": "café"}'.encode("latin-1"))
    raises(path, "PM813", "latin.json:1:11:", "not UTF-8")
    raises(tmp_path / "missing.json", "PM813", "missing.json", "does not exist")
    (tmp_path / "dir.yaml").mkdir()
    raises(tmp_path / "dir.yaml", "PM813", "folder")


def test_too_large_state_is_pm812(tmp_path: pathlib.Path):
    path = tmp_path / "big.json"
    path.write_text('{"a": "' + "x" * 2000 + '"}')
    raises(path, "PM812", "2,009 bytes", "limit is 1,000 bytes", max_bytes=1000)
    assert load_data_file(path, max_bytes=2009) == {"a": "x" * 2000}
