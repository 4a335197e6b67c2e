"""`promptmill models`: the model table a project compiles with (the shipped rows and its own)."""

from __future__ import annotations

import os

from ..compose.budgets import model_table, project_model_diagnostics
from ..core.diagnostics import has_errors, sort_diagnostics
from ..core.errors import CompileError
from ..runtime.models import ModelInfo
from ..source.project import find_project


def models(path: str | os.PathLike[str] = ".") -> list[ModelInfo]:
    """Every row of the model table of the project at `path`, by provider then pattern.

    Rows from the project's `models:` carry `origin` `promptmill.yaml:LINE`; a malformed
    row raises `CompileError` with the row's file:line:col."""
    project, diags = find_project(path, user_rules=False)
    diags = [d for d in diags if d.code != "PM011"]  # a table needs no prompts folder
    diags += project_model_diagnostics(project)
    if has_errors(diags):
        raise CompileError(sort_diagnostics(diags))
    return model_table(project).rows()


def format_models(rows: list[ModelInfo]) -> str:
    """The table as text: one line per row, then each row's source."""
    head = ("pattern", "provider", "counting", "window", "output", "cache min/bp", "json")
    lines = [head]
    for r in rows:
        counting = r.tokenizer if r.ratio == 1 and not r.estimate else f"{r.tokenizer} x{r.ratio:g} (estimate)"
        cache = "/".join("-" if n is None else str(n) for n in (r.cache_min_tokens, r.cache_breakpoints))
        output = str(r.max_output_tokens) if r.max_output_tokens else "-"
        lines.append((r.pattern, r.provider, counting, str(r.context_window), output, cache, "yes" if r.structured_output else "no"))
    widths = [max(len(line[i]) for line in lines) for i in range(len(head))]
    text = ["  ".join(c.ljust(w) for c, w in zip(line, widths, strict=True)).rstrip() for line in lines]
    text.append("")
    text.append("sources:")
    for r in rows:
        where = "" if r.origin == "promptmill" else f" [{r.origin}]"
        text.append(f"  {r.pattern}{where}: {r.source or '(none given)'}")
    return "\n".join(text) + "\n"
