"""The YAML loader on real files: one test per case file, plus generated hostile inputs.

Bad cases live in tests/cases/loader/negative/: the file name starts with the
expected code (`PM106_duplicate_keys.yaml`) and a text file may start with
`# expect: LINE:COL` (or `# expect: PM106 LINE:COL`). Good cases live in
tests/cases/loader/positive/ next to a `.json` file with the expected data.
Every case runs through libyaml (when PyYAML has it) and the pure-Python parser.
"""

from __future__ import annotations

import hashlib
import json
import os
import pathlib
import re

import pytest
import yaml

from promptmill.source import loader
from promptmill.source.loader import DEFAULT_LIMITS, LoadLimits, load_file, load_text
from promptmill.source.yamlbuild import CParser, make_parser

CASES = pathlib.Path(__file__).parent / "cases" / "loader"
NEGATIVE = sorted((CASES / "negative").iterdir())
POSITIVE = sorted((CASES / "positive").glob("*.yaml"))
BACKENDS = ["c", "python"] if CParser is not None else ["python"]
_EXPECT = re.compile(rb"# expect: (?:(PM\d{3}) )?(\d+):(\d+)\s*$")


def expectation(path: pathlib.Path) -> tuple[str, tuple[int, int] | None]:
    code = path.name.split("_", 1)[0]
    assert re.fullmatch(r"PM\d{3}", code), f"{path.name}: name must start with the expected code"
    match = _EXPECT.match(path.read_bytes().split(b"\n", 1)[0])
    if match is None:
        return code, None
    if match.group(1) is not None:
        assert match.group(1).decode() == code, f"{path.name}: expect line and file name disagree"
    return code, (int(match.group(2)), int(match.group(3)))


def load_with(source: str | bytes, file: str, backend: str, limits: LoadLimits = DEFAULT_LIMITS):
    return loader._load(source, file, limits, backend)


def assert_refused(result, code: str, pos: tuple[int, int] | None = None):
    doc, diags = result
    assert doc is None
    assert diags, "a refused file must say why"
    assert {d.code for d in diags} == {code}, [d.format() for d in diags]
    assert all(d.message for d in diags)
    if pos is not None:
        assert (diags[0].line, diags[0].col) == pos, diags[0].format()
    return diags


# -- case files ---------------------------------------------------------------


def test_case_folders_are_not_empty():
    assert len(NEGATIVE) >= 20 and len(POSITIVE) >= 10


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("path", NEGATIVE, ids=lambda p: p.name)
def test_negative_case(path: pathlib.Path, backend: str):
    code, pos = expectation(path)
    diags = assert_refused(load_with(path.read_bytes(), path.name, backend), code, pos)
    assert all(d.file == path.name and d.severity == "error" for d in diags)


@pytest.mark.parametrize("path", NEGATIVE, ids=lambda p: p.name)
def test_negative_case_through_load_file(path: pathlib.Path):
    code, pos = expectation(path)
    diags = assert_refused(load_file(path), code, pos)
    assert diags[0].file == path.as_posix()


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("path", POSITIVE, ids=lambda p: p.name)
def test_positive_case(path: pathlib.Path, backend: str):
    raw = path.read_bytes()
    doc, diags = load_with(raw, "prompts/" + path.name, backend)
    assert diags == []
    assert doc is not None
    assert doc.data == json.loads(path.with_suffix(".json").read_text(encoding="utf-8"))
    assert doc.file == "prompts/" + path.name
    assert doc.sha256 == hashlib.sha256(raw).hexdigest()
    assert doc.text == raw.decode("utf-8-sig")


def test_aliases_expand_to_copies():
    doc, _ = load_file(CASES / "positive" / "aliases.yaml")
    first, second = doc.data["roles"]
    assert first["budget"] == second["budget"] == doc.data["defaults"]
    assert first["budget"] is not second["budget"] and first["budget"] is not doc.data["defaults"]


def test_duplicate_key_message_names_the_first_line():
    (diag,) = load_text("a: 1\nb:\n  c: 1\n  c: 2\n", "t.yaml")[1]
    assert diag.code == "PM106" and (diag.line, diag.col) == (4, 3)
    assert "'c'" in diag.message and "line 3" in diag.message


def test_every_duplicate_is_reported():
    diags = load_text("a: 1\na: 2\nb: {x: 1, x: 2}\na: 3\n", "t.yaml")[1]
    assert [(d.code, d.line) for d in diags] == [("PM106", 2), ("PM106", 3), ("PM106", 4)]


def test_tab_and_quote_messages_are_plain():
    tab = load_text("a:\n\tb: 1\n", "t.yaml")[1][0]
    assert "tab" in tab.message and "spaces" in (tab.message + (tab.hint or ""))
    quote = load_text('a: "open\nb: 1\n', "t.yaml")[1][0]
    assert 'the " at line 1, column 4 is never closed' in quote.message


def test_quoted_keys_that_look_like_numbers_are_strings():
    doc, diags = load_text('"1": one\n"true": yes\n"<<": merge-looking\n', "t.yaml")
    assert diags == [] and doc.data == {"1": "one", "true": "yes", "<<": "merge-looking"}


def test_huge_integer_is_refused_not_crashing():
    assert_refused(load_text("n: " + "9" * 5000 + "\n", "t.yaml"), "PM201", (1, 4))


# -- limits, with inputs too big to commit ---------------------------------------


def test_50_mb_file_is_refused_from_its_size(tmp_path: pathlib.Path):
    big = tmp_path / "big.yaml"
    with open(big, "wb") as handle:  # sparse: no 50 MB written to disk
        handle.write(b"a: 1\n")
        handle.truncate(50 * 1024 * 1024)
    diags = assert_refused(load_file(big, "big.yaml"), "PM105", (0, 0))
    assert "52,428,800 bytes" in diags[0].message


@pytest.mark.parametrize("source", [b"a: 1\n" * 30, "a: 1\n" * 30, "é: 1\n" * 18])
def test_text_over_the_byte_limit_is_refused(source):
    assert_refused(load_text(source, "t.yaml", LoadLimits(max_file_bytes=100)), "PM105")


def test_one_megabyte_line_is_refused(tmp_path: pathlib.Path):
    path = tmp_path / "line.yaml"
    path.write_text("a: " + "x" * 1_000_000 + "\n", encoding="utf-8")
    diags = assert_refused(load_file(path), "PM112", (1, 65_537))
    assert "1,000,003 characters" in diags[0].message


def _indented_mappings(levels: int) -> str:
    return "".join(" " * i + "k:\n" for i in range(levels)) + " " * levels + "v\n"


DEEP = {
    "flow_sequence_10000": ("[" * 10_000 + "]" * 10_000, (1, 65)),
    "flow_mapping_10000": ("{a: " * 10_000 + "}" * 10_000, (1, 257)),
    "block_sequence_10000": ("- " * 10_000 + "x\n", (1, 129)),
    "block_mapping_1400": (_indented_mappings(1400), (65, 65)),
    "flow_over_lines_100000": ("[{a:\n" * 100_000, (33, 1)),
}


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("name", sorted(DEEP))
def test_deep_nesting_is_refused_without_recursion(name: str, backend: str):
    text, pos = DEEP[name]
    assert_refused(load_with(text, "deep.yaml", backend), "PM108", pos)


def test_a_parser_limit_below_ours_does_not_change_the_answer(monkeypatch: pytest.MonkeyPatch):
    """libyaml reads ahead and may stop at a nesting limit of its own (PyYAML 6.0.4 does,
    at 1,000 flow levels) before promptmill's depth check sees a level: the answer must
    not depend on that, so a fast-parser syntax error is confirmed by the Python parser."""

    def impatient(text: str, backend: str = "auto"):
        if backend == "python":
            return make_parser(text, "python")

        class Stops:
            def get_event(self):
                raise yaml.MarkedYAMLError("while increasing flow level", None, "exceeded maximum nesting depth", None)

        return Stops()

    monkeypatch.setattr(loader, "make_parser", impatient)
    assert_refused(load_text("[" * 100 + "]" * 100, "deep.yaml"), "PM108", (1, 65))
    doc, diags = load_text("a: [1, 2]\n", "fine.yaml")
    assert diags == [] and doc is not None and doc.data == {"a": [1, 2]}


@pytest.mark.parametrize("backend", BACKENDS)
def test_nesting_at_the_limit_loads(backend: str):
    doc, diags = load_with("[" * 64 + "]" * 64, "t.yaml", backend)
    assert diags == [] and doc is not None


@pytest.mark.parametrize("backend", BACKENDS)
def test_alias_depth_counts_after_expansion(backend: str):
    text = "a: &a " + "[" * 40 + "]" * 40 + "\nb: " + "[" * 30 + "*a" + "]" * 30 + "\n"
    assert_refused(load_with(text, "t.yaml", backend), "PM108", (2, 34))


@pytest.mark.parametrize("backend", BACKENDS)
def test_larger_alias_bomb_stops_at_the_node_limit(backend: str):
    lines = ["l0: &l0 [" + ",".join(["lol"] * 10) + "]"]
    lines += [f"l{i}: &l{i} [" + ",".join([f"*l{i - 1}"] * 10) + "]" for i in range(1, 10)]
    assert_refused(load_with("\n".join(lines) + "\n", "bomb.yaml", backend), "PM111")


@pytest.mark.parametrize("backend", BACKENDS)
def test_flat_list_over_the_node_limit(backend: str):
    text = "- 1\n" * 25_000
    assert_refused(load_with(text, "t.yaml", backend, LoadLimits(max_nodes=20_000)), "PM111", (20_000, 3))


def test_limits_are_configurable():
    text = "a: &a 1\nb: [*a, *a, *a]\n"
    assert_refused(load_text(text, "t.yaml", LoadLimits(max_aliases=2)), "PM107", (2, 13))
    assert_refused(load_text(text, "t.yaml", LoadLimits(max_nodes=6)), "PM111", (2, 9))
    assert_refused(load_text("a: [[1]]\n", "t.yaml", LoadLimits(max_depth=2)), "PM108", (1, 5))
    assert_refused(load_text("a: 1\nbb: 22\n", "t.yaml", LoadLimits(max_line_chars=5)), "PM112", (2, 6))


# -- load_file edges -------------------------------------------------------------


def test_vanished_file_is_pm100(tmp_path: pathlib.Path):
    path = tmp_path / "gone.yaml"
    path.write_text("a: 1\n")
    path.unlink()
    diags = assert_refused(load_file(path), "PM100", (0, 0))
    assert diags[0].file == path.as_posix()


def test_folder_and_fifo_are_pm100(tmp_path: pathlib.Path):
    folder = tmp_path / "folder.yaml"
    folder.mkdir()
    assert "folder" in assert_refused(load_file(folder), "PM100")[0].message
    fifo = tmp_path / "pipe.yaml"
    os.mkfifo(fifo)
    assert_refused(load_file(fifo), "PM100")  # refused without blocking on the pipe


def test_display_name_defaults_to_the_posix_path(tmp_path: pathlib.Path):
    path = tmp_path / "ok.yaml"
    path.write_bytes(b"a: 1\n")
    doc, _ = load_file(str(path))
    assert doc.file == path.as_posix()
    doc, _ = load_file(path, "prompts/ok.yaml")
    assert doc.file == "prompts/ok.yaml" and doc.pos(("a",)).file == "prompts/ok.yaml"


@pytest.mark.skipif(not os.path.exists("/proc/self/status"), reason="needs Linux /proc")
def test_size_is_enforced_while_reading_when_stat_says_zero():
    assert os.stat("/proc/self/status").st_size == 0  # procfs claims empty files
    diags = assert_refused(load_file("/proc/self/status", limits=LoadLimits(max_file_bytes=100)), "PM105")
    assert "larger than the limit of 100 bytes" in diags[0].message
