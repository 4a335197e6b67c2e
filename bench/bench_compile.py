"""Compile, recompile and lint times for a generated project of N roles.

    python bench/bench_compile.py            # 1,000 roles
    python bench/bench_compile.py --roles 200

Prints full compile, no-op recompile (nothing changed), recompile after one
role file changed, and lint, each timed in this one run, with ratios.
"""

from __future__ import annotations

import argparse
import shutil
import tempfile
import time
from pathlib import Path

import promptmill

ROLE = """\
kind: role
id: role-{i:04d}
description: Generated role number {i} for the compile benchmark.
category: bench
extends: base
budget: {{max_tokens: 16000, reserve: 2000}}
output: result
inputs:
  type: object
  required: [task, items]
  properties:
    task:
      type: object
      required: [id, goal]
      properties:
        id: {{type: string}}
        goal: {{type: string}}
    items:
      type: array
      items:
        type: object
        properties:
          text: {{type: string}}
          score: {{type: number}}
sections:
  - id: intro
    text: |
      You are helper number {i}. {filler}
  - id: task
    title: "TASK:"
    template: |
      Task {{{{ task.id }}}}: {{{{ task.goal }}}}
    trim: never
  - id: items
    title: "NOTES:"
    each: items
    as: note
    template: "- {{{{ note.text }}}}"
    order_by: score
    priority: 10
  - id: output
    output: true
  - id: rules
    title: "RULES:"
    constraints: [common, executor, safety]
"""

BASE = """\
kind: role
id: base
abstract: true
context:
  system: [agent/core/identity]
sections: []
"""

CONTRACT = """\
kind: output
id: result
style: json
schema:
  type: object
  required: [status, summary]
  properties:
    status: {enum: [done, blocked]}
    summary: {type: string}
"""

FILLER = (
    "Work carefully through the task, read what you need before acting, and keep your answer short. "
    "Prefer small steps that can be checked, and say plainly when something is missing. "
) * 4


def make_project(n: int) -> Path:
    root = Path(tempfile.mkdtemp(prefix="promptmill-compile-"))
    prompts = root / "prompts"
    (prompts / "roles").mkdir(parents=True)
    (prompts / "base.yaml").write_text(BASE)
    (prompts / "result.yaml").write_text(CONTRACT)
    for i in range(n):
        (prompts / "roles" / f"role-{i:04d}.yaml").write_text(ROLE.format(i=i, filler=FILLER))
    (root / "promptmill.yaml").write_text("prompts: prompts\nbuild: build\n")
    return root


def timed(fn):
    t = time.perf_counter()
    result = fn()
    return time.perf_counter() - t, result


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--roles", type=int, default=1000)
    args = ap.parse_args()
    root = make_project(args.roles)
    size = sum(p.stat().st_size for p in (root / "prompts").rglob("*.yaml"))
    print(f"project: {args.roles} roles, {size / 1024:.0f} KiB of YAML in {root}")
    full, result = timed(lambda: promptmill.compile(root))
    assert len(result.compiled) == args.roles, result
    noop, result = timed(lambda: promptmill.compile(root))
    assert result.up_to_date
    target = root / "prompts" / "roles" / "role-0007.yaml"
    target.write_text(target.read_text().replace("helper number 7.", "helper number seven."))
    one, result = timed(lambda: promptmill.compile(root))
    assert result.compiled == ("role-0007",) and len(result.reused) == args.roles - 1, result
    lint, result = timed(lambda: promptmill.lint(root))
    assert result.ok()
    check, result = timed(lambda: promptmill.compile(root, check=True))
    assert not result.stale
    print(f"  full compile            {full:8.3f} s")
    print(f"  no-op recompile         {noop:8.3f} s   ({noop / full:6.3f}x of full)")
    print(f"  one role changed        {one:8.3f} s   ({one / full:6.3f}x of full)")
    print(f"  lint                    {lint:8.3f} s   ({lint / full:6.3f}x of full)")
    print(f"  compile --check         {check:8.3f} s   ({check / full:6.3f}x of full)")
    shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
