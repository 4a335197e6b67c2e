"""Hostile batch inputs as data: tests/cases/batch/<case>.<ext> and tests/cases/collect/<case>/.

Batch: each input file `<case>.jsonl` / `<case>.parquet` has a `<case>.expect.json`:
`rows`, the report's `[where, code or null, text in the message]` for every row in
order, or `error`, `[code, text]` of the PM error that stops the run; `options` are
`BatchRenderer`'s (`id_column` defaults to `id`) plus `max_row_bytes`.

Collect: each folder holds `results.jsonl` and `expect.json`: `provider`, `rows`
(requests in the batch, default 4: `case-0`...), `replies` (custom ids in order),
`failures` (`[line, custom id, code, text in the reason]` in order, the results
lines first, then the requests without a result), or `error` (`[code, text...]`).
A `summary.json` or `requests-00001.jsonl` in the folder replaces the batch's own.

A new bad input is a new file here, not new test code.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from batch_support import MODELS, ROLE, compile_build, rows, write_jsonl
from promptmill.batch import collect, run_batch
from promptmill.batch.renderer import BatchRenderer, render_items
from promptmill.batch.rows import read_rows
from promptmill.core.errors import PromptmillError

CASES = Path(__file__).parent / "cases"
BATCH = sorted(p for p in (CASES / "batch").iterdir() if not p.name.endswith(".expect.json"))
COLLECT = sorted(p for p in (CASES / "collect").iterdir() if p.is_dir())


@pytest.fixture(scope="module")
def build(tmp_path_factory):
    return compile_build(tmp_path_factory.mktemp("cases-build"))


def _expect(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


def test_every_case_has_its_input_and_expectation():
    stems = {p.name.split(".")[0] for p in BATCH}
    expects = {p.name.removesuffix(".expect.json") for p in (CASES / "batch").glob("*.expect.json")}
    assert stems == expects and len(BATCH) == len(stems)
    assert all((c / "expect.json").is_file() and (c / "results.jsonl").is_file() for c in COLLECT)
    assert len(BATCH) >= 10 and len(COLLECT) >= 10


@pytest.mark.parametrize("path", BATCH, ids=lambda p: p.name)
def test_batch_case(build, path):
    expect = _expect(path.with_name(path.name.split(".")[0] + ".expect.json"))
    options = {"id_column": "id"} | expect.get("options", {})
    cap = options.pop("max_row_bytes", None)
    renderer = BatchRenderer(build, ROLE, provider="openai", **options)
    items = read_rows(path, **({"max_row_bytes": cap} if cap else {}))
    if "error" in expect:
        code, text = expect["error"]
        with pytest.raises(PromptmillError) as info:
            list(render_items(renderer, items))
        assert info.value.code == code and text in str(info.value), str(info.value)
        return
    report = [r.report() for r in render_items(renderer, items)]
    assert [(r.get("where"), r["code"]) for r in report] == [(w, c) for w, c, *_ in expect["rows"]], report
    for r, (_, _, *text) in zip(report, expect["rows"], strict=True):
        assert not text or text[0] in r["message"], r["message"]
        assert r["ok"] == (r["code"] is None)


_BATCHES: dict[tuple[str, int], Path] = {}


def _batch(build, tmp_path_factory, provider: str, n: int) -> Path:
    if (provider, n) not in _BATCHES:
        base = tmp_path_factory.mktemp(f"batch-{provider}-{n}")
        src = write_jsonl(base / "rows.jsonl", rows(n))
        run_batch(ROLE, src, base / "batch", build=build, provider=provider, model=MODELS.get(provider), id_column="id")
        _BATCHES[provider, n] = base / "batch"
    return _BATCHES[provider, n]


@pytest.mark.parametrize("case", COLLECT, ids=lambda p: p.name)
def test_collect_case(build, tmp_path_factory, tmp_path, case):
    expect = _expect(case / "expect.json")
    folder = tmp_path / "batch"
    shutil.copytree(_batch(build, tmp_path_factory, expect.get("provider", "openai"), expect.get("rows", 4)), folder)
    for name in ("summary.json", "requests-00001.jsonl"):
        if (case / name).is_file():
            shutil.copyfile(case / name, folder / name)
    out = tmp_path / "out"
    if "error" in expect:
        code, *texts = expect["error"]
        with pytest.raises(PromptmillError) as info:
            collect(case / "results.jsonl", folder, out=out)
        assert info.value.code == code and all(t in str(info.value) for t in texts), str(info.value)
        assert not out.exists() or not any(out.iterdir())
        return
    counts = collect(case / "results.jsonl", folder, out=out)
    replies = [json.loads(x) for x in (out / "replies.jsonl").read_text(encoding="utf-8").splitlines()]
    failures = [json.loads(x) for x in (out / "failures.jsonl").read_text(encoding="utf-8").splitlines()]
    assert [r["custom_id"] for r in replies] == expect["replies"]
    assert all(isinstance(r["data"], dict) for r in replies)
    assert [[f.get("line"), f["custom_id"], f["code"]] for f in failures] == [x[:3] for x in expect["failures"]], failures
    for f, (*_, text) in zip(failures, expect["failures"], strict=True):
        assert text in f["reason"], f["reason"]
    assert counts["replies"] == len(replies) and counts["failures"] == len(failures)
