"""The runtime: loading builds, budgets, state checks, threads, light imports."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from pathlib import Path

import pytest

import promptmill
from promptmill.core.errors import BudgetError, BuildError, StateError, UnknownRoleError
from promptmill.runtime.tokenizers import get_tokenizer

ROOT = Path(__file__).resolve().parent.parent
ROLE = """\
kind: role
id: notes
budget: {max_tokens: 2000, reserve: 200}
inputs:
  type: object
  required: [topic]
  properties:
    topic: {type: string}
    facts:
      type: array
      items:
        type: object
        required: [text, score]
        properties:
          text: {type: string}
          score: {type: number}
sections:
  - id: intro
    text: You write short notes about one topic.
  - id: topic
    title: "TOPIC:"
    template: "{{ topic }}"
    trim: never
  - id: facts
    title: "FACTS:"
    each: facts
    as: fact
    template: "- {{ fact.text }}"
    order_by: score
"""


@pytest.fixture
def build(tmp_path) -> Path:
    (tmp_path / "prompts").mkdir()
    (tmp_path / "prompts" / "notes.yaml").write_text(ROLE)
    promptmill.compile(tmp_path)
    return tmp_path / "build"


def test_render_reports_exact_counts(build):
    rt = promptmill.load(build)
    facts = [{"text": f"fact number {i} about tides and moons", "score": i} for i in range(50)]
    req = rt.render("notes", {"topic": "tides", "facts": facts}, budget=120)
    assert req.tokens == get_tokenizer("o200k_base").count(req.text) <= 120
    s = req.section("facts")
    assert s.status == "trimmed" and list(s.items_kept) == sorted(s.items_kept)
    assert min(s.items_kept) > max(s.items_dropped)  # the best scores survive
    assert "kept" in req.explain() and "facts" in req.explain()


def test_state_is_data_never_template_source(build):
    rt = promptmill.load(build)
    req = rt.render("notes", {"topic": "{{ 7*7 }} {% for x in y %}", "facts": [{"text": "{{ config }}", "score": 1}]})
    assert "{{ 7*7 }} {% for x in y %}" in req.text and "49" not in req.text
    assert "{{ config }}" in req.text


@pytest.mark.parametrize(
    "state, path",
    [
        ({}, "state.topic"),
        ({"topic": 3}, "state.topic"),
        ({"topic": "x", "facts": "nope"}, "state.facts"),
        ({"topic": "x", "facts": [{"text": "a"}]}, "state.facts[0]"),
    ],
)
def test_invalid_state_names_the_path(build, state, path):
    with pytest.raises(StateError) as err:
        promptmill.load(build).render("notes", state)
    assert err.value.code in ("PM810", "PM811")
    assert any(p.startswith(path) for p, _ in err.value.errors), err.value.errors


def test_non_json_state_values_are_refused(build):
    with pytest.raises(StateError) as err:
        promptmill.load(build).render("notes", {"topic": "x", "extra": object()})
    assert err.value.code == "PM811" and err.value.errors[0][0] == "state.extra"
    with pytest.raises(StateError):
        promptmill.load(build).render("notes", {"topic": "x", "n": float("nan")})


def test_huge_state_is_refused(build):
    with pytest.raises(StateError) as err:
        promptmill.load(build).render("notes", {"topic": "x" * 10_000_000})
    assert err.value.code == "PM812"


@pytest.mark.parametrize("budget", [0, -5, True, 2.5, "100"])
def test_invalid_budget(build, budget):
    with pytest.raises(BudgetError) as err:
        promptmill.load(build).render("notes", {"topic": "x"}, budget=budget)
    assert err.value.code == "PM831"


def test_untrimmable_sections_over_budget_are_named(build):
    with pytest.raises(BudgetError) as err:
        promptmill.load(build).render("notes", {"topic": "tides " * 200}, budget=50)
    assert err.value.code == "PM830"
    assert "intro" in err.value.message and "topic" in err.value.message


def test_unknown_role_suggests_close_ids(build):
    with pytest.raises(UnknownRoleError) as err:
        promptmill.load(build).render("note", {"topic": "x"})
    assert "notes" in (err.value.hint or "")


def test_missing_corrupt_and_incompatible_builds(tmp_path, build):
    with pytest.raises(BuildError) as err:
        promptmill.load(tmp_path / "nowhere")
    assert "promptmill compile" in (err.value.hint or "")
    bundle = next((build / "roles").glob("*.json"))
    original = bundle.read_bytes()
    bundle.write_bytes(original.replace(b"short notes", b"short nites"))
    with pytest.raises(BuildError) as err:
        promptmill.load(build)
    assert "hash" in err.value.message
    bundle.write_bytes(original)
    manifest = json.loads((build / "manifest.json").read_text())
    manifest["format_version"] = 99
    (build / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(BuildError) as err:
        promptmill.load(build)
    assert "version" in err.value.message and "recompile" in (err.value.hint or "")
    (build / "manifest.json").write_text("{not json")
    with pytest.raises(BuildError):
        promptmill.load(build)


def test_threads_render_the_same_as_sequential(build):
    rt = promptmill.load(build)
    states = [
        {"topic": f"topic {n}", "facts": [{"text": f"fact {n}-{i} " * (i % 5 + 1), "score": (i * 7) % 11} for i in range(40)]}
        for n in range(16)
    ]
    expected = [rt.render("notes", s, budget=150 + n).text for n, s in enumerate(states)]
    fresh = promptmill.load(build)
    results: dict[int, str] = {}

    def work(k: int) -> None:
        for n in range(k, len(states), 8):
            results[n] = fresh.render("notes", states[n], budget=150 + n).text

    threads = [threading.Thread(target=work, args=(k,)) for k in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert [results[n] for n in range(len(states))] == expected


def test_runtime_imports_no_compile_machinery():
    code = (
        "import sys, promptmill\n"
        f"rt = promptmill.load({str(ROOT / 'build')!r})\n"
        "state = {'task_state': 'goal: x', 'subtask': {'id': 'a', 'description': 'b'}}\n"
        "rt.render('executor', state, provider='text').to_text()\n"
        "bad = [m for m in ('yaml', 'click', 'watchdog', 'promptmill.source.loader', 'promptmill.source.schemacheck',\n"
        "       'promptmill.compiling.bundler', 'promptmill.lints.templates', 'promptmill.compiling.api',\n"
        "       'promptmill.cli.main') if m in sys.modules]\n"
        "print(','.join(bad))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "", f"runtime imported: {out.stdout}"


def test_an_unknown_role_in_an_empty_build_says_the_build_has_no_roles(tmp_path):
    import promptmill as pm

    (tmp_path / "prompts").mkdir()
    (tmp_path / "prompts" / "base.yaml").write_text("kind: role\nid: base\nabstract: true\nsections: [{id: a, text: hi}]\n")
    pm.compile(tmp_path)
    rt = pm.load(tmp_path / "build")
    with pytest.raises(pm.PromptmillError) as err:
        rt.render("base", {})
    assert err.value.code == "PM802" and "'base' is abstract" in str(err.value)
    assert err.value.hint == "the build holds no roles yet: add one with `extends: base` and compile"
    with pytest.raises(pm.PromptmillError) as other:
        rt.render("other", {})
    assert other.value.hint is not None and other.value.hint.startswith("the build holds no roles")


def test_a_render_time_budget_keeps_the_margin_of_estimated_providers(build):
    rt = promptmill.load(build)
    state = {"topic": "tides", "facts": [{"text": f"fact {i} " * 20, "score": i} for i in range(100)]}
    # anthropic counts are estimates: 10% of whichever budget applies is held back
    # (the role names no model: its counts are scaled by the largest Anthropic ratio of the model table)
    ratio = rt.models.max_ratio("anthropic")
    role_default = rt.render("notes", state, provider="anthropic")
    assert (role_default.model_budget, role_default.margin_tokens, role_default.ratio) == (1620, 180, ratio)
    assert role_default.budget == int(1620 / ratio)
    lowered = rt.render("notes", state, provider="anthropic", budget=1000)
    assert (lowered.model_budget, lowered.margin_tokens) == (900, 100) and lowered.estimated_tokens <= 900
    assert "budget: render budget 1000 (below max_tokens 2000 - reserve 200) - margin 100 = 900" in lowered.explain()
    # a budget above the role's is capped at the role's, margin and all
    raised = rt.render("notes", state, provider="anthropic", budget=5000)
    assert (raised.model_budget, raised.margin_tokens) == (1620, 180)
    assert "budget: max_tokens 2000 - reserve 200 - margin 180 = 1620" in raised.explain()
    # exact providers have no margin: the render-time budget is the limit
    text = rt.render("notes", state, budget=1000)
    assert (text.budget, text.margin_tokens, text.tokens) == (1000, 0, get_tokenizer("o200k_base").count(text.text))


@pytest.mark.parametrize("cache_chars", [None, "8000000", 1.5, True, -1])
def test_cache_size_must_be_a_whole_number(build, cache_chars):
    # a wrong type used to pass load() and fail inside the first render with a TypeError
    with pytest.raises(promptmill.ConfigError) as err:
        promptmill.load(build, cache_chars=cache_chars)
    assert err.value.code == "PM010" and "cache_chars" in str(err.value)
    assert promptmill.load(build, cache_chars=0).render("notes", {"topic": "x"}).text


def test_any_mapping_is_a_state(build):
    from collections import UserDict
    from types import MappingProxyType

    rt = promptmill.load(build)
    state = {"topic": "tides", "facts": [{"text": "moon", "score": 1}]}
    expected = rt.render("notes", state).text
    assert rt.render("notes", MappingProxyType(state)).text == expected
    assert rt.render("notes", UserDict(state)).text == expected
    with pytest.raises(StateError) as err:  # inside the state, values are JSON data
        rt.render("notes", {"topic": "tides", "facts": [MappingProxyType({"text": "moon", "score": 1})]})
    assert "state.facts[0]" in str(err.value)


def test_asking_for_an_abstract_role_says_it_is_abstract(tmp_path):
    (tmp_path / "prompts").mkdir()
    (tmp_path / "prompts" / "base.yaml").write_text("kind: role\nid: base\nabstract: true\nsections:\n  - id: a\n    text: Shared.\n")
    (tmp_path / "prompts" / "child.yaml").write_text("kind: role\nid: child\nextends: base\nsections:\n  - id: b\n    text: Own.\n")
    promptmill.compile(tmp_path)
    from_build = promptmill.load(tmp_path / "build")
    from_sources, _ = promptmill.compiling.api.build_in_memory(tmp_path)
    for rt in (from_build, from_sources):
        with pytest.raises(UnknownRoleError) as err:
            rt.render("base")
        assert err.value.code == "PM802" and "'base' is abstract" in str(err.value)
        assert "render one of the roles: child" in str(err.value)
        assert rt.roles == ["child"]
    manifest = json.loads((tmp_path / "build" / "manifest.json").read_text())
    assert manifest["abstract"] == ["base"]
    manifest["abstract"] = "base"
    (tmp_path / "build" / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(BuildError) as bad:
        promptmill.load(tmp_path / "build")
    assert "abstract: expected a list of role ids" in str(bad.value)


def test_a_section_report_is_made_with_every_field_or_not_at_all():
    from promptmill.runtime.request import RenderedSection

    fixed = {"id": "s", "kind": "static", "message": "system", "stability": "stable", "priority": 0, "trim": "never"}
    made = RenderedSection.create(fixed, status="kept", reason="", text="x")
    assert made == RenderedSection(**fixed, status="kept", reason="", text="x")
    with pytest.raises(TypeError, match=r"missing \['status'\]"):
        RenderedSection.create(fixed, reason="", text="x")
