"""Write the token fixtures of the TypeScript runtime: what the Python runtime counts, cuts and costs.

- `texts`: a varied corpus (the fast-tokenizer self-check corpus of runtime/tokenizers.py, scripts, emoji
  sequences, combining marks, long runs of one letter and of whitespace, code and prose from this repository,
  lone surrogates) with, for o200k_base, cl100k_base and approx: the count, tiktoken's ids (exact encodings) and
  `truncate(text, n, keep)` for a few `n`, head and tail (the Python runtime's `get_tokenizer(name)`, which counts
  with tiktoken itself: PROMPTMILL_FAST_TOKENIZER=0 is set);
- `parts`: texts split into pieces at several places, with `Counter.count_parts` (equal to the count of the whole);
- `wires`: per wire, what its counting model gives the tool declarations and output contracts of the shipped
  roles (`tool_text`, `tool_item_cost`, `tool_frame_cost`, `tool_cost`, `output_cost`, `extra_tools`,
  `forced_tool`) and each bundle's layout (`stable_head`, `split_at`, the container key of every section).

    . .venv/bin/activate; PYTHONPATH=$PWD/compiler python runtimes/typescript/scripts/gen-token-fixtures.py

- `schemas`: the schema forms and profiles (`openai_strict`, `gemini_schema`, each profile's `lost_keywords` and
  `without_rejected`) of the shipped contracts' schemas, the tools' parameters and a few schemas written here;
- `models` (a second file, models.json): the model table's answers for model ids (shipped patterns and known ids,
  dated, Vertex and Bedrock ids, typos, unknown and malformed ids): `lookup` (the row, or the error), `near_miss`,
  every wire's `serving_problem`, and `max_ratio` per provider.

writes runtimes/typescript/test/fixtures/tokens.json.gz (read by test/tokenizers.test.mjs and test/wire-costs.test.mjs)
and test/fixtures/models.json (test/models.test.mjs).
"""

from __future__ import annotations

import gzip
import json
import os
import random
from dataclasses import replace
from pathlib import Path

os.environ["PROMPTMILL_FAST_TOKENIZER"] = "0"  # tiktoken itself, not the fast backend

from promptmill.runtime.bundle import Contract
from promptmill.runtime.counting import Counter
from promptmill.runtime.engine import Runtime
from promptmill.runtime.registry import WIRE_NAMES
from promptmill.runtime.tokenizers import Tokenizer, get_tokenizer, self_check_corpus
from promptmill.runtime.wire import get_wire

ROOT = Path(__file__).resolve().parents[3]
OUT = ROOT / "runtimes" / "typescript" / "test" / "fixtures" / "tokens.json.gz"
ENCODINGS = ("o200k_base", "cl100k_base", "approx")


def corpus() -> list[str]:
    texts = list(self_check_corpus())
    texts += [
        "e\u0301\u0302\u0303 a\u0308\u0308\u0308\u0308 Z\u0351\u0352\u0353\u0354\u0355\u0356\u0357\u0358\u0359",  # combining marks
        "👩🏽\u200d💻 🧑\u200d🤝\u200d🧑 👨\u200d👨\u200d👧 🇫🇷🇺🇸🇧🇷🇯🇵🇰🇷 #️⃣ 1️⃣ ©️ ❤️\u200d🔥",
        "\U0001f1e6" * 9 + "x",  # a run of regional indicators (flags pair from the start)
        "한국어 텍스트 \u1100\u1161\u11a8 \u1112\u1161\u11ab",  # Hangul syllables and jamo
        "मनुष्य क्षत्रिय ज्ञान स्त्री ",  # Devanagari conjuncts
        "مرحبا بالعالم، كيف حالك؟ ١٢٣٤٥ שלום עולם",
        "東京都渋谷区神南1-2-3　カタカナ　ｈａｌｆ　ｗｉｄｔｈ",
        " " * 4000 + "end",
        "\n" * 2500 + "x",
        "\t \t \n" * 700,
        "a" * 9000,
        "Ab" * 4000 + "1" * 1000,
        "word " * 1500,
        "x\r\ny\r\n\r\nz\rw",
        "\ud800 lone \udc00 surrogates \ud83d",  # as JSON allows them
        "It's they'RE we'VE ſ'ſ i'LL don'T",
        "line one  \n   \n\n  line two\t\t\n/path/to//file",
        "<|endoftext|> <|endofprompt|> <|fim_prefix|>",
    ]
    # real prose, JSON and code from files that change rarely (a README edit must not make the fixture stale)
    for rel in (
        "LICENSE",
        "tests/golden/renderers/replanner.gemini.json",
        "tests/golden/renderers/companion-beat.anthropic.json",
        "tools/graph_svg.py",
    ):
        text = (ROOT / rel).read_text(encoding="utf-8")
        texts.append(text[:6000])
    return texts


def truncations(tok: Tokenizer, text: str) -> list[list]:
    n = tok.count(text)
    out = []
    for k in sorted({1, 2, 3, 7, n // 3, n // 2, n - 1}):
        if k <= 0 or k >= n:
            continue
        for keep in ("head", "tail"):
            out.append([k, keep, tok.truncate(text, k, keep)])
    return out


def parts_cases(texts: list[str], rng: random.Random) -> list[dict]:
    out = []
    for text in texts:
        if len(text) < 4:
            continue
        for _ in range(3):
            cuts = sorted(rng.sample(range(1, len(text)), min(len(text) - 1, rng.randint(1, 12))))
            pieces = [text[a:b] for a, b in zip([0, *cuts], [*cuts, len(text)], strict=True)]
            row: dict = {"pieces": pieces}
            for name in ENCODINGS:
                row[name] = Counter(get_tokenizer(name)).count_parts(pieces)
            out.append(row)
    # prompt-shaped joins: titles, separators, items
    shaped = [
        ["NOTES:\n", "- alpha\n", "- beta\n", "- gamma"],
        ["You answer briefly.", "\n\n", "DOC:\n", "x"],
        ["a", "'", "s b"],
        ["it", "'s", " fine"],
    ]
    for pieces in shaped:
        row2: dict = {"pieces": pieces}
        for name in ENCODINGS:
            row2[name] = Counter(get_tokenizer(name)).count_parts(pieces)
        out.append(row2)
    return out


def shipped_decls(runtime: Runtime) -> list[dict]:
    """Tool declarations: the ones the shipped native roles send, and two written here."""
    from promptmill.cli.preview import request_data
    from promptmill.source.statefile import read_state

    decls: list[dict] = []
    for role in ("companion-beat", "companion-chat", "companion-delivery"):
        state = read_state(str(ROOT / "prompts" / "examples" / f"{role}.state.yaml"))
        decls += [dict(d) for d in request_data(runtime.render(role, state, provider="openai"))["tools"]]
    decls += [
        {"name": "noargs", "description": "", "parameters": {"type": "object", "properties": {}}},
        {
            "name": "typed",
            "description": "Every type the TypeScript rendering writes",
            "parameters": {
                "type": "object",
                "required": ["s", "arr"],
                "properties": {
                    "s": {"type": "string", "description": "a string"},
                    "n": {"type": ["integer", "null"]},
                    "e": {"enum": ["a", "b", 3, None]},
                    "c": {"const": "fixed"},
                    "arr": {"type": "array", "items": {"anyOf": [{"type": "string"}, {"type": "number"}]}},
                    "obj": {"type": "object", "properties": {"deep": {"type": "boolean", "description": "nested"}}},
                    "free": {"type": "object"},
                    "u": {"oneOf": [{"type": "string"}, {"type": "null"}]},
                    "emoji 🙂": {"type": "string", "pattern": "^x+$", "minLength": 2, "maxItems": 3},
                    "nums": {
                        "type": "array",
                        "items": {"type": "number", "minimum": 0, "multipleOf": 0.5},
                        "minItems": 2,
                        "uniqueItems": True,
                    },
                },
            },
        },
    ]
    return decls


def main() -> None:
    rng = random.Random(37)
    texts = corpus()
    rows = []
    for text in texts:
        row: dict = {"text": text}
        for name in ENCODINGS:
            tok = get_tokenizer(name)
            counted: dict = {"count": tok.count(text), "truncate": truncations(tok, text)}
            if name != "approx":
                counted["ids"] = tok.encode(text)  # type: ignore[attr-defined]
            row[name] = counted
        rows.append(row)
    runtime = Runtime.load(ROOT / "build")
    counter = Counter(get_tokenizer("o200k_base"))
    decls = shipped_decls(runtime)
    contracts: list[Contract] = [c for c in (runtime.bundle(role).output for role in runtime.roles) if c is not None]
    # every schema also as a native contract: the cost of its structured-output field and forced tool on every wire
    contracts += [replace(c, style="native") for c in contracts]
    contracts += [replace(c, style="return_call") for c in contracts[: len(contracts) // 2]]
    wires = {}
    for name in WIRE_NAMES:
        wire = get_wire(name)
        entry: dict = {}
        if not wire.single:
            texts_ = [wire.tool_text(d) for d in decls]
            entry["tool_text"] = texts_
            entry["tool_item_cost"] = [wire.tool_item_cost(counter, t) for t in texts_]
            entry["tool_frame_cost"] = [wire.tool_frame_cost(counter, False), wire.tool_frame_cost(counter, True)]
            entry["tool_cost"] = [wire.tool_cost(counter, decls[:k], forced) for k in range(len(decls) + 1) for forced in (False, True)]
        entry["output_cost"] = [wire.output_cost(counter, c) for c in contracts]
        entry["extra_tools"] = [[wire.extra_tools(c, mode) for mode in ("inline", "native")] for c in contracts]
        entry["forced_tool"] = [wire.forced_tool(c) for c in contracts]
        layouts = []
        for role in runtime.roles:
            bundle = runtime.bundle(role)
            layout = wire.layout(bundle)
            keys = [layout.key(_Placed(s)) for s in bundle.sections]  # type: ignore[arg-type]
            layouts.append({"role": role, "stable_head": sorted(layout.stable_head), "split_at": layout.split_at, "keys": keys})
        entry["layouts"] = layouts
        wires[name] = entry
    data = {
        "texts": rows,
        "parts": parts_cases(texts, rng),
        "decls": decls,
        "contracts": [_contract_json(c) for c in contracts],
        "bundles": {
            role: {
                "tool_mode": runtime.bundle(role).tool_mode,
                "sections": [
                    {"id": s.id, "kind": s.kind, "message": s.message, "stability": s.stability} for s in runtime.bundle(role).sections
                ],
            }
            for role in runtime.roles
        },
        "wires": wires,
        "schemas": schema_cases([c.schema for c in contracts[: len(contracts) // 3]] + [d["parameters"] for d in decls] + EXTRA_SCHEMAS),
    }
    OUT.parent.mkdir(parents=True, exist_ok=True)
    with gzip.GzipFile(OUT, "wb", mtime=0) as f:
        f.write(json.dumps(data, ensure_ascii=True).encode("ascii"))
    models = OUT.parent / "models.json"
    models.write_text(json.dumps(model_cases(), ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    print(f"{OUT.relative_to(ROOT)}: {len(rows)} texts, {len(data['parts'])} split texts, {len(decls)} tools, {OUT.stat().st_size} bytes")


MODEL_IDS = [
    "gpt-4o-2024-08-06",
    "gpt-4o-mini",
    "gpt-4-turbo-2024-04-09",
    "gpt-4",
    "gpt-3.5-turbo-0125",
    "o3-mini",
    "o1",
    "chatgpt-4o-latest",
    "gpt-6",
    "gpt-5.1-codex",
    "claude-sonnet-4-5@20250929",
    "claude-3-5-haiku-latest",
    "claude",
    "claude-sonet-4-5",
    "claude-opus-4-7",
    "us.anthropic.claude-opus-4-1-20250805-v1:0",
    "anthropic.claude-3-haiku-20240307-v1:0",
    "global.anthropic.claude-sonnet-4-5-20250929-v1:0",
    "us-gov.anthropic.claude-3-5-sonnet-20240620-v1:0",
    "amazon.nova-pro-v1:0",
    "meta.llama3-70b-instruct-v1:0",
    "gemini-2.5-flash",
    "gemni-2.5-flash",
    "gemini-exp-1206",
    "gemini-3-pro-preview",
    "llama-3.1-70b",
    "mistral-large",
    "",
    "gpt 4o",
    "gpt-4o\n",
    "gpt-4o\u200b",
    "x" * 300,
]


def model_cases() -> dict:
    from promptmill.core.errors import PromptmillError
    from promptmill.runtime.models import default_table, serving_problem

    table = default_table()
    ids = MODEL_IDS + sorted({p[:-1] if p.endswith("*") else p for p in table.patterns}) + sorted(table.known_ids)
    rows = []
    for model in ids:
        row: dict = {"model": model}
        try:
            info = table.lookup(model)
            row["info"] = {
                "model": info.model,
                "tokenizer": info.tokenizer,
                "contextWindow": info.context_window,
                "estimate": info.estimate,
                "pattern": info.pattern,
                "provider": info.provider,
                "ratio": info.ratio,
                "maxOutputTokens": info.max_output_tokens,
                "cacheMinTokens": info.cache_min_tokens,
                "cacheBreakpoints": info.cache_breakpoints,
                "structuredOutput": info.structured_output,
                "source": info.source,
                "origin": info.origin,
                "wire": info.wire,
                "defaultWire": info.default_wire,
            }
        except PromptmillError as exc:
            row["error"] = {"code": exc.code, "message": exc.message, "hint": exc.hint}
        row["near_miss"] = table.near_miss(model)
        row["serving"] = {name: serving_problem(get_wire(name), model) for name in WIRE_NAMES}
        rows.append(row)
    return {
        "ids": rows,
        "max_ratio": {p: table.max_ratio(p) for p in ("openai", "anthropic", "gemini", "nobody")},
        "patterns": table.patterns,
    }


EXTRA_SCHEMAS: list = [
    {"type": "object", "properties": {"a": {"type": "string", "enum": ["x", "y"]}, "b": {"enum": ["p", "q"]}}, "required": ["a"]},
    {"type": "object", "additionalProperties": True},
    {
        "type": "object",
        "properties": {"n": {"$ref": "#/$defs/node"}},
        "$defs": {"node": {"type": "object", "properties": {"next": {"$ref": "#/$defs/node"}}}},
    },
    {"type": "object", "properties": {"x": {"$ref": "#/$defs/missing"}, "y": {"allOf": [{"type": "string"}], "not": {"const": 1}}}},
    {
        "type": ["object", "null"],
        "properties": {"k": {"type": ["string", "integer", "null"]}, "c": {"const": 3}, "e": {"enum": ["a", None]}},
    },
    {
        "type": "object",
        "properties": {"arr": {"type": "array", "items": {"type": "number"}, "minItems": 0, "maxItems": 5, "examples": [[1]]}},
    },
    {"anyOf": [{"type": "string"}, {"type": "null"}]},
    {"type": "string"},
    [1, 2],
    {"type": "object", "properties": {"o": {"oneOf": [{"type": "object", "properties": {"z": {"type": "boolean"}}}, {"type": "null"}]}}},
]


def schema_cases(schemas: list) -> list[dict]:
    from promptmill.runtime.schemaforms import gemini_schema, openai_strict
    from promptmill.runtime.schemaprofiles import PROFILES, lost_keywords, without_rejected

    out = []
    for schema in schemas:
        strict, strict_problems = openai_strict(schema)
        gem, gem_problems = gemini_schema(schema) if isinstance(schema, dict) else ({}, [])
        out.append(
            {
                "schema": schema,
                "openai_strict": [strict, [list(p) for p in strict_problems]],
                "gemini": [gem, [list(p) for p in gem_problems]],
                "lost": {name: [list(x) for x in lost_keywords(schema, prof)] for name, prof in PROFILES.items()},
                "without_rejected": {name: without_rejected(schema, prof) for name, prof in PROFILES.items()},
            }
        )
    return out


class _Placed:
    """What Layout.key reads of a placed section: its spec."""

    def __init__(self, spec: object) -> None:
        self.spec = spec


def _contract_json(c: Contract) -> dict:
    return {
        "id": c.id,
        "style": c.style,
        "schema": c.schema,
        "return_tool": c.return_tool,
        "native": c.native,
    }


if __name__ == "__main__":
    main()
