"""What a role-level lint pass reads, and the one shape every pass has.

A pass runs after the compiler has assembled a role's sections: it gets the
composed role and a `LintContext` (the sections as compiled, the budget and
counter they were counted with, the inputs compiling them read) and returns
diagnostics. It changes nothing. The passes and their order: `lints/passes.py`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

from ..compose.resolve import ComposedRole, Index
from ..core.diagnostics import Diagnostic
from ..runtime.bundle import Budget, Contract, Section
from ..runtime.counting import Counter
from ..runtime.models import ModelInfo


@dataclass(frozen=True)
class LintContext:
    """What compiling one role found, for the lint passes."""

    index: Index
    sections: tuple[Section, ...]  # in prompt order, messages assigned
    contract: Contract | None  # the compiled output contract, if the role has one that resolved
    budget: Budget
    separator: str
    tokenizer: str  # the tokenizer's name as the role resolved it
    counter: Counter
    used_inputs: frozenset[str]  # top-level inputs that sections, conditions and contract checks read
    model: ModelInfo | None = None  # the role's model's row of the project's model table (None: no model, or no row)


LintPass = Callable[[ComposedRole, LintContext], Iterable[Diagnostic]]
