"""promptmill batch: provider batch files from row files (promptmill.batch.run / renderer / shards).

Real builds of the shipped prompts, real files, real worker processes.
"""

from __future__ import annotations

import json
import pickle
import re

import pytest
from click.testing import CliRunner

import promptmill
from batch_support import BEDROCK_MODEL, MODELS, ROLE, ROOT, compile_build, rows, state, write_jsonl
from promptmill.batch import BatchFailed, BatchRenderer, render_rows, run_batch
from promptmill.batch.formats import LIMITS
from promptmill.cli.main import main

GOLDEN = __import__("pathlib").Path(__file__).parent / "golden" / "batch"
PROVIDERS = ("openai", "anthropic", "gemini", "text", "openai-responses", "bedrock")


@pytest.fixture(scope="module")
def build(tmp_path_factory):
    return compile_build(tmp_path_factory.mktemp("batch-build"))


@pytest.fixture(scope="module")
def rt(build):
    return promptmill.load(build)


def _lines(path):
    return [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines()]


@pytest.mark.parametrize("provider", PROVIDERS)
def test_each_provider_line_is_the_single_render_payload_plus_model(build, rt, tmp_path, provider):
    src = write_jsonl(tmp_path / "rows.jsonl", rows(3))
    summary = run_batch(ROLE, src, tmp_path / "out", build=build, provider=provider, model=MODELS.get(provider), id_column="id")
    assert summary["status"] == "ok" and summary["rows"] == 3 and summary["failed"] == 0
    data = (tmp_path / "out" / "requests-00001.jsonl").read_bytes()
    assert data == (GOLDEN / f"{provider}.jsonl").read_bytes()  # see tests/golden/batch/README.md
    source_hash = rt.bundle(ROLE).source_hash
    for i, line in enumerate(_lines(tmp_path / "out" / "requests-00001.jsonl")):
        payload = rt.render(ROLE, state(i), provider=provider, model=MODELS.get(provider)).to_payload()
        if provider == "openai":
            assert line == {
                "custom_id": f"case-{i}",
                "method": "POST",
                "url": "/v1/chat/completions",
                "body": {"model": "gpt-4o-mini", **payload, "metadata": {"promptmill_role": ROLE, "promptmill_source_hash": source_hash}},
            }
        elif provider == "openai-responses":
            assert line == {
                "custom_id": f"case-{i}",
                "method": "POST",
                "url": "/v1/responses",
                "body": {"model": "gpt-4o-mini", **payload, "metadata": {"promptmill_role": ROLE, "promptmill_source_hash": source_hash}},
            }
            assert line["body"]["max_output_tokens"] == 512 and line["body"]["prompt_cache_key"].startswith(f"pm-{ROLE}-")
        elif provider == "anthropic":
            assert line == {"custom_id": f"case-{i}", "params": {"model": MODELS["anthropic"], **payload}}
            assert line["params"]["max_tokens"] == 512  # the role's reserve; Anthropic requires it
        elif provider == "gemini":
            assert line == {"key": f"case-{i}", "request": payload}
        elif provider == "bedrock":  # the model's InvokeModel body: Claude's, as fitted for the Bedrock model
            body = rt.render(ROLE, state(i), provider="anthropic-bedrock", model=BEDROCK_MODEL).to_anthropic_bedrock()
            assert line == {"recordId": f"case-{i}", "modelInput": body}
            assert body["anthropic_version"] == "bedrock-2023-05-31" and body["max_tokens"] == 512 and "model" not in body
        else:
            assert line == {"custom_id": f"case-{i}", "prompt": payload["prompt"]}


@pytest.mark.parametrize("provider", ["anthropic", "openai-responses", "bedrock"])
def test_the_same_bytes_at_one_and_two_workers(build, tmp_path, provider):
    src = write_jsonl(tmp_path / "rows.jsonl", rows(150) + ["oops", {"id": "bad id!"}] + rows(40))
    outs = []
    for workers in (1, 2):
        out = tmp_path / f"w{workers}"
        run_batch(
            ROLE,
            src,
            out,
            build=build,
            provider=provider,
            model=MODELS.get(provider),
            id_column="id",
            workers=workers,
            chunk=7,
            max_error_rate=0.5,
            max_requests=60,
        )
        outs.append({p.name: p.read_bytes() for p in sorted(out.iterdir()) if p.name not in ("summary.json", ".promptmill-batch.json")})
    assert list(outs[0]) == ["report.jsonl", "requests-00001.jsonl", "requests-00002.jsonl", "requests-00003.jsonl"]
    assert outs[0] == outs[1]


def test_shards_split_before_the_count_and_the_byte_limit(build, tmp_path):
    src = write_jsonl(tmp_path / "rows.jsonl", rows(10))
    run_batch(ROLE, src, tmp_path / "all", build=build, provider="openai", id_column="id")
    sizes = [len(x) for x in (tmp_path / "all" / "requests-00001.jsonl").read_bytes().splitlines(keepends=True)]
    limit = sizes[0] + sizes[1] + sizes[2]  # exactly three lines fit in the first file
    summary = run_batch(ROLE, src, tmp_path / "bytes", build=build, provider="openai", id_column="id", max_bytes=limit)
    files = summary["files"]
    assert files[0] == {"file": "requests-00001.jsonl", "requests": 3, "bytes": limit}
    assert all(f["bytes"] <= limit for f in files) and sum(f["requests"] for f in files) == 10
    joined = b"".join((tmp_path / "bytes" / f["file"]).read_bytes() for f in files)
    assert joined == (tmp_path / "all" / "requests-00001.jsonl").read_bytes()
    summary = run_batch(ROLE, src, tmp_path / "count", build=build, provider="openai", id_column="id", max_requests=4)
    assert [f["requests"] for f in summary["files"]] == [4, 4, 2]
    # a later run with fewer files removes the extra files of the earlier one
    run_batch(ROLE, src, tmp_path / "count", build=build, provider="openai", id_column="id")
    assert sorted(p.name for p in (tmp_path / "count").glob("requests-*")) == ["requests-00001.jsonl"]


def test_provider_limits_are_the_documented_ones():
    assert LIMITS["openai"] == (50_000, 200 * 1024 * 1024)
    assert LIMITS["openai-responses"] == (50_000, 200 * 1024 * 1024)  # the same batch API, url /v1/responses
    assert LIMITS["anthropic"] == (100_000, 256 * 1024 * 1024)
    assert LIMITS["gemini"].bytes == 2 * 1024 * 1024 * 1024
    assert LIMITS["bedrock"] == (50_000, 1024 * 1024 * 1024)


def test_a_bedrock_batch_for_a_model_without_a_known_body_is_pm010(build, tmp_path):
    src = write_jsonl(tmp_path / "rows.jsonl", rows(2))
    for model in (None, "gpt-4o-mini"):  # none given: the role's own, which is not on Bedrock
        with pytest.raises(promptmill.PromptmillError) as err:
            run_batch(ROLE, src, tmp_path / "out", build=build, provider="bedrock", model=model, id_column="id")
        assert err.value.code == "PM010" and "Claude" in err.value.message and "gpt-4o-mini" in err.value.message
    assert not (tmp_path / "out").exists()
    result = CliRunner().invoke(
        main, ["batch", ROLE, "--input", str(src), "--out", str(tmp_path / "cli"), "--provider", "bedrock", "--build", str(build)]
    )
    assert result.exit_code != 0 and "error[PM010]" in result.output and "Traceback" not in result.output


def test_every_kind_of_bad_row_is_a_report_line_with_its_code(build, tmp_path):
    deep: dict = {}
    node = deep
    for _ in range(300):
        node["k"] = {}
        node = node["k"]
    bad = [
        "not json",  # PM870
        [1, 2],  # PM870: not an object
        {"id": "case-x", "test_id": 3},  # PM810: fails the inputs schema
        {"id": "has space"} | state(0),  # PM871: invalid id
        state(1),  # PM871: no id
        {"id": "case-1"} | state(1),  # PM871: duplicate of row 1 below
        {"id": "x" * 65} | state(2),  # PM871: too long
        {"id": "deep", "test_id": "t", "knowledge": [], "extra": deep},  # PM812: too deep
    ]
    good = rows(2)
    items = [good[0], good[1], *bad]
    src = tmp_path / "rows.jsonl"
    src.write_text("\n".join(x if isinstance(x, str) else json.dumps(x) for x in items) + "\n\n", encoding="utf-8")
    with pytest.raises(BatchFailed) as info:
        run_batch(ROLE, src, tmp_path / "out", build=build, provider="openai", id_column="id")
    assert info.value.code == "PM872" and "8 of 10 rows failed" in info.value.message
    report = _lines(tmp_path / "out" / "report.jsonl")
    assert [(r["row"], r["ok"], r["code"]) for r in report] == [
        (0, True, None),
        (1, True, None),
        (2, False, "PM870"),
        (3, False, "PM870"),
        (4, False, "PM810"),
        (5, False, "PM871"),
        (6, False, "PM871"),
        (7, False, "PM871"),
        (8, False, "PM871"),
        (9, False, "PM812"),
    ]
    assert report[2]["where"] == "line 3"
    assert "already used by row 1" in report[7]["message"]
    assert "state.test_id" in report[4]["message"]
    assert report[0]["tokens"] > 0 and report[0]["budget"] > 0
    # a failed run publishes no request file, only the report and the summary
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == [".promptmill-batch.json", "report.jsonl", "summary.json"]
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert summary["status"] == "failed" and summary["codes"] == {"PM810": 1, "PM812": 1, "PM870": 2, "PM871": 4}
    # within --max-error-rate the run succeeds and writes the good rows
    summary = run_batch(ROLE, src, tmp_path / "out", build=build, provider="openai", id_column="id", max_error_rate=0.8)
    assert summary["status"] == "ok" and summary["files"][0]["requests"] == 2


def test_a_cut_row_is_reported_at_its_column_in_its_own_line(build, tmp_path):
    """The newline that ends a JSONL line is not part of the row: a row cut short is 'line 1, column N'
    of that row, not 'line 2 column 1' (the column after the newline)."""
    cut = '{"id": "case-9", "test_id": "t-9"'  # cut after a whole value: the next token is missing
    src = tmp_path / "rows.jsonl"
    src.write_bytes(f"{json.dumps({'id': 'case-0'} | state(0))}\n{cut}\r\n{cut}\n{cut}".encode())
    report = [r for r in render_rows(src.open("rb"), ROLE, build=build, provider="openai", id_column="id") if not r.ok]
    assert [r.code for r in report] == ["PM870"] * 3
    expected = f"line 1 column {len(cut) + 1} (char {len(cut)})"
    assert [r.message.endswith(expected) for r in report] == [True] * 3, [r.message for r in report]


def test_budget_trims_and_the_report_names_what_was_dropped(build, tmp_path):
    src = write_jsonl(tmp_path / "rows.jsonl", rows(3))
    summary = run_batch(ROLE, src, tmp_path / "out", build=build, provider="openai", id_column="id", budget=650)
    report = _lines(tmp_path / "out" / "report.jsonl")
    assert all(r["tokens"] <= 650 and r["budget"] <= 650 for r in report)
    assert any(r["trimmed"] or r["dropped"] for r in report) and summary["trimmed_rows"] >= 1
    over = run_batch(ROLE, src, tmp_path / "tiny", build=build, provider="openai", id_column="id", budget=5, max_error_rate=1)
    assert over["codes"] == {"PM830": 3}


def test_generated_ids_are_row_positions_and_the_whole_row_is_the_state(build, tmp_path):
    src = write_jsonl(tmp_path / "rows.jsonl", rows(3, with_id=False))
    run_batch(ROLE, src, tmp_path / "out", build=build, provider="gemini", model=MODELS["gemini"])
    assert [x["key"] for x in _lines(tmp_path / "out" / "requests-00001.jsonl")] == ["row-0", "row-1", "row-2"]


def test_state_column_holds_an_object_or_json_text(build, rt, tmp_path):
    items = [{"id": "a", "state": state(0)}, {"id": "b", "state": json.dumps(state(1))}, {"id": "c", "state": 5}, {"id": "d"}]
    results = list(render_rows(items, ROLE, build=build, provider="openai", id_column="id", state_column="state"))
    assert [(r.ok, r.code) for r in results] == [(True, None), (True, None), (False, "PM870"), (False, "PM870")]
    assert json.loads(results[1].line)["body"]["messages"] == rt.render(ROLE, state(1), provider="openai").to_openai()["messages"]
    with pytest.raises(promptmill.PromptmillError, match=r"column 'state' must hold a JSON object"):
        results[2].unwrap()


def test_an_interrupted_run_leaves_no_file_that_looks_complete(build, tmp_path):
    src = write_jsonl(tmp_path / "rows.jsonl", rows(300))
    seen = []

    def stop(n):
        seen.append(n)
        raise KeyboardInterrupt  # Ctrl-C while rendering

    with pytest.raises(KeyboardInterrupt):
        run_batch(ROLE, src, tmp_path / "out", build=build, id_column="id", progress=stop, max_requests=50)
    assert seen == [256]  # interrupted with five files under way
    assert list((tmp_path / "out").iterdir()) == []


def test_a_killed_run_leaves_only_hidden_partial_files(build, tmp_path):
    import os
    import signal
    import subprocess
    import sys
    import time

    src = write_jsonl(tmp_path / "rows.jsonl", rows(4000))
    out = tmp_path / "out"
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "promptmill.cli",
            "batch",
            ROLE,
            "--input",
            str(src),
            "--out",
            str(out),
            "--build",
            str(build),
            "--id-column",
            "id",
            "--max-requests",
            "100",
        ]
    )
    deadline = time.time() + 60
    while time.time() < deadline and not list(out.glob(".promptmill-tmp-*/requests-00002.jsonl")):
        time.sleep(0.05)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    names = sorted(p.name for p in out.iterdir())  # the lock file and the run's private staging folder
    assert names[0] == ".promptmill-batch.lock" and re.fullmatch(r"\.promptmill-tmp-\w{8}", names[1]) and len(names) == 2, names
    staged = sorted(p.name for p in (out / names[1]).iterdir())
    assert staged and all(re.fullmatch(r"(requests-\d{5}|report)\.jsonl", n) for n in staged), staged


def test_runtime_and_batch_renderer_pickle_small_and_render_the_same(build, rt):
    data = pickle.dumps(rt)
    assert len(data) < 300  # the build's path and options, not the bundles or tiktoken's tables
    again = pickle.loads(data)
    assert again.render(ROLE, state(0)).to_payload() == rt.render(ROLE, state(0)).to_payload()
    renderer = BatchRenderer(build, ROLE, provider="anthropic", model=MODELS["anthropic"], id_column="id")
    renderer.render_row(0, rows(1)[0])  # loaded and used: its caches are full now
    blob = pickle.dumps(renderer)
    assert len(blob) < 1000, len(blob)
    assert pickle.loads(blob).render_row(0, rows(1)[0]).line == renderer.render_row(0, rows(1)[0]).line


def test_an_in_memory_runtime_pickles_its_bundles(build):
    from promptmill.compiling.api import build_in_memory

    runtime, _ = build_in_memory(ROOT)
    again = pickle.loads(pickle.dumps(runtime))
    assert again.render(ROLE, state(2)).to_payload() == runtime.render(ROLE, state(2)).to_payload()


def test_bad_options_are_clear_errors(build, tmp_path):
    src = write_jsonl(tmp_path / "rows.jsonl", rows(1))
    with pytest.raises(promptmill.UnknownRoleError):
        run_batch("nope", src, tmp_path / "o", build=build)
    with pytest.raises(promptmill.ConfigError, match="names no model"):
        run_batch("executor", src, tmp_path / "o", build=build, provider="openai")
    with pytest.raises(promptmill.ConfigError, match="a openai-responses batch request needs one"):
        run_batch("executor", src, tmp_path / "o", build=build, provider="openai-responses")
    with pytest.raises(promptmill.ConfigError, match="cannot tell the input format"):
        run_batch(ROLE, tmp_path / "rows.csv", tmp_path / "o", build=build)
    with pytest.raises(promptmill.ConfigError, match="does not exist"):
        run_batch(ROLE, tmp_path / "missing.jsonl", tmp_path / "o", build=build)


def test_cli_batch_prints_a_summary_and_fails_past_the_error_rate(build, tmp_path):
    src = write_jsonl(tmp_path / "rows.jsonl", rows(5) + [{"id": "bad"}])
    args = [
        "batch",
        ROLE,
        "--input",
        str(src),
        "--out",
        str(tmp_path / "out"),
        "--build",
        str(build),
        "--id-column",
        "id",
        "--provider",
        "openai",
        "--max-requests",
        "3",
    ]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 1
    assert "6 rows: 5 ok, 1 failed (PM810 x1)" in result.output
    assert "error[PM872]: 1 of 6 rows failed (16.7%), more than the allowed 0.0%" in result.output
    assert "Traceback" not in result.output
    result = CliRunner().invoke(main, [*args, "--max-error-rate", "0.2", "--workers", "2"])
    assert result.exit_code == 0, result.output
    assert re.search(r"requests-00001\.jsonl  3 requests, \d+ bytes", result.output)
    assert re.search(r"requests-00002\.jsonl  2 requests, \d+ bytes", result.output)
    assert "\r" not in result.output  # no progress bar when not on a terminal
    args = ["batch", ROLE, "--input", str(src), "--out", str(tmp_path / "o2"), "--build", str(tmp_path / "none")]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 1 and "error[PM801]" in result.output


def test_render_rows_streams_results_in_order(build):
    gen = render_rows((r for r in rows(1000)), ROLE, build=build, provider="text", id_column="id", workers=2, chunk=5)
    first = [next(gen) for _ in range(3)]
    gen.close()  # stops the pool: the rest of the input is never rendered
    assert [r.id for r in first] == ["case-0", "case-1", "case-2"]


def test_progress_shows_only_on_a_terminal():
    import io

    from promptmill.batch.progress import Progress

    class Tty(io.StringIO):
        def isatty(self):
            return True

    quiet, tty = io.StringIO(), Tty()
    for stream in (quiet, tty):
        bar = Progress(stream, every=0)
        bar.update(1000)
        bar.done()
    assert quiet.getvalue() == ""
    assert re.match(r"\r  1,000 rows  [\d,]+ rows/s \r\x1b\[K$", tty.getvalue())


def test_a_worker_that_dies_fails_the_run_with_pm024_instead_of_hanging():
    from batch_support import DyingRenderer
    from promptmill.batch.pool import ordered_results

    with pytest.raises(promptmill.PromptmillError) as err:
        list(ordered_results(DyingRenderer(), range(10), workers=2, chunk=2))
    assert err.value.code == "PM024" and "stopped before it finished" in str(err.value)


def test_batch_model_fits_each_row_for_that_model(build, rt, tmp_path):
    """--model is the model each line names and the model each row is fitted for (issue 23)."""
    src = write_jsonl(tmp_path / "rows.jsonl", rows(3))
    summary = run_batch(ROLE, src, tmp_path / "out", build=build, model="claude-opus-4-7", id_column="id")
    assert summary["provider"] == "anthropic" and summary["model"] == "claude-opus-4-7"
    assert summary["counting"] == "estimated, ratio 1.53 for claude-opus-4-7"
    for i, line in enumerate(_lines(tmp_path / "out" / "requests-00001.jsonl")):
        req = rt.render(ROLE, state(i), model="claude-opus-4-7")
        assert req.ratio == 1.53
        assert line == {"custom_id": f"case-{i}", "params": {"model": "claude-opus-4-7", **req.to_payload()}}
    result = CliRunner().invoke(
        main,
        [
            "batch",
            ROLE,
            "--input",
            str(src),
            "--build",
            str(build),
            "--out",
            str(tmp_path / "o2"),
            "--model",
            "claude-opus-4-7",
            "--id-column",
            "id",
        ],
    )
    assert result.exit_code == 0, result.output
    assert "(estimated, ratio 1.53 for claude-opus-4-7)" in result.output
    with pytest.raises(promptmill.TokenizerError) as err:
        BatchRenderer(build, ROLE, model="claud-opus-4-7")
    assert err.value.code == "PM502" and "did you mean" in (err.value.hint or "")


@pytest.mark.parametrize("wire", ["anthropic-vertex", "gemini-vertex", "live"])
def test_a_role_written_for_a_wire_without_batch_files_is_refused_not_batched_as_another(make_project, tmp_path, wire):
    model = "gemini-2.5-flash" if wire.startswith("gemini") else "claude-sonnet-4-5"  # a model the wire serves
    role = (
        "kind: role\nid: r\nmodel: " + model + "\nprovider: " + wire + "\n"
        "budget: {max_tokens: 4000, reserve: 500}\nsections:\n  - {id: a, text: hello}\n"
    )
    root = make_project({"promptmill.yaml": "prompts: prompts\n", "prompts/r.yaml": role})
    build = tmp_path / "out-build"
    promptmill.compile(root, output=build)
    with pytest.raises(promptmill.PromptmillError) as err:
        BatchRenderer(build, "r")
    assert err.value.code == "PM840" and wire in err.value.message and "--provider" in (err.value.hint or "")
    chosen = "gemini" if wire.startswith("gemini") else "anthropic"
    assert BatchRenderer(build, "r", provider=chosen).provider == chosen  # chosen, it is used
