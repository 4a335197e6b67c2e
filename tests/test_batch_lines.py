"""promptmill.batch.lines: JSONL lines split with a size cap, in the encoding of the file's byte order mark."""

from __future__ import annotations

import codecs
import io
import random
import tracemalloc

import pytest

from promptmill.batch.lines import Unreadable, _split, json_object, lines

NEWLINES = {1: b"\n", 2: "\n".encode("utf-16-le"), 4: "\n".encode("utf-32-le")}


def _reference(data: bytes, newline: bytes, cap: int) -> list:
    """The lines of `data` by a plain scan: a newline counts only at a whole number of units from the line's start."""
    unit, out, start, i = len(newline), [], 0, 0
    while i < len(data):
        if data[i : i + unit] == newline and (i - start) % unit == 0:
            out.append(data[start : i + unit])
            i = start = i + unit
        else:
            i += 1
    if start < len(data):
        out.append(data[start:])
    return [x if len(x) <= cap else len(x) for x in out]


@pytest.mark.parametrize("seed", range(4))
def test_split_agrees_with_a_plain_scan_at_every_block_size(seed):
    rnd = random.Random(seed)
    for _ in range(500):
        unit = rnd.choice([1, 2, 4])
        newline = NEWLINES[unit]
        parts = [
            bytes(rnd.choice([0, 10, 65]) for _ in range(rnd.randint(0, 6) * unit)) + (newline if rnd.random() < 0.8 else b"")
            for _ in range(rnd.randint(0, 12))
        ]
        data = b"".join(parts)
        cap, block = rnd.randint(1, 12), rnd.randint(1, 7)
        got = list(_split(io.BytesIO(data[1:]), data[:1], newline, cap, block))
        assert got == _reference(data, newline, cap), (unit, data, cap, block)


def test_a_line_past_the_cap_is_skipped_without_being_held():
    size = 40 * 1024 * 1024
    data = b'{"a": 1}\n{"b": "' + b"x" * size + b'"}\n{"c": 3}'
    f = io.BytesIO(data)
    tracemalloc.start()
    try:
        got = [(n, x if isinstance(x, Unreadable) else bytes(x)) for n, x in lines(f, cap=1024 * 1024)]
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert got[0] == (1, b'{"a": 1}\n') and got[2] == (3, b'{"c": 3}')
    assert got[1][0] == 2 and got[1][1].code == "PM812" and f"{size + 10:,} bytes" in got[1][1].message
    assert peak < 6 * 1024 * 1024, f"held {peak:,} bytes for a {size:,}-byte line"


@pytest.mark.parametrize("encoding", ["utf-8-sig", "utf-16", "utf-16-le", "utf-16-be", "utf-32", "utf-32-le", "utf-32-be"])
def test_each_byte_order_mark_is_read_and_dropped(encoding):
    bom = {
        "utf-16-le": codecs.BOM_UTF16_LE,
        "utf-16-be": codecs.BOM_UTF16_BE,
        "utf-32-le": codecs.BOM_UTF32_LE,
        "utf-32-be": codecs.BOM_UTF32_BE,
    }.get(encoding, b"")
    data = bom + '{"é": "ਊ€😀"}\r\n\r\n{"b": 2}'.encode(encoding)
    assert list(lines(io.BytesIO(data))) == [(1, '{"é": "ਊ€😀"}\r\n'.encode()), (3, b'{"b": 2}')]


def test_json_object_names_what_is_wrong_without_a_traceback():
    assert json_object(b'{"a": 1}', "line 1") == ({"a": 1}, None)
    assert json_object(b"[" * 100_000, "line 2")[1] == "line 2 is nested too deeply to read"
    assert json_object(b"[1]", "line 3")[1] == "line 3 must be a JSON object, got a list"
    assert json_object(b'{"a": ', "line 4")[1].startswith("line 4 is not JSON: Expecting value: line 1 column 7")
    assert "can't decode" in json_object(b'{"\xff": 1}', "line 5")[1]
