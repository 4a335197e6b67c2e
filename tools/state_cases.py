"""State checks the TypeScript runtime must answer as the Python runtime does: written by
`tools/gen_conformance.py` into `conformance/state-cases.jsonl`, read by runtimes/typescript/test/state-*.test.mjs.

Each line: `{id, schema, lazy, state, limits, unsupported, valid, errors, items}`. `schema` and `state` are JSON
text (read with Python's json.loads: NaN, big integers and key order kept), or `state` is `{"make": kind, "n": n}`,
a state too large to commit that both sides build the same way (`make_state`). `limits` is what
`statelimits.check_state_data(state, lazy)` raised (`{code, errors}`) or null; `unsupported` is true when the
Python runtime's closures cannot decide the schema (jsonschema takes over: the TypeScript validator refuses it);
`valid` and `errors` are `Validator.is_valid` and `Validator.errors`; `items` the lazy item checks of every item
of every lazy array (`check_state_data(item, at=...)`, `item_valid`, `item_errors`).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent


def make_state(spec: dict) -> str:
    """The JSON text of a generated state (the TypeScript test builds the same text)."""
    kind, n = spec["make"], spec["n"]
    if kind == "wide":  # n values in one list
        return '{"x": [' + ",".join(["0"] * n) + "]}"
    if kind == "long":  # n characters of text
        return '{"x": "' + "a" * n + '"}'
    if kind == "deep-list":  # lists nested n deep
        return '{"x": ' + "[" * n + "]" * n + "}"
    if kind == "deep-object":  # objects nested n deep under "a"
        return '{"x": ' + '{"a": ' * n + "0" + "}" * n + "}"
    raise ValueError(kind)


S = json.dumps

STRICT = {
    "type": "object",
    "required": ["name", "kind", "count"],
    "additionalProperties": False,
    "properties": {
        "name": {"type": "string", "minLength": 1, "maxLength": 5, "pattern": "^[a-z]"},
        "kind": {"enum": ["alpha", "beta", 3, None, {"a": [1]}]},
        "count": {"type": "integer", "minimum": 0, "maximum": 10},
        "ratio": {"type": "number", "exclusiveMinimum": 0, "exclusiveMaximum": 2, "multipleOf": 0.25},
        "tags": {"type": "array", "items": {"type": "string"}, "maxItems": 3, "minItems": 1, "uniqueItems": True},
        "deep": {
            "type": "object",
            "required": ["a"],
            "properties": {
                "a": {
                    "type": "object",
                    "properties": {
                        "b": {"type": "array", "items": {"type": "object", "required": ["v"], "properties": {"v": {"type": "boolean"}}}}
                    },
                }
            },
        },
        "memory": {
            "type": "array",
            "items": {
                "type": "object",
                "required": ["type", "summary"],
                "properties": {
                    "type": {"enum": ["decision", "error"]},
                    "summary": {"type": "string", "maxLength": 8},
                    "relevance": {"type": "number"},
                },
            },
        },
        "odd key": {"type": "integer"},
        "ключ": {"type": "string"},
    },
}

COMBINATORS = {
    "type": "object",
    "properties": {
        "any": {"anyOf": [{"type": "string"}, {"type": "integer"}]},
        "one": {"oneOf": [{"type": "integer"}, {"minimum": 5}]},
        "not": {"not": {"type": "string"}},
        "never": {"not": {}},
        "off": False,
        "cond": {"if": {"properties": {"k": {"const": "x"}}}, "then": {"required": ["x"]}, "else": {"required": ["y"]}},
        "all": {"allOf": [{"type": "object"}, {"required": ["a"]}, {"properties": {"a": {"type": "string"}}}]},
        "const": {"const": {"b": [1, 2.0], "a": None}},
        "deps": {
            "type": "object",
            "dependentRequired": {"card": ["billing", "cvv"]},
            "dependentSchemas": {"vip": {"required": ["level"]}, "propertyNames": {"required": ["q"]}},
        },
        "names": {"type": "object", "propertyNames": {"pattern": "^[a-z]+$", "maxLength": 4}},
        "nonames": {"type": "object", "propertyNames": False},
        "pats": {
            "type": "object",
            "patternProperties": {"^n_": {"type": "number"}, "^s_": False},
            "additionalProperties": {"type": "string"},
        },
        "closed": {"type": "object", "properties": {"a": {}}, "patternProperties": {"^x": {}}, "additionalProperties": False},
        "tuple": {"type": "array", "prefixItems": [{"type": "string"}, {"type": "integer"}, False], "items": False},
        "pair": {"type": "array", "prefixItems": [{"type": "string"}], "items": {"type": "boolean"}},
        "has": {"type": "array", "contains": {"type": "integer"}, "minContains": 2, "maxContains": 3},
        "hasone": {"type": "array", "contains": {"const": "x"}},
        "uniq": {"type": "array", "uniqueItems": True},
        "counted": {"type": "object", "minProperties": 1, "maxProperties": 2},
        "nums": {"type": "array", "items": {"type": ["integer", "null"], "multipleOf": 3}},
        "tiny": {"type": "number", "multipleOf": 0.1},
        "types": {"type": ["string", "boolean"]},
        "nothing": {"type": []},
        "ref": {"$ref": "#/$defs/node"},
        "date": {"type": "string", "format": "date"},
        "uni": {"type": "string", "pattern": "^\\w+\\d$", "minLength": 2, "maxLength": 3},
    },
    "$defs": {"node": {"type": "object", "required": ["v"], "properties": {"v": {"type": "integer"}, "next": {"$ref": "#/$defs/node"}}}},
}

PATTERNS = {
    "type": "object",
    "properties": {
        "end": {"type": "string", "pattern": "^[a-z]+$"},
        "endz": {"type": "string", "pattern": "^[a-z]+\\Z"},
        "start": {"type": "string", "pattern": "\\Aab"},
        "digits": {"type": "string", "pattern": "^\\d+$"},
        "word": {"type": "string", "pattern": "^\\w+$"},
        "nonword": {"type": "string", "pattern": "\\W"},
        "ci": {"type": "string", "pattern": "(?i)^abc$"},
        "named": {"type": "string", "pattern": "^(?P<x>a+)-(?P=x)$"},
        "one": {"type": "string", "pattern": "^.$"},
        "dot": {"type": "string", "pattern": "^a.b$"},
        "classes": {"type": "string", "pattern": "^[\\w.-]+@[\\d]+$"},
        "escapes": {"type": "string", "pattern": "^\\$\\{\\}[\\]\\-]$"},
        "keys": {"type": "object", "patternProperties": {"^x-\\d$": {"type": "integer"}}, "additionalProperties": False},
    },
}

LIMITS = {"type": "object", "properties": {"memory": {"type": "array", "items": {"type": "string"}}}}

UNSUPPORTED = [
    {"type": "object", "unevaluatedProperties": False},
    {"type": "object", "properties": {"a": {"$ref": "other.json#/x"}}},
    {"type": "object", "properties": {"a": {"$dynamicRef": "#node"}}},
    {"type": "object", "properties": {"a": {"$id": "nested", "type": "string"}}},
    {"type": "object", "properties": {"a": {"type": "strng"}}},
]


def schema_cases() -> Iterator[tuple[str, Any, list, Any]]:
    """(id, schema, lazy paths, state: JSON text or a make spec)."""
    ok = {"name": "abc", "kind": "alpha", "count": 3}
    strict_states = {
        "valid": ok,
        "empty": {},
        "wrong-types": {"name": 1, "kind": "gamma", "count": "3", "odd key": "x", "ключ": 5},
        "extra-keys": {**ok, "nmae": "x", "zzz": 1, "Count": 2, "a b": 3, "ключи": 4, "\U0001f600": 5},
        "bounds": {"name": "", "kind": 3.0, "count": 11, "ratio": 0.3, "tags": ["a", "a", "b", "c"]},
        "bounds2": {"name": "Abcdefg", "kind": None, "count": -1, "ratio": 0, "tags": []},
        "bounds3": {"name": "a\U0001f600\U0001f600\U0001f600\U0001f600", "kind": {"a": [1.0]}, "count": 3.0, "ratio": 2, "tags": [1, True]},
        "bool-as-int": {**ok, "count": True, "kind": True},
        "big-int": {**ok, "count": 10**30},
        "float-int": {**ok, "count": 4.5, "ratio": 1.75},
        "deep": {**ok, "deep": {"a": {"b": [{"v": True}, {"v": 1}, {}, "x", {"v": None}, [], {"v": False, "w": 1}]}}},
        "deep-missing": {**ok, "deep": {}},
        "memory": {
            **ok,
            "memory": [{"type": "decision", "summary": "ok"}, {"type": "oops", "summary": "far too long"}, {"summary": 1}, 7, None],
        },
        "many": {"name": 1, **{f"k{i}": i for i in range(25)}},
        "not-object": [1, 2],
    }
    for name, state in strict_states.items():
        yield f"strict/{name}", STRICT, [], S(state, ensure_ascii=False)
        yield f"strict-lazy/{name}", STRICT, [["memory"], ["tags"]], S(state, ensure_ascii=False)
    comb_states = {
        "valid": {"any": 1, "one": 1, "not": 1, "cond": {"k": "x", "x": 1}, "all": {"a": "s"}, "const": {"a": None, "b": [1.0, 2]}},
        "all-bad": {
            "any": 1.5,
            "one": 7,
            "not": "s",
            "never": 0,
            "off": 1,
            "cond": {"k": "x"},
            "all": {"a": 1},
            "const": {"a": None, "b": [1, 2, 3]},
            "deps": {"card": 1, "vip": True, "propertyNames": 1},
            "names": {"ok": 1, "Bad": 2, "waytoolong": 3, "": 4},
            "nonames": {"a": 1, "b": 2},
            "pats": {"n_1": "x", "s_1": 1, "other": 2, "n_2": 2},
            "closed": {"a": 1, "xa": 2, "b": 3, "alpha": 4},
            "tuple": ["s", "1", "third", 4],
            "pair": ["s", True, 1],
            "has": [1, "a", 2.5],
            "hasone": ["y"],
            "uniq": [1, 1.0, True, {"a": 1}, {"a": 1.0}],
            "counted": {},
            "nums": [3, 4, None, 6.0, 7.5],
            "tiny": 0.3,
            "types": 1,
            "nothing": None,
            "ref": {"v": 1, "next": {"v": "2", "next": {}}},
            "date": "not a date",
            "uni": "é1",
        },
        "cond-else": {"cond": {"k": "y"}, "has": [1, 2, 3, 4], "hasone": [], "counted": {"a": 1, "b": 2, "c": 3}, "uni": "ab"},
        "one-several": {"one": 6, "uniq": [[1, 2], [1, 2.0]], "tiny": 0.7, "uni": "١٢"},
        "types": {"any": None, "types": [], "tuple": [], "pair": [1], "nums": [True, 9, 10**20, 3e20], "tiny": 1e308},
    }
    for name, state in comb_states.items():
        yield f"combinators/{name}", COMBINATORS, [], S(state, ensure_ascii=False)
    pattern_states = {
        "python-only": {
            "end": "abc\n",
            "endz": "abc",
            "start": "abc",
            "digits": "\u0661\u0662",
            "word": "\u00e9t\u00e9_1",
            "nonword": "a b",
            "ci": "ABC",
            "named": "aa-aa",
            "one": "\U0001f600",
            "dot": "a\u00e9b",
            "classes": "a.b-c@12",
            "escapes": "${}]",
            "keys": {"x-1": 1, "x-\u0663": 2},
        },
        "refused": {
            "end": "abc\n\n",
            "endz": "abc\n",
            "start": "xab",
            "digits": "1a",
            "word": "a-b",
            "nonword": "ab",
            "ci": "ABCD",
            "named": "aa-a",
            "one": "ab",
            "dot": "a\nb",
            "classes": "a b@1",
            "escapes": "${}x",
            "keys": {"x-12": 1, "x-1": "one", "y": 2},
        },
    }
    for name, state in pattern_states.items():
        yield f"patterns/{name}", PATTERNS, [], S(state, ensure_ascii=False)
    for i, schema in enumerate(UNSUPPORTED):
        yield f"unsupported/{i}", schema, [], "{}"
    # the shipped roles' inputs with their example states, as is and broken at depth

    for path in sorted((REPO / "build" / "roles").glob("*.json")):
        bundle = json.loads(path.read_text(encoding="utf-8"))
        role = bundle["id"]
        example = REPO / "prompts" / "examples" / f"{role}.state.yaml"
        if not example.exists():
            continue
        from promptmill.source.statefile import read_state

        state = read_state(example)
        lazy = bundle.get("lazy_paths", [])
        yield f"shipped/{role}/example", bundle["inputs"], lazy, S(state, ensure_ascii=False)
        yield f"shipped/{role}/broken", bundle["inputs"], lazy, S(_break(state), ensure_ascii=False)
    # the limits: values, characters, depth; NaN, infinities, big integers, lone surrogates
    raw = {
        "nan": '{"x": NaN}',
        "infinity-deep": '{"x": {"y": [1, 2, {"z": -Infinity}]}}',
        "big-ints": '{"x": [18446744073709551616, -99999999999999999999999999999], "y": 1e400}',
        "lone-surrogate": '{"x": ["ok", "a\\ud800"]}',
        "lone-low": '{"x": "\\udc00 low"}',
        "lone-key": '{"x": {"\\ud83d": 1}}',
        "pair-ok": '{"x": "\\ud83d\\ude00"}',
        "two-problems": '{"a": "\\ud800", "z": NaN}',
        "lazy-skips": '{"memory": [NaN, "\\ud800"], "name": "abc"}',
    }
    for name, text in raw.items():
        yield f"limits/{name}", LIMITS, [["memory"]], text
    for name, spec in {
        "wide-ok": {"make": "wide", "n": 999_998},
        "wide-over": {"make": "wide", "n": 1_000_000},
        "long-ok": {"make": "long", "n": 8_000_000},
        "long-over": {"make": "long", "n": 8_000_001},
        "deep-list-ok": {"make": "deep-list", "n": 127},
        "deep-list-over": {"make": "deep-list", "n": 128},
        "deep-object-over": {"make": "deep-object", "n": 140},
    }.items():
        yield f"limits/{name}", LIMITS, [], spec


def _break(state: Any) -> Any:
    """The state with wrong types at depth: the first string of each object an integer, lists' second item a string."""
    if isinstance(state, dict):
        out = {}
        done = False
        for k, v in state.items():
            if not done and isinstance(v, str):
                out[k] = 7
                done = True
            else:
                out[k] = _break(v)
        return out
    if isinstance(state, list):
        return [("broken" if i == 1 else _break(v)) for i, v in enumerate(state)]
    return state


def _limits(state: Any, lazy: list, at: tuple = ()) -> Any:
    from promptmill.core.errors import StateError
    from promptmill.runtime.statelimits import check_state_data

    try:
        check_state_data(state, tuple(tuple(p) for p in lazy), at=at)
    except StateError as exc:
        return {"code": exc.code, "errors": [list(e) for e in exc.errors]}
    return None


def state_lines() -> list[str]:
    from promptmill.runtime.schema.validate import Validator

    lines = []
    for case_id, schema, lazy, state in schema_cases():
        text = make_state(state) if isinstance(state, dict) else state
        value = json.loads(text)
        record: dict[str, Any] = {"id": case_id, "schema": S(schema, ensure_ascii=False), "lazy": lazy, "state": state}
        record["limits"] = _limits(value, lazy)
        validator = Validator(schema, lazy_paths=[tuple(p) for p in lazy])
        record["unsupported"] = not validator.fast
        big = isinstance(state, dict)
        if record["unsupported"] or big:
            record.update(valid=None, errors=None, items=[])
        else:
            record["valid"] = validator.is_valid(value)
            record["errors"] = [list(e) for e in validator.errors(value)] if isinstance(value, dict) or not record["valid"] else []
            items = []
            for path in lazy:
                arr: Any = value
                for key in path:
                    arr = arr.get(key) if isinstance(arr, dict) else None
                if not isinstance(arr, list):
                    continue
                for i, item in enumerate(arr):
                    entry = {"path": path, "index": i, "limits": _limits(item, [], (*path, i))}
                    if entry["limits"] is None:
                        entry["valid"] = validator.item_valid(tuple(path), item)
                        entry["errors"] = [list(e) for e in validator.item_errors(tuple(path), i, item)]
                    items.append(entry)
            record["items"] = items
        lines.append(json.dumps(record, ensure_ascii=False) + "\n")
    return lines


# -- tool declarations: check_schema and tooldecl.problems ---------------------------------------------------

SCHEMA_CHECKS: list[Any] = [
    {"type": "object", "properties": {"a": {"type": "string"}}},
    {"type": 5},
    {"type": ["strng"]},
    {"type": []},
    {"type": ["string", "string"]},
    {"type": {"a": 1}},
    {"properties": 5},
    {"properties": {"a": 5, "b": None, "c": True}},
    {"allOf": []},
    {"allOf": 5},
    {"enum": 5},
    {"multipleOf": 0},
    {"multipleOf": "x"},
    {"minimum": "1"},
    {"minimum": True},
    {"minLength": -1.5},
    {"minLength": -1},
    {"minLength": 1.5},
    {"minLength": 2.0},
    {"maxItems": True},
    {"pattern": 5},
    {"pattern": "("},
    {"pattern": "^(?P<x>a)(?P=x)$"},
    {"patternProperties": {"(": {}, "^ok$": 5}},
    {"uniqueItems": 1},
    {"required": ["a", "a", 3]},
    {"required": "a"},
    {"dependentRequired": {"a": "b", "c": ["d", 1]}},
    {"$id": "a#b"},
    {"$anchor": "1x"},
    {"title": 1, "description": ["x"]},
    {"items": 5},
    {"$ref": 5},
    {"$ref": "#/nowhere", "properties": {"b": {"$ref": "#/properties/b"}, "c": {"$ref": "#/$defs/c"}}},
    {"properties": {"a": {"type": "x"}, "b": {"minimum": "y"}}},
    {"dependencies": {"a": 5, "b": ["c"], "d": {"type": "x"}}},
    {"$vocabulary": {"a": 1}},
    {"additionalProperties": []},
    {"properties": {"a/b~": {"type": "x"}}},
    {"enum": [], "const": {"type": "x"}, "default": {"$ref": "#/x"}, "examples": [{"$ref": "#/y"}]},
    {"type": "object", "properties": {"n": {"type": "integer", "minimum": 0, "maximum": 1e3, "multipleOf": 0.5}}, "required": ["n"]},
    {"anyOf": [{"type": "string"}, 7], "not": "x", "if": [], "then": True, "else": False},
]

TOOLS: list[Any] = [
    {"name": "ok", "description": "d", "parameters": {"type": "object", "properties": {"q": {"type": "string"}}}},
    {"name": "ok"},
    {"name": "a b"},
    {"name": "x" * 65, "description": 3},
    {"name": "ok", "parameters": []},
    {"name": "ok", "parameters": {"type": "array"}},
    {"name": "ok", "parameters": {"type": "objec"}},
    {"name": "ok", "parameters": {"type": "object", "properties": {"a": {"type": "strng"}}}},
    {"name": "ok", "parameters": {"type": "object", "required": "a", "properties": {"a": {"pattern": "("}}}},
    {"name": "ok", "parameters": {"type": "object", "properties": {"a": {"$ref": "#/$defs/x"}}}},
    "a string",
    7,
    None,
    ["name"],
    {"description": "no name"},
    {"name": 7},
]


def schema_check_lines() -> list[str]:
    """`{id, schema, problems}` (check_schema) and `{id, tool, problems}` (tooldecl.problems) lines."""
    from promptmill.runtime.schema.validate import check_schema
    from promptmill.runtime.tooldecl import problems

    lines = []
    for i, schema in enumerate(SCHEMA_CHECKS):
        found = [list(p) for p in check_schema(schema)]
        lines.append(json.dumps({"id": f"check-schema/{i}", "schema": S(schema), "problems": found}, ensure_ascii=False) + "\n")
    for i, tool in enumerate(TOOLS):
        found = [list(p) for p in problems(tool)]
        lines.append(json.dumps({"id": f"tool/{i}", "tool": S(tool), "problems": found}, ensure_ascii=False) + "\n")
    return lines
