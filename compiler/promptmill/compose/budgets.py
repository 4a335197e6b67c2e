"""Effective budget and tokenizer of a composed role, with where each value came from.

Levels, outermost first: promptmill's default, the project (promptmill.yaml),
then each role of the extends chain root-first, then (at render time) the
caller. Each level may lower `max_tokens` but never raise what the level above
allows, and the model's context window caps them all. `reserve` and `margin`
take the innermost value given. The tokenizer is the innermost
`budget.tokenizer`, else the model's, else the project's, else o200k_base.
"""

from __future__ import annotations

from ..core.diagnostics import Diagnostic, Position
from ..runtime.bundle import Budget
from ..runtime.models import ModelInfo, ModelTable, default_table
from ..runtime.tokenizers import DEFAULT_TOKENIZER
from ..source.project import DEFAULT_BUDGET, Project
from .model import Role
from .ratiosfile import RATIOS_FILE, read_ratios
from .resolve import ComposedRole


def measured_ratios(project: Project) -> tuple[dict[str, dict], str | None]:
    """The project's measured ratios ({model: {ratio, source}}) and the file's sha256 (None: no file).

    Read through the file guard (no link out of the project, a size cap) and checked with the model
    table's ratio bound; a bad entry is PM010 at its line:col in promptmill.ratios.json (`ratiosfile`)."""
    return read_ratios(project.root)


def model_table(project: Project) -> ModelTable:
    """The shipped model table, the project's `models:` rows laid over it (compile validated them), then
    the ratios `promptmill counts --write` measured (promptmill.ratios.json)."""
    rows = project.config.get("models") or []
    ratios, _ = measured_ratios(project)
    doc = project.config_doc
    table = default_table()
    for i, row in enumerate(rows):
        where = f"promptmill.yaml:{doc.pos(('models', i)).line}" if doc is not None else "promptmill.yaml"
        table = table.with_rows([row], origin=where)
    for model, measured in sorted(ratios.items()):
        base = table.resolve(model)
        if base is None or base.provider == "openai":
            continue  # a ratio for a model the table does not know, or one counted exactly, changes nothing
        row = {
            "pattern": model + "*",
            "provider": base.provider,
            "counting": {"encoding": base.tokenizer, "ratio": float(measured["ratio"])},
            "context_window": base.context_window,
            "cache": {"min_tokens": base.cache_min_tokens, "breakpoints": base.cache_breakpoints},
            "structured_output": base.structured_output,
            "source": str(measured.get("source", "measured by promptmill counts")),
        }
        if base.max_output_tokens is not None:
            row["max_output_tokens"] = base.max_output_tokens
        table = table.with_rows([row], origin=RATIOS_FILE)
    return table


def _where(role: Role, *path: str | int) -> str:
    p = role.pos(*path)
    return f"role {role.id} ({role.source_file}:{p.line}:{p.col})"


def _over_limit(role: Role, asked: int, limit: str, using: object, hint: str) -> Diagnostic:
    """PM504: the max_tokens a role asks for is above what it may have."""
    return Diagnostic.at(
        role.pos("budget", "max_tokens"), "PM504", f"role '{role.id}' asks for max_tokens {asked}, {limit}; using {using}", hint=hint
    )


def effective_budget(composed: ComposedRole, project: Project) -> tuple[Budget, str, ModelInfo | None, list[Diagnostic]]:
    """(Budget, tokenizer name, model info, diagnostics) for a composed role."""
    diags: list[Diagnostic] = []
    origins: dict[str, str] = {}
    model = composed.setting("model", project.config.get("model"))
    info = model_table(project).resolve(model) if model else None

    max_tokens = DEFAULT_BUDGET["max_tokens"]
    reserve = DEFAULT_BUDGET["reserve"]
    margin: float | None = None
    origins["max_tokens"] = origins["reserve"] = "promptmill default"
    capped_by: str | None = None
    reserve_at: Position | None = None  # where the reserve in force is written (None: promptmill's default)

    cfg = project.config.get("budget") or {}
    doc = project.config_doc
    if cfg:

        def where(key: str) -> str:
            if doc is None:
                return "project"
            p = doc.pos(("budget", key))
            return f"project (promptmill.yaml:{p.line}:{p.col})"

        if "max_tokens" in cfg:
            max_tokens = cfg["max_tokens"]
            origins["max_tokens"] = capped_by = where("max_tokens")
        if "reserve" in cfg:
            reserve, origins["reserve"] = cfg["reserve"], where("reserve")
            reserve_at = doc.pos(("budget", "reserve")) if doc is not None else None
        if "margin" in cfg:
            margin, origins["margin"] = cfg["margin"], where("margin")

    window = info.context_window if info else None
    setter = None  # the role whose max_tokens is in force (None: project or default)
    for own, role in composed.budgets:
        if "max_tokens" in own:
            asked = own["max_tokens"]
            if capped_by is not None and asked > max_tokens:
                using = f"{window}, the context window of {model}" if window is not None and window < max_tokens else max_tokens
                limit = f"but {capped_by} allows {max_tokens}"
                diags.append(_over_limit(role, asked, limit, using, "a role can lower its parent's budget, never raise it"))
            else:
                max_tokens, setter = asked, role
                origins["max_tokens"] = _where(role, "budget", "max_tokens")
            capped_by = origins["max_tokens"]
        if "reserve" in own:
            reserve, origins["reserve"] = own["reserve"], _where(role, "budget", "reserve")
            reserve_at = role.pos("budget", "reserve")
        if "margin" in own:
            margin, origins["margin"] = own["margin"], _where(role, "budget", "margin")

    if window is not None:
        origins["context_window"] = f"model {model}"
        if max_tokens > window:
            if setter is not None:  # a project-wide default above the window is capped silently
                limit = f"more than the context window of {model} ({window})"
                diags.append(_over_limit(setter, max_tokens, limit, window, "a budget can never exceed the model's context window"))
            max_tokens = window
            origins["max_tokens"] = f"context window of {model}"
    if info is not None and info.max_output_tokens is not None and reserve > info.max_output_tokens and reserve_at is not None:
        diags.append(
            Diagnostic.at(
                reserve_at,
                "PM506",
                f"reserve {reserve} (from {origins['reserve']}) is above the {info.max_output_tokens} output tokens {model} can write "
                f"(row {info.pattern})",
                hint=f"lower reserve to {info.max_output_tokens} or less: the reply can never use the rest, and the API may refuse it",
            )
        )
    if reserve >= max_tokens:
        role = composed.role
        diags.append(
            Diagnostic.at(
                role.pos("budget", "reserve") if "budget" in role.data else role.pos("id"),
                "PM503",
                f"reserve ({reserve}, from {origins['reserve']}) must be below max_tokens ({max_tokens}, from {origins['max_tokens']})",
            )
        )

    tokenizer, origins["tokenizer"], tdiags = effective_tokenizer(composed, project)
    ratio = None
    if info is not None and info.ratio != 1:
        ratio = info.ratio
        origins["ratio"] = f"model {model} (row {info.pattern}, {'promptmill' if info.origin == 'promptmill' else info.origin})"
    return Budget(max_tokens, reserve, margin, window, origins, ratio), tokenizer, info, diags + tdiags


def effective_tokenizer(composed: ComposedRole, project: Project) -> tuple[str, str, list[Diagnostic]]:
    """(tokenizer name, where it came from, diagnostics) for a composed role: the innermost
    `budget.tokenizer`, else the model's, else the project's, else the default."""
    model = composed.setting("model", project.config.get("model"))
    info = model_table(project).resolve(model) if model else None
    cfg = project.config.get("budget") or {}
    doc = project.config_doc
    diags: list[Diagnostic] = []
    if model and info is None:
        role = composed.role
        diags.append(
            Diagnostic.at(
                role.pos("model") if "model" in role.data else role.pos("id"),
                "PM507",
                f"unknown model '{model}': not in the model table, so its context window, reply limit and token ratio are unknown; "
                "counting with the tokenizer as if it were exact",
                hint=model_table(project).hint(model),
            )
        )
    for own, role in reversed(composed.budgets):
        if "tokenizer" in own:
            return own["tokenizer"], _where(role, "budget", "tokenizer"), diags
    if info is not None:
        return info.tokenizer, f"model {model}", diags
    tokenizer = cfg.get("tokenizer") or project.config.get("tokenizer")
    if tokenizer:
        key = ("budget", "tokenizer") if cfg.get("tokenizer") else ("tokenizer",)
        return tokenizer, f"project (promptmill.yaml:{doc.pos(key).line})" if doc else "project", diags
    return DEFAULT_TOKENIZER, "promptmill default", diags
