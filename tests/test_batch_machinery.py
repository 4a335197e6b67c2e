"""The batch machinery's shortcuts give what the plain way gives (issue 28, lever 4).

A report line is built as text in one go instead of a dict through `json.dumps`; request and report
files gather their bytes and write and hash them a block at a time; a row read from JSONL becomes its
state without a copy. Each is checked here against the plain way it replaces.
"""

from __future__ import annotations

import hashlib
import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from batch_support import ROLE, compile_build, rows
from promptmill.batch import render_rows
from promptmill.batch.renderer import RowResult
from promptmill.batch.shards import BUFFER, AtomicFile


def _plain(data: dict) -> bytes:
    """report.jsonl's line the plain way: compact JSON, UTF-8; all-ASCII escapes when UTF-8 cannot hold the text."""
    try:
        return (json.dumps(data, ensure_ascii=False, separators=(",", ":")) + "\n").encode("utf-8")
    except UnicodeEncodeError:
        return (json.dumps(data, separators=(",", ":")) + "\n").encode("ascii")


def _result(**fields: object) -> RowResult:
    base: dict = dict(
        index=7, id="case-7", ok=True, code=None, message=None, tokens=812, budget=4096, dropped=(), trimmed=(), line=b"{}\n", seconds=0.01
    )
    return RowResult(**{**base, **fields})


CASES = [
    _result(),
    _result(where="line 8", dropped=("memory",), trimmed=("knowledge", "history")),
    _result(ok=False, code="PM810", message='state.test_id: "x" is not a string\n\tat \\ the end', tokens=None, budget=None, line=None),
    _result(id=None, ok=False, code="PM870", message="not a JSON object: Expecting value: line 1 column 1 (char 0)", where="line 2"),
    _result(id="ré-sumé-✓", message="ünïcödé — \u2028 \x00 \x1f \x7f"),
    _result(id="bad\ud800id", ok=False, code="PM871", message="custom id 'bad\\ud800id' does not match"),  # UTF-8 cannot hold it
    _result(where=""),  # no where: the key is left out, as report() does
    _result(tokens=True),  # not an int: the dict's way (json writes true)
    _result(dropped=["memory"]),  # a list, not the tuple a renderer makes
    _result(id=42),  # not a string
]


@pytest.mark.parametrize("result", CASES, ids=range(len(CASES)))
def test_a_report_line_is_the_plain_json_of_report(result):
    assert result.report_line() == _plain(result.report())


@given(
    st.one_of(st.none(), st.text()),
    st.integers(min_value=0, max_value=10**12),
    st.one_of(st.none(), st.text()),
    st.booleans(),
    st.one_of(st.none(), st.text(max_size=8)),
    st.one_of(st.none(), st.text()),
    st.one_of(st.none(), st.integers(min_value=-(10**6), max_value=10**9)),
    st.lists(st.text(max_size=12), max_size=4).map(tuple),
    st.lists(st.text(max_size=12), max_size=4).map(tuple),
)
def test_any_report_line_is_the_plain_json_of_report(custom_id, index, where, ok, code, message, tokens, dropped, trimmed):
    r = _result(
        id=custom_id,
        index=index,
        where=where,
        ok=ok,
        code=code,
        message=message,
        tokens=tokens,
        budget=tokens,
        dropped=dropped,
        trimmed=trimmed,
    )
    assert r.report_line() == _plain(r.report())


@pytest.mark.parametrize("sizes", [[10, 20, 30], [BUFFER - 1, 1, 5], [BUFFER + 3, 7], [3] * 1000 + [BUFFER], []])
def test_an_atomic_file_gathers_writes_and_holds_and_hashes_exactly_what_was_written(tmp_path, sizes):
    blocks = [bytes([i % 251]) * n for i, n in enumerate(sizes)]
    f = AtomicFile(tmp_path / "out.jsonl")
    for b in blocks:
        f.write(b)
    f.publish()
    data = b"".join(blocks)
    assert (tmp_path / "out.jsonl").read_bytes() == data
    assert f.size == len(data) and f.sha256() == hashlib.sha256(data).hexdigest()
    assert [p.name for p in tmp_path.iterdir()] == ["out.jsonl"]


def test_a_discarded_atomic_file_leaves_nothing_even_with_bytes_gathered(tmp_path):
    f = AtomicFile(tmp_path / "out.jsonl")
    f.write(b"x" * (BUFFER + 10))  # one block written
    f.write(b"y" * 10)  # gathered, not written
    f.discard()
    assert list(tmp_path.iterdir()) == []


def test_rows_given_as_mappings_are_not_changed_by_rendering(tmp_path):
    build = compile_build(tmp_path)
    given_rows = rows(3)
    before = json.dumps(given_rows)
    results = list(render_rows(given_rows, ROLE, build=build, provider="openai", id_column="id"))
    assert all(r.ok for r in results) and [r.id for r in results] == ["case-0", "case-1", "case-2"]
    assert json.dumps(given_rows) == before  # the id column is still there: only rows parsed from JSONL lose it in place
    lines = [json.dumps(r).encode() for r in given_rows]
    assert [r.line for r in render_rows(lines, ROLE, build=build, provider="openai", id_column="id")] == [r.line for r in results]
