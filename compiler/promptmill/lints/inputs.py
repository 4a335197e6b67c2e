"""PM404: an input the role declares but nothing reads.

The compiler records which inputs its sections, conditions and contract checks
use while it compiles them; whatever is declared and never used is reported at
the role (along the extends chain) that declared it.
"""

from __future__ import annotations

from collections.abc import Iterable, Set
from typing import Any

from ..compose.resolve import ComposedRole
from ..core.diagnostics import Diagnostic


def unused_inputs(composed: ComposedRole, declared: Iterable[str], used: Set[str]) -> list[Diagnostic]:
    out = []
    for name in declared:
        if name in used:
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
