"""Shared by the batch tests: the shipped prompts compiled once, and generated row files."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path

import yaml

import promptmill

ROOT = Path(__file__).resolve().parents[1]
ROLE = "directive-triage"
BEDROCK_MODEL = "us.anthropic.claude-sonnet-4-5-20250929-v1:0"  # `--provider bedrock` batches are for Claude
# the role names gpt-4o-mini: a batch for another provider names one of that provider's models (a wire that cannot
# serve the role's model is PM010, in batch as in render)
MODELS = {"bedrock": BEDROCK_MODEL, "anthropic": "claude-sonnet-4-5", "gemini": "gemini-2.5-flash"}
STATE = yaml.safe_load((ROOT / "prompts" / "examples" / f"{ROLE}.state.yaml").read_text(encoding="utf-8"))


def compile_build(folder: Path) -> Path:
    build = folder / "build"
    promptmill.compile(ROOT, output=build)
    return build


def state(i: int) -> dict:
    """A valid state that differs from row to row (and sometimes is trimmed)."""
    s = json.loads(json.dumps(STATE))
    s["test_id"] = f"tests/test_parser.py::test_case_{i}"
    s["knowledge"] = s["knowledge"][: 1 + i % 3]
    return s


def rows(n: int, *, with_id: bool = True) -> list[dict]:
    return [({"id": f"case-{i}"} if with_id else {}) | state(i) for i in range(n)]


def write_jsonl(path: Path, items: list) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in items), encoding="utf-8")
    return path


class DyingRenderer:
    """A renderer whose worker process dies on its first chunk (as when killed or out of memory)."""

    def render_chunk(self, chunk: list) -> list:
        import os

        os._exit(1)


def wait_for(cond: Callable[[], object], seconds: float = 60) -> None:
    """Poll `cond` every 50 ms until it is true; AssertionError after `seconds`."""
    deadline = time.time() + seconds
    while not cond():
        if time.time() > deadline:
            raise AssertionError("timed out")
        time.sleep(0.05)
