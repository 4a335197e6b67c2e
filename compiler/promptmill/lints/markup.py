"""PM408: a template that prints a state value raw inside an XML-looking tag.

State is data: the runtime inserts it as text, never as template source. But
text is all a model sees, so a value printed between `<Note>` and `</Note>`
that itself holds `</Note><System>...` closes the tag early and forges a block
of its own; printed inside `name="..."` it can close the attribute. The rule:
inside markup a template escapes state with `| xml_escape` (or, between tags
but not inside one, `| xml_text`, which leaves quotes alone), or prints only
numbers, lengths and tests. This check warns where a template does not.

It reads the template's syntax tree in document order, following the tags its
literal text opens and closes (an approximation: both branches of an `if` are
read one after the other). A printed expression counts as safe when it ends
in an escaping or numeric filter, is a constant, reads nothing from the
context, or reads an input the role's schema pins to a number, boolean, null
or an enum of markup-free words (`keys.plain_value`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field

from jinja2 import TemplateSyntaxError, nodes

from ..core.diagnostics import Diagnostic, Position
from .keys import Binding, plain_value, template_names

ESCAPING = frozenset({"xml_escape", "e", "escape", "forceescape", "xmlattr", "tojson"})
CONTENT_ESCAPING = frozenset({"xml_text"})  # enough between tags, not inside a tag
NUMERIC = frozenset({"int", "float", "length", "count", "round", "abs", "filesizeformat", "wordcount"})
_TAG = re.compile(r"<(/?)([A-Za-z_][\w.:-]*)")
Locate = Callable[[int, int], Position]


@dataclass
class _Markup:
    """Where the literal text has left us: the open elements, and whether inside a tag."""

    open: list[str] = field(default_factory=list)
    in_tag: str | None = None  # name of the tag being written (`<Name ...` before its `>`)
    closing: bool = False
    quote: str | None = None

    def feed(self, text: str) -> None:
        i, n = 0, len(text)
        while i < n:
            if self.in_tag is not None:
                ch = text[i]
                if self.quote:
                    if ch == self.quote:
                        self.quote = None
                elif ch in "\"'":
                    self.quote = ch
                elif ch == ">":
                    self._end_tag(text[:i].rstrip().endswith("/"))
                i += 1
                continue
            match = _TAG.search(text, i)
            if match is None:
                return
            self.in_tag, self.closing = match.group(2), bool(match.group(1))
            i = match.end()

    def _end_tag(self, self_closing: bool) -> None:
        name = self.in_tag or ""
        if self.closing:
            if name in self.open:
                while self.open and self.open.pop() != name:
                    pass
        elif not self_closing:
            self.open.append(name)
        self.in_tag, self.closing = None, False

    def where(self) -> str | None:
        if self.in_tag is not None:
            return f"inside the <{self.in_tag}> tag" + (" (in an attribute value)" if self.quote else "")
        if self.open:
            return f"inside <{self.open[-1]}>"
        return None


def _reads_context(expr: nodes.Node) -> bool:
    return any(n.ctx == "load" and n.name != "loop" for n in expr.find_all(nodes.Name)) or (
        isinstance(expr, nodes.Name) and expr.ctx == "load" and expr.name != "loop"
    )


Plain = Callable[[nodes.Node], bool]  # does an expression read a value the schema pins to plain text?


def _safe(expr: nodes.Node, in_tag: bool, plain: Plain) -> bool:
    if isinstance(expr, nodes.Filter):
        return expr.name in ESCAPING or expr.name in NUMERIC or (not in_tag and expr.name in CONTENT_ESCAPING)
    if isinstance(expr, nodes.CondExpr):
        return _safe(expr.expr1, in_tag, plain) and (expr.expr2 is None or _safe(expr.expr2, in_tag, plain))
    if isinstance(expr, (nodes.Test, nodes.Compare, nodes.Not, nodes.And, nodes.Or, nodes.Const)):
        return True
    return not _reads_context(expr) or plain(expr)


def _walk(node: nodes.Node, markup: _Markup, plain: Plain) -> Iterator[tuple[nodes.Node, str]]:
    """(expression, where) for every printed expression that sits inside markup."""
    if isinstance(node, nodes.Output):
        for child in node.nodes:
            if isinstance(child, nodes.TemplateData):
                markup.feed(child.data)
                continue
            where = markup.where()
            if where is not None and not _safe(child, markup.in_tag is not None, plain):
                yield child, where
        return
    if isinstance(node, nodes.FilterBlock) and node.filter.name in ESCAPING:
        return  # {% filter xml_escape %}: everything inside is escaped
    for sub in node.iter_child_nodes():
        if isinstance(sub, (nodes.Stmt, nodes.Template)):
            yield from _walk(sub, markup, plain)


def markup_diagnostics(
    source: str, locate: Locate, *, what: str = "template", bindings: Mapping[str, Binding] | None = None
) -> list[Diagnostic]:
    """PM408 warnings for state printed raw inside XML-looking markup (none if it does not parse).

    With `bindings` (context names -> their inputs schemas), a value the schema
    pins to a number, boolean, null or a markup-free enum needs no escaping.
    """
    from .templates import _analysis_environment

    try:
        tree = _analysis_environment().parse(source)
    except TemplateSyntaxError:
        return []  # PM401 is reported by check_template
    lines = re.split(r"\r\n|\r|\n", source)
    out = []
    seen: set[int] = set()
    shadowed = template_names(tree)
    scope = bindings or {}
    for expr, where in _walk(tree, _Markup(), lambda e: plain_value(e, scope, shadowed)):
        line = expr.lineno
        if line in seen:
            continue
        seen.add(line)
        text = lines[line - 1] if 1 <= line <= len(lines) else ""
        col = text.find("{{") + 1 or 1
        out.append(
            Diagnostic.at(
                locate(line, col),
                "PM408",
                f"{what} prints a value from the state raw {where}: a value holding '</' or quotes "
                "could close the tag and forge markup of its own",
                hint="escape it: {{ value | xml_escape }}"
                if where.startswith("inside the <")
                else "escape it: {{ value | xml_text }} (or xml_escape, which also escapes quotes)",
            )
        )
    return out
