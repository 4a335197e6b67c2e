"""Compile one composed role into a `RoleBundle`.

Static content (literal text, templates that use no state, fragments,
constraint sets without runtime conditions, output instructions) is rendered
and counted here, once. Templates that use state are checked (syntax, filters,
undeclared variables, sandbox rules) and kept as Jinja source, with a fast plan
when they are pure substitutions. Stability and message roles are inferred:
the leading run of stable sections is the cacheable prefix and goes to the
system message unless a section says otherwise.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from typing import Any

from . import __version__, conditions
from .budgets import effective_budget
from .bundle import FORMAT_VERSION, Origin, RoleBundle, RuleLine, Section, SourceRef
from .cachelint import cache_lint
from .context import wrapped_text
from .contracts import compile_contract, native_fallback
from .counting import Counter
from .diagnostics import Diagnostic
from .errors import PromptmillError, RenderError
from .fill import assemble_rules, strip_text
from .jinjacheck import check_template, render_static
from .model import ITEM_SOURCES, ConstraintSet, Fragment, OutputContract, SectionDef
from .plans import build_plan
from .project import Project
from .resolve import ComposedRole, Index
from .schemacheck import suggest
from .tokenizers import get_tokenizer

DEFAULT_SEPARATOR = "\n\n"
DEFAULT_PRIORITY = 50
CONTEXT_PRIORITY = 1000
DEFAULT_TEMPLATES = {
    "history": "{{ turn.role }}: {{ turn.content }}",
    "tools": "- {{ tool.name }}: {{ tool.description }}\n  parameters: {{ tool.parameters | to_json }}",
}


@dataclass
class _Ctx:
    composed: ComposedRole
    index: Index
    counter: Counter
    declared: dict[str, Any]
    cond_ctx: dict[str, Any]
    used_inputs: set[str] = field(default_factory=set)
    sources: set[tuple[str, str]] = field(default_factory=set)
    lazy_paths: list[tuple[str, ...]] = field(default_factory=list)
    diags: list[Diagnostic] = field(default_factory=list)

    def use(self, template) -> None:
        self.sources.add((template.source_file, template.doc.sha256))


def _origin(s: SectionDef) -> Origin:
    p = s.pos("id")
    return Origin(p.file, p.line, p.col, str(s.doc.data.get("id", "")))


def _array_schema(ctx: _Ctx, s: SectionDef, key: str) -> bool:
    """Check that the state path of an each/history/tools section is a list in the inputs."""
    path = tuple(s.get(key).split("."))
    ctx.used_inputs.add(path[0])
    node: Any = {"properties": ctx.declared}
    for part in path:
        props = node.get("properties") if isinstance(node, dict) else None
        if not isinstance(props, dict) or part not in props:
            close = suggest(part, list(props or {}))
            ctx.diags.append(
                Diagnostic.at(
                    s.pos(key),
                    "PM407",
                    f"section '{s.id}': '{key}: {s.get(key)}' is not declared in the role's inputs",
                    hint=f"did you mean '{close}'?" if close else "declare it under inputs.properties as an array",
                )
            )
            return False
        node = props[part]
    if not isinstance(node, dict) or (node.get("type") != "array" and "items" not in node):
        ctx.diags.append(
            Diagnostic.at(s.pos(key), "PM407", f"section '{s.id}': '{s.get(key)}' must be declared with type: array")
        )
        return False
    if isinstance(node.get("items"), dict):
        ctx.lazy_paths.append(path)
    return True


def _check(ctx: _Ctx, s: SectionDef, source: str, extra: tuple[str, ...] = ()) -> tuple[bool, bool]:
    """Check a template: (ok, static)."""
    info, diags = check_template(source, lambda line, col: s.doc.text_pos(s.path + ("template",), line, col), what=f"section '{s.id}'")
    ctx.diags.extend(diags)
    if info is None:
        return False, False
    ok = not any(d.severity == "error" for d in diags)
    for name in sorted(info.variables):
        if name in extra:
            continue
        if name in ctx.declared:
            ctx.used_inputs.add(name)
            continue
        close = suggest(name, list(ctx.declared) + list(extra))
        ctx.diags.append(
            Diagnostic.at(
                s.pos("template"),
                "PM403",
                f"section '{s.id}' uses '{name}', which the role's inputs do not declare",
                hint=f"did you mean '{close}'?" if close else f"declare it under inputs.properties.{name}",
            )
        )
        ok = False
    return ok, info.static and not (set(info.variables) & set(extra))


def _rules(ctx: _Ctx, s: SectionDef) -> tuple[tuple[RuleLine, ...], bool] | None:
    lines: list[RuleLine] = []
    seen: dict[str, str] = {}
    runtime = False
    for group, set_id in enumerate(s.get("constraints")):
        found = ctx.index.get("constraints", set_id)
        if not isinstance(found, ConstraintSet):
            other = next((k for (k, i) in ctx.index.templates if i == set_id), None)
            close = suggest(set_id, ctx.index.ids("constraints"))
            ctx.diags.append(
                Diagnostic.at(
                    s.pos("constraints", group),
                    "PM304" if other else "PM302",
                    f"'{set_id}' is a {other}, not a constraint set" if other else f"unknown constraint set '{set_id}'",
                    hint=f"did you mean '{close}'?" if close else None,
                )
            )
            return None
        ctx.use(found)
        if found.title:
            lines.append(RuleLine(found.title, group, is_title=True))
        for rule in found.rules:
            if rule.id in seen:
                ctx.diags.append(
                    Diagnostic.at(
                        rule.pos,
                        "PM604",
                        f"rule '{rule.id}' of set '{set_id}' is also in set '{seen[rule.id]}', included earlier by "
                        f"section '{s.id}'; only the first is rendered",
                    )
                )
                continue
            seen[rule.id] = set_id
            when = rule.when
            if when is not None and conditions.is_compile_time(when):
                if not conditions.evaluate(when, ctx.cond_ctx):
                    continue
                when = None
            runtime = runtime or when is not None
            for _, path in conditions.paths(when):
                if path.startswith("state."):
                    ctx.used_inputs.add(path.split(".")[1])
            text = "- " + rule.text.strip().replace("\n", "\n  ")
            lines.append(RuleLine(text, group, when=when, rule_id=rule.id))
    return tuple(lines), runtime


def _section(ctx: _Ctx, s: SectionDef, contract_text: str | None) -> Section | None:
    """Compile one body section (None when it contributes nothing or has errors)."""
    data = s.data
    source = s.source
    title = data.get("title")
    base: dict[str, Any] = dict(
        id=s.id,
        priority=data.get("priority", DEFAULT_PRIORITY),
        title=title,
        title_tokens=ctx.counter.count(title + "\n") if title else 0,
        origin=_origin(s),
    )
    when = data.get("when")
    if when is not None:
        for _, path in conditions.paths(when):
            if path.startswith("state."):
                ctx.used_inputs.add(path.split(".")[1])
        if conditions.is_compile_time(when):
            if not conditions.evaluate(when, ctx.cond_ctx):
                return None
            when = None
    base["when"] = when
    if "truncate" in data:
        base["truncate_keep"] = data["truncate"].get("keep", "head")
        base["truncate_marker"] = data["truncate"].get("marker", "[…truncated]")
    static_text: str | None = None
    kind = "static"
    if source == "text":
        static_text = strip_text(data["text"])
    elif source == "template":
        ok, static = _check(ctx, s, data["template"])
        if not ok:
            return None
        if static:
            try:
                static_text = strip_text(render_static(data["template"]))
            except (RenderError, PromptmillError) as exc:
                ctx.diags.append(Diagnostic.at(s.pos("template"), "PM406", f"section '{s.id}': {exc.message}"))
                return None
        else:
            kind = "template"
            base.update(template=data["template"], plan=build_plan(data["template"]))
    elif source in ITEM_SOURCES:
        kind = source
        item_name = data.get("as", {"each": "item", "history": "turn", "tools": "tool"}[source])
        template = data.get("template", DEFAULT_TEMPLATES.get(source, ""))
        if source in data and not _array_schema(ctx, s, source):
            return None
        ok, _ = _check(ctx, s, template, extra=(item_name,))
        if not ok:
            return None
        order_by = data.get("order_by")
        if isinstance(order_by, str):
            order_by = {"key": order_by}
        base.update(
            template=template,
            plan=build_plan(template),
            path=tuple(data[source].split(".")) if source in data else (),
            declared=tuple(dict(t) for t in data.get("declare", ())),
            item_name=item_name,
            item_separator=data.get("item_separator", "\n"),
            order_by=tuple(order_by["key"].split(".")) if order_by else (),
            order_desc=(order_by or {}).get("order", "desc") == "desc",
            keep=data.get("keep", "last" if source == "history" else "first"),
            step=data.get("step", 1),
        )
    elif source == "constraints":
        compiled = _rules(ctx, s)
        if compiled is None:
            return None
        lines, runtime = compiled
        if runtime:
            kind = "rules"
            base["rules"] = lines
        else:
            static_text = assemble_rules(lines, [True] * len(lines))
    elif source == "output":
        if contract_text is None:
            ctx.diags.append(
                Diagnostic.at(s.pos("output"), "PM302", f"section '{s.id}' renders output instructions, but the role has no `output` contract")
            )
            return None
        static_text = contract_text
    elif source == "fragment":
        frag = ctx.index.get("fragment", data["fragment"])
        if not isinstance(frag, Fragment):
            close = suggest(data["fragment"], ctx.index.ids("fragment"))
            ctx.diags.append(
                Diagnostic.at(s.pos("fragment"), "PM302", f"unknown fragment '{data['fragment']}'", hint=f"did you mean '{close}'?" if close else None)
            )
            return None
        ctx.use(frag)
        static_text = wrapped_text(frag, data.get("wrap", frag.get("wrap", True)))
        base["fragment"] = frag.id
    if kind == "static":
        if not static_text:
            return None
        full = (title + "\n" if title else "") + static_text
        base.update(text=full, tokens=ctx.counter.count(full))
    # provider conditions do not change between the turns of a conversation
    dynamic = (kind != "static" and source in data) or (when is not None and any(p.split(".")[0] in ("state", "event") for _, p in conditions.paths(when)))
    declared = data.get("stability")
    if declared == "stable" and dynamic:
        ctx.diags.append(
            Diagnostic.at(s.pos("stability"), "PM201", f"section '{s.id}' depends on the render state and cannot be declared stable")
        )
    stability = declared or ("dynamic" if dynamic else "stable")
    fixed = (kind == "static" or not dynamic) and when is None  # stable content is never trimmed by default
    trim = data.get("trim") or ("never" if fixed else "items" if kind in ITEM_SOURCES else "drop")
    return Section(kind=kind, trim=trim, message=data.get("message", ""), stability=stability, **base)


def _context_section(ctx: _Ctx, entry, n: int) -> Section:
    ctx.use(entry.fragment)
    text = wrapped_text(entry.fragment, entry.wrap)
    p = entry.fragment.pos("id")
    return Section(
        id=f"context:{entry.position}:{entry.fragment.id}",
        kind="static",
        priority=CONTEXT_PRIORITY,
        trim="never",
        message="system" if entry.position == "system" else "",
        stability="stable" if entry.when is None else "dynamic",
        text=text,
        tokens=ctx.counter.count(text),
        when=entry.when,
        fragment=entry.fragment.id,
        context={"position": entry.position, "layer": entry.layer, "by": entry.declared_by},
        origin=Origin(p.file, p.line, p.col, entry.fragment.id),
    )


def _infer_messages(sections: list[Section], body_start: int, body_end: int) -> list[Section]:
    """Fill in message roles not given: the leading stable run goes to `system`, the
    rest to `user`; `before`/`after` fragments follow the first/last body section."""
    from dataclasses import replace

    msgs = [s.message for s in sections]
    prefix = True
    for i, s in enumerate(sections):
        position = (s.context or {}).get("position")
        if not msgs[i] and position not in ("before", "after"):
            msgs[i] = "system" if prefix and s.stability == "stable" else "user"
        if s.stability != "stable":
            prefix = False
    body = [m for m in msgs[body_start:body_end] if m]
    first, last = (body[0], body[-1]) if body else ("user", "user")
    for i, s in enumerate(sections):
        if not msgs[i]:
            msgs[i] = first if (s.context or {}).get("position") == "before" else last
    return [replace(s, message=m) for s, m in zip(sections, msgs, strict=True)]


def source_hash(sources: list[tuple[str, str]], tokenizer: str) -> str:
    blob = json.dumps([__version__, FORMAT_VERSION, tokenizer, sorted(sources)], separators=(",", ":"))
    return hashlib.sha256(blob.encode()).hexdigest()


def compile_role(composed: ComposedRole, index: Index, project: Project) -> tuple[RoleBundle | None, list[Diagnostic]]:
    """The bundle of a composed role, or None with the reasons."""
    role = composed.role
    budget, tokenizer_name, _info, diags = effective_budget(composed, project)
    try:
        counter = Counter(get_tokenizer(tokenizer_name, base_dir=project.root))
    except PromptmillError as exc:
        where = role.pos("budget", "tokenizer") if "tokenizer" in (role.get("budget") or {}) else role.pos("id")
        return None, diags + [Diagnostic.at(where, "PM502", exc.message, hint=exc.hint)]
    model = composed.setting("model", project.config.get("model"))
    declared = (composed.inputs or {}).get("properties", {})
    cond_ctx = {"role": {"id": role.id, "category": composed.setting("category", "")}, "model": model}
    ctx = _Ctx(composed, index, counter, declared, cond_ctx, diags=diags)
    for r in composed.chain:
        ctx.use(r)
    if project.config_doc is not None:
        ctx.sources.add(("promptmill.yaml", project.config_doc.sha256))

    contract = None
    contract_text = None
    out_id = composed.setting("output")
    if out_id is not None:
        found = index.get("output", out_id)
        if not isinstance(found, OutputContract):
            setter = composed.settings["output"][1]
            close = suggest(out_id, index.ids("output"))
            diags.append(Diagnostic.at(setter.pos("output"), "PM302", f"unknown output contract '{out_id}'", hint=f"did you mean '{close}'?" if close else None))
        else:
            ctx.use(found)
            contract, cdiags = compile_contract(found)
            diags.extend(cdiags)
            contract_text = contract.instructions
            for check in contract.checks:
                src = check.get("from", "")
                if src.startswith("state."):
                    ctx.used_inputs.add(src.split(".")[1])

    before = [e for e in composed.context if e.position in ("system", "before")]
    system = [e for e in before if e.position == "system"]
    pre = [e for e in before if e.position == "before"]
    post = [e for e in composed.context if e.position == "after"]
    sections: list[Section] = [_context_section(ctx, e, i) for i, e in enumerate(system + pre)]
    body_start = len(sections)
    for s in composed.sections:
        compiled = _section(ctx, s, contract_text)
        if compiled is not None:
            sections.append(compiled)
        if s.source == "output" and contract is not None and contract.style == "native":
            sections.append(native_fallback(found, contract, ctx.counter, _origin(s), s.id, s.get("when")))
    body_end = len(sections)
    sections += [_context_section(ctx, e, i) for i, e in enumerate(post)]
    sections = _infer_messages(sections, body_start, body_end)

    if contract is not None and contract.style != "native" and not any(s.source == "output" for s in composed.sections):
        diags.append(Diagnostic.at(role.pos("id"), "PM702", f"role '{role.id}' has output contract '{contract.id}' but no section with `output: true` renders its instructions"))
    diags.extend(cache_lint(sections, role.pos("id")))
    _budget_check(sections, counter, budget, composed.setting("separator", DEFAULT_SEPARATOR), role, diags)
    if not role.abstract:
        _unused_inputs(composed, ctx)
    if any(d.severity == "error" for d in diags):
        return None, diags
    sources = sorted(ctx.sources)
    bundle = RoleBundle(
        id=role.id,
        description=role.get("description", ""),
        category=composed.setting("category", ""),
        model=model,
        provider=composed.setting("provider", project.config.get("provider", "text")),
        tokenizer=tokenizer_name,
        budget=budget,
        separator=composed.setting("separator", DEFAULT_SEPARATOR),
        tool_mode=composed.setting("tool_mode", "inline"),
        cache=composed.setting("cache", True),
        inputs=composed.inputs,
        sections=tuple(sections),
        output=contract,
        lazy_paths=tuple(ctx.lazy_paths),
        events=tuple(composed.events),
        sources=tuple(SourceRef(f, h) for f, h in sources),
        source_hash=source_hash(sources, tokenizer_name),
    )
    return bundle, diags


def _budget_check(sections: list[Section], counter: Counter, budget, separator: str, role, diags: list[Diagnostic]) -> None:
    fixed = [s for s in sections if s.kind == "static" and s.trim == "never" and s.when is None]
    parts: list[str] = []
    for s in fixed:
        if parts:
            parts.append(separator)
        parts.append(s.text or "")
    total = counter.count_parts(parts)
    room = budget.max_tokens - budget.reserve
    if total > room:
        detail = ", ".join(f"{s.id} ({s.tokens})" for s in sorted(fixed, key=lambda s: -s.tokens)[:8])
        diags.append(
            Diagnostic.at(
                role.pos("id"),
                "PM501",
                f"static sections that are never trimmed need {total} tokens, but the budget allows "
                f"{room} (max_tokens {budget.max_tokens} - reserve {budget.reserve}): {detail}",
                hint="raise budget.max_tokens, shorten these sections, or let some be trimmed",
            )
        )


def _unused_inputs(composed: ComposedRole, ctx: _Ctx) -> None:
    for name in ctx.declared:
        if name in ctx.used_inputs:
            continue
        owner = next((r for r in reversed(composed.chain) if name in ((r.get("inputs") or {}).get("properties") or {})), composed.role)
        ctx.diags.append(
            Diagnostic.at(
                owner.key_pos("inputs", "properties", name),
                "PM404",
                f"input '{name}' is declared but no section, condition or check of role '{composed.role.id}' uses it",
            )
        )
