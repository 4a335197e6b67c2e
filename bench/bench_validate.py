"""Benchmark: compiled closures vs jsonschema on a realistic agent render state.

The state has a task, a subtask, 200 memory entries and 40 tool declarations
with small JSON Schema parameter objects. Prints the time of
`jsonschema.Draft202012Validator.is_valid`, of `Validator.is_valid`, their
ratio, the same with `memory` as a lazy path, and the cost of one `item_valid`.

Run: PYTHONPATH=compiler python bench/bench_validate.py
"""

from __future__ import annotations

import random
import timeit

import jsonschema

from promptmill.runtime.schema.validate import Validator

MEMORY_TYPES = ["observation", "decision", "error", "tool_result", "plan", "note"]

SCHEMA = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "required": ["task", "subtask", "memory", "tools"],
    "additionalProperties": False,
    "properties": {
        "task": {
            "type": "object",
            "required": ["goal"],
            "properties": {
                "goal": {"type": "string", "maxLength": 2000},
                "constraints": {"type": "array", "items": {"type": "string"}},
                "deadline": {"type": ["string", "null"]},
            },
        },
        "subtask": {
            "type": "object",
            "required": ["id", "description"],
            "additionalProperties": False,
            "properties": {
                "id": {"type": "string"},
                "description": {"type": "string"},
                "attempt": {"type": "integer", "minimum": 1},
            },
        },
        "memory": {
            "type": "array",
            "maxItems": 1000,
            "items": {"$ref": "#/$defs/memory_entry"},
        },
        "tools": {
            "type": "array",
            "items": {
                "type": "object",
                "required": ["name", "description", "parameters"],
                "additionalProperties": False,
                "properties": {
                    "name": {"type": "string", "pattern": "^[a-z_]+$"},
                    "description": {"type": "string"},
                    "parameters": {"type": "object"},
                },
            },
        },
    },
    "$defs": {
        "memory_entry": {
            "type": "object",
            "required": ["type", "summary", "relevance"],
            "additionalProperties": False,
            "properties": {
                "type": {"enum": MEMORY_TYPES},
                "summary": {"type": "string", "maxLength": 300},
                "detail": {"type": "string"},
                "relevance": {"type": "number", "minimum": 0, "maximum": 1},
                "tags": {"type": "array", "items": {"type": "string"}},
            },
        }
    },
}


def make_state(seed: int = 1) -> dict:
    rng = random.Random(seed)
    words = "alpha beta gamma delta file read write parse test build error fix plan".split()

    def text(n: int) -> str:
        return " ".join(rng.choice(words) for _ in range(n))

    memory = [
        {
            "type": rng.choice(MEMORY_TYPES),
            "summary": text(20)[:300],
            "detail": text(60),
            "relevance": rng.random(),
            "tags": [rng.choice(words) for _ in range(3)],
        }
        for _ in range(200)
    ]
    tools = [
        {
            "name": f"tool_{chr(97 + i % 26)}{'x' * (i // 26)}",
            "description": text(15),
            "parameters": {
                "type": "object",
                "properties": {
                    "path": {"type": "string", "description": text(5)},
                    "limit": {"type": "integer", "minimum": 1},
                },
                "required": ["path"],
            },
        }
        for i in range(40)
    ]
    return {
        "task": {"goal": text(40), "constraints": [text(6) for _ in range(5)], "deadline": None},
        "subtask": {"id": "st-7", "description": text(25), "attempt": 2},
        "memory": memory,
        "tools": tools,
    }


def best(fn, number: int) -> float:
    """Best mean seconds per call over 5 repeats."""
    return min(timeit.repeat(fn, number=number, repeat=5)) / number


def main() -> None:
    state = make_state()
    slow = jsonschema.Draft202012Validator(SCHEMA)
    fast = Validator(SCHEMA)
    lazy = Validator(SCHEMA, lazy_paths=[("memory",)])
    assert fast.fast and slow.is_valid(state) and fast.is_valid(state) and lazy.is_valid(state)

    t_slow = best(lambda: slow.is_valid(state), 20)
    t_fast = best(lambda: fast.is_valid(state), 200)
    t_lazy = best(lambda: lazy.is_valid(state), 2000)
    item = state["memory"][0]
    t_item = best(lambda: lazy.item_valid(("memory",), item), 20000)
    t_item_js = best(lambda: slow.evolve(schema=SCHEMA["$defs"]["memory_entry"]).is_valid(item), 500)

    print(f"state: {len(state['memory'])} memory entries, {len(state['tools'])} tools")
    print(f"jsonschema is_valid        {t_slow * 1e3:8.3f} ms")
    print(f"Validator.is_valid         {t_fast * 1e3:8.3f} ms   ratio {t_slow / t_fast:6.1f}x")
    print(f"  lazy memory, root only   {t_lazy * 1e3:8.3f} ms   ratio {t_slow / t_lazy:6.1f}x")
    print(f"item_valid (one memory)    {t_item * 1e6:8.2f} us   jsonschema {t_item_js * 1e6:.1f} us   ratio {t_item_js / t_item:6.1f}x")


if __name__ == "__main__":
    main()
