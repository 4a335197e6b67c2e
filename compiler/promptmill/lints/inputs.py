"""PM404: an input the role declares but nothing reads.

The compiler records which inputs its sections, conditions and contract checks
use while it compiles them; whatever is declared and never used is reported at
the role (along the extends chain) that declared it.
"""

from __future__ import annotations

from typing import Any

from ..compose.resolve import ComposedRole
from ..core.diagnostics import Diagnostic
from .context import LintContext


def unused_inputs(composed: ComposedRole, ctx: LintContext) -> list[Diagnostic]:
    """PM404 for each declared top-level input outside `ctx.used_inputs` (abstract roles are not checked)."""
    if composed.role.abstract:
        return []
    out = []
    for name in _properties(composed.inputs):
        if name in ctx.used_inputs:
            continue
        owner = next((r for r in reversed(composed.chain) if name in _properties(r.get("inputs"))), composed.role)
        out.append(
            Diagnostic.at(
                owner.key_pos("inputs", "properties", name),
                "PM404",
                f"input '{name}' is declared but no section, condition or check of role '{composed.role.id}' uses it",
            )
        )
    return out


def _properties(inputs: Any) -> Any:
    return (inputs or {}).get("properties") or {}
