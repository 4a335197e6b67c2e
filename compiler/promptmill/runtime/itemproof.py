"""One-pass checks of list items, from the record proofs the compiler wrote (`item_proofs`).

An item of a list checked lazily is checked when the fit offers it: as JSON data of a
sane size (`statelimits.check_state_data`) and against the inputs schema's item schema
(`Validator.item_valid`), two generic walks. Where the compiler proved the item schema
a plain record (`compiling/proofs.py`: fields of one kind each, required fields,
whether others may appear), `record_check` makes one function that answers both in a
single pass over the item. It says True only for an item both checks accept; for any
other item it says False and the caller runs the two checks, which raise the error
they always raised (or accept an item the pass was too strict for: an integer written
3.0, a dict subclass). So a proof changes how fast an item is accepted, never what a
render gives.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Any

from .statelimits import MAX_STATE_CHARS, MAX_STATE_DEPTH, MAX_STATE_NODES, bad_text, data_sizes

ItemCheck = Callable[[Any, int], bool]

_MISSING = object()
# the kinds a value of each Python type may have (and "any", which every JSON value has)
_STR_KINDS = frozenset({"string", "any"})
_INT_KINDS = frozenset({"number", "integer", "any"})
_FLOAT_KINDS = frozenset({"number", "any"})
_BOOL_KINDS = frozenset({"boolean", "any"})
_NULL_KINDS = frozenset({"null", "any"})
_DICT_KINDS = frozenset({"object", "any"})
_LIST_KINDS = frozenset({"array", "any"})
PROOF_KINDS = frozenset({"string", "number", "integer", "boolean", "null", "object", "array", "any"})


def proof_ok(proof: Any) -> bool:
    """True when `proof` has the shape the compiler writes (a bundle read from disk is checked)."""
    if not isinstance(proof, dict) or set(proof) != {"path", "fields", "required", "others"}:
        return False
    path, fields, required = proof["path"], proof["fields"], proof["required"]
    if not isinstance(path, list) or not path or not all(isinstance(p, str) for p in path):
        return False
    if not isinstance(required, list) or not all(isinstance(r, str) for r in required) or type(proof["others"]) is not bool:
        return False
    if not isinstance(fields, dict):
        return False
    for kind in fields.values():
        if isinstance(kind, dict) and "enum" in kind:
            values = kind["enum"]
            if set(kind) != {"enum"} or not isinstance(values, list) or not values or not all(isinstance(v, str) for v in values):
                return False
        elif isinstance(kind, dict):
            if not kind or not set(kind) <= {"minLength", "maxLength"} or not all(type(n) is int and n >= 0 for n in kind.values()):
                return False
        elif kind not in PROOF_KINDS:
            return False
    return True


def record_check(proof: Mapping[str, Any]) -> ItemCheck:
    """`check(item, depth)`: True when `item` (at `depth` levels in the state) is JSON data within
    the limits and a record of the proof's shape; False means 'run the generic checks'."""
    kinds: dict[str, Any] = {name: _kind(kind) for name, kind in proof["fields"].items()}
    required = tuple(proof["required"])
    others: Any = "any" if proof["others"] else None

    def check(item: Any, depth: int) -> bool:
        if type(item) is not dict or depth >= MAX_STATE_DEPTH:
            return False
        for name in required:
            if name not in item:
                return False
        nodes = len(item)
        chars = 0
        for key, value in item.items():
            if type(key) is not str or (not key.isascii() and bad_text(key)):
                return False
            kind = kinds.get(key, others)
            if kind is None:
                return False  # a field the schema does not allow
            t = type(value)
            if t is str:
                if type(kind) is frozenset:
                    if value not in kind:
                        return False
                elif type(kind) is tuple:
                    if not kind[0] <= len(value) <= kind[1]:
                        return False
                elif kind not in _STR_KINDS:
                    return False
                chars += len(value)
                if not value.isascii() and bad_text(value):
                    return False
            elif type(kind) is not str:
                return False  # an enum of texts, or a text of bounded length, holds texts only
            elif t is int:
                if kind not in _INT_KINDS:
                    return False
            elif t is float:
                if kind not in _FLOAT_KINDS or not math.isfinite(value):
                    return False
            elif t is bool:
                if kind not in _BOOL_KINDS:
                    return False
            elif value is None:
                if kind not in _NULL_KINDS:
                    return False
            elif t is dict or t is list:
                if kind not in (_DICT_KINDS if t is dict else _LIST_KINDS):
                    return False
                sizes = data_sizes(value, depth + 1)
                if sizes is None:
                    return False
                nodes += sizes[0]
                chars += sizes[1]
            else:
                return False
        return nodes <= MAX_STATE_NODES and chars <= MAX_STATE_CHARS

    return check


def _kind(kind: Any) -> Any:
    """A field's kind as `check` tests it: a name, a frozenset (enum of texts) or (min, max) characters."""
    if isinstance(kind, dict) and "enum" in kind:
        return frozenset(kind["enum"])
    if isinstance(kind, dict):
        return (kind.get("minLength", 0), kind.get("maxLength", MAX_STATE_CHARS))
    return kind


def item_checks(proofs: tuple[dict, ...], lazy_paths: tuple[tuple[str, ...], ...]) -> dict[tuple[str, ...], ItemCheck]:
    """The one-pass check of each lazily checked list path a proof covers."""
    lazy = set(lazy_paths)
    return {tuple(p["path"]): record_check(p) for p in proofs if tuple(p["path"]) in lazy}
