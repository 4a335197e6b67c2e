"""The TypeScript runtime's unit tests compare against fixtures the Python runtime writes (token counts, wire
payloads, model-table answers, plan values). Each generator runs here and must give the committed bytes: a
change to the Python runtime that the fixtures do not show yet fails this test, not silently the other runtime's.
(The conformance corpus has its own check, tests/test_conformance_ts.py.)"""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys
from importlib.metadata import version
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
FIXTURES = REPO / "runtimes" / "typescript" / "test" / "fixtures"
GENERATORS = {
    "tools/gen_ts_plan_fixtures.py": ["plan-values.json"],
    "runtimes/typescript/scripts/gen-token-fixtures.py": ["tokens.json.gz", "models.json"],
    "runtimes/typescript/scripts/gen-wire-fixtures.py": ["wires.jsonl.gz"],
}


def _locked(name: str) -> str:
    """The version requirements/dev.lock pins for `name`: the environment the fixtures are written in."""
    lock = (REPO / "requirements" / "dev.lock").read_text(encoding="utf-8")
    return lock.split(f"\n{name}==", 1)[1].split()[0]


def _same_in_this_environment(path: Path, committed: bytes) -> bool:
    """Equal bytes; with another `regex` than the lock's (the lowest-versions run), the token fixture's
    truncations may differ, since where a cut may fall depends on the grapheme clusters of that `regex`'s
    Unicode version, so those are compared without the truncations: the counts and ids still must match."""
    fresh = path.read_bytes()
    if fresh == committed:
        return True
    if path.name != "tokens.json.gz" or version("regex") == _locked("regex"):
        return False

    def counts(data: bytes) -> object:
        texts = json.loads(gzip.decompress(data))["texts"]
        return [{k: ({f: x for f, x in v.items() if f != "truncate"} if isinstance(v, dict) else v) for k, v in t.items()} for t in texts]

    rest = {k: v for k, v in json.loads(gzip.decompress(fresh)).items() if k != "texts"}
    return counts(fresh) == counts(committed) and rest == {k: v for k, v in json.loads(gzip.decompress(committed)).items() if k != "texts"}


@pytest.mark.parametrize("generator", sorted(GENERATORS))
def test_the_fixture_is_what_the_python_runtime_gives_today(generator):
    paths = [FIXTURES / name for name in GENERATORS[generator]]
    committed = {p: p.read_bytes() for p in paths}
    env = {**os.environ, "PYTHONPATH": str(REPO / "compiler")}
    try:
        run = subprocess.run([sys.executable, generator], cwd=REPO, env=env, capture_output=True, text=True, timeout=600)
        assert run.returncode == 0, run.stdout + run.stderr
        stale = [p.name for p in paths if not _same_in_this_environment(p, committed[p])]
    finally:
        for p, data in committed.items():  # the committed bytes stay, fresh or not
            p.write_bytes(data)
    assert not stale, f"stale: {stale}; run: python {generator}"
