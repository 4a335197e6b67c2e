"""Fast plans: templates filled without running Jinja, proven equal at compile time.

Most per-item templates are literal text around lookups, a number formatted
with a constant spec, a list joined, a short loop or an `if`. For such a
template the compiler stores a *plan*, nested tuples built from Jinja's own
parse tree (so whitespace handling is Jinja's), and the runtime fills it with
plain dict lookups: about 20 times faster than a Jinja render, which matters
when a section has hundreds of items.

A plan must give exactly what Jinja gives. The compiler plans only what it
can prove, node by node, and refuses everything else (`build_plan` returns
None and the section renders in the sandbox):

- output of literal data, constants, and lookups of names and constant string
  keys (never keys that are also dict attributes, `items`, `keys`, ...: Jinja
  would return the method; never `_`-prefixed keys);
- filters from `FILTERS` with constant arguments (`join(', ')`,
  `default('x')`, `round(3)`, `to_json`, `upper`, ...), called as Jinja calls
  them;
- `'%.3f' % x`, `'%s: %d' % (a, b)`, `'%.3f' | format(x)` and
  `'{:.3f}'.format(x)` with a constant format of small fixed widths;
- `~` concatenation; `{% for x in list %}` (no unpacking, filter or
  recursion) with `loop.index`, `index0`, `first`, `last`, `length`, `revindex`,
  `revindex0` and an `{% else %}`; `{% if %}`/`elif`/`else` on truthiness,
  `is defined`, `is undefined`, `is none`, `not`, `and`, `or` and comparisons.

At run time every value must have the type the plan expects (a plain `dict`
holding each key, a `list` to loop over, a scalar to print or format);
otherwise `run_plan` returns None and the caller renders with Jinja, which also
produces the proper error (a missing key, a bad format) and applies the
sandbox's limits, so a plan also defers before its output or loop work could
reach them.
"""

from __future__ import annotations

import operator
import re
import string
from collections.abc import Callable, Mapping
from typing import Any

from .filters.plain import plan_filters

_MISSING = object()
_UNDEF = object()  # a key or name that is not there: Jinja's Undefined
_DICT_ATTRS = frozenset(dir(dict))
# Filters the plans of older bundles name in a ("f", path, filter) step: one value, no arguments.
PURE_FILTERS = frozenset({"to_json", "to_yaml", "upper", "lower", "trim", "xml_escape", "xml_text"})
# Filter -> the types of its constant arguments, in order (a plan may give fewer).
FILTERS: dict[str, tuple[tuple[type, ...], ...]] = {
    **{name: () for name in PURE_FILTERS},
    "title": (),
    "capitalize": (),
    "string": (),
    "length": (),
    "count": (),
    "join": ((str,),),
    "default": ((str, int, float, bool, type(None)), (bool,)),
    "round": ((int,), (str,)),
}
LOOP_ATTRS = frozenset({"index", "index0", "first", "last", "length", "revindex", "revindex0"})
_COMPARE = {"eq": operator.eq, "ne": operator.ne, "lt": operator.lt, "lteq": operator.le, "gt": operator.gt, "gteq": operator.ge}
_CONSTS = (str, int, float, bool, type(None))
_SCALARS = (str, int, float, bool, type(None))
_TRUTH_TYPES = (*_SCALARS, list, dict)  # what an `if` may test (a constant: mypyc cannot take a starred `in` tuple)
# printf formats a plan may apply: no mapping keys, no `*` widths, widths and precisions of at most 3 digits
_PRINTF = re.compile(r"(?:[^%]|%%|%[#0 +-]*\d{0,3}(?:\.\d{0,3})?[diouxXeEfFgGcrsa])*", re.S)
_FORMAT_SPEC = re.compile(r"(?:.?[<>=^])?[ +-]?#?0?\d{0,3}[,_]?(?:\.\d{0,3})?[bcdeEfFgGnosxX%]?")
MAX_TEXT = 4_000_000  # sandbox.TemplateLimits().max_output_chars
MAX_STEPS = 100_000  # loop iterations and joined items a plan does itself (the sandbox allows 1,000,000)
MAX_ARG_TEXT = 1_000_000  # longest text a plan formats or joins (the sandbox's estimate stays under its cap)
MAX_INT = 10**18  # larger integers are formatted by Jinja (its size estimate is not the plan's)

Plan = tuple[tuple[Any, ...], ...]


class _NoPlan(Exception):
    """The template uses something a plan cannot prove equal to Jinja; `node` is the innermost
    node that was refused (set where it is first caught)."""

    def __init__(self, *args: object) -> None:
        super().__init__(*args)
        self.node: Any = None  # set here, not as a class default: the compiled build (mypyc) has no class defaults on exceptions


class _Defer(Exception):
    """This render needs Jinja (a missing key, an unexpected type, a limit)."""


def build_plan(source: str) -> Plan | None:
    """A plan equivalent to `source`, or None when some part of it is not proven."""
    from .jinja.sandbox import environment

    try:
        tree = environment().parse(source)
    except Exception:  # syntax errors are reported by the template checks
        return None
    try:
        return _statements(tree.body, 0)
    except _NoPlan:
        return None


def why_no_plan(source: str) -> tuple[int, str] | None:
    """Where and why `source` gets no plan: (line in the template, what a plan cannot do); None when it
    gets one or does not parse (the template checks report that)."""
    from .jinja.sandbox import environment

    try:
        tree = environment().parse(source)
    except Exception:
        return None
    try:
        _statements(tree.body, 0)
    except _NoPlan as exc:
        return (getattr(exc.node, "lineno", None) or 1), _refused(exc.node)
    return None


def _refused(node: Any) -> str:
    """What a plan cannot do, in the words of a template's author."""
    from jinja2 import nodes

    if isinstance(node, nodes.Filter) and node.name == "format" or isinstance(node, nodes.Mod):
        return "formatting with a format that is not a short constant of fixed widths"
    if isinstance(node, nodes.Call) and isinstance(node.node, nodes.Getattr) and node.node.attr == "format":
        return "'.format()' with a format that is not a short constant of plain fields"
    if isinstance(node, nodes.Filter):
        if node.name in FILTERS:
            return f"the filter '{node.name}' with keyword or computed arguments"
        return f"the filter '{node.name}'"
    if isinstance(node, nodes.Test):
        return f"the test '{node.name}'"
    if isinstance(node, nodes.Call):
        return "a function or method call"
    if isinstance(node, nodes.For):
        return "a for loop with unpacking, a filter or recursion"
    if isinstance(node, (nodes.Assign, nodes.AssignBlock)):
        return "{% set %}"
    if isinstance(node, (nodes.Macro, nodes.CallBlock)):
        return "a macro"
    if isinstance(node, nodes.Stmt):
        return f"the {{% {type(node).__name__.lower()} %}} tag"
    if isinstance(node, nodes.Name) and node.name in ("range", "dict"):
        return f"the global '{node.name}'"
    if isinstance(node, (nodes.Name, nodes.Getattr, nodes.Getitem)):
        return "a lookup by an index or a computed key, of a private name, or of a name dicts also have as a method (items, keys, ...)"
    if isinstance(node, nodes.Compare):
        return "a chained comparison or an 'in' test"
    if isinstance(node, nodes.BinExpr):
        return f"the operator '{node.operator}'"
    if isinstance(node, (nodes.List, nodes.Tuple, nodes.Dict)):
        return "a list, tuple or dict literal"
    if isinstance(node, nodes.CondExpr):
        return "an inline if (x if c else y)"
    if isinstance(node, nodes.Const):
        return "a constant of this type"
    return f"the expression {type(node).__name__}"


def _statements(body: list[Any], loops: int) -> Plan:
    """Steps for a block; `loops` counts the enclosing for-loops (-1: `loop` is ambiguous here)."""
    steps: list[tuple[Any, ...]] = []
    for node in body:
        try:
            _statement(node, loops, steps)
        except _NoPlan as exc:
            if exc.node is None:
                exc.node = node
            raise
    return tuple(steps)


def _statement(node: Any, loops: int, steps: list[tuple[Any, ...]]) -> None:
    from jinja2 import nodes

    if isinstance(node, nodes.Output):
        for part in node.nodes:
            if isinstance(part, nodes.TemplateData):
                steps.append(("t", part.data))
            else:
                steps.append(_output(part, loops))
    elif isinstance(node, nodes.For):
        if node.recursive or node.test is not None or not isinstance(node.target, nodes.Name) or node.target.name == "loop":
            raise _NoPlan
        inner = _statements(node.body, loops + 1 if loops >= 0 else -1)
        steps.append(("for", node.target.name, _expr(node.iter, loops), inner, _statements(node.else_, -1)))
    elif isinstance(node, nodes.If):
        branches = [(_expr(node.test, loops), _statements(node.body, loops))]
        branches += [(_expr(e.test, loops), _statements(e.body, loops)) for e in node.elif_]
        steps.append(("if", tuple(branches), _statements(node.else_, loops)))
    else:
        raise _NoPlan


def _output(node: Any, loops: int) -> tuple[Any, ...]:
    """The step printing `node`: the older flat forms where they fit (bundles stay readable by older runtimes)."""
    expr = _expr(node, loops)
    if expr[0] == "p":
        return ("v", expr[1])
    if expr[0] == "fl" and expr[1] in PURE_FILTERS and not expr[3] and expr[2][0] == "p":
        return ("f", expr[2][1], expr[1])
    return ("e", expr)


def _expr(node: Any, loops: int) -> tuple[Any, ...]:
    try:
        return _expr_of(node, loops)
    except _NoPlan as exc:
        if exc.node is None:
            exc.node = node
        raise


def _expr_of(node: Any, loops: int) -> tuple[Any, ...]:
    from jinja2 import nodes

    if isinstance(node, nodes.Const):
        if type(node.value) not in _CONSTS:
            raise _NoPlan
        return ("c", node.value)
    if isinstance(node, (nodes.Name, nodes.Getattr, nodes.Getitem)):
        return _lookup(node, loops)
    if isinstance(node, nodes.Filter):
        if node.node is None or node.kwargs or node.dyn_args is not None or node.dyn_kwargs is not None:
            raise _NoPlan
        if node.name == "format":
            return ("pf", _printf(node.node), tuple(_expr(a, loops) for a in node.args))
        kinds = FILTERS.get(node.name)
        if kinds is None or len(node.args) > len(kinds):
            raise _NoPlan
        args = []
        for arg, allowed in zip(node.args, kinds, strict=False):
            if not isinstance(arg, nodes.Const) or type(arg.value) not in allowed:
                raise _NoPlan
            args.append(arg.value)
        if node.name == "round" and ((args and not -100 <= args[0] <= 100) or args[1:] not in ([], ["common"], ["ceil"], ["floor"])):
            raise _NoPlan
        return ("fl", node.name, _expr(node.node, loops), tuple(args))
    if isinstance(node, nodes.Mod):
        right = node.right
        values = right.items if isinstance(right, nodes.Tuple) else [right]
        return ("pf", _printf(node.left), tuple(_expr(v, loops) for v in values))
    if isinstance(node, nodes.Call):
        target = node.node
        if (
            not isinstance(target, nodes.Getattr)
            or target.attr != "format"
            or node.kwargs
            or node.dyn_args is not None
            or node.dyn_kwargs is not None
        ):
            raise _NoPlan
        return ("sf", _str_format(target.node, len(node.args)), tuple(_expr(a, loops) for a in node.args))
    if isinstance(node, nodes.Concat):
        return ("cat", tuple(_expr(n, loops) for n in node.nodes))
    if isinstance(node, nodes.Test):
        if node.name not in ("defined", "undefined", "none") or node.args or node.kwargs or node.dyn_args or node.dyn_kwargs:
            raise _NoPlan
        return ("is", node.name, _expr(node.node, loops))
    if isinstance(node, nodes.Not):
        return ("not", _expr(node.node, loops))
    if isinstance(node, (nodes.And, nodes.Or)):
        return ("and" if isinstance(node, nodes.And) else "or", _expr(node.left, loops), _expr(node.right, loops))
    if isinstance(node, nodes.Compare) and len(node.ops) == 1 and node.ops[0].op in _COMPARE:
        return ("cmp", node.ops[0].op, _expr(node.expr, loops), _expr(node.ops[0].expr, loops))
    raise _NoPlan


def _lookup(node: Any, loops: int) -> tuple[Any, ...]:
    from jinja2 import nodes

    path: list[str] = []
    cur = node
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
            raise _NoPlan
    path.reverse()
    if path[0] == "loop" and loops != 0:
        if loops < 0 or len(path) != 2 or path[1] not in LOOP_ATTRS or not isinstance(node, nodes.Getattr):
            raise _NoPlan
        return ("loop", path[1])
    if any(p in _DICT_ATTRS or p.startswith("_") for p in path[1:]) or path[0] in ("range", "dict"):
        raise _NoPlan
    return ("p", tuple(path))


def _printf(node: Any) -> str:
    from jinja2 import nodes

    if not isinstance(node, nodes.Const) or type(node.value) is not str or len(node.value) > 256 or not _PRINTF.fullmatch(node.value):
        raise _NoPlan
    return node.value


def _str_format(node: Any, nargs: int) -> str:
    """A constant `'...'.format(...)` string whose fields are `{}` or `{N}` with a plain spec."""
    from jinja2 import nodes

    if not isinstance(node, nodes.Const) or type(node.value) is not str or len(node.value) > 256:
        raise _NoPlan
    try:
        fields = list(string.Formatter().parse(node.value))
    except ValueError:
        raise _NoPlan from None
    auto = 0
    for _, name, spec, conversion in fields:
        if name is None:
            continue
        if conversion is not None or not _FORMAT_SPEC.fullmatch(spec or "") or (name and not name.isdigit()):
            raise _NoPlan
        index = int(name) if name else auto
        auto += not name
        if index >= nargs:
            raise _NoPlan
    return node.value


# ---------------------------------------------------------------- bundle check


def plan_ok(plan: Any) -> bool:
    """True when `plan` has the shape `build_plan` gives (a bundle read from disk is checked)."""
    try:
        _check_steps(plan)
    except (_NoPlan, TypeError, ValueError, IndexError):
        return False
    return True


def _check_steps(steps: Any) -> None:
    if type(steps) is not tuple:
        raise _NoPlan
    for step in steps:
        if type(step) is not tuple or not step:
            raise _NoPlan
        kind = step[0]
        if kind == "t":
            _need(len(step) == 2 and type(step[1]) is str)
        elif kind == "v":
            _need(len(step) == 2)
            _check_path(step[1])
        elif kind == "f":
            _need(len(step) == 3 and step[2] in PURE_FILTERS)
            _check_path(step[1])
        elif kind == "e":
            _need(len(step) == 2)
            _check_expr(step[1])
        elif kind == "for":
            _need(len(step) == 5 and type(step[1]) is str)
            _check_expr(step[2])
            _check_steps(step[3])
            _check_steps(step[4])
        elif kind == "if":
            _need(len(step) == 3 and type(step[1]) is tuple and bool(step[1]))
            for branch in step[1]:
                _need(type(branch) is tuple and len(branch) == 2)
                _check_expr(branch[0])
                _check_steps(branch[1])
            _check_steps(step[2])
        else:
            raise _NoPlan


def _check_path(path: Any) -> None:
    _need(type(path) is tuple and bool(path) and all(type(p) is str for p in path))


def _check_expr(expr: Any) -> None:
    _need(type(expr) is tuple and bool(expr))
    kind, n = expr[0], len(expr)
    if kind == "c":
        _need(n == 2 and type(expr[1]) in _CONSTS)
    elif kind == "p":
        _need(n == 2)
        _check_path(expr[1])
    elif kind == "loop":
        _need(n == 2 and expr[1] in LOOP_ATTRS)
    elif kind == "fl":
        _need(n == 4 and expr[1] in FILTERS and type(expr[3]) is tuple and len(expr[3]) <= len(FILTERS[expr[1]]))
        _need(all(type(a) in allowed for a, allowed in zip(expr[3], FILTERS[expr[1]], strict=False)))
        _check_expr(expr[2])
    elif kind in ("pf", "sf"):
        _need(n == 3 and type(expr[1]) is str and type(expr[2]) is tuple)
        _need(bool(_PRINTF.fullmatch(expr[1])) if kind == "pf" else True)
        for e in expr[2]:
            _check_expr(e)
    elif kind == "cat":
        _need(n == 2 and type(expr[1]) is tuple)
        for e in expr[1]:
            _check_expr(e)
    elif kind == "is":
        _need(n == 3 and expr[1] in ("defined", "undefined", "none"))
        _check_expr(expr[2])
    elif kind == "not":
        _need(n == 2)
        _check_expr(expr[1])
    elif kind in ("and", "or"):
        _need(n == 3)
        _check_expr(expr[1])
        _check_expr(expr[2])
    elif kind == "cmp":
        _need(n == 4 and expr[1] in _COMPARE)
        _check_expr(expr[2])
        _check_expr(expr[3])
    else:
        raise _NoPlan


def _need(ok: bool) -> None:
    if not ok:
        raise _NoPlan


# ---------------------------------------------------------------- run time


def run_plan(plan: Plan, context: Mapping[str, Any], outer: Mapping[str, Any] | None = None) -> str | None:
    """Fill `plan` from `context` (then `outer`), or None when Jinja must decide."""
    out: list[str] = []
    for step in plan:
        kind, value = step[0], step[1]
        if kind == "t":
            out.append(value)
            continue
        if kind not in ("v", "f"):
            return _run_full(plan, context, outer)
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


class _Run:
    """One fill of a plan with loops and expressions: scopes, loop state, work done."""

    __slots__ = ("context", "loops", "out", "outer", "scopes", "size", "steps")

    def __init__(self, context: Mapping[str, Any], outer: Mapping[str, Any] | None) -> None:
        self.context = context
        self.outer = outer
        self.scopes: list[tuple[str, Any]] = []  # loop variables, innermost last
        self.loops: list[tuple[int, int]] = []  # (index0, length), innermost last
        self.out: list[str] = []
        self.size = 0
        self.steps = 0


def _run_full(plan: Plan, context: Mapping[str, Any], outer: Mapping[str, Any] | None) -> str | None:
    run = _Run(context, outer)
    try:
        _exec(plan, run)
    except _Defer:
        return None
    except Exception:  # anything unforeseen: Jinja decides, and reports
        return None
    return "".join(run.out)


def _emit(run: _Run, text: str) -> None:
    run.size += len(text)
    if run.size > MAX_TEXT:
        raise _Defer
    run.out.append(text)


def _exec(steps: Plan, run: _Run) -> None:
    for step in steps:
        kind = step[0]
        if kind == "t":
            _emit(run, step[1])
        elif kind == "v":
            _emit(run, _printed(_path(step[1], run)))
        elif kind == "f":
            _emit(run, _printed(_apply(step[2], _path(step[1], run), ())))
        elif kind == "e":
            _emit(run, _printed(_eval(step[1], run)))
        elif kind == "for":
            items = _eval(step[2], run)
            if type(items) is not list:
                raise _Defer  # a mapping or string loops differently; an undefined one fails in Jinja
            if not items:
                _exec(step[4], run)
                continue
            run.steps += len(items)
            if run.steps > MAX_STEPS:
                raise _Defer
            n = len(items)
            for i, item in enumerate(items):
                run.scopes.append((step[1], item))
                run.loops.append((i, n))
                _exec(step[3], run)
                run.loops.pop()
                run.scopes.pop()
        else:  # "if"
            for test, body in step[1]:
                if _truth(_eval(test, run)):
                    _exec(body, run)
                    break
            else:
                _exec(step[2], run)


def _printed(value: Any) -> str:
    """`value` as the sandbox prints it ({{ }} and its finalize)."""
    kind = type(value)
    if kind is str:
        return value
    if value is None:
        return ""
    if kind in (int, float, bool):
        try:
            return str(value)
        except ValueError:  # an int of more than 4300 digits: Jinja reports it (PM820)
            raise _Defer from None
    raise _Defer  # undefined (Jinja fails), lists and mappings (Jinja weighs them before printing)


def _truth(value: Any) -> bool:
    if value is _UNDEF or type(value) not in _TRUTH_TYPES:
        raise _Defer  # the sandbox's strict undefined fails an `if`
    return bool(value)


def _path(path: tuple[str, ...], run: _Run) -> Any:
    name = path[0]
    obj: Any = _MISSING
    scopes = run.scopes
    for i in range(len(scopes) - 1, -1, -1):  # innermost first (indexes: mypyc fails on reversed() here)
        var, value = scopes[i]
        if var == name:
            obj = value
            break
    if obj is _MISSING:
        obj = run.context.get(name, _MISSING)
        if obj is _MISSING and run.outer is not None:
            obj = run.outer.get(name, _MISSING)
        if obj is _MISSING:
            obj = _UNDEF
    for key in path[1:]:
        if type(obj) is not dict:
            raise _Defer  # an attribute of an undefined value fails in Jinja; other types look up differently
        obj = obj.get(key, _UNDEF)
    return obj


def _eval(expr: tuple[Any, ...], run: _Run) -> Any:
    kind = expr[0]
    if kind == "p":
        return _path(expr[1], run)
    if kind == "c":
        return expr[1]
    if kind == "fl":
        return _apply(expr[1], _eval(expr[2], run), expr[3])
    if kind == "pf":
        values = _args(expr[2], run)
        return expr[1] % (values[0] if len(values) == 1 else values)
    if kind == "sf":
        return expr[1].format(*_args(expr[2], run))
    if kind == "loop":
        if not run.loops:
            raise _Defer
        index0, length = run.loops[-1]
        return {
            "index": index0 + 1,
            "index0": index0,
            "first": index0 == 0,
            "last": index0 == length - 1,
            "length": length,
            "revindex": length - index0,
            "revindex0": length - index0 - 1,
        }[expr[1]]
    if kind == "cat":
        return "".join(v if type(v) is str else str(v) for v in _args(expr[1], run))
    if kind == "is":
        value = _eval(expr[2], run)
        if expr[1] == "defined":
            return value is not _UNDEF
        if expr[1] == "undefined":
            return value is _UNDEF
        return value is None
    if kind == "not":
        return not _truth(_eval(expr[1], run))
    if kind == "and":
        left = _eval(expr[1], run)
        return _eval(expr[2], run) if _truth(left) else left
    if kind == "or":
        left = _eval(expr[1], run)
        return left if _truth(left) else _eval(expr[2], run)
    if kind == "cmp":
        left, right = _eval(expr[2], run), _eval(expr[3], run)
        if left is _UNDEF or right is _UNDEF or type(left) not in _SCALARS or type(right) not in _SCALARS:
            raise _Defer
        return _COMPARE[expr[1]](left, right)
    raise _Defer


def _args(exprs: tuple[Any, ...], run: _Run) -> tuple[Any, ...]:
    """Values to format or concatenate, small enough that the sandbox's size estimate
    (text lengths, fixed widths, room for digits) stays under its cap as well."""
    values = tuple(_arg(_eval(e, run)) for e in exprs)
    if sum(len(v) if type(v) is str else 1000 for v in values) > MAX_ARG_TEXT:
        raise _Defer
    return values


def _arg(value: Any) -> Any:
    """A value a plan formats or concatenates itself: a scalar of bounded size."""
    kind = type(value)
    if kind is str:
        if len(value) > MAX_ARG_TEXT:
            raise _Defer
    elif kind is int:
        if abs(value) >= MAX_INT:
            raise _Defer
    elif kind not in (float, bool, type(None)):
        raise _Defer  # undefined, lists, mappings
    return value


def _apply(name: str, value: Any, args: tuple[Any, ...]) -> Any:
    """Filter `name` applied as Jinja applies it, to the values a plan may pass it."""
    if name == "default":
        if value is _UNDEF or (len(args) > 1 and args[1] and not _truth(value)):
            return args[0] if args else ""
        return value
    if value is _UNDEF:
        raise _Defer
    if name == "join":
        if type(value) is not list or len(value) > MAX_STEPS:
            raise _Defer
        texts = [v if type(v) is str else str(_arg(v)) for v in value]
        sep = args[0] if args else ""
        if sum(map(len, texts)) + len(sep) * len(texts) > MAX_ARG_TEXT:
            raise _Defer
        return sep.join(texts)
    if name in ("length", "count"):
        if type(value) not in (str, list, dict):
            raise _Defer
        return len(value)
    if name == "round":
        if type(value) not in (int, float) or (type(value) is int and abs(value) >= MAX_INT):
            raise _Defer
    elif name in ("title", "capitalize", "string"):
        _arg(value)
    result = _filter(name)(value, *args)
    if type(result) is str and len(result) > MAX_TEXT:
        raise _Defer
    return result


_PURE: dict[str, Callable[..., Any]] = {}


def _filter(name: str) -> Callable[..., Any]:
    """The function behind a filter (runtime/filters/plain.py: Jinja's result for a plan's values, without
    Jinja; the sandbox's guards only limit sizes, and a result over the output cap makes the plan defer)."""
    if not _PURE:
        _PURE.update(plan_filters())
    return _PURE[name]
