"""The hostile corpus, round 4: each case under tests/cases/hostile/ runs the real CLI in a fresh project
(tests/hostile_support.py runs a case and says what every case must hold: no traceback, never PM000,
nothing outside the project changed, within 20 s and 500 MB of peak memory).

The corpus is run by two files, this one (the surfaces that read and write snapshots, git, generated types,
lint and models) and tests/test_hostile_cases_more.py (counts, compile, render, batch), so that the suite's
two processes (`-n 2 --dist loadfile`, one file per process at a time) share it.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from hostile_support import CASES, case_files, case_id, run_case

SURFACES = ("snapshot", "test", "diff", "types", "lint", "models")


@pytest.mark.parametrize("path", case_files(SURFACES), ids=case_id)
def test_hostile_case(path: Path, tmp_path: Path):
    run_case(path, tmp_path)


def test_the_corpus_covers_every_surface():
    from test_hostile_cases_more import SURFACES as MORE

    surfaces = {p.relative_to(CASES).parts[0] for p in case_files()}
    assert {"snapshot", "test", "diff", "types", "counts", "compile", "render", "batch", "lint", "models"} <= surfaces, surfaces
    assert surfaces == set(SURFACES) | set(MORE), "a new folder of cases goes into one of the two files' SURFACES"
    assert not set(SURFACES) & set(MORE)
