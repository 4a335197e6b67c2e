"""Exceptions promptmill raises for mistakes a user can make.

Every error carries a stable `code` (see `promptmill.core.codes` and docs/errors.md)
and a message that says what was expected. Compile-time failures carry their
diagnostics; render-time failures name the render-state path or the section.
The CLI turns any `PromptmillError` into a message and a non-zero exit, never a
traceback.
"""

from __future__ import annotations

from collections.abc import Sequence

from .diagnostics import Diagnostic


class PromptmillError(Exception):
    """Base class: a user-facing failure with a stable code."""

    code: str = "PM000"

    def __init__(self, message: str, *, code: str | None = None, hint: str | None = None):
        super().__init__(message)
        if code is not None:
            self.code = code
        self.message = message
        self.hint = hint

    def __str__(self) -> str:
        text = f"[{self.code}] {self.message}"
        if self.hint:
            text += f"\n    hint: {self.hint}"
        return text


class CompileError(PromptmillError):
    """Templates did not compile; `diagnostics` says where and why."""

    code = "PM001"

    def __init__(self, diagnostics: Sequence[Diagnostic], message: str | None = None):
        self.diagnostics = tuple(diagnostics)
        errors = [d for d in self.diagnostics if d.severity == "error"]
        summary = message or f"{len(errors)} error(s) in templates"
        if errors and message is None:
            summary += ":\n" + "\n".join(d.format() for d in errors[:20])
            if len(errors) > 20:
                summary += f"\n... and {len(errors) - 20} more"
        super().__init__(summary)


class ConfigError(PromptmillError):
    """The project configuration (promptmill.yaml or an argument) is unusable."""

    code = "PM010"


class ScaffoldError(PromptmillError):
    """`promptmill init` or `schema --write` would overwrite files, or cannot write them."""

    code = "PM013"


class BuildError(PromptmillError):
    """A build folder is missing, corrupt, or from an incompatible version."""

    code = "PM801"


class UnknownRoleError(PromptmillError):
    """A role id that the build does not contain."""

    code = "PM802"


class StateError(PromptmillError):
    """The render state does not match the role's inputs schema.

    `errors` holds `(state_path, message)` pairs such as
    `("state.subtask.id", "is required")`.
    """

    code = "PM810"

    def __init__(self, role: str, errors: Sequence[tuple[str, str]], *, code: str | None = None):
        self.role = role
        self.errors = tuple(errors)
        lines = [f"{path}: {msg}" for path, msg in self.errors[:20]]
        if len(self.errors) > 20:
            lines.append(f"... and {len(self.errors) - 20} more")
        super().__init__(f"render state for role '{role}' is invalid:\n  " + "\n  ".join(lines), code=code)


class StateFileError(PromptmillError):
    """A render-state file that cannot be read or parsed (PM813) or is too large (PM812)."""

    code = "PM813"


class RenderError(PromptmillError):
    """A template failed while filling it with the state."""

    code = "PM820"


class BudgetError(PromptmillError):
    """The budget cannot be met: it is invalid, or the untrimmable sections exceed it."""

    code = "PM830"


class ProviderError(PromptmillError):
    """An unknown provider name or a request that cannot be expressed for it."""

    code = "PM840"


class TokenizerError(PromptmillError):
    """An unknown tokenizer, or tokenizer data that failed its integrity check."""

    code = "PM850"


class ReplyError(PromptmillError):
    """A model reply that does not satisfy the role's output contract.

    `errors` holds `(reply_path, message)` pairs; `repair_message()` returns a
    short instruction a caller can send back to the model.
    """

    code = "PM860"

    def __init__(
        self,
        message: str,
        errors: Sequence[tuple[str, str]] = (),
        *,
        code: str | None = None,
        contract: str | None = None,
        instruction: str | None = None,
    ):
        self.errors = tuple(errors)
        self.contract = contract
        self.instruction = instruction
        detail = message
        if self.errors:
            detail += ":\n  " + "\n  ".join(f"{p}: {m}" for p, m in self.errors[:20])
        super().__init__(detail, code=code)
        self.summary = message

    def repair_message(self) -> str:
        """A message to send back to the model: what was wrong, where, and how to answer."""
        lines = [f"Your previous reply could not be used: {self.summary}."]
        if self.errors:
            lines.append("Problems:")
            lines.extend(f"- {p}: {m}" for p, m in self.errors[:20])
            if len(self.errors) > 20:
                lines.append(f"- ... and {len(self.errors) - 20} more")
        lines.append(self.instruction or "Reply again with only the corrected result, in the required format.")
        return "\n".join(lines)
