"""TEMPORARY stand-in (replaced by the sandbox branch). Same public API."""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import jinja2
from jinja2 import meta

from .diagnostics import Diagnostic, Position
from .sandbox import compile_template, environment, render


@dataclass(frozen=True)
class TemplateInfo:
    variables: frozenset[str]
    paths: frozenset[tuple[str, ...]]
    filters: frozenset[str]
    tests: frozenset[str]
    static: bool


def check_template(source: str, locate: Callable[[int, int], Position], *, what: str = "template"):
    env = environment()
    try:
        ast = env.parse(source)
    except jinja2.TemplateSyntaxError as exc:
        return None, [Diagnostic.at(locate(exc.lineno or 1, 1), "PM401", f"{what}: {exc.message}")]
    names = frozenset(meta.find_undeclared_variables(ast))
    return TemplateInfo(names, frozenset((n,) for n in names), frozenset(), frozenset(), not names), []


def render_static(source: str) -> str:
    return render(compile_template(source), {})
