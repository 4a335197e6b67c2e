"""PM702: a role has an output contract whose instructions no section renders."""

from __future__ import annotations

from ..compose.resolve import ComposedRole
from ..core.diagnostics import Diagnostic
from .context import LintContext


def unrendered_output(role: ComposedRole, ctx: LintContext) -> list[Diagnostic]:
    """PM702 when the contract asks for instructions in the prompt (not native) and no section has `output: true`."""
    contract = ctx.contract
    if contract is None or contract.style == "native" or any(s.source == "output" for s in role.sections):
        return []
    return [
        Diagnostic.at(
            role.role.pos("id"),
            "PM702",
            f"role '{role.role.id}' has output contract '{contract.id}' but no section with `output: true` renders its instructions",
        )
    ]
