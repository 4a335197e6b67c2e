"""How far apart are two public models of what OpenAI tool declarations cost?

    PYTHONPATH=compiler python bench/bench_tool_estimates.py

OpenAI does not publish how function declarations are fed to its models, so
any count is an estimate. promptmill renders the TypeScript-like
`namespace functions { ... }` block that public write-ups recovered from the
models and counts it (`Wire.tool_cost` of the openai wire, +9 tokens of framing, rounded up
by 20%). OpenAI's cookbook ("How to count tokens with tiktoken") instead adds
fixed per-function and per-property constants to the tokens of
`name:description` and `key:type:description` lines (constants for gpt-4o:
7 per function, 3 to open the properties, 3 per property, -3 per enum plus 3
per enum value, 12 at the end). Neither is exact for nested schemas; the gap
between them is a fair size for the uncertainty, and the 20% pad should cover
it. This prints both for the shipped tools and a few harder ones.
"""

from __future__ import annotations

from pathlib import Path

import yaml

from promptmill.runtime import tooldecl
from promptmill.runtime.counting import Counter
from promptmill.runtime.tokenizers import get_tokenizer
from promptmill.wires import _tools, get_wire, openai_chat

ROOT = Path(__file__).resolve().parent.parent


def cookbook_model(tok, tools: list[dict]) -> int:
    """The cookbook's constant-based model (gpt-4o constants), written from its description."""
    total = 0
    for t in tools:
        n = 7 + tok.count(f"{t['name']}:{t.get('description', '')}")
        props = (t.get("parameters") or {}).get("properties") or {}
        if props:
            n += 3
            for key, p in props.items():
                n += 3
                if "enum" in p:
                    n += -3 + sum(3 + tok.count(str(v)) for v in p["enum"])
                desc = str(p.get("description", "")).removesuffix(".")
                n += tok.count(f"{key}:{p.get('type', 'object')}:{desc}")
        total += n
    return total + 12 if tools else 0


def tool_sets() -> dict[str, list[dict]]:
    base = yaml.safe_load((ROOT / "prompts" / "modes" / "base.yaml").read_text())
    declared = next(s for s in base["sections"] if s["id"] == "message_tools")["declare"]
    executor = yaml.safe_load((ROOT / "prompts" / "examples" / "executor.state.yaml").read_text())["tools"]
    chat = yaml.safe_load((ROOT / "prompts" / "examples" / "companion-chat.state.yaml").read_text())["tools"]
    nested = [
        {
            "name": "create_plan",
            "description": "Create a plan of subtasks.",
            "parameters": {
                "type": "object",
                "required": ["subtasks"],
                "properties": {
                    "goal": {"type": "string", "description": "What the plan achieves."},
                    "subtasks": {
                        "type": "array",
                        "items": {
                            "type": "object",
                            "required": ["id"],
                            "properties": {
                                "id": {"type": "string"},
                                "depends_on": {"type": "array", "items": {"type": "string"}},
                                "kind": {"enum": ["code", "test", "docs"]},
                            },
                        },
                    },
                },
            },
        }
    ]
    enums = [
        {
            "name": "set_mood",
            "description": "Set the mood.",
            "parameters": {
                "type": "object",
                "properties": {
                    "mood": {"type": "string", "enum": ["calm", "curious", "playful", "tired", "focused"], "description": "The new mood."}
                },
            },
        }
    ]
    return {
        "executor (2 flat)": executor,
        "companion message tools": declared,
        "companion app tool": chat,
        "all of the above": executor + declared + chat,
        "nested plan tool": nested,
        "enum tool": enums,
    }


def main() -> None:
    tok = get_tokenizer("o200k_base")
    counter = Counter(tok)
    print(f"{'tool set':<26} {'promptmill':>10} {'unpadded':>9} {'cookbook':>9} {'gap':>6}")
    for name, tools in tool_sets().items():
        decls = [tooldecl.normalize(t) for t in tools]
        ours = get_wire("openai").tool_cost(counter, decls)
        texts = [_tools.openai_function_text(d) for d in decls]
        unpadded = counter.count_parts([openai_chat.TOOLS_HEAD, *texts, openai_chat.TOOLS_TAIL]) + openai_chat.TOOLS_OVERHEAD
        other = cookbook_model(tok, tools)
        gap = (unpadded - other) / other
        print(f"{name:<26} {ours:>10} {unpadded:>9} {other:>9} {gap:>+6.0%}")
    print("promptmill: what the budget counts (padded by 20%); unpadded: the rendering plus framing;")
    print("cookbook: OpenAI's constant-based model; gap: unpadded relative to cookbook.")


if __name__ == "__main__":
    main()
