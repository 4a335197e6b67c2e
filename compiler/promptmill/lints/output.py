"""PM702: a role has an output contract whose instructions no section renders.
PM708: a native contract loses schema keywords on some wires (runtime/schemaprofiles.py)."""

from __future__ import annotations

from ..compose.contracts import lost_by_wire
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


def lost_constraints(role: ComposedRole, ctx: LintContext) -> list[Diagnostic]:
    """PM708 (info) when a native contract's schema has constraints some wire drops or rejects:
    one diagnostic per role, one entry per keyword and reply path naming the wires that lose it.
    Every wire that carries native contracts is listed, not only the role's model's: a role is
    rendered for any wire. Nothing is wrong: the prompt states each lost constraint on those wires
    and parse_reply checks the reply against the full schema; the list says where decoding won't.
    A warning instead when no section has `output: true`: then the prompt cannot state them."""
    contract = ctx.contract
    if contract is None or contract.style != "native":
        return []
    entries: dict[tuple[str, str], dict[str, list[str]]] = {}
    for wire, lost in lost_by_wire(contract.schema).items():
        for path, keyword, _, fate in lost:
            entries.setdefault((path, keyword), {}).setdefault(fate, []).append(wire)
    if not entries:
        return []
    parts = []
    for (path, keyword), fates in entries.items():
        wires = ", ".join(f"{fate} by {'/'.join(names)}" for fate, names in sorted(fates.items()))
        parts.append(f"{keyword} at {path} ({wires})")
    where = role.role.pos("output") if "output" in role.role.data else role.role.pos("id")
    message = f"role '{role.role.id}': native output contract '{contract.id}' loses schema keywords on some wires: " + "; ".join(parts)
    if not any(s.source == "output" for s in role.sections):  # the limits section follows the output section
        return [
            Diagnostic.at(
                where,
                "PM708",
                message + "; no section has `output: true`, so the prompt does not state them",
                hint="add a section with `output: true` (the lost limits are stated right after it); parse_reply still checks every reply",
                severity="warning",
            )
        ]
    return [
        Diagnostic.at(
            where,
            "PM708",
            message,
            hint="nothing to do unless decoding must enforce it: the prompt states each lost limit on those wires, and parse_reply "
            "still checks every reply against the full schema (use enum or a shape the wire enforces to have decoding keep it)",
        )
    ]
