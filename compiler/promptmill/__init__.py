"""promptmill: a prompt compiler.

Prompt authors write YAML templates; `promptmill.compile()` validates them and
writes section bundles to a build folder; `promptmill.load()` reads a build once
and `Runtime.render()` fills a role with live state under an exact token budget.

Importing this package is cheap: the compile-time machinery (YAML loader,
template validation, Jinja checks) is imported only when `compile` or `lint`
is called, and never by the runtime.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .core.errors import (
    BudgetError,
    BuildError,
    CompileError,
    ConfigError,
    PromptmillError,
    ProviderError,
    RenderError,
    ReplyError,
    StateError,
    TokenizerError,
    UnknownRoleError,
)
from .core.version import __version__

__all__ = [
    "__version__",
    "BudgetError",
    "BuildError",
    "CompileError",
    "ConfigError",
    "PromptmillError",
    "ProviderError",
    "RenderError",
    "ReplyError",
    "StateError",
    "TokenizerError",
    "UnknownRoleError",
    "compile",
    "lint",
    "load",
    "Runtime",
    "PromptRequest",
    "Workspace",
]

if TYPE_CHECKING:  # pragma: no cover
    from .compiling.workspace import Workspace
    from .runtime.engine import Runtime
    from .runtime.request import PromptRequest

_LAZY = {
    "Runtime": ("runtime.engine", "Runtime"),
    "PromptRequest": ("runtime.request", "PromptRequest"),
    "compile": ("compiling.api", "compile"),
    "lint": ("compiling.api", "lint"),
    "Workspace": ("compiling.workspace", "Workspace"),
}


def load(build_dir: Any = "build", **options: Any) -> Runtime:
    """Read a compiled build folder once; the result renders many times.

    `options` go to `Runtime.load` (`cache_chars`: the bound of each token-count cache).
    """
    from .runtime.engine import Runtime

    return Runtime.load(build_dir, **options)


def __getattr__(name: str) -> Any:
    target = _LAZY.get(name)
    if target is None:
        raise AttributeError(f"module 'promptmill' has no attribute {name!r}")
    import importlib

    module = importlib.import_module(f".{target[0]}", __name__)
    value = getattr(module, target[1])
    globals()[name] = value
    return value
