"""The sandboxed Jinja environment every promptmill template renders in (runtime side).

Templates are data, not code. They come from many authors and the state they
are filled with comes from users and model output, so both are untrusted:

- Jinja's `ImmutableSandboxedEnvironment`: no `_`-prefixed attributes, no
  mutation of lists and dicts, `str.format` sandboxed; attribute access on
  classes is refused outright;
- strict undefined values whose messages name the missing variable, key or
  attribute (and the value's type, its keys, and a close match);
- no loader: `include`, `import` and `extends` fail; no `cycler`, `joiner`,
  `namespace` or `lipsum` globals; `range` is bounded and counted;
- per-render limits (`TemplateLimits`) on loop iterations and calls, on the
  size of every string a template builds, and on its output (see
  `promptmill.runtime.jinja.guard` and `promptmill.runtime.jinja.filters`);
- values from the state are inserted as text and never parsed as templates.

Every failure inside a template becomes a `RenderError` (PM820) naming the
template line. This module imports neither YAML, jsonschema, click nor watchdog.
"""

from __future__ import annotations

import functools
import re
import types
from collections.abc import Callable, Generator, Mapping
from typing import Any, NamedTuple, cast

import jinja2
from jinja2 import nodes
from jinja2.compiler import CodeGenerator, Frame
from jinja2.exceptions import SecurityError, UndefinedError
from jinja2.runtime import LoopContext, StrictUndefined, Undefined
from jinja2.sandbox import (
    ImmutableSandboxedEnvironment,
    SandboxedEscapeFormatter,
    SandboxedFormatter,
)
from jinja2.utils import missing, pass_context
from markupsafe import Markup

from ...core.errors import RenderError
from ...core.suggest import suggest
from . import guard
from .filters import guarded, promptmill_filters, safe_join

__all__ = [
    "DEFAULT",
    "FILTERS",
    "TESTS",
    "TemplateLimits",
    "TemplateRenderError",
    "compile_template",
    "environment",
    "render",
]


class TemplateLimits(NamedTuple):
    """Per-render limits; each render gets fresh counters."""

    max_output_chars: int = 4_000_000  # the rendered text, and any single string built
    max_iterations: int = 1_000_000  # loop iterations, range items, items filters walk, calls
    max_range: int = 100_000  # items in one range()
    max_produced_chars: int = 16_000_000  # all {{ }} output and template text, set blocks and macros included
    max_seconds: float | None = 10.0  # wall clock, checked at every step; None: no deadline


DEFAULT = TemplateLimits()

NO_INCLUDE = "templates cannot include, import or extend other templates; use a `fragment:` section"
_ITERATE = "pm:iterate"  # internal filters: the colon keeps them out of template syntax
_TEXT = "pm:text"
OPTIONAL_KEY_HINT = (
    "if the state may leave this key out (it is not in the schema's `required`), guard it: "
    "{% if x.key is defined %}...{% endif %}, or {{ x.key | default('') }}"
)
_REMOVED_GLOBALS = frozenset({"cycler", "joiner", "namespace", "lipsum"})


class TemplateRenderError(RenderError):
    """A template failed while rendering; `line` is the template line when known."""

    def __init__(self, message: str, line: int | None = None, hint: str | None = None):
        self.line = line
        super().__init__(f"line {line}: {message}" if line else message, hint=hint)


class _Undefined(StrictUndefined):
    """Strict undefined whose message says which name, key or attribute is missing."""

    __slots__ = ()

    @property
    def _undefined_message(self) -> str:
        if self._undefined_hint:
            return self._undefined_hint
        obj, name = self._undefined_obj, self._undefined_name
        if obj is missing:
            if name in _REMOVED_GLOBALS:
                return f"variable {name!r} is undefined ({name} is not available in promptmill templates)"
            return f"variable {name!r} is undefined"
        kind = type(obj).__name__
        if isinstance(obj, Mapping):
            keys = [k for k in obj if isinstance(k, str)]
            text = f"{kind} has no key or attribute {_short(name)}"
            if keys:
                shown = ", ".join(_short(k) for k in keys[:10])
                text += f" (its keys: {shown}{', ...' if len(keys) > 10 else ''})"
                close = suggest(str(name), keys[:500])
                if close:
                    text += f"; did you mean {close!r}?"
            return text
        if isinstance(obj, (list, tuple, str)) and isinstance(name, int):
            return f"{kind} of length {len(obj)} has no item {name}"
        if not isinstance(name, str):
            return f"{kind} value has no item {_short(name)}"
        return f"{kind} value has no attribute {_short(name)}"


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _guard_tree(node: nodes.Node, env: jinja2.Environment, repeated: bool = False) -> None:
    """Route loop iterables and repeated constant output through the work guards."""
    if isinstance(node, nodes.For):
        node.iter = nodes.Filter(node.iter, _ITERATE, [], [], None, None, lineno=node.iter.lineno)
    if isinstance(node, nodes.Output) and repeated:
        # Constant output would be folded into the code and never pass `finalize`;
        # in a loop or macro it must be counted like everything else.
        node.nodes = [nodes.Filter(c, _TEXT, [], [], None, None, lineno=c.lineno) if _foldable(c, env) else c for c in node.nodes]
    inner = repeated or isinstance(node, (nodes.For, nodes.Macro, nodes.CallBlock, nodes.Block))
    for child in node.iter_child_nodes():
        _guard_tree(child, env, inner)


def _foldable(node: nodes.Expr, env: jinja2.Environment) -> bool:
    try:
        node.as_const(nodes.EvalContext(env))
    except Exception:  # nodes.Impossible, or anything a folding attempt raised
        return False
    return True


class _CodeGenerator(CodeGenerator):
    def visit_Template(self, node: nodes.Template, frame: Frame | None = None) -> None:
        _guard_tree(node, self.environment)
        node.set_environment(self.environment)
        super().visit_Template(node, frame)

    def visit_Concat(self, node: nodes.Concat, frame: Frame) -> None:
        self.write("environment.pm_concat((")
        for arg in node.nodes:
            self.visit(arg, frame)
            self.write(", ")
        self.write("))")


class _Template(jinja2.Template):
    def render(self, *args: Any, **kwargs: Any) -> str:
        """Render through `promptmill.runtime.jinja.sandbox.render` with the default limits."""
        return render(self, dict(*args, **kwargs))


class _GuardedFormatter(SandboxedFormatter):
    """`str.format` in templates: sandboxed lookups plus size checks per field."""

    _total = 0

    def vformat(self, format_string: str, args: Any, kwargs: Any) -> str:
        self._total = len(format_string)
        return super().vformat(format_string, args, kwargs)

    def convert_field(self, value: Any, conversion: str | None) -> Any:
        guard.weigh(value)
        return super().convert_field(value, conversion)

    def format_field(self, value: Any, format_spec: str) -> Any:
        for digits in re.findall(r"\d+", format_spec):
            guard.check_text(int(digits) if len(digits) < 12 else 10**12, "a formatted field")
        text = super().format_field(value, format_spec)
        self._total += len(text)
        guard.check_text(self._total, "a str.format result")
        return text


class _GuardedEscapeFormatter(_GuardedFormatter, SandboxedEscapeFormatter):
    pass


def _dict(*args: Any, **kwargs: Any) -> dict[Any, Any]:
    """The template's `dict(...)`: a function, so the class's methods stay out of reach."""
    return dict(*args, **kwargs)


@pass_context  # never constant-folded: the value is counted by `finalize` at render time
def _text(context: Any, value: Any) -> Any:
    return value


def _iterate(value: Any) -> Any:
    return guard.iterate(value)


class _Sandbox(ImmutableSandboxedEnvironment):
    code_generator_class = _CodeGenerator
    template_class = _Template
    intercepted_binops = frozenset({"+", "*", "**", "%"})
    pm_concat = staticmethod(guard.concat)

    def is_safe_attribute(self, obj: Any, attr: str, value: Any) -> bool:
        # No class is reachable from data; refusing their attributes closes routes
        # such as dict.update(state, ...) that bypass the immutable check.
        return not isinstance(obj, type) and super().is_safe_attribute(obj, attr, value)

    def getattr(self, obj: Any, attribute: str) -> Any:
        if isinstance(obj, Undefined):  # x.__init__ on an undefined x: report x
            obj._fail_with_undefined_error()
        return super().getattr(obj, attribute)

    def getitem(self, obj: Any, argument: Any) -> Any:
        if isinstance(obj, Undefined):
            obj._fail_with_undefined_error()
        return super().getitem(obj, argument)

    def call_binop(self, context: Any, operator: str, left: Any, right: Any) -> Any:
        return guard.binop(operator, left, right)

    def call(self, context: Any, obj: Any, /, *args: Any, **kwargs: Any) -> Any:
        guard.active().charge(1)
        fmt = self.wrap_str_format(obj)
        if fmt is not None:  # a str.format reached without attribute access
            obj = fmt
        elif isinstance(obj, LoopContext):
            if args:
                args = (guard.iterate(args[0]), *args[1:])
        else:
            args = guard.check_call(obj, args)
        return super().call(context, obj, *args, **kwargs)

    def wrap_str_format(self, value: Any) -> Callable[..., str] | None:
        if not isinstance(value, (types.MethodType, types.BuiltinMethodType)):
            return None
        if value.__name__ not in ("format", "format_map") or not isinstance(value.__self__, str):
            return None
        owner: str = value.__self__
        formatter: _GuardedFormatter
        if isinstance(owner, Markup):
            formatter = _GuardedEscapeFormatter(self, escape=owner.escape)
        else:
            formatter = _GuardedFormatter(self)
        is_map = value.__name__ == "format_map"

        def wrapper(*args: Any, **kwargs: Any) -> str:
            if is_map:
                if kwargs or len(args) != 1:
                    raise TypeError("format_map() takes exactly one positional argument")
                kwargs, args = args[0], ()
            return type(owner)(formatter.vformat(owner, args, kwargs))

        return functools.update_wrapper(wrapper, value)

    def get_template(self, *args: Any, **kwargs: Any) -> Any:
        raise SecurityError(NO_INCLUDE)

    select_template = get_or_select_template = get_template


@functools.lru_cache(maxsize=1)
def environment() -> ImmutableSandboxedEnvironment:
    """The one shared, configured sandbox (safe to render from many threads)."""
    env = _Sandbox(
        undefined=_Undefined,
        autoescape=False,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=False,
        finalize=guard.produce,
        loader=None,
        cache_size=0,
        auto_reload=False,
    )
    env.globals.clear()
    env.globals.update(range=guard.bounded_range, dict=_dict)
    filters = {**env.filters, "join": safe_join, **promptmill_filters()}
    env.filters = {name: guarded(name, func) for name, func in filters.items()}
    env.filters[_ITERATE] = _iterate
    env.filters[_TEXT] = _text
    return env


FILTERS: frozenset[str] = frozenset(n for n in environment().filters if ":" not in n)
TESTS: frozenset[str] = frozenset(environment().tests)


def compile_template(source: str) -> jinja2.Template:
    """Compile template source in the sandbox; raises `jinja2.TemplateSyntaxError`."""
    return environment().from_string(source)


def render(template: jinja2.Template, context: Mapping[str, Any], *, limits: TemplateLimits = DEFAULT) -> str:
    """Fill `template` with `context` under `limits`; any failure is a `RenderError` (PM820)."""
    budget = guard.StepBudget(
        limits.max_iterations,
        limits.max_output_chars,
        limits.max_range,
        limits.max_produced_chars,
        limits.max_seconds,
    )
    token = guard.activate(budget)
    parts: list[str] = []
    size = 0
    try:
        stream = cast(Generator[str, None, None], template.generate(context))  # a generator: it has close()
        try:
            for chunk in stream:
                size += len(chunk)
                if size > limits.max_output_chars:
                    raise guard.LimitError(f"the output passed {limits.max_output_chars:,} characters (TemplateLimits.max_output_chars)")
                parts.append(chunk)
        finally:
            stream.close()
    except Exception as exc:
        raise _render_error(exc) from exc
    finally:
        guard.deactivate(token)
    return "".join(parts)


def _render_error(exc: BaseException) -> TemplateRenderError:
    line = None
    tb = exc.__traceback__
    while tb is not None:
        if "__jinja_exception__" in tb.tb_frame.f_globals:
            line = tb.tb_lineno
        tb = tb.tb_next
    if isinstance(exc, SecurityError):
        message = f"blocked by the template sandbox: {exc}"
    elif isinstance(exc, (UndefinedError, guard.LimitError)):
        message = str(exc)
    elif isinstance(exc, RecursionError):
        message = "the template recursed too deeply (a macro or recursive loop without an end?)"
    elif isinstance(exc, MemoryError):
        message = "the template ran out of memory"
    elif isinstance(exc, RenderError):
        message = exc.message
    else:
        message = f"{type(exc).__name__}: {exc}"
    hint = None
    if isinstance(exc, UndefinedError) and " has no key or attribute " in message and "did you mean" not in message:
        hint = OPTIONAL_KEY_HINT
    return TemplateRenderError(message, line, hint)
