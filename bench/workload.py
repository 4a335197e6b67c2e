"""The realistic executor workload shared by the render benchmarks.

A seven-section executor role (role, task state, subtask, retrieved memory,
tools, output format, constraints) written as YAML into a temporary project,
and generated states: task state of about 600 tokens of YAML, N memory entries
of 60-120 tokens each with a relevance score, T tool declarations with
JSON-schema parameters. `fresh` makes every text unique so no cache can help.
"""

from __future__ import annotations

import random
import tempfile
from collections.abc import Iterator
from pathlib import Path

WORDS = (
    "the build step parser module config cache token budget memory entry subtask install tests run "
    "pytest function returns value error path file workspace agent planner executor verifier schema "
    "field request response timeout retry database migration index query latency commit branch "
    "review deploy container image version dependency lockfile import export handler route user"
).split()

ROLE = """\
kind: role
id: executor
description: Executes one subtask (benchmark workload).
budget: {max_tokens: 100000, reserve: 0}
separator: "\\n\\n---\\n\\n"
inputs:
  type: object
  required: [task_state, subtask, memory, tools]
  properties:
    task_state: {type: string}
    subtask:
      type: object
      required: [id, description]
      properties:
        id: {type: string}
        description: {type: string}
        acceptance_criteria: {type: string}
    memory:
      type: array
      items:
        type: object
        required: [type, summary, relevance]
        properties:
          type: {enum: [decision, error, tool_result, discovery, artifact, context]}
          summary: {type: string}
          relevance: {type: number}
    tools:
      type: array
      items:
        type: object
        required: [name, description, parameters]
        properties:
          name: {type: string}
          description: {type: string}
          parameters: {type: object}
sections:
  - id: role
    text: |
      You are a task execution assistant. You complete ONE specific subtask using
      the available tools. You do NOT plan ahead or think about other subtasks.
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
      Acceptance criteria: {{ subtask.acceptance_criteria }}
    trim: never
  - id: memory
    title: "RELEVANT CONTEXT FROM PRIOR WORK:"
    each: memory
    as: entry
    template: "- [{{ entry.type }}] {{ entry.summary }}"
    order_by: relevance
    priority: 10
  - id: tools
    title: "AVAILABLE TOOLS:"
    tools: tools
    priority: 20
  - id: output_format
    text: |
      Complete the subtask using tool calls. When finished, provide a brief
      summary of what you accomplished (2-3 sentences max).
  - id: constraints
    title: "CRITICAL RULES:"
    text: |
      - Complete ONLY the current subtask. Do NOT proceed to the next one.
      - Do NOT explain your reasoning unless asked. Just act.
      - Do NOT modify files outside the workspace.
      - Do NOT fabricate file contents or data. Read actual files before editing.
      - Keep tool calls minimal. Read before writing.
"""


def project() -> Path:
    """A temporary project holding the workload role; returns its folder."""
    root = Path(tempfile.mkdtemp(prefix="promptmill-bench-"))
    (root / "prompts").mkdir()
    (root / "prompts" / "executor.yaml").write_text(ROLE, encoding="utf-8")
    return root


def _sentence(rng: random.Random, n: int, nonce: str) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(n)) + f" ({nonce})."


def task_state(rng: random.Random, nonce: str) -> str:
    lines = ["goal: " + _sentence(rng, 20, nonce), "workspace: /work/repo", "status: in_progress", "subtasks:"]
    for i in range(14):
        lines.append(f"  - id: step-{i}-{nonce}")
        lines.append(f"    status: {rng.choice(['completed', 'pending', 'running'])}")
        lines.append("    note: " + _sentence(rng, 14, nonce))
    return "\n".join(lines)


def state(entries: int, tools: int, *, seed: int = 0, fresh: str = "") -> dict:
    """A render state; `fresh` is mixed into every text so each state is unique."""
    rng = random.Random(seed)
    memory = [
        {
            "type": rng.choice(["decision", "error", "tool_result", "discovery", "artifact", "context"]),
            "summary": _sentence(rng, rng.randint(50, 100), f"{fresh}{i}"),
            "relevance": rng.random(),
        }
        for i in range(entries)
    ]
    tool_list = [
        {
            "name": f"tool_{i}_{fresh}" if fresh else f"tool_{i}",
            "description": _sentence(rng, 20, f"{fresh}{i}"),
            "parameters": {
                "type": "object",
                "properties": {
                    "path": {"type": "string", "description": _sentence(rng, 8, fresh)},
                    "mode": {"type": "string", "enum": ["read", "write", "append"]},
                    "limit": {"type": "integer", "minimum": 1},
                },
                "required": ["path"],
            },
        }
        for i in range(tools)
    ]
    return {
        "task_state": task_state(rng, fresh),
        "subtask": {
            "id": f"add-types-{fresh}",
            "description": _sentence(rng, 20, fresh),
            "acceptance_criteria": _sentence(rng, 12, fresh),
        },
        "memory": memory,
        "tools": tool_list,
    }


def dynamic_texts(st: dict) -> list[str]:
    """All dynamic content a renderer could be offered, as text (for encode-all)."""
    import json

    out = [st["task_state"], json.dumps(st["subtask"])]
    out += [f"- [{m['type']}] {m['summary']}" for m in st["memory"]]
    out += [f"- {t['name']}: {t['description']}\n  parameters: {json.dumps(t['parameters'])}" for t in st["tools"]]
    return out


def agent_turns(entries: int, tools: int, turns: int, *, seed: int = 0, fresh: str = "", recur: float = 0.9) -> Iterator[dict]:
    """The states of `turns` turns of one agent loop. The first is `state(...)`; each next
    turn keeps the same tools (the same objects), keeps `recur` of the memory entries
    (the same texts) with new relevance scores, replaces the rest with new entries,
    and changes a few lines of the task state (three steps get a new status and note)."""
    rng = random.Random(seed + 7919)
    st = state(entries, tools, seed=seed, fresh=fresh)
    serial = entries  # new entries continue the numbering: "(<fresh><n>)." stays unique
    for turn in range(turns):
        yield st
        memory = [dict(m, relevance=rng.random()) for m in rng.sample(st["memory"], round(entries * recur))]
        for _ in range(entries - len(memory)):
            memory.append(
                {
                    "type": rng.choice(["decision", "error", "tool_result", "discovery", "artifact", "context"]),
                    "summary": _sentence(rng, rng.randint(50, 100), f"{fresh}{serial}"),
                    "relevance": rng.random(),
                }
            )
            serial += 1
        rng.shuffle(memory)
        lines = st["task_state"].split("\n")
        for step in rng.sample(range(14), 3):
            lines[5 + 3 * step] = f"    status: {rng.choice(['completed', 'pending', 'running'])}"
            lines[6 + 3 * step] = "    note: " + _sentence(rng, 14, f"{fresh}t{turn}")
        st = {"task_state": "\n".join(lines), "subtask": st["subtask"], "memory": memory, "tools": st["tools"]}
