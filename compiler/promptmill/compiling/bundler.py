"""Compile one composed role into a `RoleBundle`.

Static content (literal text, templates that use no state, fragments,
constraint sets without runtime conditions, output instructions) is rendered
and counted here, once. Templates that use state are checked (syntax, filters,
undeclared variables, sandbox rules) and kept as Jinja source, with a fast plan
when they are pure substitutions. Stability and message roles are inferred:
the leading run of stable sections is the cacheable prefix and goes to the
system message unless a section says otherwise.

`compile_role` resolves the output contract, assembles the sections (one
function per section source, `SECTION_SOURCES`), runs the role-level lint
passes (`lints/passes.py`) on the result, and builds the bundle.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any, NamedTuple

from ..compose.budgets import effective_budget, effective_provider
from ..compose.constraints import compile_rules
from ..compose.context import ContextEntry, tag_diagnostic, wrapped_text
from ..compose.contracts import compile_contract, limit_sections, native_fallback
from ..compose.model import (
    DEFAULT_ITEM_NAMES,
    ITEM_SOURCES,
    MAX_SECTIONS,
    Fragment,
    OutputContract,
    Role,
    SectionDef,
    Template,
    too_many_sections,
    valid_schema,
)
from ..compose.placement import infer_messages
from ..compose.resolve import ComposedRole, Index
from ..core import userfiles
from ..core.diagnostics import Diagnostic, Position
from ..core.errors import PromptmillError, RenderError
from ..core.suggest import did_you_mean, suggest
from ..core.version import __version__
from ..lints.context import LintContext
from ..lints.keys import Binding, item_binding, order_key_diagnostics, undeclared_keys
from ..lints.markup import markup_diagnostics
from ..lints.passes import LINTS
from ..lints.templates import check_template, render_static
from ..runtime import conditions
from ..runtime.bundle import FORMAT_VERSION, Contract, Origin, RoleBundle, Section, SourceRef
from ..runtime.counting import Counter
from ..runtime.fill import assemble_rules, strip_text
from ..runtime.itemmemo import item_reads
from ..runtime.plans import build_plan, why_no_plan
from ..runtime.tokenizers import get_tokenizer
from ..runtime.tooldecl import normalize as normalize_tool
from ..source.project import USER_RULES_SOURCE, Project
from .proofs import item_proofs

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
    source_ids: dict[str, str] = field(default_factory=dict)  # display path -> stable source id
    contract: Contract | None = None  # the role's output contract, compiled
    portable: tuple[str, ...] = ()  # runtimes besides Python that promptmill.yaml's `runtimes:` names

    def use(self, template: Template) -> None:
        self.sources.add((template.source_file, template.doc.sha256))


def _origin(ctx: _Ctx, s: SectionDef) -> Origin:
    """Where a section was written, by project-relative source id (bundles must not
    depend on the current folder)."""
    p = s.pos("id")
    return Origin(ctx.source_ids.get(s.doc.file, p.file), p.line, p.col, str(s.doc.data.get("id", "")))


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
                    hint=did_you_mean([close]) if close else "declare it under inputs.properties as an array",
                )
            )
            return False
        node = props[part]
    if not isinstance(node, dict) or (node.get("type") != "array" and "items" not in node):
        ctx.diags.append(Diagnostic.at(s.pos(key), "PM407", f"section '{s.id}': '{s.get(key)}' must be declared with type: array"))
        return False
    if isinstance(node.get("items"), dict):
        ctx.lazy_paths.append(path)
    return True


def _check(ctx: _Ctx, s: SectionDef, source: str, extra: tuple[str, ...] = (), item: Binding | None = None) -> tuple[bool, bool]:
    """Check a template: (ok, static); `item` describes the item variable `extra[0]`."""
    locate = lambda line, col: s.doc.text_pos(s.path + ("template",), line, col)  # noqa: E731
    info, diags = check_template(source, locate, what=f"section '{s.id}'")
    ctx.diags.extend(diags)
    if info is None:
        return False, False  # it does not parse: check_template said why
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
                _name_pos(s, source, name),
                "PM403",
                f"section '{s.id}' uses '{name}', which the role's inputs do not declare",
                hint=did_you_mean([close]) if close else f"declare it under inputs.properties.{name}",
            )
        )
        ok = False
    bindings = {n: Binding(ctx.declared[n], n) for n in info.variables if n in ctx.declared and n not in extra}
    if item is not None:
        bindings[extra[0]] = item
    ctx.diags.extend(markup_diagnostics(source, locate, what=f"section '{s.id}'", bindings=bindings))
    keys = undeclared_keys(source, locate, bindings, what=f"section '{s.id}'", tree=info.tree)
    ctx.diags.extend(keys)
    ok = ok and not any(d.severity == "error" for d in keys)
    return ok, info.static and not (set(info.variables) & set(extra))


def _name_pos(s: SectionDef, source: str, name: str) -> Position:
    """File position of the first use of variable `name` inside a section's template."""
    match = re.search(rf"(?<![\w.]){re.escape(name)}\b", source)
    if match is None or "template" not in s.data:
        return s.pos("template") if "template" in s.data else s.pos("id")
    before = source[: match.start()]
    line = before.count("\n") + 1
    col = match.start() - (before.rfind("\n") + 1) + 1
    return s.doc.text_pos(s.path + ("template",), line, col)


class _Body(NamedTuple):
    """What a section's source compiles to: its kind and the `Section` fields that kind sets."""

    kind: str
    fields: dict[str, Any]


def _text_body(ctx: _Ctx, s: SectionDef) -> _Body | None:
    return _Body("static", {"text": strip_text(s.data["text"])})


def _template_body(ctx: _Ctx, s: SectionDef) -> _Body | None:
    source = s.data["template"]
    ok, static = _check(ctx, s, source)
    if not ok:
        return None
    if not static:
        return _Body("template", {"template": source, "plan": _plan(ctx, s, source)})
    try:
        return _Body("static", {"text": strip_text(render_static(source))})
    except (RenderError, PromptmillError) as exc:
        ctx.diags.append(Diagnostic.at(s.pos("template"), "PM406", f"section '{s.id}': {exc.message}"))
        return None


def _plan(ctx: _Ctx, s: SectionDef, source: str) -> Any:
    """The template's plan; a template without one is a positioned error when the project says it must
    also render in a runtime without Jinja (`runtimes:` in promptmill.yaml, PM411)."""
    plan = build_plan(source)
    if plan is None and ctx.portable and "template" in s.data:
        why = why_no_plan(source)
        line, what = why if why is not None else (1, "something a plan cannot do")
        text = source.split("\n")[line - 1] if line <= source.count("\n") + 1 else ""
        named = re.search(r"'(\w+)'", what)  # a filter, test or global: point at its name
        found = re.search(rf"\b{named[1]}\b", text) if named else None
        col = found.start() + 1 if found else next((m.start() + 1 for m in re.finditer(r"\{[{%]", text)), 1)
        runtimes = ", ".join(ctx.portable)
        ctx.diags.append(
            Diagnostic.at(
                s.doc.text_pos(s.path + ("template",), line, col),
                "PM411",
                f"section '{s.id}' needs Jinja for {what}, so it cannot render in the {runtimes} runtime (promptmill.yaml: runtimes)",
                hint="use what a plan runs: lookups, the filters of docs/templates.md#portable-templates, for and if;"
                " or compute the value into the state",
            )
        )
    return plan


def _items_body(ctx: _Ctx, s: SectionDef) -> _Body | None:
    """each, history and tools: a template per item of a state list (tools may also declare tools statically)."""
    data, source = s.data, s.source or ""
    item_name = data.get("as", DEFAULT_ITEM_NAMES[source])
    template = data.get("template", DEFAULT_TEMPLATES.get(source, ""))
    if source in data and not _array_schema(ctx, s, source):
        return None
    item = item_binding(ctx.declared, data["each"]) if source == "each" else None
    ok, _ = _check(ctx, s, template, extra=(item_name,), item=item)
    if not ok:
        return None
    order_by = data.get("order_by")
    if isinstance(order_by, str):
        order_by = {"key": order_by}
    if order_by and item is not None:
        ctx.diags.extend(order_key_diagnostics(s, item, order_by["key"]))
    order_path = tuple(order_by["key"].split(".")) if order_by else ()
    return _Body(
        source,
        dict(
            template=template,
            plan=_plan(ctx, s, template),
            item_reads=item_reads(source, template, item_name, order_path),
            path=tuple(data[source].split(".")) if source in data else (),
            declared=tuple(normalize_tool(t) for t in data.get("declare", ())),
            item_name=item_name,
            item_separator=data.get("item_separator", "\n"),
            order_by=order_path,
            order_desc=(order_by or {}).get("order", "desc") == "desc",
            keep=data.get("keep", "last" if source == "history" else "first"),
            step=data.get("step", 1),
        ),
    )


def _constraints_body(ctx: _Ctx, s: SectionDef) -> _Body | None:
    compiled = compile_rules(s, ctx.index, ctx.cond_ctx, ctx.use, ctx.diags)
    if compiled is None:
        return None
    lines, runtime, used = compiled
    ctx.used_inputs.update(used)
    if runtime:
        return _Body("rules", {"rules": lines})
    return _Body("static", {"text": assemble_rules(lines, [True] * len(lines))})


def _output_body(ctx: _Ctx, s: SectionDef) -> _Body | None:
    if ctx.contract is None:
        ctx.diags.append(
            Diagnostic.at(s.pos("output"), "PM302", f"section '{s.id}' renders output instructions, but the role has no `output` contract")
        )
        return None
    return _Body("static", {"text": ctx.contract.instructions})


def _fragment_body(ctx: _Ctx, s: SectionDef) -> _Body | None:
    data = s.data
    frag = ctx.index.get("fragment", data["fragment"])
    if not isinstance(frag, Fragment):
        close = suggest(data["fragment"], ctx.index.ids("fragment"))
        ctx.diags.append(
            Diagnostic.at(
                s.pos("fragment"), "PM302", f"unknown fragment '{data['fragment']}'", hint=did_you_mean([close]) if close else None
            )
        )
        return None
    ctx.use(frag)
    wrap = data.get("wrap", frag.get("wrap", True))
    bad_tag = tag_diagnostic(frag, s.pos("fragment")) if wrap else None
    if bad_tag is not None:
        ctx.diags.append(bad_tag)
        return None
    context = {"position": "section", "layer": None, "by": f"section:{s.id}"}
    return _Body("static", {"text": wrapped_text(frag, wrap), "fragment": frag.id, "context": context})


# section source (compose.model.SOURCES) -> how it compiles
SECTION_SOURCES: dict[str, Callable[[_Ctx, SectionDef], _Body | None]] = {
    "text": _text_body,
    "template": _template_body,
    "each": _items_body,
    "history": _items_body,
    "tools": _items_body,
    "constraints": _constraints_body,
    "output": _output_body,
    "fragment": _fragment_body,
}


def _state_inputs(when: Mapping[str, Any] | None) -> set[str]:
    """The top-level inputs a condition reads (its `state.` paths)."""
    return {path.split(".")[1] for _, path in conditions.paths(when) if path.startswith("state.")}


def _reads_turn(when: Mapping[str, Any] | None) -> bool:
    """True when a condition can change between the turns of a conversation (it reads the state
    or the event); role, model and provider conditions hold for every turn of one conversation."""
    return when is not None and any(p.split(".")[0] in ("state", "event") for _, p in conditions.paths(when))


def _section(ctx: _Ctx, s: SectionDef) -> Section | None:
    """Compile one body section (None when it contributes nothing or has errors)."""
    data = s.data
    when = data.get("when")
    if when is not None:
        ctx.used_inputs.update(_state_inputs(when))
        decided = conditions.partial(when, ctx.cond_ctx)
        if decided is False:
            return None
        when = None if decided is True else decided
    compile_body = SECTION_SOURCES.get(s.source or "")
    body = compile_body(ctx, s) if compile_body is not None else None
    if body is None:
        return None
    kind, fields = body
    if kind == "static":
        if not fields["text"]:
            return None
        # the body only: the fitter places the title line itself (title_tokens)
        fields = fields | {"tokens": ctx.counter.count(fields["text"])}
    title = data.get("title")
    if "truncate" in data:
        fields |= {"truncate_keep": data["truncate"].get("keep", "head"), "truncate_marker": data["truncate"].get("marker", "[…truncated]")}
    # provider conditions do not change between the turns of a conversation
    dynamic = (kind != "static" and s.source in data) or (_reads_turn(when))
    declared = data.get("stability")
    if declared == "stable" and dynamic:
        ctx.diags.append(
            Diagnostic.at(s.pos("stability"), "PM201", f"section '{s.id}' depends on the render state and cannot be declared stable")
        )
    fixed = (kind == "static" or not dynamic) and when is None  # stable content is never trimmed by default
    return Section(
        id=s.id,
        kind=kind,
        priority=data.get("priority", DEFAULT_PRIORITY),
        trim=data.get("trim") or ("never" if fixed else "items" if kind in ITEM_SOURCES else "drop"),
        message=data.get("message", ""),
        stability=declared or ("dynamic" if dynamic else "stable"),
        title=title,
        title_tokens=ctx.counter.count(title + "\n") if title else 0,
        when=when,
        origin=_origin(ctx, s),
        **fields,
    )


def _context_section(ctx: _Ctx, entry: ContextEntry, taken: set[str]) -> Section:
    ctx.use(entry.fragment)
    ctx.used_inputs.update(_state_inputs(entry.when))  # an injection rule's condition reads the state too
    text = wrapped_text(entry.fragment, entry.wrap)
    p = entry.where or entry.fragment.pos("id")  # where it was placed: the rule or the role's context
    sid = base_id = f"context:{entry.position}:{entry.fragment.id}"
    n = 1
    while sid in taken:  # the same fragment placed here again under another condition
        n += 1
        sid = f"{base_id}#{n}"
    taken.add(sid)
    return Section(
        id=sid,
        kind="static",
        priority=CONTEXT_PRIORITY,
        trim="never",
        message="system" if entry.position == "system" else "",
        stability="dynamic" if _reads_turn(entry.when) else "stable",
        text=text,
        tokens=ctx.counter.count(text),
        when=entry.when,
        fragment=entry.fragment.id,
        context={"position": entry.position, "layer": entry.layer, "by": entry.declared_by}
        | ({"yields_to": list(entry.yields_to)} if entry.yields_to else {}),
        origin=Origin(ctx.source_ids.get(p.file, p.file), p.line, p.col, entry.declared_by),
    )


def tokenizer_identity(name: str, project: Project) -> str:
    """What a role's counts depend on: the tokenizer name, or a tokenizer file's content."""
    if not name.startswith("hf:"):
        return name
    path = project.root / name[3:]
    try:
        return "hf:" + hashlib.sha256(userfiles.read_bytes(path, root=project.root, what="tokenizer file")).hexdigest()
    except PromptmillError:
        return name


def source_hash(sources: list[tuple[str, str]], tokenizer: str) -> str:
    blob = json.dumps([__version__, FORMAT_VERSION, tokenizer, sorted(sources)], separators=(",", ":"))
    return hashlib.sha256(blob.encode()).hexdigest()


def compile_role(composed: ComposedRole, index: Index, project: Project) -> tuple[RoleBundle | None, list[Diagnostic]]:
    """The bundle of a composed role, or None with the reasons: resolve the contract, assemble the
    sections, run the lint passes (`lints/passes.py`), build."""
    role = composed.role
    if composed.inputs and not valid_schema(composed.inputs):
        return None, []  # PM701 is reported where the inputs are written; the checks below rely on them
    count = len(composed.sections) + len(composed.context)
    if count > MAX_SECTIONS:  # bounded work below: one role, at most MAX_SECTIONS sections
        return None, [too_many_sections(role.pos("id"), role.id, count, "composes")]
    budget, tokenizer_name, info, diags = effective_budget(composed, project)
    # the wire is decided here, once, from the model as `render --model` decides it: every surface that
    # reads the bundle (render, snapshot, batch, preview, the language server's hovers) follows
    provider, provider_origin, pdiags = effective_provider(composed, project, info)
    diags.extend(pdiags)
    if provider_origin is not None and provider_origin.startswith("model "):
        budget = replace(budget, origins={**budget.origins, "provider": provider_origin})
    try:
        counter = Counter(get_tokenizer(tokenizer_name, base_dir=project.root))
    except PromptmillError as exc:
        where = role.pos("budget", "tokenizer") if "tokenizer" in (role.get("budget") or {}) else role.pos("id")
        return None, diags + [Diagnostic.at(where, "PM502", exc.message, hint=exc.hint)]
    ctx = _context(composed, index, project, counter, diags)
    found = _resolve_contract(ctx)
    sections = _assemble(ctx, found)
    ctx.used_inputs.update(_parent_choice_inputs(role))
    separator = composed.setting("separator", DEFAULT_SEPARATOR)
    facts = LintContext(index, tuple(sections), ctx.contract, budget, separator, tokenizer_name, counter, frozenset(ctx.used_inputs), info)
    for lint in LINTS:
        diags.extend(lint(composed, facts))
    if any(d.severity == "error" for d in diags):
        return None, diags
    sources = sorted(ctx.sources)
    bundle = RoleBundle(
        id=role.id,
        description=role.get("description", ""),
        category=composed.setting("category", ""),
        model=composed.setting("model", project.config.get("model")),
        provider=provider,
        tokenizer=tokenizer_name,
        budget=budget,
        separator=separator,
        tool_mode=composed.setting("tool_mode", "inline"),
        cache=composed.setting("cache", True),
        inputs=composed.inputs,
        sections=tuple(sections),
        output=ctx.contract,
        lazy_paths=tuple(ctx.lazy_paths),
        item_proofs=item_proofs(composed.inputs, ctx.lazy_paths),
        events=tuple(composed.events),
        sources=tuple(SourceRef(f, h) for f, h in sources),
        source_hash=source_hash(sources, tokenizer_identity(tokenizer_name, project)),
    )
    return bundle, diags


def _context(composed: ComposedRole, index: Index, project: Project, counter: Counter, diags: list[Diagnostic]) -> _Ctx:
    """The compile context of a role, with the files it is made of as its first sources."""
    declared = (composed.inputs or {}).get("properties", {})
    ctx = _Ctx(composed, index, counter, declared, conditions.compile_facts(composed.facts), diags=diags)
    ctx.portable = tuple(r for r in project.config.get("runtimes", ()) if r != "python")
    ctx.source_ids = {t.doc.file: t.source_file for t in (*composed.chain, *(e.fragment for e in composed.context))}
    if project.config_doc is not None:
        ctx.source_ids[project.config_doc.file] = "promptmill.yaml"
    if project.user_doc is not None:
        ctx.source_ids[project.user_doc.file] = USER_RULES_SOURCE
    for r in composed.chain:
        ctx.use(r)
    if project.config_doc is not None:
        ctx.sources.add(("promptmill.yaml", project.config_doc.sha256))
    if project.user_doc is not None:  # its rules may reach every role (conditions decide at run time)
        ctx.sources.add((USER_RULES_SOURCE, project.user_doc.sha256))
    return ctx


def _resolve_contract(ctx: _Ctx) -> OutputContract | None:
    """Compile the role's output contract into `ctx.contract`; the contract as written, or None."""
    composed = ctx.composed
    out_id = composed.setting("output")
    if out_id is None:
        return None
    found = ctx.index.get("output", out_id)
    if not isinstance(found, OutputContract):
        setter = composed.settings["output"][1]
        close = suggest(out_id, ctx.index.ids("output"))
        hint = did_you_mean([close]) if close else None
        ctx.diags.append(Diagnostic.at(setter.pos("output"), "PM302", f"unknown output contract '{out_id}'", hint=hint))
        return None
    ctx.use(found)
    ctx.contract, cdiags = compile_contract(found)
    ctx.diags.extend(cdiags)
    for check in ctx.contract.checks:
        src = check.get("from", "")
        if src.startswith("state."):
            ctx.used_inputs.add(src.split(".")[1])
    return found


def _assemble(ctx: _Ctx, found: OutputContract | None) -> list[Section]:
    """The role's sections in prompt order: context placed before, the body, context placed after; messages assigned."""
    composed, contract = ctx.composed, ctx.contract
    before = [e for e in composed.context if e.position in ("system", "before")]
    system = [e for e in before if e.position == "system"]
    pre = [e for e in before if e.position == "before"]
    post = [e for e in composed.context if e.position == "after"]
    taken: set[str] = set()
    sections: list[Section] = [_context_section(ctx, e, taken) for e in system + pre]
    body_start = len(sections)
    for s in composed.sections:
        compiled = _section(ctx, s)
        if compiled is not None:
            sections.append(compiled)
        if s.source == "output" and contract is not None and contract.style == "native" and found is not None:
            sections.append(native_fallback(found, contract, ctx.counter, _origin(ctx, s), s.id, s.get("when")))
            sections.extend(limit_sections(contract, ctx.counter, _origin(ctx, s), s.id, s.get("when")))
    body_end = len(sections)
    sections += [_context_section(ctx, e, taken) for e in post]
    return infer_messages(sections, body_start, body_end)


def _parent_choice_inputs(role: Role) -> set[str]:
    """The top-level inputs the conditions that choose the parent (`extends_when`) read."""
    chooses = [choice.get("when") for choice in role.get("extends_when") or () if isinstance(choice, Mapping)]
    paths = [leaf["path"] for when in chooses for _, leaf in conditions.leaves(when)]
    return {path.split(".")[1] for path in paths if path.startswith("state.")}
