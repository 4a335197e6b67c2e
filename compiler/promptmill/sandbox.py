"""TEMPORARY stand-in (replaced by the sandbox branch). Same public API."""
from __future__ import annotations

import json
from collections.abc import Mapping
from functools import lru_cache
from typing import Any, NamedTuple

from jinja2 import StrictUndefined
from jinja2.sandbox import ImmutableSandboxedEnvironment

from .errors import RenderError


class TemplateLimits(NamedTuple):
    max_output_chars: int = 4_000_000
    max_iterations: int = 1_000_000
    max_range: int = 100_000


DEFAULT = TemplateLimits()


@lru_cache(maxsize=1)
def environment() -> ImmutableSandboxedEnvironment:
    env = ImmutableSandboxedEnvironment(undefined=StrictUndefined, trim_blocks=True, lstrip_blocks=True, autoescape=False)
    for g in ("cycler", "joiner", "namespace", "lipsum"):
        env.globals.pop(g, None)
    env.filters["to_json"] = lambda v, indent=None: json.dumps(v, ensure_ascii=False, indent=indent)
    env.filters["to_yaml"] = lambda v: json.dumps(v, ensure_ascii=False)
    return env


FILTERS = frozenset()
TESTS = frozenset()


def compile_template(source: str):
    return environment().from_string(source)


def render(template, context: Mapping[str, Any], *, limits: TemplateLimits = DEFAULT) -> str:
    try:
        return template.render(context)
    except Exception as exc:
        raise RenderError(str(exc)) from exc
