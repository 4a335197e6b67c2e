"""Compile-time checks of Jinja templates: syntax, filters and tests, sandbox rules,
and what a template reads from its context.

`check_template` parses a template with the same environment the runtime
renders with and returns what the compiler needs (`TemplateInfo`: the context
variables and attribute paths it reads, the filters and tests it uses, whether
it is static) plus diagnostics:

- PM401 the template does not parse (with the line of an unclosed block);
- PM402 an unknown filter or test, with a close match when there is one;
- PM405 something the sandbox forbids: `_`-prefixed attributes or keys,
  `include`/`import`/`extends`, `self`, `cycler`, `joiner`, `namespace`,
  `lipsum`, `config`, `str.format` fields that reach for `_` names, and calls
  of methods that change their object (`append`, `update`, `pop`, ...: the
  immutable sandbox refuses them on every list, dict and set, so such a
  template could never render).

A name a template sets itself (`{% set %}`, also inside an `{% if %}` or
`{% for %}` block) and reads only after setting it in the same block is a
local, not an input.

Positions inside the template are mapped to file positions by the caller's
`locate(line, col)` (the loader's `Document.text_pos`).
"""

from __future__ import annotations

import re
import string
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from jinja2 import Environment, TemplateSyntaxError, meta, nodes

from ..core.diagnostics import Diagnostic, Position
from ..core.errors import RenderError
from ..core.fieldnames import split_field_name
from ..core.suggest import did_you_mean, nearest
from ..runtime.jinja import sandbox

__all__ = ["FORBIDDEN_NAMES", "TemplateInfo", "check_template", "render_static"]

FORBIDDEN_NAMES = frozenset({"self", "cycler", "joiner", "namespace", "lipsum", "config"})
_BLOCK_TAGS = frozenset({"for", "if", "macro", "call", "filter", "block", "with", "autoescape", "set"})
# Filters whose constant arguments name attributes (dotted paths allowed).
_ATTRIBUTE_ARG0 = frozenset({"attr", "selectattr", "rejectattr", "groupby"})
# Methods the immutable sandbox refuses on lists, dicts, sets and deques (jinja2.sandbox's
# mutable spec); no string, number or other state value has a method of these names.
MUTATING_METHODS = frozenset(
    {
        "append",
        "extend",
        "insert",
        "pop",
        "remove",
        "reverse",
        "sort",
        "clear",  # list
        "popitem",
        "setdefault",
        "update",  # dict
        "add",
        "discard",
        "difference_update",
        "intersection_update",
        "symmetric_difference_update",  # set
        "appendleft",
        "extendleft",
        "popleft",
        "rotate",  # deque
    }
)
_INCLUDES: dict[type[nodes.Node], str] = {
    nodes.Include: "include",
    nodes.Import: "import",
    nodes.FromImport: "from ... import",
    nodes.Extends: "extends",
}

Locate = Callable[[int, int], Position]


@dataclass(frozen=True)
class TemplateInfo:
    """What a template reads and uses, for the compiler's cross-checks."""

    variables: frozenset[str]  # context names read (not set by the template itself)
    paths: frozenset[tuple[str, ...]]  # e.g. ("subtask", "id"); best effort
    filters: frozenset[str]
    tests: frozenset[str]
    static: bool  # no variables: renderable at compile time
    tree: nodes.Template | None = field(default=None, compare=False, repr=False)  # for later checks


def check_template(source: str, locate: Locate, *, what: str = "template") -> tuple[TemplateInfo | None, list[Diagnostic]]:
    """Check one template; the info is None when it does not parse."""
    env = _analysis_environment()
    lines = re.split(r"\r\n|\r|\n", source)
    try:
        tree = env.parse(source)
    except TemplateSyntaxError as exc:
        return None, [_syntax_diagnostic(exc, source, lines, locate, what)]
    diags: list[Diagnostic] = []
    filters = frozenset(f.name for f in tree.find_all(nodes.Filter))
    tests = frozenset(t.name for t in tree.find_all(nodes.Test))
    diags.extend(_unknown_names(tree, lines, locate, what))
    diags.extend(_unsafe(tree, lines, locate, what))
    try:
        undeclared = meta.find_undeclared_variables(tree)
    except TemplateSyntaxError as exc:
        return None, [*diags, _syntax_diagnostic(exc, source, lines, locate, what)]
    if not diags:
        try:  # what only code generation notices (duplicate blocks, assigning `loop`)
            sandbox.environment().compile(source)
        except TemplateSyntaxError as exc:
            return None, [_syntax_diagnostic(exc, source, lines, locate, what)]
    variables = frozenset(undeclared - set(sandbox.environment().globals) - FORBIDDEN_NAMES - {"loop"} - _block_locals(tree))
    info = TemplateInfo(
        variables=variables,
        paths=frozenset(_paths(tree, variables)),
        filters=filters,
        tests=tests,
        static=not variables,
        tree=tree,
    )
    return info, diags


def render_static(source: str) -> str:
    """Render a template without variables at compile time; raises `RenderError`."""
    try:
        template = sandbox.compile_template(source)
    except TemplateSyntaxError as exc:
        raise RenderError(f"line {exc.lineno}: {exc.message}") from exc
    return sandbox.render(template, {})


class _Permissive(dict[str, Any]):
    """Filters/tests for analysis: unknown names resolve, so analysis can go on."""

    def get(self, key: str, default: Any = None) -> Any:
        return super().get(key, _unknown)


def _unknown(*args: Any, **kwargs: Any) -> Any:
    raise RuntimeError("unknown filter or test")  # constant folding gives up quietly


_ANALYSIS: list[Environment] = []


def _analysis_environment() -> Environment:
    if not _ANALYSIS:
        env = sandbox.environment().overlay()
        env.filters = _Permissive(sandbox.environment().filters)
        env.tests = _Permissive(sandbox.environment().tests)
        _ANALYSIS.append(env)
    return _ANALYSIS[0]


def _at(locate: Locate, lines: list[str], line: int, pattern: str | None) -> Position:
    col = 1
    if pattern and 1 <= line <= len(lines):
        match = re.search(pattern, lines[line - 1])
        if match:
            col = match.start() + 1
    return locate(max(line, 1), col)


# -- syntax ---------------------------------------------------------------


def _syntax_diagnostic(exc: TemplateSyntaxError, source: str, lines: list[str], locate: Locate, what: str) -> Diagnostic:
    message = exc.message or "invalid syntax"
    line = exc.lineno or 1
    pattern = None
    stack, stray = _open_blocks(source)
    unknown = re.match(r"Encountered unknown tag '(\w+)'", message)
    if message.startswith("Unexpected end of template") and stack:
        tag, opened = stack[-1]
        message = f"unclosed {{% {tag} %}} block opened on line {opened}: expected {{% end{tag} %}}"
    elif unknown and stray is not None and stray[0] == unknown[1]:
        name, line = stray
        pattern = rf"\{{%[-+]?\s*{name}\b"
        if stack:
            tag, opened = stack[-1]
            message = f"unexpected {{% {name} %}}: the {{% {tag} %}} block opened on line {opened} is still open; expected {{% end{tag} %}}"
        else:
            message = f"unexpected {{% {name} %}}: no open block to close"
    elif unknown:
        pattern = rf"\{{%[-+]?\s*{unknown[1]}\b"
        message = f"unknown tag {{% {unknown[1]} %}}"
    return Diagnostic.at(_at(locate, lines, line, pattern), "PM401", f"{what}: {message}")


def _open_blocks(source: str) -> tuple[list[tuple[str, int]], tuple[str, int] | None]:
    """Blocks still open at the first stray `end` tag (or at the end), and that tag."""
    try:
        tokens = [t for t in sandbox.environment().lex(source) if t[1] != "whitespace"]
    except TemplateSyntaxError:
        return [], None
    stack: list[tuple[str, int]] = []
    for i, (line, kind, value) in enumerate(tokens):
        if kind != "name" or i == 0 or tokens[i - 1][1] != "block_begin":
            continue
        if value.startswith("end"):
            if stack and stack[-1][0] == value[3:]:
                stack.pop()
            else:
                return stack, (value, line)
        elif value in _BLOCK_TAGS and not (value == "set" and _inline_set(tokens, i)):
            stack.append((value, line))
    return stack, None


def _inline_set(tokens: list[tuple[int, str, str]], start: int) -> bool:
    for _, kind, value in tokens[start + 1 :]:
        if kind == "block_end":
            return False
        if kind == "operator" and value == "=":
            return True
    return False


# -- filters, tests, sandbox rules ------------------------------------------


def _unknown_names(tree: nodes.Template, lines: list[str], locate: Locate, what: str) -> Iterator[Diagnostic]:
    for node in tree.find_all((nodes.Filter, nodes.Test)):
        is_filter = isinstance(node, nodes.Filter)
        known = sandbox.FILTERS if is_filter else sandbox.TESTS
        if node.name in known:
            continue
        kind = "filter" if is_filter else "test"
        message = f"{what}: unknown {kind} '{node.name}'"
        close = nearest(node.name, sorted(known))
        if close:
            message += "; " + did_you_mean(close)
        name = re.escape(node.name)
        pattern = rf"(?:\||filter\s)\s*{name}\b" if is_filter else rf"\bis\s+(?:not\s+)?{name}\b"
        yield Diagnostic.at(_at(locate, lines, node.lineno, pattern), "PM402", message)


def _unsafe(tree: nodes.Template, lines: list[str], locate: Locate, what: str) -> Iterator[Diagnostic]:
    def diag(node: nodes.Node, pattern: str | None, message: str, hint: str | None = None) -> Diagnostic:
        return Diagnostic.at(_at(locate, lines, node.lineno, pattern), "PM405", f"{what}: {message}", hint=hint)

    private = "names starting with '_' are private; the sandbox blocks them"
    for node in tree.find_all(nodes.Node):
        if isinstance(node, nodes.Getattr) and node.attr.startswith("_"):
            yield diag(node, rf"\.\s*{re.escape(node.attr)}", f"reads attribute '{node.attr}': {private}")
        elif isinstance(node, nodes.Getitem) and _const_str(node.arg, "_"):
            yield diag(node, r"\[", f"reads key {node.arg.value!r}: {private}")  # type: ignore[attr-defined]
        elif isinstance(node, nodes.Filter):
            for name in _attribute_args(node):
                if any(part.startswith("_") for part in name.split(".")):
                    yield diag(node, rf"\|\s*{node.name}\b", f"|{node.name} reads attribute {name!r}: {private}")
        elif type(node) in _INCLUDES:
            tag = _INCLUDES[type(node)]
            yield diag(
                node,
                rf"\{{%[-+]?\s*{tag.split()[0]}\b",
                f"uses {{% {tag} %}}: templates cannot include files",
                hint="put shared text in a `fragment:` and inject it through the role's `context`",
            )
        elif isinstance(node, nodes.Name) and node.ctx == "load" and node.name in FORBIDDEN_NAMES:
            yield diag(node, rf"\b{node.name}\b", f"uses '{node.name}', which templates cannot reach (sandbox)")
        elif isinstance(node, nodes.Call) and isinstance(node.node, nodes.Getattr) and node.node.attr in MUTATING_METHODS:
            method = node.node.attr
            yield diag(
                node,
                rf"\.\s*{method}\s*\(",
                f"calls .{method}(), which changes its object: "
                "the sandbox refuses it on every list, dict and set, so every render would fail",
                hint="build a new value instead (a + [b], dict(a, k=v), filters such as map/select), "
                "or shape the data before it reaches the state",
            )
        elif isinstance(node, nodes.Call) and isinstance(node.node, nodes.Getattr):
            target = node.node
            if target.attr in ("format", "format_map") and _const_str(target.node, ""):
                for field in _private_format_fields(target.node.value):  # type: ignore[attr-defined]
                    yield diag(node, None, f"format field {{{field}}} reaches a private name: {private}")


def _const_str(node: nodes.Node, prefix: str) -> bool:
    return isinstance(node, nodes.Const) and isinstance(node.value, str) and node.value.startswith(prefix)


def _attribute_args(node: nodes.Filter) -> Iterator[str]:
    if node.name in _ATTRIBUTE_ARG0 and node.args and _const_str(node.args[0], ""):
        yield node.args[0].value  # type: ignore[attr-defined]
    if node.name == "map" and len(node.args) > 1 and _const_str(node.args[0], "attr"):
        if _const_str(node.args[1], ""):
            yield node.args[1].value  # type: ignore[attr-defined]
    for kw in node.kwargs:
        if kw.key == "attribute" and _const_str(kw.value, ""):
            yield kw.value.value  # type: ignore[attr-defined]


def _private_format_fields(fmt: str) -> Iterator[str]:
    try:
        fields = [f for _, f, _, _ in string.Formatter().parse(fmt) if f]
        for field in fields:
            first, rest = split_field_name(field)
            if str(first).startswith("_") or any(str(key).startswith("_") for _, key in rest):
                yield field
    except ValueError:
        return


# -- what the template reads ---------------------------------------------------


def _block_locals(tree: nodes.Template) -> set[str]:
    """Names Jinja counts as undeclared only because they are set inside a block
    (`{% if %}`, `{% for %}`, ...): set there and read only after being set, in that
    block or one inside it. A name also read where no `set` has run is left alone."""
    stored: set[str] = set()
    read_unset: set[str] = set()

    def targets(node: nodes.Node) -> set[str]:
        return {n.name for n in node.find_all(nodes.Name) if n.ctx in ("store", "param")} | (
            {node.name} if isinstance(node, nodes.Name) and node.ctx in ("store", "param") else set()
        )

    def walk(node: nodes.Node, local: set[str]) -> None:
        """Visit `node` in source order; `local` grows with names set in this block."""
        if isinstance(node, nodes.Name):
            if node.ctx == "load" and node.name not in local:
                read_unset.add(node.name)
            return
        if isinstance(node, nodes.Assign):
            walk(node.node, local)
            names = targets(node.target)
            stored.update(names)
            local.update(names)
            return
        if isinstance(node, nodes.AssignBlock):
            for child in node.body:
                walk(child, set(local))
            names = targets(node.target)
            stored.update(names)
            local.update(names)
            return
        if isinstance(node, nodes.If):
            walk(node.test, local)
            for elif_ in node.elif_:
                walk(elif_.test, local)
            for branch in (node.body, *(e.body for e in node.elif_), node.else_):
                inner = set(local)
                for child in branch:
                    walk(child, inner)
            return
        if isinstance(node, nodes.For):
            walk(node.iter, local)
            inner = local | targets(node.target) | {"loop"}
            if node.test is not None:
                walk(node.test, set(inner))
            body = set(inner)
            for child in node.body:
                walk(child, body)
            for child in node.else_:
                walk(child, set(local))
            return
        for child in node.iter_child_nodes():
            walk(child, local)

    for child in tree.body:
        walk(child, set())
    return stored - read_unset


def _paths(tree: nodes.Template, variables: frozenset[str]) -> set[tuple[str, ...]]:
    """Attribute/constant-key chains rooted at context variables (best effort)."""
    found: set[tuple[str, ...]] = set()

    def visit(node: nodes.Node, in_chain: bool) -> None:
        if isinstance(node, nodes.Call) and isinstance(node.node, nodes.Getattr):
            # x.items(): record x's path; the method name is not a key
            visit(node.node.node, False)
            for child in node.iter_child_nodes():
                if child is not node.node:
                    visit(child, False)
            return
        if not in_chain and isinstance(node, (nodes.Getattr, nodes.Getitem, nodes.Name)):
            path = _chain(node)
            if path and path[0] in variables:
                found.add(path)
        chained = isinstance(node, (nodes.Getattr, nodes.Getitem))
        for child in node.iter_child_nodes():
            visit(child, chained and child is node.node)  # type: ignore[attr-defined]

    visit(tree, False)
    return found


def _chain(node: nodes.Node) -> tuple[str, ...] | None:
    parts: list[str] = []
    while True:
        if isinstance(node, nodes.Getattr):
            parts.append(node.attr)
        elif isinstance(node, nodes.Getitem):
            if isinstance(node.arg, nodes.Const) and isinstance(node.arg.value, str):
                parts.append(node.arg.value)
            else:
                parts = []  # an index or computed key: the path stops before it
        elif isinstance(node, nodes.Name):
            return (node.name, *reversed(parts)) if node.ctx == "load" else None
        else:
            return None
        node = node.node
