"""PM409: keys a template reads that the role's inputs schema does not declare.

`{{ customer.nme }}` passes the top-level check (`customer` is declared) and
fails only at render time. This check follows attribute and constant-key
chains (`customer.address.city`, `customer["name"]`, `orders[0].total`)
through the inputs schema: `properties` of objects, `items` of arrays. The
item variable of an `each:` section starts at the array's `items`, and so
does the variable of a `{% for x in list %}` loop over a declared array
(also through `sort`, `reverse` and other filters that keep the items).

It reports only what is certain. A chain is followed while every object on
it is a plain schema: `properties` given (keys in `required` count too),
`type` object (or absent), no `$ref`, `allOf`/`anyOf`/`oneOf`, `if`, `patternProperties`,
`dependentSchemas`, `unevaluatedProperties`, and `additionalProperties`
absent, `true` or `false`. Anything else ends the chain silently, as do dict
methods (`x.items()`, `x.get`), computed keys, recursive loops and names the
template assigns itself. A missing key is a warning (declare it), or an error
when the object sets `additionalProperties: false` (it can never be there).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping
from typing import Any, NamedTuple

from jinja2 import TemplateSyntaxError, nodes

from ..compose.model import SectionDef
from ..core.diagnostics import Diagnostic, Position
from ..core.suggest import did_you_mean, suggest
from .templates import _analysis_environment

__all__ = ["Binding", "item_binding", "missing_item_key", "plain_value", "template_names", "undeclared_keys"]

Locate = Callable[[int, int], Position]

# Attributes Jinja finds on a dict before its keys (x.items is the method).
DICT_METHODS = frozenset(name for name in dir(dict) if not name.startswith("_"))
# Keywords that can admit keys `properties` does not list.
_OPEN = frozenset(
    {
        "$ref", "$dynamicRef", "$recursiveRef", "allOf", "anyOf", "oneOf", "if", "then", "else",
        "patternProperties", "dependentSchemas", "dependencies", "unevaluatedProperties",
    }
)  # fmt: skip
# Filters whose output has the items of their input (for the loop variable).
_SAME_ITEMS = frozenset({"sort", "reverse", "list", "unique", "select", "reject", "selectattr", "rejectattr"})
_SHOWN_KEYS = 8


class Binding(NamedTuple):
    """A template name whose value is described by `schema`; `label` names it for messages."""

    schema: Any
    label: str  # e.g. "customer", "memory[]" (an item of memory)


class _Key(NamedTuple):
    name: str
    node: nodes.Node
    subscript: bool  # x["name"], not x.name


class _Index(NamedTuple):
    node: nodes.Node


def item_binding(declared: Mapping[str, Any], path: str) -> Binding | None:
    """The item of the array at `path` (an `each:` path) in the inputs, when its schema is known."""
    schema: Any = {"properties": dict(declared)}
    for part in path.split("."):
        props = _object(schema)
        if props is None or part not in props[0]:
            return None
        schema = props[0][part]
    items = _items(schema)
    return None if items is None else Binding(items, f"{path}[]")


def missing_item_key(item: Binding, key: str) -> tuple[str, list[str], bool] | None:
    """The first key of the dotted `key` (an `order_by` key) the item schema certainly lacks.

    Returns (that key, the keys declared beside it, closed), or None when the key is
    declared or the schema leaves it open (the rules of the module docstring).
    """
    _, missing = _follow(item, [_Key(part, nodes.Const(part), True) for part in key.split(".")])
    if missing is None:
        return None
    step, props, closed = missing
    return step.name, sorted(props), closed


def undeclared_keys(
    source: str,
    locate: Locate,
    bindings: Mapping[str, Binding],
    *,
    what: str = "template",
    tree: nodes.Template | None = None,
) -> list[Diagnostic]:
    """PM409 diagnostics for keys read through `bindings` (context names -> schemas).

    `tree` is the parsed `source` when the caller has it (else it is parsed here).
    """
    if not any(re.search(_start(n, b), source) for n, b in bindings.items()):
        return []  # nothing here can start a chain worth following: skip the parse
    if tree is None:
        try:
            tree = _analysis_environment().parse(source)
        except TemplateSyntaxError:
            return []  # PM401 is reported by check_template
    assigned = _assigned(tree)
    scope = {name: b for name, b in bindings.items() if name not in assigned}
    out: list[Diagnostic] = []
    seen: set[tuple[str, str]] = set()
    for binding, steps, key, props, closed in _findings(tree, scope, assigned):
        if (binding.label, key.name) in seen:
            continue
        seen.add((binding.label, key.name))
        out.append(_diagnostic(source, locate, what, binding, steps, key, props, closed))
    return out


_PLAIN_TYPES = frozenset({"integer", "number", "boolean", "null"})
_MARKUP_CHARS = re.compile(r"[<>&\"']")


def plain_value(expr: nodes.Node, bindings: Mapping[str, Binding], shadowed: set[str]) -> bool:
    """True when `expr` reads a value that the inputs schema pins to plain text.

    That is a number, a boolean or null (`type`), or one of an `enum`/`const`
    of such values and of strings without markup characters (`<>&"'`). The
    state is validated against the schema before it is rendered, so printing
    such a value can never open or close markup. Names in `shadowed` (assigned
    or bound by the template itself) are not the inputs and are never plain.
    """
    chain = _chain(expr)
    if chain is None or chain[0] in shadowed or chain[0] not in bindings:
        return False
    resolved, _ = _follow(bindings[chain[0]], chain[1])
    schema = None if resolved is None else resolved.schema
    if not isinstance(schema, dict) or _OPEN & schema.keys():
        return False
    if "const" in schema or "enum" in schema:
        values = [schema["const"]] if "const" in schema else schema["enum"]
        return isinstance(values, list) and all(
            v is None or type(v) in (bool, int, float) or (type(v) is str and not _MARKUP_CHARS.search(v)) for v in values
        )
    kinds = schema.get("type")
    kinds = kinds if isinstance(kinds, list) else [kinds]
    return all(isinstance(k, str) and k in _PLAIN_TYPES for k in kinds)


def template_names(tree: nodes.Template) -> set[str]:
    """Every name the template binds itself: `set`, loop targets, macro and call parameters."""
    return {n.name for n in tree.find_all(nodes.Name) if n.ctx in ("store", "param")}


def _start(name: str, binding: Binding) -> str:
    """A pattern for where a chain through `binding` may start: an array as a loop's list too."""
    if _items(binding.schema) is not None:
        return rf"(?<![\w.]){re.escape(name)}\b"
    return rf"(?<![\w.]){re.escape(name)}\s*[.\[]" if _object(binding.schema) else r"(?!)"


# -- walking the template ---------------------------------------------------


def _assigned(tree: nodes.Template) -> set[str]:
    """Names the template binds itself, other than as the one name of a for loop."""
    loop_targets: set[int] = set()
    stored: list[nodes.Name] = []
    for node in tree.find_all((nodes.For, nodes.Name)):  # a loop comes before its target
        if isinstance(node, nodes.For):
            loop_targets.add(id(node.target))
        elif isinstance(node, nodes.Name) and node.ctx != "load":
            stored.append(node)
    return {n.name for n in stored if id(n) not in loop_targets}


_Missing = tuple[_Key, dict[str, Any], bool]  # the key, the keys declared there, closed
_Finding = tuple[Binding, list[Any], _Key, dict[str, Any], bool]


def _findings(node: nodes.Node, scope: dict[str, Binding], assigned: set[str], in_chain: bool = False) -> Iterator[_Finding]:
    """Missing keys under `node`; `scope` maps names to what they hold there."""
    if isinstance(node, nodes.For):
        yield from _findings(node.iter, scope, assigned)
        inner = dict(scope)  # a tuple target's names are in `assigned`, never in a scope
        if isinstance(node.target, nodes.Name):
            name = node.target.name
            binding = None if node.recursive or name in assigned else _loop_binding(node.iter, scope)
            if binding is None:
                inner.pop(name, None)  # it shadows an input of the same name
            else:
                inner[name] = binding
        for child in ([node.test] if node.test else []) + node.body:
            yield from _findings(child, inner, assigned)
        for child in node.else_:
            yield from _findings(child, scope, assigned)
        return
    if isinstance(node, nodes.Call) and isinstance(node.node, nodes.Getattr):
        # x.get("k"), x.name.upper(): the method name is not a key; x is read
        yield from _findings(node.node.node, scope, assigned)
        for child in node.iter_child_nodes():
            if child is not node.node:
                yield from _findings(child, scope, assigned)
        return
    if not in_chain and isinstance(node, (nodes.Getattr, nodes.Getitem)):
        chain = _chain(node)
        if chain is not None and chain[0] in scope:
            binding = scope[chain[0]]
            _, found = _follow(binding, chain[1])
            if found is not None:
                yield (binding, chain[1], *found)
    chained = isinstance(node, (nodes.Getattr, nodes.Getitem))
    for child in node.iter_child_nodes():
        yield from _findings(child, scope, assigned, chained and child is node.node)  # type: ignore[attr-defined]


def _chain(node: nodes.Node) -> tuple[str, list[_Key | _Index]] | None:
    """The root name and the steps of an attribute/subscript chain, or None."""
    steps: list[_Key | _Index] = []
    while True:
        if isinstance(node, nodes.Getattr):
            steps.append(_Key(node.attr, node, False))
        elif isinstance(node, nodes.Getitem):
            arg = node.arg
            if isinstance(arg, nodes.Const) and isinstance(arg.value, str):
                steps.append(_Key(arg.value, node, True))
            elif isinstance(arg, nodes.Slice):
                return None
            else:
                steps.append(_Index(node))
        elif isinstance(node, nodes.Name):
            return (node.name, steps[::-1]) if node.ctx == "load" else None
        else:
            return None
        node = node.node


def _loop_binding(iterable: nodes.Node, scope: dict[str, Binding]) -> Binding | None:
    while isinstance(iterable, nodes.Filter) and iterable.name in _SAME_ITEMS and iterable.node is not None:
        iterable = iterable.node
    chain = _chain(iterable)
    binding = scope.get(chain[0]) if chain else None
    if chain is None or binding is None:
        return None
    resolved, _ = _follow(binding, chain[1])
    items = None if resolved is None else _items(resolved.schema)
    if resolved is None or items is None:
        return None
    return Binding(items, resolved.label + "[]")


def _follow(binding: Binding, steps: list[Any]) -> tuple[Binding | None, _Missing | None]:
    """Follow a chain through the schema: (where it leads, the first key certainly missing).

    Both are None where the schema stops being certain (or Jinja finds a dict method).
    """
    schema, label = binding.schema, binding.label
    for step in steps:
        if isinstance(step, _Index):
            schema, label = _items(schema), label + "[]"
        else:
            obj = _object(schema)
            if obj is None:
                return None, None
            props, closed = obj
            if step.name in DICT_METHODS and (not step.subscript or step.name not in props):
                return None, None  # x.items is the method even when `items` is a key
            if step.name not in props:
                return None, (step, props, closed)
            schema, label = props[step.name], f"{label}.{step.name}"
        if schema is None:
            return None, None
    return Binding(schema, label), None


# -- reading the schema ---------------------------------------------------------


def _object(schema: Any) -> tuple[dict[str, Any], bool] | None:
    """(declared keys -> schema, closed) of an object schema whose keys are certain, else None."""
    if not isinstance(schema, dict) or _OPEN & schema.keys() or not _typed(schema, "object"):
        return None
    props = schema.get("properties", {})
    required = schema.get("required", [])
    if not isinstance(props, dict) or not isinstance(required, list):
        return None
    if schema.get("additionalProperties") is True:
        return None  # extra keys declared welcome: reading one is deliberate
    extra = schema.get("additionalProperties", True)
    if not isinstance(extra, bool) or not (props or extra is False):
        return None  # a schema for the other keys, or no properties declared at all
    keys = {k: True for k in required if isinstance(k, str)} | props
    return keys, extra is False


def _items(schema: Any) -> Any:
    """The schema of every item of an array schema, or None."""
    if not isinstance(schema, dict) or _OPEN & schema.keys() or "prefixItems" in schema or not _typed(schema, "array"):
        return None
    items = schema.get("items")
    return items if isinstance(items, dict) else None


def _typed(schema: dict[str, Any], kind: str) -> bool:
    declared = schema.get("type", kind)
    kinds = declared if isinstance(declared, list) else [declared]
    return kind in kinds and all(k in (kind, "null") for k in kinds)


# -- reporting -----------------------------------------------------------------------


def _diagnostic(
    source: str,
    locate: Locate,
    what: str,
    binding: Binding,
    steps: list[Any],
    key: _Key,
    props: dict[str, Any],
    closed: bool,
) -> Diagnostic:
    upto = steps[: next(i for i, step in enumerate(steps) if step is key) + 1]
    root = _root_name(key.node)
    written = root + "".join(_written(s) for s in upto)
    owner = root + "".join(_written(s) for s in upto[:-1])
    message = f"{what} reads '{written}', but the inputs schema of '{owner}' declares no key '{key.name}'"
    names = sorted(props)
    close = suggest(key.name, names)
    if closed:
        message += " and sets additionalProperties: false, so it is never there"
    if binding.label.endswith("[]"):  # an each: item or a loop variable
        message += f" ('{root}' is an item of '{binding.label[:-2]}')"
    if close:
        hint = did_you_mean([close])
    elif closed:
        shown = ", ".join(f"'{n}'" for n in names[:_SHOWN_KEYS]) + (", ..." if len(names) > _SHOWN_KEYS else "")
        hint = f"its keys: {shown}" if names else "it has no keys"
    else:
        where = binding.label + "".join("[]" if isinstance(s, _Index) else f".{s.name}" for s in upto[:-1])
        hint = f"declare '{key.name}' among the properties of '{where}' in the role's inputs"
    return Diagnostic.at(_position(source, locate, root, upto, key), "PM409", message, hint=hint, severity="error" if closed else None)


def _root_name(node: nodes.Node) -> str:
    while isinstance(node, (nodes.Getattr, nodes.Getitem)):
        node = node.node
    return node.name if isinstance(node, nodes.Name) else "?"


def _written(step: Any) -> str:
    if isinstance(step, _Index):
        arg = step.node.arg  # type: ignore[attr-defined]
        return f"[{arg.value!r}]" if isinstance(arg, nodes.Const) else "[...]"
    return f'["{step.name}"]' if step.subscript else f".{step.name}"


def _position(source: str, locate: Locate, root: str, steps: list[Any], key: _Key) -> Position:
    """The file position of the missing key as written (the line of its node; column 1 if not found)."""
    parts = [rf"(?<![\w.]){re.escape(root)}"]
    for step in steps:
        if isinstance(step, _Index):
            parts.append(r"\s*\[[^\[\]]*\]")
        else:
            name = re.escape(step.name)
            last = step is steps[-1]
            keyed = f"(?P<key>{name})" if last else name
            quoted = f"(?P<key>['\"]{name}['\"])" if last else f"['\"]{name}['\"]"
            parts.append(rf"\s*\[\s*{quoted}\s*\]" if step.subscript else rf"\s*\.\s*{keyed}\b")
    line = key.node.lineno
    for pattern in ("".join(parts), parts[-1][3:]):  # the whole chain, else the key alone on its line
        for match in re.finditer(pattern, source):
            start = match.start("key")
            before = source[:start]
            if before.count("\n") + 1 == line:
                return locate(line, start - before.rfind("\n"))
    return locate(max(line, 1), 1)


def order_key_diagnostics(s: SectionDef, item: Binding, key: str) -> list[Diagnostic]:
    """PM409 when `order_by` names a key the items never have: every score would be absent."""
    missing = missing_item_key(item, key)
    if missing is None:
        return []
    name, declared, closed = missing
    close = suggest(name, declared)
    message = f"section '{s.id}' orders items by '{key}', but the inputs schema of '{item.label}' declares no key '{name}'"
    if closed:
        message += " and sets additionalProperties: false, so it is never there"
    message += ": items without a score come last, so the list keeps its own order"
    hint = did_you_mean([close]) if close else f"declare '{name}' (a number) among the properties of the items"
    at = s.pos("order_by", "key") if isinstance(s.get("order_by"), dict) else s.pos("order_by")
    return [Diagnostic.at(at, "PM409", message, hint=hint, severity="error" if closed else None)]
