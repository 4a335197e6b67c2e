"""Ray Data and Spark render the same requests as `promptmill batch` (promptmill.batch.ray / spark).

Real engines on this machine: Ray started locally with 2 CPUs, Spark local[2]; each
started once for this module. Parquet input through pyarrow.
"""

from __future__ import annotations

import json
import os
import sys

import pytest

from batch_support import MODELS, ROLE, compile_build, rows, write_jsonl
from promptmill.batch import BatchRenderer, run_batch

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")

N = 40


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    """A build, N rows (three of them bad) as JSONL with an id and a JSON state column and as Parquet,
    and the lines `promptmill batch` writes for them."""
    folder = tmp_path_factory.mktemp("engines")
    build = compile_build(folder)
    items = [{"id": r.pop("id"), "state": json.dumps(r)} for r in rows(N)]
    items[5]["state"] = json.dumps({"test_id": 5})  # PM810
    items[9]["state"] = "{not json"  # PM870
    items[11]["id"] = "bad id"  # PM871
    src = write_jsonl(folder / "rows.jsonl", items)
    pq.write_table(pa.Table.from_pylist(items), folder / "rows.parquet")
    expected = {}
    for provider in ("openai", "anthropic"):
        out = folder / f"out-{provider}"
        run_batch(
            ROLE,
            src,
            out,
            build=build,
            provider=provider,
            model=MODELS.get(provider),
            id_column="id",
            state_column="state",
            max_error_rate=0.5,
        )
        lines = (out / "requests-00001.jsonl").read_text(encoding="utf-8").splitlines()
        report = [json.loads(x) for x in (out / "report.jsonl").read_text(encoding="utf-8").splitlines()]
        expected[provider] = (lines, {r["id"]: r["code"] for r in report if not r["ok"]})
    return {"folder": folder, "build": build, "items": items, "expected": expected}


def _check(records, expected):
    lines, failed = expected
    good = [r for r in records if r["ok"]]
    assert [r["request"] for r in sorted(good, key=lambda r: int(r["custom_id"].split("-")[1]))] == lines
    assert {r["custom_id"]: r["code"] for r in records if not r["ok"]} == failed
    for r in good:
        request = json.loads(r["request"])
        assert json.loads(r["payload"]) == request.get("body", request.get("params"))


def test_parquet_input_gives_the_same_files_as_jsonl(data):
    out = data["folder"] / "from-parquet"
    run_batch(
        ROLE,
        data["folder"] / "rows.parquet",
        out,
        build=data["build"],
        provider="openai",
        id_column="id",
        state_column="state",
        max_error_rate=0.5,
    )
    assert (out / "requests-00001.jsonl").read_text(encoding="utf-8").splitlines() == data["expected"]["openai"][0]


@pytest.fixture(scope="class")
def ray_session():
    ray = pytest.importorskip("ray")
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, configure_logging=False)
    yield ray
    ray.shutdown()


def test_a_batch_renderer_takes_arrow_tables_and_pandas_frames(data):
    import pandas as pd

    renderer = BatchRenderer(data["build"], ROLE, provider="openai", id_column="id", state_column="state")
    table = renderer(pa.Table.from_pylist(data["items"]))
    assert table.column_names == ["custom_id", "ok", "code", "message", "tokens", "payload", "request"]
    _check(table.to_pylist(), data["expected"]["openai"])
    frame = renderer(pd.DataFrame(data["items"]))
    assert isinstance(frame, pd.DataFrame)
    _check(frame.to_dict("records"), data["expected"]["openai"])


class TestOnRay:
    """The Ray tests and the guide's examples (Ray, then Spark), one Ray session for them all: it is shut
    down when they end, so Ray's own processes (raylet, agents, idle workers) do not run beside the Spark
    tests and the other test worker."""

    def test_ray_preprocess_gives_llm_processor_rows(self, data, ray_session):
        from promptmill.batch.ray import LLMPreprocess

        good = [x for i, x in enumerate(data["items"]) if i not in (5, 9, 11)]
        ds = ray_session.data.from_items(good)
        pre = LLMPreprocess(data["build"], ROLE, id_column="id", state_column="state", sampling_params={"temperature": 0})
        rows_out = sorted(ds.map(pre).take_all(), key=lambda r: int(r["custom_id"].split("-")[1]))
        lines = [json.loads(x) for x in data["expected"]["openai"][0]]
        assert [r["messages"] for r in rows_out] == [x["body"]["messages"] for x in lines]
        assert rows_out[0]["sampling_params"] == {"temperature": 0}
        payload = LLMPreprocess(data["build"], ROLE, shape="payload", id_column="id", state_column="state")(good[0])
        assert payload["payload"] == lines[0]["body"]

    def test_the_batch_guide_examples_print_what_the_guide_shows(self, data, ray_session, spark, monkeypatch, capsys):
        monkeypatch.chdir(data["folder"])
        ray_checked = False
        for code, shown in _readme_blocks():
            names: dict = {}
            exec(compile(code, "docs/batch.md (python-batch)", "exec"), names)
            if "render_dataset" in code:
                # Ray Data's rows, every one (the guide prints two), are `promptmill batch`'s for the same rows
                # (the Ray test of its own, a second Ray Data job, is this one: a Ray job costs 15-30 s here)
                _check(names["records"], data["expected"]["openai"])
                ray_checked = True
            # Ray's own processes may print a warning to the driver's stdout, "(raylet) WARNING: ... worker
            # processes have been started", on a machine busy with other work (two test workers, say); those
            # lines are Ray's, not the example's
            printed = "".join(x for x in capsys.readouterr().out.splitlines(True) if "(raylet)" not in x)
            assert printed.rstrip("\n") == shown.rstrip("\n"), code  # Spark's show() ends in a blank line
        assert ray_checked


@pytest.fixture(scope="module")
def spark():
    pytest.importorskip("pyspark")
    from pyspark.sql import SparkSession

    # the workers run this interpreter (the environment under test), not `python3` from PATH
    os.environ["PYSPARK_PYTHON"] = sys.executable
    session = (
        SparkSession.builder.master("local[2]")
        .appName("promptmill-test")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.sql.execution.arrow.pyspark.enabled", "true")
        .getOrCreate()
    )
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()


@pytest.mark.parametrize("how", ["arrow", "pandas"])
def test_spark_map_in_arrow_and_pandas_equal_promptmill_batch(data, spark, how):
    from promptmill.batch.spark import OUTPUT_DDL, map_in_arrow, map_in_pandas

    df = spark.read.parquet(str(data["folder"] / "rows.parquet")).repartition(2)
    renderer = BatchRenderer(data["build"], ROLE, provider="anthropic", model=MODELS["anthropic"], id_column="id", state_column="state")
    fn = map_in_arrow(renderer) if how == "arrow" else map_in_pandas(renderer)
    out = df.mapInArrow(fn, OUTPUT_DDL) if how == "arrow" else df.mapInPandas(fn, OUTPUT_DDL)
    _check([r.asDict() for r in out.collect()], data["expected"]["anthropic"])


def _readme_blocks():
    """(code, printed output) of each ```python block after a `<!-- python-batch -->` marker in docs/batch.md."""
    import re
    from pathlib import Path

    text = (Path(__file__).resolve().parents[1] / "docs" / "batch.md").read_text(encoding="utf-8")
    found = re.findall(r"<!-- python-batch -->\n```python\n(.*?)```\n\n```text\n(.*?)```", text, re.S)
    assert len(found) == 3
    return found
