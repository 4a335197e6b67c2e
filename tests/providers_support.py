"""Helpers shared by the provider tests: the shipped roles, rendered once per session."""

from __future__ import annotations

import functools
from pathlib import Path

import yaml

from promptmill.api import build_in_memory

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "prompts" / "examples"
PROVIDERS = ("text", "openai", "anthropic", "gemini", "live")
# (role, example state file) for every shipped role with an example state
SHIPPED = (
    ("executor", "executor.state.yaml"),
    ("companion-chat", "companion-chat.state.yaml"),
    ("companion-beat", "companion-beat.state.yaml"),
    ("companion-delivery", "companion-delivery.state.yaml"),
    ("companion-live", "companion-live.state.yaml"),
)


@functools.lru_cache(maxsize=1)
def runtime():
    rt, _ = build_in_memory(ROOT)
    return rt


def state(name: str) -> dict:
    return yaml.safe_load((EXAMPLES / name).read_text(encoding="utf-8"))


def render(role: str, state_file: str, provider: str, **kw):
    return runtime().render(role, state(state_file), provider=provider, **kw)
