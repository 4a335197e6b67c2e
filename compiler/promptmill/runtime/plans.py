"""Fast plans: pure-substitution templates filled without running Jinja.

Most per-item templates are literal text around `{{ item.key }}` lookups. For
such a template the compiler stores a *plan*, a tuple of literal strings and
lookup paths, and the runtime fills it with plain dict lookups: about 20 times
faster than a Jinja render, which matters when a section has hundreds of items.

A plan must give exactly what Jinja gives. It is built from Jinja's own parse
tree (so whitespace handling is Jinja's), only for output nodes that are
literal data or lookups of names and constant string keys (optionally through
one argument-free filter from PURE_FILTERS, called as Jinja would call it),
never for keys that
are also dict attributes (`items`, `keys`, ...: Jinja would return the method).
At run time every step must be a plain `dict` holding the key; otherwise
`run_plan` returns None and the caller renders with Jinja, which also produces
the proper error for a missing key.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

_MISSING = object()
_DICT_ATTRS = frozenset(dir(dict))
# Filters a plan may apply itself: plain functions of one value, no context.
PURE_FILTERS = frozenset({"to_json", "to_yaml", "upper", "lower", "trim", "xml_escape", "xml_text"})
MAX_TEXT = 4_000_000  # sandbox.TemplateLimits().max_output_chars

Plan = tuple[tuple[Any, ...], ...]


def build_plan(source: str) -> Plan | None:
    """A plan equivalent to `source`, or None when the template is not a pure substitution."""
    from jinja2 import nodes

    from .jinja.sandbox import environment

    try:
        tree = environment().parse(source)
    except Exception:  # syntax errors are reported by the template checks
        return None
    plan: list[tuple[Any, ...]] = []
    for node in tree.body:
        if not isinstance(node, nodes.Output):
            return None
        for part in node.nodes:
            if isinstance(part, nodes.TemplateData):
                plan.append(("t", part.data))
                continue
            path: list[str] = []
            cur: Any = part
            filt = None
            if (
                isinstance(cur, nodes.Filter)
                and cur.name in PURE_FILTERS
                and not cur.args
                and not cur.kwargs
                and cur.dyn_args is None
                and cur.dyn_kwargs is None
            ):
                func = environment().filters.get(cur.name)
                if func is None or getattr(func, "jinja_pass_arg", None) is not None:
                    return None
                filt = cur.name
                cur = cur.node
            while True:
                if isinstance(cur, nodes.Getattr):
                    path.append(cur.attr)
                    cur = cur.node
                elif isinstance(cur, nodes.Getitem) and isinstance(cur.arg, nodes.Const) and isinstance(cur.arg.value, str):
                    path.append(cur.arg.value)
                    cur = cur.node
                elif isinstance(cur, nodes.Name):
                    path.append(cur.name)
                    break
                else:
                    return None
            path.reverse()
            if any(p in _DICT_ATTRS or p.startswith("_") for p in path[1:]) or path[0] in ("range", "dict"):
                return None
            plan.append(("v", tuple(path)) if filt is None else ("f", tuple(path), filt))
    return tuple(plan)


def plan_ok(plan: Any) -> bool:
    """True when `plan` has the shape `build_plan` gives (a bundle read from disk is checked)."""
    if type(plan) is not tuple:
        return False
    for step in plan:
        if type(step) is not tuple or not step:
            return False
        if step[0] == "t":
            ok = len(step) == 2 and type(step[1]) is str
        elif step[0] in ("v", "f"):
            path = step[1] if len(step) > 1 else None
            ok = (
                type(path) is tuple
                and bool(path)
                and all(type(p) is str for p in path)
                and (len(step) == 2 if step[0] == "v" else len(step) == 3 and step[2] in PURE_FILTERS)
            )
        else:
            ok = False
        if not ok:
            return False
    return True


def run_plan(plan: Plan, context: Mapping[str, Any], outer: Mapping[str, Any] | None = None) -> str | None:
    """Fill `plan` from `context` (then `outer`), or None when Jinja must decide."""
    out: list[str] = []
    for step in plan:
        kind, value = step[0], step[1]
        if kind == "t":
            out.append(value)
            continue
        obj = context.get(value[0], _MISSING)
        if obj is _MISSING and outer is not None:
            obj = outer.get(value[0], _MISSING)
        if obj is _MISSING:
            return None
        for key in value[1:]:
            if type(obj) is not dict:
                return None
            obj = obj.get(key, _MISSING)
            if obj is _MISSING:
                return None
        if kind == "f":
            try:
                obj = _filter(step[2])(obj)
            except Exception:  # Jinja reports the failure properly
                return None
            if len(obj) > MAX_TEXT:
                return None
        elif type(obj) is not str:
            if obj is None:
                obj = ""  # as the sandbox's finalize prints it
            elif type(obj) not in (int, float, bool):
                return None  # lists and mappings: Jinja weighs them before printing
            else:
                try:
                    obj = str(obj)
                except ValueError:  # an int of more than 4300 digits: Jinja reports it (PM820)
                    return None
        out.append(obj)
    return "".join(out)


_PURE: dict[str, Any] = {}


def _filter(name: str) -> Callable[[Any], Any]:
    """The unguarded function behind a pure filter (the guards only limit sizes;
    a result over the output cap makes run_plan defer to Jinja, which raises)."""
    func = _PURE.get(name)
    if func is None:
        from jinja2 import filters as jf

        from .jinja.filters import promptmill_filters

        _PURE.update(promptmill_filters())
        _PURE.update(upper=jf.do_upper, lower=jf.do_lower, trim=jf.do_trim)
        func = _PURE[name]
    return func
