"""The role-level lint passes, in the order the compiler runs them after assembling a role.

Each is `(role, ctx) -> diagnostics` (`lints/context.py`) and is named for what it finds.
Template checks that decide whether a section compiles at all (`templates.py`,
`keys.py`, `markup.py`) run while the section is assembled, not here.
"""

from __future__ import annotations

from . import breakpoints, budget, cache, conditions, inputs, literals, output
from .context import LintPass

LINTS: tuple[LintPass, ...] = (
    conditions.condition_mismatches,  # PM607, PM609
    literals.literal_jinja,  # PM410
    output.unrendered_output,  # PM702
    output.lost_constraints,  # PM708
    cache.uncached_prefix,  # PM610, PM611
    breakpoints.cache_breakpoints,  # PM614, PM615
    budget.static_over_budget,  # PM501
    budget.approximate_counts,  # PM505
    inputs.unused_inputs,  # PM404
)
