"""Rewrite tests/golden/batch/<provider>.jsonl from the current code (see that folder's README)."""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from batch_support import MODELS, ROLE, compile_build, rows, write_jsonl  # noqa: E402
from promptmill.batch import run_batch  # noqa: E402


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        build = compile_build(folder)
        src = write_jsonl(folder / "rows.jsonl", rows(3))
        for provider in ("openai", "anthropic", "gemini", "text", "openai-responses", "bedrock"):
            model = MODELS.get(provider)
            run_batch(ROLE, src, folder / provider, build=build, provider=provider, model=model, id_column="id")
            target = ROOT / "tests" / "golden" / "batch" / f"{provider}.jsonl"
            target.write_bytes((folder / provider / "requests-00001.jsonl").read_bytes())
            print(f"wrote {target.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
