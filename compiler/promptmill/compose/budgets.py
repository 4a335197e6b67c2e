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
from ..runtime.models import ModelInfo, ModelTable, default_table, id_problem, row_problems, serving_problem
from ..runtime.tokenizers import DEFAULT_TOKENIZER
from ..runtime.wire import get_wire
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


def project_model_diagnostics(project: Project) -> list[Diagnostic]:
    """What is wrong with promptmill.yaml's model settings, each at its key: a `models:` row whose pattern,
    ratio or limits are out of bounds (`runtime.models.row_problems`), a default `model:` that is not a
    model id, close to a known one (did you mean, PM507), or that the default `provider:` cannot serve."""
    doc = project.config_doc
    if doc is None:
        return []
    out: list[Diagnostic] = []
    for i, row in enumerate(project.config.get("models") or []):
        for path, problem in row_problems(row):
            out.append(Diagnostic.at(doc.pos(("models", i, *path)), "PM201", f"models[{i}].{'.'.join(path)}: {problem}"))
    model = project.config.get("model")
    if not model:
        return out
    bad_id = id_problem(model)
    if bad_id is not None:
        return out + [Diagnostic.at(doc.pos(("model",)), "PM201", bad_id, hint="write the id as the provider lists it")]
    if has_row_errors(out):
        return out
    table = model_table(project)
    info = table.resolve(model)
    near = table.near_miss(model) if info is not None and info.origin == "promptmill" else None
    if info is not None and near is not None:
        out.append(_near_miss(doc.pos(("model",)), model, near, info))
    provider = project.config.get("provider")
    conflict = serving_problem(get_wire(provider), model, table) if provider and info is not None else None
    if conflict is not None:
        out.append(Diagnostic.at(doc.pos(("provider",)), "PM010", f"provider {provider}: {conflict}", hint=_serving_hint(info)))
    return out


def has_row_errors(diags: list[Diagnostic]) -> bool:
    return any(d.severity == "error" for d in diags)


def _near_miss(at: Position, model: str, near: str, info: ModelInfo) -> Diagnostic:
    """PM507 for a model id that is a likely typo of a known one, although a (catch-all) row serves it."""
    return Diagnostic.at(
        at,
        "PM507",
        f"model '{model}' is not a model id promptmill knows; the row {info.pattern} serves it "
        f"({info.provider}, context window {info.context_window}, ratio {info.ratio:g}), but it is close to '{near}'",
        hint=f"did you mean '{near}'? (if '{model}' is a model the table does not list yet, add a row for it under `models:`)",
    )


def _serving_hint(info: ModelInfo | None) -> str:
    own = info.default_wire if info is not None else "the model's provider"
    return f"name a provider that serves the model (`provider: {own}`), or leave `provider:` out and the model decides"


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
    info = model_table(project).resolve(model) if model and id_problem(model) is None else None

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
    if info is not None and info.max_output_tokens is not None and reserve > info.max_output_tokens:
        reserve = info.max_output_tokens  # as a render for the model (`render --model`) does: it can never write more
        origins["reserve"] = f"reply limit of {model} ({info.pattern})"
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
    table = model_table(project)
    diags = _role_model_diagnostics(composed, table)
    bad_id = bool(model) and id_problem(model) is not None
    info = table.resolve(model) if model and not bad_id else None
    cfg = project.config.get("budget") or {}
    doc = project.config_doc
    if model and info is None and not bad_id:
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


def _role_model_diagnostics(composed: ComposedRole, table: ModelTable) -> list[Diagnostic]:
    """A model the role's chain names (promptmill.yaml's default is checked once, by
    `project_model_diagnostics`): PM201 when it is not a model id, PM507 when it is a likely typo of a
    known id that a shipped (catch-all) row would serve without a word."""
    found = composed.settings.get("model")
    if found is None:
        return []
    model, setter = found
    problem = id_problem(model)
    if problem is not None:
        return [Diagnostic.at(setter.pos("model"), "PM201", problem, hint="write the id as the provider lists it")]
    info = table.resolve(model)
    near = table.near_miss(model) if info is not None and info.origin == "promptmill" else None
    return [_near_miss(setter.pos("model"), model, near, info)] if info is not None and near is not None else []


def effective_provider(composed: ComposedRole, project: Project, info: ModelInfo | None) -> tuple[str, str | None, list[Diagnostic]]:
    """(wire, where it came from (None: promptmill's default `text`), diagnostics) for a composed role.

    The model decides, as `render --model` does, unless a provider is written: a `provider:` in the role's
    chain always wins, and is a positioned PM010 when it cannot serve the model (`serving_problem`);
    promptmill.yaml's default `provider:` applies where it can serve the role's model (the model's own
    provider, or a wire of no provider: text, live) and gives way to the model where it cannot. With no
    known model, the project's default, else `text`."""
    doc = project.config_doc
    model = composed.setting("model", project.config.get("model"))
    table = model_table(project) if info is not None else None
    found = composed.settings.get("provider")
    if found is not None:
        provider, setter = found
        problem = serving_problem(get_wire(provider), model, table) if info is not None else None
        if problem is None:
            return provider, _where(setter, "provider"), []
        model_setter = composed.settings.get("model", (None, None))[1]
        chain = list(composed.chain)
        # the error stands where the conflict was made: the later (more derived) of the two settings
        at_model = model_setter is not None and chain.index(model_setter) > chain.index(setter)
        where = model_setter.pos("model") if at_model and model_setter is not None else setter.pos("provider")
        inherited = "" if setter is composed.role else f" ({_where(setter, 'provider')})"
        own = info.default_wire if info is not None else "the model's provider"
        hint = (
            f"set `provider: {own}` on role '{composed.role.id}' (it overrides the inherited one), or name a model {provider} serves"
            if inherited
            else _serving_hint(info)
        )
        diag = Diagnostic.at(
            where, "PM010", f"role '{composed.role.id}': provider {provider}{inherited} cannot serve its model: {problem}", hint=hint
        )
        return provider, _where(setter, "provider"), [diag]
    default = project.config.get("provider")
    if default and (info is None or serving_problem(get_wire(default), model, table) is None):
        return default, f"project (promptmill.yaml:{doc.pos(('provider',)).line})" if doc is not None else "project", []
    if info is not None:
        return info.default_wire, f"model {model} (row {info.pattern})", []
    return "text", None, []
