"""Fast JSON Schema (draft 2020-12) validation of render state.

A `Validator` compiles its schema once into closures (`closures.py`) and
answers `is_valid` without jsonschema. Its answer is exactly jsonschema's
`Draft202012Validator(schema).is_valid` (format checking off). Only when an
instance is invalid does `errors()` import jsonschema, to list every failure as
a short `(state path, message)` pair. A schema that uses something the closures
cannot decide exactly (unevaluated*, `$dynamicRef`, remote, anchor or
`$id`-relative refs) is validated by jsonschema throughout, and `fast` is False.

Lazy paths name arrays (by property names from the root) whose items the root
checks skip; callers check each item with `item_valid` when they need it.

This module is on the runtime path: it never imports yaml, and imports
jsonschema only to explain failures or for schemas without a fast form.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from .closures import Check, Compiler, Unsupported, resolve_pointer
from .state_errors import explain, explainable

Path = tuple[str, ...]


class Validator:
    """A compiled validator for one schema."""

    def __init__(self, schema: dict, *, lazy_paths: Iterable[tuple[str, ...]] = ()) -> None:
        self.schema = schema
        self._items: dict[Path, Any] = {}
        for path in lazy_paths:
            path = tuple(path)
            self._items[path] = _lazy_array(schema, path).get("items", True)
        self._root = _skip_items(schema, self._items)
        self._check: Check | None = None
        self._item_checks: dict[Path, Check] = {}
        try:
            compiler = Compiler(schema, roots=(self._root,))
            self._check = compiler.compile(self._root)
            self._item_checks = {p: compiler.compile(s) for p, s in self._items.items()}
        except Unsupported:
            self._check = None
        self._slow_root: Any = None  # jsonschema validators, made on first need
        self._slow_items: dict[Path, Any] = {}

    @property
    def fast(self) -> bool:
        """False when some keyword forced the jsonschema fallback anywhere."""
        return self._check is not None

    def is_valid(self, instance: Any) -> bool:
        """Whether `instance` is valid, not looking inside lazy arrays' items."""
        check = self._check
        if check is not None:
            return check(instance)
        return self._slow().is_valid(instance)

    def errors(self, instance: Any, root: str = "state") -> list[tuple[str, str]]:
        """Every failure as `(path, message)`, e.g. `("state.subtask.id", "is required")`.

        Lazy arrays' items are not looked at. Sorted by path, then message.
        """
        return explain(self._slow().iter_errors(instance), root, ())

    def item_valid(self, lazy_path: tuple[str, ...], item: Any) -> bool:
        """Whether one item of the lazy array at `lazy_path` is valid."""
        path = tuple(lazy_path)
        if path not in self._items:
            raise ValueError(f"{path!r} is not one of this validator's lazy paths")
        if self._check is not None:
            return self._item_checks[path](item)
        return self._slow(path).is_valid(item)

    def item_schema(self, lazy_path: tuple[str, ...]) -> Any:
        """The schema each item of the lazy array at `lazy_path` is checked against."""
        return self._items[tuple(lazy_path)]

    def item_errors(self, lazy_path: tuple[str, ...], index: int, item: Any, root: str = "state") -> list[tuple[str, str]]:
        """The failures of item `index` of the lazy array, e.g. `("state.memory[7].type", ...)`."""
        path = tuple(lazy_path)
        if path not in self._items:
            raise ValueError(f"{path!r} is not one of this validator's lazy paths")
        return explain(self._slow(path).iter_errors(item), root, (*path, index))

    def _slow(self, lazy_path: Path | None = None) -> Any:
        """The jsonschema validator for the root (or a lazy array's items); refs see the whole schema."""
        if self._slow_root is None:
            from jsonschema import Draft202012Validator

            document = explainable(self.schema)
            whole = Draft202012Validator(document)
            self._slow_items = {p: whole.evolve(schema=_lazy_array(document, p).get("items", True)) for p in self._items}
            self._slow_root = whole.evolve(schema=_skip_items(document, self._items))
        return self._slow_root if lazy_path is None else self._slow_items[lazy_path]


def _lazy_array(schema: Any, path: Path) -> dict:
    """The array schema at `path` (plain `properties` steps), or ValueError."""
    node = schema
    for depth, name in enumerate(path):
        props = node.get("properties") if isinstance(node, dict) else None
        if not isinstance(props, dict) or name not in props:
            where = ".".join(path[:depth]) or "the root"
            raise ValueError(f"lazy path {path!r}: {where} declares no property {name!r}")
        node = props[name]
        if isinstance(node, dict) and "$id" in node:
            raise ValueError(f"lazy path {path!r} passes through a nested $id")
    kinds = node.get("type") if isinstance(node, dict) else None
    kinds = [kinds] if isinstance(kinds, str) else kinds
    is_array = isinstance(node, dict) and ((isinstance(kinds, list) and "array" in kinds) or (kinds is None and "items" in node))
    if not is_array:
        raise ValueError(f"lazy path {path!r} does not lead to an array schema")
    if "prefixItems" in node:
        raise ValueError(f"lazy path {path!r}: arrays with prefixItems cannot be lazy")
    items = node.get("items", True)
    if isinstance(items, dict) and "$id" in items:
        raise ValueError(f"lazy path {path!r}: items with a $id cannot be lazy")
    return node


def _skip_items(schema: Any, paths: Iterable[Path]) -> Any:
    """A copy of `schema` whose lazy arrays have `items: true`; the rest is shared."""
    copies: dict[Path, dict] = {}

    def copy_at(path: Path) -> dict:
        if path in copies:
            return copies[path]
        if not path:
            node = dict(schema)
        else:
            parent = copy_at(path[:-1])
            props = parent["properties"] = dict(parent["properties"])
            node = props[path[-1]] = dict(props[path[-1]])
        copies[path] = node
        return node

    for path in paths:
        copy_at(path)["items"] = True
    return copies.get((), schema)


def check_schema(schema: dict) -> list[tuple[str, str]]:
    """Problems with `schema` as a draft 2020-12 schema: `(JSON pointer in the schema, message)`.

    Checks the metaschema, with the `regex` format asserted (patterns must
    compile as Python regexes; other formats such as uri are not asserted), and
    that local `$ref`s resolve. A valid schema is recognised without jsonschema
    (`metaschema.is_schema`, microseconds: state-supplied tool schemas are checked
    on every render); jsonschema is imported only to explain a failure.
    `[]` when the schema is fine.
    """
    from .metaschema import scan

    valid, has_refs = scan(schema)
    if valid and (not has_refs or not _unresolved_refs(schema)):
        return []
    from jsonschema import Draft202012Validator, FormatChecker
    from jsonschema.exceptions import best_match

    meta = Draft202012Validator(Draft202012Validator.META_SCHEMA, format_checker=FormatChecker(formats=("regex",)))
    found = set()
    for error in meta.iter_errors(schema):
        error = best_match([error])
        # `type: strng` fails an anyOf; its enum branch says what would do
        error = next((e for e in error.context if e.validator == "enum"), error)
        found.add((_pointer(error.absolute_path), error.message))
    found.update(_unresolved_refs(schema))
    return sorted(found)


def _pointer(parts: Iterable[Any]) -> str:
    return "".join("/" + str(p).replace("~", "~0").replace("/", "~1") for p in parts)


_DATA_KEYWORDS = frozenset({"enum", "const", "default", "examples"})


def _unresolved_refs(schema: Any) -> list[tuple[str, str]]:
    """Local `$ref`s whose JSON pointer leads nowhere in `schema`."""
    problems = []
    stack: list[tuple[Any, tuple]] = [(schema, ())]
    while stack:
        node, where = stack.pop()
        if isinstance(node, dict):
            ref = node.get("$ref")
            if isinstance(ref, str) and ref.startswith("#/"):
                try:
                    resolve_pointer(schema, ref)
                except LookupError:
                    problems.append((_pointer((*where, "$ref")), f"$ref {ref!r} points nowhere"))
                except Unsupported:
                    pass
            stack.extend((v, (*where, k)) for k, v in node.items() if k not in _DATA_KEYWORDS)
        elif isinstance(node, list):
            stack.extend((v, (*where, i)) for i, v in enumerate(node))
    return problems
