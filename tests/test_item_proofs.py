"""Item proofs (issue 34): what the compiler proves about lazily checked list items, and that
rendering with the proofs gives exactly what rendering without them gives."""

from __future__ import annotations

import dataclasses
import json
import math
import random
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator

from promptmill.compiling.api import build_in_memory
from promptmill.compiling.proofs import item_proof
from promptmill.core.errors import BuildError, PromptmillError, StateError
from promptmill.runtime.bundle import role_from_dict
from promptmill.runtime.engine import Runtime
from promptmill.runtime.itemproof import proof_ok, record_check
from promptmill.runtime.statelimits import check_state_data
from promptmill.wires import WIRE_NAMES
from schema_strategies import derive, json_values

ROOT = Path(__file__).resolve().parents[1]
PUBLISHED = Draft202012Validator(json.loads((ROOT / "schemas" / "bundle.schema.json").read_text(encoding="utf-8")))
MEMORY = {
    "type": "object",
    "required": ["type", "summary"],
    "properties": {
        "type": {"enum": ["decision", "error"]},
        "summary": {"type": "string", "maxLength": 300, "description": "one line"},
        "relevance": {"type": "number"},
    },
}


# ---------------------------------------------------------------- what the compiler proves


def test_a_record_schema_is_proven_field_by_field():
    assert item_proof(("memory",), MEMORY) == {
        "path": ["memory"],
        "fields": {"type": {"enum": ["decision", "error"]}, "summary": {"maxLength": 300}, "relevance": "number"},
        "required": ["type", "summary"],
        "others": True,
    }
    closed = {"type": "object", "properties": {"n": {"type": "integer"}, "x": {}, "y": True}, "additionalProperties": False}
    assert item_proof(("a", "b"), closed) == {
        "path": ["a", "b"],
        "fields": {"n": "integer", "x": "any", "y": "any"},
        "required": [],
        "others": False,
    }


@pytest.mark.parametrize(
    "schema",
    [
        {"type": "string"},  # items that are not records
        {"type": "object", "properties": {"a": {"type": "string", "pattern": "^a"}}},
        {"type": "object", "properties": {"a": {"type": "object", "properties": {"b": {"type": "string"}}}}},
        {"type": "object", "properties": {"a": {"type": ["string", "null"]}}},
        {"type": "object", "properties": {"a": {"enum": ["x", 1]}}},
        {"type": "object", "properties": {"a": {"type": "integer", "enum": ["x"]}}},
        {"type": "object", "properties": {"a": {"maxLength": 3}}},  # a length alone leaves the type free
        {"type": "object", "properties": {"a": {"$ref": "#/$defs/x"}}},
        {"type": "object", "additionalProperties": {"type": "string"}},
        {"type": "object", "minProperties": 1},
        {"type": "object", "required": ["a"], "additionalProperties": False},  # no item is valid
    ],
)
def test_anything_more_than_a_record_is_not_proven(schema):
    assert item_proof(("x",), schema) is None


def test_shipped_roles_carry_proofs_of_their_record_lists():
    rt, _ = build_in_memory(ROOT)
    proven = {role: [tuple(p["path"]) for p in rt.bundle(role).item_proofs] for role in rt.roles}
    assert proven["executor"] == [("memory",), ("tools",)]
    for role in rt.roles:
        bundle = rt.bundle(role)
        assert set(proven[role]) <= set(bundle.lazy_paths)
        assert all(proof_ok(p) for p in bundle.item_proofs)
        assert role_from_dict(json.loads(bundle.to_json())) == bundle  # written and read back unchanged
        assert list(PUBLISHED.iter_errors(json.loads(bundle.to_json()))) == [], role


# ---------------------------------------------------------------- the one-pass check is sound

KINDS = st.one_of(
    st.sampled_from(["string", "number", "integer", "boolean", "null", "object", "array", "any"]),
    st.just({"enum": ["a", "é", "b"]}),
    st.just({"maxLength": 2}),
    st.just({"minLength": 1, "maxLength": 3}),
)
TRICKY = [math.nan, math.inf, "\ud800", 3.0, True, 1, None, "a", "ab", "é", [], {}, [math.nan], {"k": "\udfff"}, {1: "a"}, (1,)]
items = st.one_of(
    json_values,
    st.dictionaries(st.sampled_from(["a", "b", "ab", "x1", "é", "zz"]), st.one_of(json_values, st.sampled_from(TRICKY)), max_size=5),
)


def _schema(kind: Any) -> Any:
    if kind == "any":
        return {}
    if isinstance(kind, dict):
        return kind if "enum" in kind else {"type": "string", **kind}
    return {"type": kind}


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    fields=st.dictionaries(st.sampled_from(["a", "b", "ab", "x1", "é"]), KINDS, max_size=4),
    required=st.lists(st.sampled_from(["a", "b", "ab"]), unique=True, max_size=2),
    others=st.booleans(),
    depth=st.sampled_from([2, 3, 126, 127]),
    data=st.data(),
)
def test_an_item_the_one_pass_check_accepts_passes_both_generic_checks(fields, required, others, depth, data):
    values = st.one_of(json_values, st.sampled_from(TRICKY))
    names = sorted({*fields, *required, "zz"})
    item = data.draw(st.one_of(items, st.fixed_dictionaries({}, optional={k: values for k in names})))
    schema = {"type": "object", "properties": {k: _schema(v) for k, v in fields.items()}, "required": required}
    if not others:
        schema["additionalProperties"] = False
    proof = item_proof(("x",) * (depth - 1), schema)
    if proof is None:
        return  # a required field that may not appear
    assert proof_ok(proof)
    if record_check(proof)(item, depth):
        check_state_data(item, at=("x",) * (depth - 1) + (0,))  # raises if not JSON data of a sane size
        assert Draft202012Validator(schema).is_valid(item)


def test_the_one_pass_check_accepts_a_plain_valid_item_and_leaves_the_rest_to_the_generic_checks():
    check = record_check(item_proof(("memory",), MEMORY))  # type: ignore[arg-type]
    assert check({"type": "error", "summary": "x", "relevance": 0.5, "extra": {"deep": [1, "é"]}}, 2)
    for bad in [
        {"type": "other", "summary": "x"},
        {"type": "error"},
        {"type": "error", "summary": "x" * 301},
        {"type": "error", "summary": "\ud800"},
        {"type": "error", "summary": "x", "relevance": math.nan},
        {"type": "error", "summary": "x", "relevance": True},
        {"type": "error", "summary": "x", "extra": {1: 2}},
        ["error", "x"],
    ]:
        assert not check(bad, 2), bad
    assert not check({"type": "error", "summary": "x"}, 128)  # too deep for the state limits


def test_a_malformed_proof_in_a_bundle_is_refused():
    rt, _ = build_in_memory(ROOT)
    data = json.loads(rt.bundle("executor").to_json())
    for broken in [
        {**data["item_proofs"][0], "path": ["nowhere"]},
        {**data["item_proofs"][0], "fields": {"summary": "text"}},
        {**data["item_proofs"][0], "fields": {"summary": {"maxLength": -1}}},
        {**data["item_proofs"][0], "others": "yes"},
    ]:
        with pytest.raises(BuildError, match=r"item_proofs\[0\]: not a well-formed item proof"):
            role_from_dict({**data, "item_proofs": [broken]})


# ---------------------------------------------------------------- both paths give the same bytes


def _stripped(rt: Runtime) -> Runtime:
    """The same build with every item proof taken out: today's path."""
    bundles = {}
    for role in rt.roles:
        b = rt.bundle(role)
        parents = tuple(dataclasses.replace(c, bundle=dataclasses.replace(c.bundle, item_proofs=())) for c in b.parents)
        bundles[role] = dataclasses.replace(b, item_proofs=(), parents=parents)
    return Runtime(bundles, base_dir=rt.base_dir, models=rt.models)


def _outcome(rt: Runtime, role: str, state: Any, wire: str) -> Any:
    try:
        req = rt.render(role, state, provider=wire)
        payload = json.dumps(req.to_payload(), sort_keys=True, ensure_ascii=False)
    except PromptmillError as exc:
        errors = exc.errors if isinstance(exc, StateError) else None
        return ("error", type(exc).__name__, exc.code, exc.message, errors)
    return ("ok", payload, req.tokens, [(s.id, s.status, s.reason) for s in req.sections])


def _spoil(value: Any, rng: random.Random) -> Any:
    """Replace one value somewhere inside a list item by a tricky one (NaN, a lone surrogate, ...)."""
    if isinstance(value, list) and value:
        i = rng.randrange(len(value))
        return value[:i] + [_spoil(value[i], rng)] + value[i + 1 :]
    if isinstance(value, dict) and value and rng.random() < 0.8:
        key = rng.choice(sorted(value))
        return {**value, key: _spoil(value[key], rng)}
    return rng.choice(TRICKY)


def _states(bundle: Any, rng: random.Random, n: int) -> list[dict]:
    out = []
    for _ in range(n):
        state = derive(bundle.inputs, rng, bundle.inputs)
        if not isinstance(state, dict):
            state = {}
        for path in bundle.lazy_paths:  # more items, about a third of them spoiled
            node = state
            for part in path[:-1]:
                node = node.get(part) if isinstance(node, dict) else None
            items = node.get(path[-1]) if isinstance(node, dict) else None
            if isinstance(items, list):
                items = [_spoil(it, rng) if rng.random() < 0.3 else it for it in items * rng.randint(1, 3)]
                node[path[-1]] = items  # type: ignore[index]
        out.append(state)
    return out


WORKLOAD = (ROOT / "bench" / "workload.py").read_text(encoding="utf-8").split('ROLE = """\\\n', 1)[1].split('"""', 1)[0]
CLOSED = """\
kind: role
id: closed
inputs:
  type: object
  properties:
    rows:
      type: array
      items:
        type: object
        additionalProperties: false
        required: [n]
        properties:
          n: {type: integer}
          label: {type: string, minLength: 1, maxLength: 4}
          flag: {type: boolean}
          score: {type: number}
          note: {type: "null"}
          more: {type: object}
          list: {type: array}
          anything: {}
sections:
  - id: rows
    each: rows
    as: row
    template: "{{ row.n }} {{ row.label | default('-') }} {{ row.more | to_json }}"
    order_by: n
    message: user
"""


@pytest.fixture(scope="module")
def projects(tmp_path_factory: pytest.TempPathFactory) -> list[Runtime]:
    made = [build_in_memory(ROOT)[0]]
    for name, text in (("executor", WORKLOAD.replace("\\\\n", "\\n")), ("closed", CLOSED)):
        root = tmp_path_factory.mktemp(name)
        (root / "prompts").mkdir()
        (root / "prompts" / f"{name}.yaml").write_text(text, encoding="utf-8")
        made.append(build_in_memory(root)[0])
    return made


def test_the_test_roles_carry_proofs(projects):
    assert [tuple(p["path"]) for p in projects[1].bundle("executor").item_proofs] == [("memory",), ("tools",)]
    assert projects[2].bundle("closed").item_proofs[0]["others"] is False


@pytest.mark.parametrize("seed", range(12))
def test_rendering_with_and_without_proofs_gives_the_same_bytes_counts_and_errors(projects, seed):
    rng = random.Random(seed)
    seen = set()
    for rt in projects:
        bare = _stripped(rt)
        for role in rt.roles:
            bundle = rt.bundle(role)
            if not bundle.item_proofs:
                continue
            for state in _states(bundle, rng, 8):
                wires = rng.sample(WIRE_NAMES, 3)
                for wire in wires:
                    proven, plain = _outcome(rt, role, state, wire), _outcome(bare, role, state, wire)
                    assert proven == plain, (role, wire, state)
                    seen.add(proven[0] if proven[0] == "ok" else proven[2])
    assert "ok" in seen and "PM810" in seen  # both renders and schema errors were compared
