"""Memo of checked, rendered list items, addressed by their exact content.

An agent offers mostly the same memory entries and tool declarations turn
after turn. Checking an item (JSON data, the inputs schema, a tool's
parameter schema) and rendering it costs far more than recognising it, so a
render remembers what it produced for each item it checked and rendered: the
key is the item serialised with `marshal` (format 2, no back-references), which
is fast and type-exact (`True`, `1`, `1.0` and `"1"` all differ, as do a list
and a tuple), so equal keys mean equal content of the same types. Values that
`marshal` refuses (objects, dict subclasses, nesting past its depth limit) are
simply not memoised and take the normal path, which reports them.

Only items whose text is a function of the item alone are memoised (see
`item_only`), and only after the item passed the checks of a validated render,
so a hit is exactly what the normal path would have produced. The memo is
bounded like the count cache: two generations, each entry weighing its key and
text plus `ENTRY_COST`.
"""

from __future__ import annotations

import marshal
from typing import Any

from .cache import GenerationalCache

MAX_KEY_BYTES = 65_536  # an item serialising to more than this is not memoised
SANDBOX_GLOBALS = frozenset(
    {"range", "dict"}
)  # promptmill.runtime.jinja.sandbox's template globals (pure: a memoised template may use them)
IMPURE_FILTERS = frozenset({"random"})  # filters whose result is not a function of the input


def item_only(source: str, item_name: str) -> bool:
    """True when the per-item template `source` reads nothing but `item_name`
    (and pure globals): its text is then a function of the item alone."""
    from jinja2 import meta, nodes

    from .jinja.sandbox import environment

    try:
        tree = environment().parse(source)
    except Exception:  # a bundle's templates parse; never memoise if one does not
        return False
    if meta.find_undeclared_variables(tree) - {item_name} - SANDBOX_GLOBALS:
        return False
    return not any(f.name in IMPURE_FILTERS for f in tree.find_all(nodes.Filter))


def item_reads(kind: str, template: str | None, item_name: str, order_by: tuple[str, ...]) -> str:
    """What the per-item text of a list section (`each`, `tools`, `history`) reads (bundle.ITEM_READS):
    the compiler writes it into the bundle, so a render never parses a template to learn it."""
    if template is not None and not item_only(template, item_name):
        return "more"
    if kind == "each" and len(order_by) == 1 and template is not None and unread_field(template, item_name, order_by[0]):
        return "item-without-score"
    return "item"


# Keywords of an item schema that constrain each property on its own (or nothing at all):
# such an item is valid exactly when each of its properties is.
_PER_PROPERTY = frozenset({"type", "required", "properties", "additionalProperties", "title", "description", "$comment", "examples"})
_ANNOTATIONS = frozenset({"title", "description", "$comment", "examples"})
_DICT_ATTRS = frozenset(dir(dict))


def unread_field(source: str, item_name: str, name: str) -> bool:
    """True when the per-item template `source` reads `item_name` only through fixed
    fields (`item.x`, `item["x"]`), none of them `name`: the field then never reaches
    the item's text."""
    from jinja2 import nodes

    from .jinja.sandbox import environment

    try:
        tree = environment().parse(source)
    except Exception:
        return False
    through_fields = set()
    called = {id(call.node) for call in tree.find_all(nodes.Call)}
    for node in tree.find_all((nodes.Getattr, nodes.Getitem)):
        target = node.node  # type: ignore[attr-defined]  # both node kinds have it
        if not (isinstance(target, nodes.Name) and target.name == item_name):
            continue
        if isinstance(node, nodes.Getattr):
            field = node.attr
        elif isinstance(node, nodes.Getitem) and isinstance(node.arg, nodes.Const):
            field = node.arg.value
        else:
            return False
        if not isinstance(field, str) or field == name or id(node) in called or field in _DICT_ATTRS:
            return False  # the score itself, or a method of the mapping (items(), get(...)) that can reach it
        through_fields.add(id(target))
    return all(id(n) in through_fields for n in tree.find_all(nodes.Name) if n.name == item_name)


def score_only_orders(item_schema: object, name: str) -> bool:
    """True when any finite number in field `name` leaves an item's validity as it was:
    the item schema constrains each property on its own, and `name`'s schema is just
    `type: number` (annotations aside)."""
    if item_schema is True:
        return True
    if not isinstance(item_schema, dict) or not set(item_schema) <= _PER_PROPERTY:
        return False
    if item_schema.get("type", "object") != "object":
        return False
    props = item_schema.get("properties", {})
    field = props.get(name) if isinstance(props, dict) else None
    if field is None:  # constrained by additionalProperties alone
        field = item_schema.get("additionalProperties", True)
    if field is True:
        return True
    return isinstance(field, dict) and set(field) - _ANNOTATIONS == {"type"} and field["type"] == "number"


class ItemMemo(GenerationalCache[tuple, tuple]):
    """Bounded map (role, section, variant, item content) -> what rendering the item gave."""

    ENTRY_COST = 128

    @staticmethod
    def key(prefix: tuple, item: Any) -> tuple | None:
        """The key of `item` under `prefix`, or None when it cannot be memoised.

        A mapping of text fields only (a typical memory entry) is keyed by its field
        names and its texts as they are (`str` equality is exact, and the strings'
        hashes are cached); anything else by its `marshal` bytes. The two kinds of key
        differ in length, so they never meet."""
        if type(item) is dict:
            texts = tuple(item.values())
            if all(type(v) is str for v in texts):
                return (*prefix, tuple(item), texts) if sum(map(len, texts)) <= MAX_KEY_BYTES else None
        try:
            data = marshal.dumps(item, 2)
        except (ValueError, TypeError):
            return None
        return (*prefix, data) if len(data) <= MAX_KEY_BYTES else None

    @staticmethod
    def key_without(prefix: tuple, item: Any, name: str) -> tuple | None:
        """The key of `item` with its field `name` left out, when that field is a finite
        number; else the key of the whole item. For a field that only orders the list
        (`unread_field`, `score_only_orders`): an item whose score alone changed is
        still recognised. The field's name stays in the key (`...` stands for its value,
        which JSON data never holds), so an item without it is another item."""
        if type(item) is dict:
            value = item.get(name)
            if type(value) is int or (type(value) is float and value - value == 0):
                texts = tuple([v for k, v in item.items() if k != name])
                if all(type(v) is str for v in texts):
                    return (*prefix, tuple(item), texts) if sum(map(len, texts)) <= MAX_KEY_BYTES else None
                item = {**item, name: ...}
        return ItemMemo.key(prefix, item)

    def weigh(self, key: tuple, value: tuple) -> int:
        text, unit = value
        content = key[-1]
        size = len(content) if type(content) is bytes else sum(map(len, content))
        return size + len(text) + (len(unit) if unit is not None else 0) + self.ENTRY_COST

    @property
    def weight(self) -> int:
        """What the entries weigh (bytes of keys, characters of texts, fixed costs)."""
        return sum(self.weigh(k, v) for k, v in self.items())
