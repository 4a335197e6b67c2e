"""promptmill: a prompt compiler.

Prompt authors write YAML templates; `promptmill.compile()` validates them and
writes section bundles to a build folder; `promptmill.load()` reads a build once
and `Runtime.render()` fills a role with live state under an exact token budget.

Every public name is importable from here (docs/layout.md, "Public and internal
module paths"). Importing this package is cheap: the errors and the version are
imported now, every other name on first use, so the runtime never loads the
compile-time machinery (YAML loader, template validation, Jinja checks, click).
"""

from __future__ import annotations

import importlib
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

if TYPE_CHECKING:  # pragma: no cover
    from .batch.collect import read_result
    from .cli.preview import event_line, pretty, request_data
    from .cli.scaffold import init
    from .compiling.api import CompileResult, LintResult, build_in_memory, compile, lint
    from .compiling.counts import counts, format_counts
    from .compiling.models import format_models, models
    from .compiling.porting import port_format
    from .compiling.typegen import types_module
    from .compiling.typesfile import write_types
    from .compiling.which import format_which, which
    from .compiling.workspace import Workspace
    from .compiling.writer import build_lock
    from .core.boundary import environment_error
    from .replies.parse import parse_reply
    from .review.diff import PromptDiff, diff
    from .review.diffreport import format_diff
    from .review.snapshots import SnapshotCheck, check_snapshots, snapshot
    from .review.testreport import format_check
    from .runtime.buildinfo import build_description, compiled_modules
    from .runtime.engine import Runtime
    from .runtime.request import PromptRequest
    from .runtime.tokenizers import get_tokenizer
    from .runtime.tracing import trace_renders
    from .runtime.typeshash import types_hash
    from .source.loader import load_data_file
    from .source.statefile import read_state
    from .watch import Watcher
    from .wires.anthropic_bedrock import anthropic_bedrock_kwargs
    from .wires.gemini import genai_kwargs

# public name -> (module under promptmill, attribute): imported on first use
_LAZY = {
    # render
    "Runtime": ("runtime.engine", "Runtime"),
    "PromptRequest": ("runtime.request", "PromptRequest"),
    "parse_reply": ("replies.parse", "parse_reply"),
    "get_tokenizer": ("runtime.tokenizers", "get_tokenizer"),
    "trace_renders": ("runtime.tracing", "trace_renders"),
    "genai_kwargs": ("wires.gemini", "genai_kwargs"),
    "anthropic_bedrock_kwargs": ("wires.anthropic_bedrock", "anthropic_bedrock_kwargs"),
    "read_state": ("source.statefile", "read_state"),
    "environment_error": ("core.boundary", "environment_error"),
    "load_data_file": ("source.loader", "load_data_file"),
    # compile
    "compile": ("compiling.api", "compile"),
    "lint": ("compiling.api", "lint"),
    "build_in_memory": ("compiling.api", "build_in_memory"),
    "CompileResult": ("compiling.api", "CompileResult"),
    "LintResult": ("compiling.api", "LintResult"),
    "Workspace": ("compiling.workspace", "Workspace"),
    "build_lock": ("compiling.writer", "build_lock"),
    "which": ("compiling.which", "which"),
    "format_which": ("compiling.which", "format_which"),
    "port_format": ("compiling.porting", "port_format"),
    "models": ("compiling.models", "models"),
    "format_models": ("compiling.models", "format_models"),
    "counts": ("compiling.counts", "counts"),
    "format_counts": ("compiling.counts", "format_counts"),
    "types_module": ("compiling.typegen", "types_module"),
    "write_types": ("compiling.typesfile", "write_types"),
    "types_hash": ("runtime.typeshash", "types_hash"),
    "compiled_modules": ("runtime.buildinfo", "compiled_modules"),
    "build_description": ("runtime.buildinfo", "build_description"),
    # tools around them
    "init": ("cli.scaffold", "init"),
    "pretty": ("cli.preview", "pretty"),
    "request_data": ("cli.preview", "request_data"),
    "event_line": ("cli.preview", "event_line"),
    "Watcher": ("watch", "Watcher"),
    "read_result": ("batch.collect", "read_result"),
    # reviewing prompt changes
    "snapshot": ("review.snapshots", "snapshot"),
    "check_snapshots": ("review.snapshots", "check_snapshots"),
    "SnapshotCheck": ("review.snapshots", "SnapshotCheck"),
    "format_check": ("review.testreport", "format_check"),
    "diff": ("review.diff", "diff"),
    "PromptDiff": ("review.diff", "PromptDiff"),
    "format_diff": ("review.diffreport", "format_diff"),
}

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
    "load",
    "Runtime",
    "PromptRequest",
    "parse_reply",
    "get_tokenizer",
    "trace_renders",
    "genai_kwargs",
    "anthropic_bedrock_kwargs",
    "read_state",
    "load_data_file",
    "environment_error",
    "compile",
    "lint",
    "build_in_memory",
    "CompileResult",
    "LintResult",
    "Workspace",
    "build_lock",
    "which",
    "format_which",
    "port_format",
    "models",
    "format_models",
    "counts",
    "format_counts",
    "types_module",
    "write_types",
    "types_hash",
    "compiled_modules",
    "build_description",
    "init",
    "pretty",
    "request_data",
    "event_line",
    "Watcher",
    "read_result",
    "snapshot",
    "check_snapshots",
    "SnapshotCheck",
    "format_check",
    "diff",
    "PromptDiff",
    "format_diff",
]


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
    module = importlib.import_module(f".{target[0]}", __name__)
    value = getattr(module, target[1])
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))
