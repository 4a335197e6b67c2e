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

from .cache import Generations

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


class ItemMemo(Generations[tuple, tuple]):
    """Bounded map (role, section, variant, item content) -> what rendering the item gave."""

    ENTRY_COST = 128

    @staticmethod
    def key(prefix: tuple, item: Any) -> tuple | None:
        """The key of `item` under `prefix`, or None when it cannot be memoised."""
        try:
            data = marshal.dumps(item, 2)
        except (ValueError, TypeError):
            return None
        return (*prefix, data) if len(data) <= MAX_KEY_BYTES else None

    def weigh(self, key: tuple, value: tuple) -> int:
        text, unit = value
        return len(key[-1]) + len(text) + (len(unit) if unit is not None else 0) + self.ENTRY_COST

    @property
    def weight(self) -> int:
        """What the entries weigh (bytes of keys, characters of texts, fixed costs)."""
        return sum(self.weigh(k, v) for k, v in self.items())
