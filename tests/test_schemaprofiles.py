"""Structured output in each wire's dialect (runtime/schemaprofiles.py, docs/providers.md "Output contracts").

Per wire that carries a native contract: it has a profile; what the profile rejects never reaches
the payload; what it loses is stated in the prompt the model reads; and a reply that breaks a lost
constraint is still refused by parse_reply with PM861.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from promptmill.compiling.api import build_in_memory
from promptmill.core.errors import ReplyError
from promptmill.runtime.schemaprofiles import (
    CONSTRAINTS,
    PROFILES,
    WIRE_PROFILES,
    carries_contract,
    lost_keywords,
    profile_for,
    without_rejected,
)
from promptmill.wires import WIRE_NAMES, get_wire

CARRIERS = [name for name in WIRE_NAMES if carries_contract(get_wire(name))]

# every constraint of CONSTRAINTS, on properties named so that no name is also a keyword
SCHEMA: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "required": ["summary", "score", "rank", "tags", "extra"],
    "properties": {
        "summary": {"type": "string", "minLength": 2, "maxLength": 10, "pattern": "^[a-z ]+$"},
        "score": {"type": "number", "minimum": 0, "maximum": 10, "multipleOf": 0.5},
        "rank": {"type": "integer", "exclusiveMinimum": 0, "exclusiveMaximum": 100},
        "tags": {"type": "array", "items": {"type": "string"}, "minItems": 2, "maxItems": 3, "uniqueItems": True},
        "extra": {
            "type": "object",
            "additionalProperties": False,
            "properties": {"a": {"type": "string"}, "b": {"type": "string"}},
            "minProperties": 1,
            "maxProperties": 1,
        },
    },
}
VALID = {"summary": "ok fine", "score": 5, "rank": 3, "tags": ["a", "b"], "extra": {"a": "x"}}
# keyword -> (property, a value that breaks only that keyword)
BREAKS = {
    "minLength": ("summary", "a"),
    "maxLength": ("summary", "abcdefghijkl"),
    "pattern": ("summary", "ABC"),
    "minimum": ("score", -1),
    "maximum": ("score", 11),
    "multipleOf": ("score", 0.3),
    "exclusiveMinimum": ("rank", 0),
    "exclusiveMaximum": ("rank", 100),
    "minItems": ("tags", ["a"]),
    "maxItems": ("tags", ["a", "b", "c", "d"]),
    "uniqueItems": ("tags", ["a", "a"]),
    "minProperties": ("extra", {}),
    "maxProperties": ("extra", {"a": "x", "b": "y"}),
}
ROLE = """\
kind: role
id: r
output: result
sections:
  - id: task
    text: Summarize the day.
    message: user
  - id: format
    output: true
"""


def _project(make_project) -> Any:
    contract = {"kind": "output", "id": "result", "style": "native", "instructions": "Answer in JSON.", "schema": SCHEMA}
    root = make_project(
        {
            "promptmill.yaml": "prompts: prompts\nlibrary: false\n",
            "prompts/c.yaml": json.dumps(contract),
            "prompts/r.yaml": ROLE,
        }
    )
    rt, _ = build_in_memory(root)
    return rt


@pytest.fixture
def rt(make_project):
    return _project(make_project)


def _keys(data: Any) -> set[str]:
    """Every mapping key anywhere in `data` (the payload a wire sends)."""
    if isinstance(data, dict):
        return set(data) | {k for v in data.values() for k in _keys(v)}
    if isinstance(data, list):
        return {k for v in data for k in _keys(v)}
    return set()


def _snake(name: str) -> str:
    return "".join("_" + c.lower() if c.isupper() else c for c in name)


def test_the_breaking_values_cover_every_constraint():
    assert set(BREAKS) == set(CONSTRAINTS)


@pytest.mark.parametrize("name", WIRE_NAMES)
def test_every_wire_that_carries_a_native_contract_has_a_profile(name):
    wire = get_wire(name)
    if carries_contract(wire):
        assert profile_for(wire) is not None, f"wire {name!r} sends native contracts but has no schema profile"
    if name in WIRE_PROFILES:
        assert WIRE_PROFILES[name] in PROFILES


@pytest.mark.parametrize("profile", PROFILES.values(), ids=list(PROFILES))
def test_a_profile_sorts_every_constraint_once_and_names_its_sources(profile):
    parts = [profile.enforced, profile.dropped, profile.rejected]
    assert set().union(*parts) == set(CONSTRAINTS)
    assert sum(len(p) for p in parts) == len(CONSTRAINTS)
    assert profile.sources and all(s.startswith("https://") for s in profile.sources)


@pytest.mark.parametrize("name", CARRIERS)
def test_a_rejected_keyword_never_reaches_the_payload(name, rt):
    wire = get_wire(name)
    profile = profile_for(wire)
    assert profile is not None
    rejected = {kw for _, kw, _, fate in lost_keywords(SCHEMA, profile) if fate == "rejected"}
    assert rejected, "the schema uses something every profile rejects"
    payload = wire.render(rt.render("r", {}, provider=name))
    sent = _keys(payload)
    assert not {kw for kw in rejected if kw in sent or _snake(kw) in sent}, payload
    enforced = set(CONSTRAINTS) - {kw for _, kw, _, _ in lost_keywords(SCHEMA, profile)}
    missing = {kw for kw in enforced if kw not in sent and _snake(kw) not in sent}
    assert not missing, f"the profile says {name} enforces {sorted(missing)}, but the payload leaves them out (state them as lost)"


@pytest.mark.parametrize("name", CARRIERS)
def test_the_prompt_states_what_the_wire_loses(name, rt):
    profile = profile_for(get_wire(name))
    assert profile is not None
    req = rt.render("r", {}, provider=name)
    text = json.dumps(get_wire(name).render(req), ensure_ascii=False)
    lost = {kw for _, kw, _, _ in lost_keywords(SCHEMA, profile)}
    assert "keep to these limits" in text
    assert ("at most 10 characters" in text) == ("maxLength" in lost)
    assert ("no item repeated" in text) == ("uniqueItems" in lost)
    assert ("at least 0" in text) == ("minimum" in lost)


def test_wires_without_a_schema_field_get_no_limits_text(rt):
    for name in WIRE_NAMES:
        if not carries_contract(get_wire(name)):
            assert "keep to these limits" not in rt.render("r", {}, provider=name).text


def test_the_limits_are_a_counted_section_that_is_never_trimmed(rt):
    bundled = [s for s in rt.bundle("r").sections if s.id.startswith("format.limits")]
    assert bundled and all(s.trim == "never" and s.tokens > 10 for s in bundled)
    for name in CARRIERS:
        placed = [p for p in rt.render("r", {}, provider=name).sections if p.id.startswith("format.limits") and p.present]
        assert len(placed) == 1 and placed[0].tokens > 10, name  # counted with the rest of the prompt by the fit


@pytest.mark.parametrize("name", CARRIERS)
def test_parse_reply_still_enforces_every_lost_constraint(name, rt, assert_reply_error):
    profile = profile_for(get_wire(name))
    assert profile is not None
    req = rt.render("r", {}, provider=name)
    assert req.parse_reply(VALID) == VALID
    lost = lost_keywords(SCHEMA, profile)
    assert lost
    for path, keyword, _, _ in lost:
        field, bad = BREAKS[keyword]
        with pytest.raises(ReplyError) as err:
            req.parse_reply({**VALID, field: bad})
        assert_reply_error(err.value, "PM861", [path])


def test_without_rejected_keeps_property_names_that_look_like_keywords():
    schema = {"type": "object", "properties": {"pattern": {"type": "string", "pattern": "x"}, "maxLength": {"type": "integer"}}}
    out = without_rejected(schema, PROFILES["anthropic-strict"])
    assert out == {"type": "object", "properties": {"pattern": {"type": "string"}, "maxLength": {"type": "integer"}}}
    assert schema["properties"]["pattern"]["pattern"] == "x"  # the original is untouched


def test_lint_names_every_lost_keyword_with_its_path_and_wires(make_project):
    from promptmill.compiling.api import lint
    from promptmill.compose.contracts import lost_by_wire

    _project(make_project)
    found = [d for d in lint(make_project({})).diagnostics if d.code == "PM708"]
    assert len(found) == 1 and found[0].severity == "info"
    message = found[0].message
    expected: dict[tuple[str, str], set[str]] = {}
    for wire, lost in lost_by_wire(SCHEMA).items():
        for path, keyword, _, _ in lost:
            expected.setdefault((path, keyword), set()).add(wire)
    assert expected
    for (path, keyword), wires in expected.items():
        entry = next(part for part in message.split("on some wires: ", 1)[1].split("; ") if part.startswith(f"{keyword} at {path} ("))
        named = {w for fate in entry.split("(", 1)[1].rstrip(")").split(", ") for w in fate.split(" by ")[1].split("/")}
        assert named == wires, (keyword, path, entry)


def test_lost_limits_no_section_can_state_are_a_warning(make_project):
    from promptmill.compiling.api import lint

    _project(make_project)
    root = make_project({"prompts/r.yaml": ROLE.replace("  - id: format\n    output: true\n", "")})
    found = [d for d in lint(root).diagnostics if d.code == "PM708"]
    assert [d.severity for d in found] == ["warning"]
    assert "does not state them" in found[0].message
