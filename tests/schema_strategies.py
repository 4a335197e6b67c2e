"""Hypothesis strategies: random draft 2020-12 schemas and instances for them.

`documents()` draws a root schema covering every keyword the closures compile,
with `$defs`/`definitions` and `$ref`s (escaped pointers, recursion through
`#`), boolean schemas anywhere, and `derive(schema, rng)` builds instances that
often satisfy a schema, so a test sees valid and invalid cases alike.

Recursion is kept finite: a ref back to the root or to the recursive def is only
drawn below a keyword that descends into the instance (properties, items, ...),
so every cycle consumes a level of the instance.
"""

from __future__ import annotations

import random
import re
from functools import lru_cache
from typing import Any

from hypothesis import strategies as st

KEYS = ["a", "b", "ab", "x1", "é"]
TYPES = ["string", "number", "integer", "object", "array", "boolean", "null"]
PATTERNS = ["^a", "b", "^[a-z]+$", "\\d", "", "^.{2}$", "é"]
LEAF_DEFS = {"$defs": ["l0", "a/b~c", "with space", "~1"], "definitions": ["old"]}
LEAF_REFS = ["#/$defs/l0", "#/$defs/a~1b~0c", "#/$defs/with%20space", "#/$defs/~01", "#/definitions/old"]
REC_REFS = ["#", "#/$defs/r0"]

scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.sampled_from([0, 1, 2, 3, -1, 10, 0.0, 1.0, 0.5, 2.5, 3.0, -0.0, 1e20, 0.1, 0.3]),
    st.integers(-5, 300),
    st.text(alphabet="abé😀1 xz", max_size=6),
    st.sampled_from(["a", "b", "ab", "aa", "ba", "é", "😀😀", "x1", "12"]),
)
json_values = st.recursive(
    scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.dictionaries(st.sampled_from(KEYS + ["zz", "A"]), inner, max_size=4),
    ),
    max_leaves=10,
)
small_num = st.sampled_from([0, 1, 2, 3, 5, 0.5, 1.5, -1, 2.0])
count = st.sampled_from([0, 1, 2, 3])


STRING_KEYWORDS = {"minLength": count, "maxLength": count, "pattern": st.sampled_from(PATTERNS)}
NUMBER_KEYWORDS = {
    "minimum": small_num,
    "maximum": small_num,
    "exclusiveMinimum": small_num,
    "exclusiveMaximum": small_num,
    "multipleOf": st.sampled_from([1, 2, 3, 0.5, 0.1, 0.01, 1.5]),
}


def _keyword_groups(sub: st.SearchStrategy, below: st.SearchStrategy) -> st.SearchStrategy:
    """One group of related keywords; `sub` stays at this level, `below` descends."""
    key = st.sampled_from(KEYS)
    objects = {
        "properties": st.dictionaries(key, below, max_size=3),
        "required": st.lists(key, max_size=3, unique=True),
        "additionalProperties": below,
        "patternProperties": st.dictionaries(st.sampled_from(PATTERNS), below, max_size=2),
        "propertyNames": below,
        "minProperties": count,
        "maxProperties": count,
        "dependentRequired": st.dictionaries(key, st.lists(key, max_size=2, unique=True), max_size=2),
        "dependentSchemas": st.dictionaries(key, sub, max_size=2),
    }
    arrays = {
        "items": below,
        "prefixItems": st.lists(below, max_size=2),
        "minItems": count,
        "maxItems": count,
        "uniqueItems": st.booleans(),
        "contains": below,
        "minContains": count,
        "maxContains": count,
    }

    def typed(kind: str | list, keywords: dict) -> st.SearchStrategy:
        return st.fixed_dictionaries({"type": st.just(kind)}, optional=keywords)

    typed_groups = [
        typed("string", STRING_KEYWORDS),
        typed("number", NUMBER_KEYWORDS),
        typed("integer", NUMBER_KEYWORDS),
        typed(["integer", "string", "null"], {**NUMBER_KEYWORDS, **STRING_KEYWORDS}),
        typed("object", objects),
        typed("array", arrays),
        typed(["array", "object"], {**objects, **arrays}),
    ]
    return st.one_of(
        *typed_groups,
        *typed_groups,  # twice: `type` with its own keywords is the common case
        st.builds(lambda t: {"type": t}, st.sampled_from(TYPES)),
        st.builds(lambda t: {"type": t}, st.lists(st.sampled_from(TYPES), max_size=3, unique=True)),
        st.builds(lambda v: {"enum": v}, st.lists(json_values, max_size=4)),
        st.builds(lambda v: {"const": v}, json_values),
        st.fixed_dictionaries({}, optional=STRING_KEYWORDS),
        st.fixed_dictionaries({}, optional=NUMBER_KEYWORDS),
        st.fixed_dictionaries({}, optional=objects),
        st.fixed_dictionaries({}, optional=arrays),
        st.builds(lambda v: {"allOf": v}, st.lists(sub, min_size=1, max_size=2)),
        st.builds(lambda v: {"anyOf": v}, st.lists(sub, min_size=1, max_size=3)),
        st.builds(lambda v: {"oneOf": v}, st.lists(sub, min_size=1, max_size=3)),
        st.builds(lambda v: {"not": v}, sub),
        st.fixed_dictionaries({"if": sub}, optional={"then": sub, "else": sub}),
        st.just({"title": "t", "description": "d", "default": 1, "format": "email", "examples": [1]}),
    )


@lru_cache
def schemas(guarded: bool, depth: int) -> st.SearchStrategy:
    """Schemas whose refs may recurse only if `guarded` (a level of the instance was consumed)."""
    refs = LEAF_REFS + (REC_REFS if guarded else [])
    ref = st.builds(lambda r: {"$ref": r}, st.sampled_from(refs))
    leaf = st.one_of(st.booleans(), st.just({}), ref)
    if depth == 0:
        return leaf
    sub = schemas(guarded, depth - 1)
    below = schemas(True, depth - 1)
    merged = st.lists(_keyword_groups(sub, below), min_size=1, max_size=4).map(_merge)
    with_ref = st.tuples(merged, st.sampled_from(refs)).map(lambda p: {**p[0], "$ref": p[1]})
    return st.one_of(leaf, merged, merged, merged, with_ref)


def _merge(groups: list[dict]) -> dict:
    out: dict = {}
    for g in groups:
        out.update(g)
    return out


@lru_cache
def _leaf_schema(depth: int) -> st.SearchStrategy:
    """Schemas with no refs at all (the targets of refs drawn anywhere)."""
    if depth == 0:
        return st.one_of(st.booleans(), st.just({}))
    sub = _leaf_schema(depth - 1)
    return st.lists(_keyword_groups(sub, sub), min_size=1, max_size=2).map(_merge) | st.booleans()


@st.composite
def documents(draw: Any) -> Any:
    """A root schema with `$defs` and `definitions` for every ref the grammar draws."""
    if draw(st.integers(0, 19)) == 0:
        return draw(st.booleans())
    sub, below = schemas(False, 2), schemas(True, 2)
    root = draw(st.lists(_keyword_groups(sub, below), min_size=1, max_size=4).map(_merge))
    if draw(st.booleans()):
        root["$ref"] = draw(st.sampled_from(LEAF_REFS))
    defs = {name: draw(_leaf_schema(1)) for name in LEAF_DEFS["$defs"]}
    defs["r0"] = draw(schemas(False, 2))
    return {**root, "$defs": defs, "definitions": {"old": draw(_leaf_schema(1))}}


TRICKY = [True, False, 1, 1.0, 0, -0.0, None, "a", "ab", 2.5, 3, [], {}, [1], {"a": 1}]
STRINGS = ["", "a", "b", "ab", "ba", "aa", "abc", "é", "😀😀", "1", "a1", "zz", "x1"]


def derive(schema: Any, rng: random.Random, root: Any) -> Any:
    """An instance built to satisfy `schema` (often, not always), sometimes nudged off it."""
    value = _derive(schema, rng, root, 0)
    return _nudge(value, rng) if rng.random() < 0.25 else value


def _nudge(value: Any, rng: random.Random) -> Any:
    """Replace one nested value by a tricky one (True for 1, 1.0 for 1, ...)."""
    if isinstance(value, list) and value and rng.random() < 0.7:
        i = rng.randrange(len(value))
        return value[:i] + [_nudge(value[i], rng)] + value[i + 1 :]
    if isinstance(value, dict) and value and rng.random() < 0.7:
        key = rng.choice(sorted(value))
        return {**value, key: _nudge(value[key], rng)}
    return rng.choice(TRICKY)


def _derive(schema: Any, rng: random.Random, root: Any, depth: int) -> Any:
    if not isinstance(schema, dict) or depth > 5:
        return rng.choice(TRICKY)
    if "$ref" in schema and rng.random() < 0.5:
        target = _target(root, schema["$ref"])
        if target is not None:
            return _derive(target, rng, root, depth + 1)
    if "const" in schema and rng.random() < 0.9:
        return schema["const"]
    if schema.get("enum") and rng.random() < 0.9:
        return rng.choice(schema["enum"])
    for key in ("allOf", "anyOf", "oneOf"):
        if schema.get(key) and rng.random() < 0.5:
            return _derive(rng.choice(schema[key]), rng, root, depth + 1)
    if "if" in schema and rng.random() < 0.3:
        return _derive(schema["if"], rng, root, depth + 1)
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = rng.choice(kind) if kind else None
    if kind is None:
        kind = _guess_kind(schema, rng)
    return _of_kind(kind, schema, rng, root, depth)


def _target(root: Any, ref: str) -> Any:
    from urllib.parse import unquote

    node = root
    if ref == "#":
        return node
    for part in unquote(ref[2:]).split("/"):
        part = part.replace("~1", "/").replace("~0", "~")
        if isinstance(node, list) and part.isdigit() and int(part) < len(node):
            node = node[int(part)]
        elif isinstance(node, dict) and part in node:
            node = node[part]
        else:
            return None
    return node


def _guess_kind(schema: dict, rng: random.Random) -> str:
    if {"properties", "required", "additionalProperties", "patternProperties"} & schema.keys():
        return "object"
    if {"items", "prefixItems", "minItems", "contains", "uniqueItems"} & schema.keys():
        return "array"
    if {"minLength", "maxLength", "pattern"} & schema.keys():
        return "string"
    if {"minimum", "maximum", "multipleOf", "exclusiveMinimum", "exclusiveMaximum"} & schema.keys():
        return "number"
    return rng.choice(TYPES)


def _of_kind(kind: str, schema: dict, rng: random.Random, root: Any, depth: int) -> Any:
    if kind == "string":
        return _string(schema, rng)
    if kind in ("number", "integer"):
        return _number(kind, schema, rng)
    if kind == "boolean":
        return rng.random() < 0.5
    if kind == "null":
        return None
    if kind == "array":
        return _array(schema, rng, root, depth)
    return _object(schema, rng, root, depth)


def _string(schema: dict, rng: random.Random) -> str:
    lo, hi = int(schema.get("minLength", 0)), int(schema.get("maxLength", 4))
    fits = [s for s in STRINGS if lo <= len(s) <= hi]
    if fits and rng.random() < 0.7:
        return rng.choice(fits)
    return "".join(rng.choice("abé1😀") for _ in range(rng.randint(lo, max(lo, hi))))


def _number(kind: str, schema: dict, rng: random.Random) -> Any:
    bounds = [schema[k] for k in ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum") if k in schema]
    step = schema.get("multipleOf", 1)
    base = rng.choice(bounds) if bounds else 0
    value = (int(base // step) + rng.randint(-1, 2)) * step
    if kind == "integer" and isinstance(value, float) and not value.is_integer():
        value = int(value)
    roll = rng.random()
    return float(value) if roll < 0.25 else value + 0.5 if roll < 0.4 else value


def _array(schema: dict, rng: random.Random, root: Any, depth: int) -> list:
    lo = int(schema.get("minItems", 0))
    n = rng.randint(lo, lo + 3)
    prefix = schema.get("prefixItems", [])
    items = schema.get("items", {})
    out = []
    for i in range(n):
        if "contains" in schema and rng.random() < 0.4:
            out.append(_derive(schema["contains"], rng, root, depth + 1))
        else:
            out.append(_derive(prefix[i] if i < len(prefix) else items, rng, root, depth + 1))
    if out and rng.random() < 0.2:
        out.append(out[0])  # a duplicate for uniqueItems
    return out


def _object(schema: dict, rng: random.Random, root: Any, depth: int) -> dict:
    out = {}
    props = schema.get("properties", {})
    for key in schema.get("required", []):
        out[key] = _derive(props.get(key, {}), rng, root, depth + 1)
    for key, sub in props.items():
        if rng.random() < 0.5:
            out[key] = _derive(sub, rng, root, depth + 1)
    for pattern, sub in schema.get("patternProperties", {}).items():
        matching = [k for k in KEYS + ["zz", "a1", "ba"] if re.search(pattern, k)]
        if matching and rng.random() < 0.5:
            out[rng.choice(matching)] = _derive(sub, rng, root, depth + 1)
    if rng.random() < 0.3:
        out[rng.choice(KEYS + ["zz"])] = _derive(schema.get("additionalProperties", {}), rng, root, depth + 1)
    return out
