"""The hostile corpus, round 4, its other half (tests/test_hostile_cases.py says why it is in two files):
counts, compile, render and batch, each case the real CLI in a fresh project (tests/hostile_support.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from hostile_support import case_files, case_id, run_case

SURFACES = ("counts", "compile", "render", "batch")


@pytest.mark.parametrize("path", case_files(SURFACES), ids=case_id)
def test_hostile_case(path: Path, tmp_path: Path):
    run_case(path, tmp_path)
