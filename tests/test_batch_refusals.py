"""Batch runs that cannot go on say why in their own message: a disk that refuses, a column that is not there."""

from __future__ import annotations

import errno
import json
import os

import pytest
from click.testing import CliRunner

from batch_support import ROLE, compile_build, rows, write_jsonl
from promptmill.cli.main import main


@pytest.fixture(scope="module")
def build(tmp_path_factory):
    return compile_build(tmp_path_factory.mktemp("build"))


@pytest.mark.parametrize("error", [errno.ENOSPC, errno.EROFS])
def test_a_disk_that_refuses_the_output_is_a_pm_error_not_pm000(build, tmp_path, monkeypatch, error):
    rows_file = write_jsonl(tmp_path / "rows.jsonl", rows(3))

    def refuse(src, dst, *args, **kwargs):
        raise OSError(error, os.strerror(error), str(dst))

    monkeypatch.setattr(os, "replace", refuse)
    args = ["batch", ROLE, "--input", str(rows_file), "--out", str(tmp_path / "out"), "--build", str(build)]
    result = CliRunner().invoke(main, args, catch_exceptions=False)
    assert result.exit_code == 1, result.output
    assert "error[PM876]" in result.output and os.strerror(error) in result.output, result.output
    assert "PM000" not in result.output and "Traceback" not in result.output
    assert [p.name for p in (tmp_path / "out").iterdir()] == []  # no partial file, no staging folder left


def test_a_mistyped_id_column_names_the_column_and_writes_nothing(build, tmp_path):
    rows_file = write_jsonl(tmp_path / "rows.jsonl", rows(3))
    args = ["batch", ROLE, "--input", str(rows_file), "--out", str(tmp_path / "out"), "--build", str(build), "--id-column", "idd"]
    result = CliRunner().invoke(main, args, catch_exceptions=False)
    assert result.exit_code == 1, result.output
    assert "error[PM871]" in result.output and "'idd'" in result.output and "did you mean 'id'" in result.output, result.output
    assert "PM872" not in result.output
    assert not (tmp_path / "out").exists()


def test_when_every_row_fails_the_error_says_the_cause(build, tmp_path):
    bad = [{"id": f"bad id {i}"} | r for i, r in enumerate(rows(2, with_id=False))]
    rows_file = write_jsonl(tmp_path / "rows.jsonl", bad)
    args = ["batch", ROLE, "--input", str(rows_file), "--out", str(tmp_path / "out"), "--build", str(build), "--id-column", "id"]
    result = CliRunner().invoke(main, args, catch_exceptions=False)
    assert result.exit_code == 1, result.output
    assert "error[PM872]" in result.output
    assert "every row failed with PM871" in result.output and "'bad id 0'" in result.output, result.output
    assert "raise --max-error-rate to accept" not in result.output
    report = [json.loads(line) for line in (tmp_path / "out" / "report.jsonl").read_text().splitlines()]
    assert [r["code"] for r in report] == ["PM871", "PM871"]
