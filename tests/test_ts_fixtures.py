"""The TypeScript runtime's unit tests compare against fixtures the Python runtime writes (token counts, wire
payloads, model-table answers, plan values). Each generator runs here and must give the committed bytes: a
change to the Python runtime that the fixtures do not show yet fails this test, not silently the other runtime's.
(The conformance corpus has its own check, tests/test_conformance_ts.py.)"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
FIXTURES = REPO / "runtimes" / "typescript" / "test" / "fixtures"
GENERATORS = {
    "tools/gen_ts_plan_fixtures.py": ["plan-values.json"],
    "runtimes/typescript/scripts/gen-token-fixtures.py": ["tokens.json.gz", "models.json"],
    "runtimes/typescript/scripts/gen-wire-fixtures.py": ["wires.jsonl.gz"],
}


@pytest.mark.parametrize("generator", sorted(GENERATORS))
def test_the_fixture_is_what_the_python_runtime_gives_today(generator):
    paths = [FIXTURES / name for name in GENERATORS[generator]]
    committed = {p: p.read_bytes() for p in paths}
    env = {**os.environ, "PYTHONPATH": str(REPO / "compiler")}
    try:
        run = subprocess.run([sys.executable, generator], cwd=REPO, env=env, capture_output=True, text=True, timeout=600)
        assert run.returncode == 0, run.stdout + run.stderr
        stale = [p.name for p in paths if p.read_bytes() != committed[p]]
    finally:
        for p, data in committed.items():  # the committed bytes stay, fresh or not
            p.write_bytes(data)
    assert not stale, f"stale: {stale}; run: python {generator}"
