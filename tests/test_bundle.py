"""`bundle.role_from_dict` refuses a malformed bundle with PM801, whatever a hand edit put in a field.

A bundle edited by hand is caught by its hash; these cases are bundles whose
manifest hash was updated too (or that another tool wrote): the runtime must
still answer with a BuildError, never a TypeError or AttributeError later on.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from promptmill.core.errors import BuildError
from promptmill.runtime.bundle import role_from_dict

BUILD = Path(__file__).resolve().parents[1] / "build"


def _bundle() -> dict:
    manifest = json.loads((BUILD / "manifest.json").read_text(encoding="utf-8"))
    entry = manifest["roles"]["executor"]
    return json.loads((BUILD / entry["file"]).read_text(encoding="utf-8"))


BAD_TOP = [
    ("tokenizer", None),
    ("tokenizer", ["o200k_base"]),
    ("tokenizer", 5),
    ("separator", None),
    ("separator", ["\n"]),
    ("separator", -1),
    ("sections", "abc"),
    ("sections", None),
    ("sections", [1]),
    ("inputs", "abc"),
    ("inputs", -1),
    ("provider", []),
    ("provider", None),
    ("output", "abc"),
    ("lazy_paths", "zz"),
    ("lazy_paths", [[1]]),
    ("events", "zz"),
    ("cache", "yes"),
    ("description", 3),
]


def test_the_shipped_bundle_loads():
    assert role_from_dict(_bundle()).id == "executor"


@pytest.mark.parametrize(("key", "value"), BAD_TOP)
def test_a_wrong_type_at_the_top_is_pm801(key, value):
    data = _bundle()
    data[key] = value
    with pytest.raises(BuildError) as err:
        role_from_dict(data, "b.json")
    assert err.value.code == "PM801"
    assert f"b.json.{key}" in str(err.value)


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("priority", "high"),
        ("priority", True),
        ("title", 5),
        ("path", "memory"),
        ("order_by", [1]),
        ("tokens", "12"),
        ("order_desc", "no"),
        ("declared", ["x"]),
        ("rules", "r"),
    ],
)
def test_a_wrong_type_in_a_section_is_pm801(key, value):
    data = _bundle()
    for section in data["sections"]:
        bad = copy.deepcopy(data)
        bad["sections"][data["sections"].index(section)][key] = value
        with pytest.raises(BuildError) as err:
            role_from_dict(bad, "b.json")
        assert err.value.code == "PM801"


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("when", {}),
        ("when", {"path": "state.x"}),
        ("when", {"any": []}),
        ("plan", [["v"]]),
        ("plan", [["t", 1]]),
        ("plan", [["f", ["x"], "system"]]),
        ("plan", "abc"),
        ("plan", [["v", []]]),
        ("plan", [["e", ["zz", 1]]]),
        ("plan", [["e", ["pf", "%*d", []]]]),
        ("plan", [["for", "x", ["p", ["xs"]], [["t", "a"]], "no"]]),
        ("plan", [["if", [], []]]),
        ("plan", [["e", ["fl", "join", ["p", ["x"]], [1]]]]),
    ],
)
def test_a_malformed_condition_or_plan_is_pm801(key, value):
    data = _bundle()
    data["sections"][1][key] = value
    with pytest.raises(BuildError, match=rf"b\.json\.sections\[1\]\.{key}") as err:
        role_from_dict(data, "b.json")
    assert err.value.code == "PM801"


def test_every_shipped_bundle_loads_with_its_conditions_and_plans():
    manifest = json.loads((BUILD / "manifest.json").read_text(encoding="utf-8"))
    bundles = [json.loads((BUILD / e["file"]).read_text(encoding="utf-8")) for e in manifest["roles"].values()]
    assert any(s.get("plan") for b in bundles for s in b["sections"])
    assert any(s.get("when") for b in bundles for s in b["sections"])
    for data in bundles:
        role_from_dict(data)
