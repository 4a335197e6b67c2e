"""Generate a realistic promptmill project for benchmarks and soak runs.

    python bench/genproject.py OUT_DIR [--roles 50]

Writes promptmill.yaml, a base role, N roles extending it, shared fragments,
constraint sets and an output contract, and `state.yaml` fitting every role.
Used by bench_watch.py and soak_watch.py; deterministic for a given N.
"""

from __future__ import annotations

import argparse
from pathlib import Path

CONFIG = """\
prompts: prompts
build: build
tokenizer: o200k_base
budget:
  max_tokens: 16000
  reserve: 2000
"""

BASE = """\
kind: role
id: base-agent
abstract: true
description: Shared shape of every generated agent role.
category: agent
separator: "\\n\\n---\\n\\n"
output: result
context:
  system: [shared/identity]
inputs:
  type: object
  required: [task_state, subtask]
  properties:
    task_state: {type: string}
    subtask:
      type: object
      required: [id, description]
      properties:
        id: {type: string}
        description: {type: string}
    memory:
      type: array
      items:
        type: object
        required: [type, summary]
        properties:
          type: {type: string}
          summary: {type: string}
          relevance: {type: number}
sections:
  - id: task_state
    title: "CURRENT TASK STATE:"
    template: "{{ task_state }}"
    priority: 90
    trim: truncate
  - id: subtask
    title: "YOUR CURRENT SUBTASK:"
    template: |
      ID: {{ subtask.id }}
      Description: {{ subtask.description }}
    trim: never
  - id: memory
    title: "RELEVANT CONTEXT FROM PRIOR WORK:"
    each: memory
    as: entry
    template: "- [{{ entry.type }}] {{ entry.summary }}"
    order_by: relevance
    priority: 10
  - id: output_format
    output: true
"""

ROLE = """\
kind: role
id: {rid}
extends: base-agent
description: Generated role number {n} for benchmarks.
sections:
  - id: role
    before: task_state
    text: |
      You are agent {n}. {blurb}
  - id: guidance
    after: subtask
    fragment: shared/guide-{g}
  - id: constraints
    title: "CONSTRAINTS:"
    constraints: [common, set-{g}, safety]
"""

FRAGMENT = """\
kind: fragment
id: shared/guide-{g}
name: Guide{g}
description: Guidance block {g}.
text: |
{body}
"""

IDENTITY = """\
kind: fragment
id: shared/identity
name: Identity
description: Who the agent is.
text: |
  You are one step of an autonomous software agent. Do one thing, then stop.
"""

CONSTRAINTS = """\
kind: constraints
id: set-{g}
title: "Set {g}:"
description: Generated constraint set {g}.
rules:
{rules}
"""

CONTRACT = """\
kind: output
id: result
description: What a generated role returns.
style: json
instructions: When you stop, reply with a short summary.
schema:
  type: object
  additionalProperties: false
  required: [status, summary]
  properties:
    status: {enum: [done, blocked]}
    summary: {type: string}
"""

STATE = """\
task_state: |
  goal: make the parser faster without changing its output
  status: in_progress
subtask:
  id: profile
  description: Profile the parser on the large fixture and report the hot spots.
memory:
"""

BLURB = "Work carefully, check your facts with tools, and report what you changed. " * 3


def role_file(n: int, edit: int = 0) -> str:
    """Text of generated role `n`; `edit` varies its wording (for benchmark saves)."""
    blurb = BLURB + (f"(revision {edit})" if edit else "")
    return ROLE.format(rid=f"agent-{n:03d}", n=n, g=n % 5, blurb=blurb)


def make_project(out: Path, roles: int = 50) -> Path:
    """Write the project into `out` (created); returns the state file path."""
    prompts = out / "prompts"
    for sub in ("roles", "fragments", "constraints", "contracts"):
        (prompts / sub).mkdir(parents=True, exist_ok=True)
    (out / "promptmill.yaml").write_text(CONFIG)
    (prompts / "roles" / "base-agent.yaml").write_text(BASE)
    for n in range(roles):
        (prompts / "roles" / f"agent-{n:03d}.yaml").write_text(role_file(n))
    (prompts / "fragments" / "identity.yaml").write_text(IDENTITY)
    for g in range(5):
        body = "\n".join(f"  Guideline {g}.{i}: keep step {i} small and verify it before moving on." for i in range(12))
        (prompts / "fragments" / f"guide-{g}.yaml").write_text(FRAGMENT.format(g=g, body=body))
        rules = "\n".join(f"  - id: rule-{g}-{i}\n    text: Rule {i} of set {g} - never skip verification step {i}." for i in range(8))
        (prompts / "constraints" / f"set-{g}.yaml").write_text(CONSTRAINTS.format(g=g, rules=rules))
    (prompts / "contracts" / "result.yaml").write_text(CONTRACT)
    memory = "".join(
        f'  - {{type: discovery, summary: "finding {i}: the tokenizer loop allocates per call", relevance: {i / 40:.3f}}}\n'
        for i in range(40)
    )
    state = out / "state.yaml"
    state.write_text(STATE + memory)
    return state


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--roles", type=int, default=50)
    args = parser.parse_args()
    state = make_project(args.out, args.roles)
    print(f"wrote {args.roles} roles to {args.out}; state: {state}")


if __name__ == "__main__":
    main()
