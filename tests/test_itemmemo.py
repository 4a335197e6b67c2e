"""The item memo: a render that recognises an item it checked and rendered before
gives exactly what a render without the memo gives, and nothing else."""

from __future__ import annotations

import copy
from collections.abc import Callable
from pathlib import Path

import pytest

import promptmill
from promptmill.compiling.api import abstract_roles, build_in_memory, compile_bundles, load_project, model_table
from promptmill.core.diagnostics import has_errors
from promptmill.core.errors import BudgetError, StateError
from promptmill.runtime.engine import Runtime
from promptmill.runtime.itemmemo import ItemMemo, item_only
from providers_support import PROVIDERS, ROOT, SHIPPED, grow, state

ROLE = """\
kind: role
id: notes
budget: {max_tokens: 3000, reserve: 0}
inputs:
  type: object
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
          flag: {}
    others: {type: array, items: {type: object, properties: {text: {type: string}}}}
sections:
  - id: facts
    title: "FACTS:"
    each: facts
    as: fact
    template: "- {{ fact.text }} {{ fact.flag | default('-') }}"
    order_by: score
  - id: about
    title: "ABOUT:"
    each: others
    as: fact
    template: "- {{ fact.text }} (on {{ topic }})"
  - id: lucky
    each: others
    as: fact
    template: "{{ [fact.text, fact.text] | random }}"
"""


def _fresh(root: Path):
    """A runtime with an empty memo."""
    return promptmill.load(root / "build")


@pytest.fixture
def root(tmp_path) -> Path:
    (tmp_path / "prompts").mkdir()
    (tmp_path / "prompts" / "notes.yaml").write_text(ROLE)
    promptmill.compile(tmp_path)
    return tmp_path


def _same(a, b) -> None:
    assert (a.text, a.tokens, a.to_payload()) == (b.text, b.tokens, b.to_payload())
    assert [(s.id, s.items_kept, s.tokens) for s in a.sections] == [(s.id, s.items_kept, s.tokens) for s in b.sections]


def test_only_templates_of_the_item_alone_are_memoised(root):
    prepared = _fresh(root).prepared("notes")
    assert prepared.memo_sections == {"facts"}
    assert item_only("{{ x.a | upper }}{% for k in x %}{{ k }}{% endfor %}", "x")
    assert not item_only("{{ x.a }}{{ loop.index }}", "x")
    assert not item_only("{{ x.a | random }}", "x")


@pytest.fixture(scope="module")
def shipped() -> Callable[[], Runtime]:
    """shipped() -> a new runtime over the shipped project, with an empty memo and empty caches: what
    `build_in_memory(ROOT)` returns, but the project is compiled once for this file, not once per runtime
    (the bundles are frozen data; the memo and every cache belong to the Runtime)."""
    loaded = load_project(ROOT)
    bundles, _, diags = compile_bundles(loaded)
    assert not has_errors(loaded.diagnostics + diags)
    kw = {"base_dir": loaded.project.root, "abstract": abstract_roles(loaded), "models": model_table(loaded.project)}
    return lambda: Runtime(bundles, **kw)


@pytest.mark.parametrize(("role", "state_file"), SHIPPED)
@pytest.mark.parametrize("provider", PROVIDERS)
def test_repeated_renders_equal_renders_without_the_memo(shipped, role, state_file, provider):
    rt = shipped()
    big = grow(state(state_file))
    for st in (state(state_file), big, state(state_file), big):
        warm, warm_error = _render_or_refusal(rt, role, st, provider)
        fresh, fresh_error = _render_or_refusal(shipped(), role, st, provider)
        assert warm_error == fresh_error  # a refusal (PM830) is the same refusal with or without the memo
        if warm_error is None:
            _same(warm, fresh)


def _render_or_refusal(rt, role, st, provider):
    """(request, None), or (None, (code, message)) when the budget cannot hold the never-trimmed sections: on an
    estimated wire (counts x the model's ratio) ten times the example state can need more than the role's budget."""
    try:
        return rt.render(role, st, provider=provider), None
    except BudgetError as exc:
        assert exc.code == "PM830", exc
        return None, (exc.code, str(exc))


def test_the_shipped_lists_are_memoised():
    rt, _ = build_in_memory(ROOT)
    st = state("executor.state.yaml")
    rt.render("executor", st)
    assert len(rt._memo) > 0
    before = len(rt._memo)
    rt.render("executor", st)
    assert len(rt._memo) == before  # the second render only hit


def test_a_hit_needs_the_same_types_not_just_equal_values(root):
    rt = _fresh(root)
    texts = []
    for flag in (True, 1, 1.0, "1", [1], (1,)):
        req = rt.render("notes", {"topic": "t", "facts": [{"text": "a", "score": 1, "flag": flag}]})
        texts.append(req.sections[0].text)
    assert texts == [f"FACTS:\n- a {f}" for f in ("True", "1", "1.0", "1", "[1]", "(1,)")]


def test_an_item_changed_in_place_is_rendered_again(root):
    rt = _fresh(root)
    facts = [{"text": "first", "score": 2}, {"text": "second", "score": 1}]
    st = {"topic": "t", "facts": facts}
    assert "first" in rt.render("notes", st).text
    facts[0]["text"] = "changed"
    req = rt.render("notes", st)
    assert "changed" in req.text and "first" not in req.text
    _same(req, _fresh(root).render("notes", st))


def test_templates_reading_other_state_follow_it(root):
    rt = _fresh(root)
    others = [{"text": "a"}]
    assert "(on one)" in rt.render("notes", {"topic": "one", "others": others}).text
    assert "(on two)" in rt.render("notes", {"topic": "two", "others": others}).text


def test_an_unchecked_render_does_not_vouch_for_an_item(root):
    rt = _fresh(root)
    bad = {"topic": "t", "facts": [{"text": 5, "score": 1}]}
    rt.render("notes", bad, validate=False)  # renders "5", remembers nothing
    with pytest.raises(StateError, match=r"state\.facts\[0\]\.text"):
        rt.render("notes", bad)


def test_invalid_items_are_refused_every_time(root):
    rt = _fresh(root)
    bad = {"topic": "t", "facts": [{"text": "x", "score": 1, "flag": float("nan")}]}
    for _ in range(2):
        with pytest.raises(StateError):
            rt.render("notes", bad)


def test_native_tools_are_memoised_per_provider(shipped):
    rt = shipped()
    st = state("companion-chat.state.yaml")
    for provider in ("openai", "anthropic", "gemini", "openai"):
        cold = shipped()
        _same(rt.render("companion-chat", st, provider=provider), cold.render("companion-chat", st, provider=provider))


def test_a_bad_tool_is_reported_after_a_good_one_was_memoised():
    rt, _ = build_in_memory(ROOT)
    st = state("companion-chat.state.yaml")
    rt.render("companion-chat", st, provider="openai")
    broken = copy.deepcopy(st)
    tool = next(t for t in broken["tools"])
    tool["parameters"] = {"type": "object", "properties": {"x": {"type": "strng"}}}
    with pytest.raises(StateError, match="not a valid JSON Schema"):
        rt.render("companion-chat", broken, provider="openai")


def test_values_marshal_refuses_are_not_memoised():
    assert ItemMemo.key(("r", 0, ""), {"a": object()}) is None
    assert ItemMemo.key(("r", 0, ""), {"a": "x" * 70_000}) is None  # too large to keep
    assert ItemMemo.key(("r", 0, ""), {"a": 1}) != ItemMemo.key(("r", 0, ""), {"a": True})


def test_the_memo_is_bounded():
    memo = ItemMemo(10_000)
    for i in range(5_000):
        key = memo.key(("r", 0, ""), {"text": f"item {i} " * 5})
        memo.put(key, (f"- item {i}", f"- item {i}\n"))
    assert memo.weight <= 2 * 10_000 + 400
    key = memo.key(("r", 0, ""), {"text": "item 4999 " * 5})
    assert memo.get(key) == ("- item 4999", "- item 4999\n")


# -- a score that only orders the list ------------------------------------------


def test_an_item_whose_score_alone_changed_is_recognised(root):
    """An agent re-ranks its memory every turn: the score orders the list but never
    reaches the text, so an entry with a new score is the same rendered item."""
    rt = _fresh(root)
    assert rt.prepared("notes").memo_unscored == {"facts": "score"}
    facts = [{"text": f"fact {i}", "score": i} for i in range(6)]
    rt.render("notes", {"topic": "t", "facts": facts})
    before = len(rt._memo)
    rescored = {"topic": "t", "facts": [dict(f, score=10.5 - f["score"]) for f in facts]}
    req = rt.render("notes", rescored)
    assert len(rt._memo) == before  # every item was a hit
    _same(req, _fresh(root).render("notes", rescored))
    assert req.section("facts").items_kept == tuple(range(6))


@pytest.mark.parametrize("score", ["high", float("nan"), float("inf"), True, None])
def test_an_item_rescored_to_a_bad_score_is_still_refused(root, score):
    rt = _fresh(root)
    rt.render("notes", {"topic": "t", "facts": [{"text": "a", "score": 1}]})
    with pytest.raises(StateError, match=r"state\.facts\[0\]\.score"):
        rt.render("notes", {"topic": "t", "facts": [{"text": "a", "score": score}]})


def test_a_score_with_its_own_constraints_is_checked_every_time(tmp_path):
    role = ROLE.replace("score: {type: number}", "score: {type: number, minimum: 0}")
    (tmp_path / "prompts").mkdir()
    (tmp_path / "prompts" / "notes.yaml").write_text(role)
    promptmill.compile(tmp_path)
    rt = _fresh(tmp_path)
    assert rt.prepared("notes").memo_unscored == {}
    rt.render("notes", {"topic": "t", "facts": [{"text": "a", "score": 1}]})
    with pytest.raises(StateError, match=r"state\.facts\[0\]\.score"):
        rt.render("notes", {"topic": "t", "facts": [{"text": "a", "score": -1}]})


def test_a_template_that_shows_the_score_is_rendered_again(tmp_path):
    shown = 'template: "- {{ fact.text }} ({{ fact.score }})"'
    role = ROLE.replace("template: \"- {{ fact.text }} {{ fact.flag | default('-') }}\"", shown)
    (tmp_path / "prompts").mkdir()
    (tmp_path / "prompts" / "notes.yaml").write_text(role)
    promptmill.compile(tmp_path)
    rt = _fresh(tmp_path)
    assert rt.prepared("notes").memo_unscored == {}
    assert "- a (1)" in rt.render("notes", {"topic": "t", "facts": [{"text": "a", "score": 1}]}).text
    assert "- a (2)" in rt.render("notes", {"topic": "t", "facts": [{"text": "a", "score": 2}]}).text


def test_which_templates_leave_the_score_unread():
    from promptmill.runtime.itemmemo import unread_field

    assert unread_field("- {{ e.text }} {{ e['kind'] | upper }}", "e", "score")
    for reads in (
        "{{ e.score }}",
        "{{ e['score'] }}",
        "{{ e }}",
        "{{ e | tojson }}",
        "{{ e[k] }}",
        "{% for k in e %}{{ k }}{% endfor %}",
        "{{ e.items() }}",
        "{{ e.get('score') }}",
    ):
        assert not unread_field("{{ e.text }}" + reads, "e", "score"), reads


def test_which_item_schemas_let_any_finite_score_through():
    from promptmill.runtime.itemmemo import score_only_orders

    plain = {"type": "object", "required": ["text", "score"], "properties": {"text": {"type": "string"}, "score": {"type": "number"}}}
    assert score_only_orders(plain, "score")
    assert score_only_orders({**plain, "additionalProperties": False}, "score")
    assert score_only_orders(True, "score")
    for schema in (
        {**plain, "properties": {**plain["properties"], "score": {"type": "number", "maximum": 1}}},
        {**plain, "properties": {**plain["properties"], "score": {"type": "integer"}}},
        {**plain, "properties": {**plain["properties"], "score": {"enum": [1, 2]}}},
        {**plain, "dependentRequired": {"score": ["text"]}},
        {**plain, "oneOf": [{"required": ["text"]}]},
        {**plain, "properties": {"text": {"type": "string"}}, "additionalProperties": {"type": "string"}},
        {**plain, "$ref": "#/$defs/x"},
    ):
        assert not score_only_orders(schema, "score"), schema


def test_the_compilers_item_reads_proofs_are_what_the_runtime_would_find():
    """Bundles carry `item_reads` (what an item's text reads), proven at compile time; a bundle of an older
    compiler has none and the runtime parses the template instead. Both give the same memo decisions and,
    for every shipped role and wire, the same payload."""
    import dataclasses
    import json

    from promptmill.runtime.counting import Counter
    from promptmill.runtime.engine import Runtime
    from promptmill.runtime.fill import PreparedRole
    from promptmill.runtime.tokenizers import get_tokenizer

    rt = promptmill.load(ROOT / "build")
    proven = 0
    stripped_bundles = {}
    for role in rt.roles:
        bundle = rt.bundle(role)
        lists = [s for s in bundle.sections if s.kind in ("each", "tools", "history")]
        assert all(s.item_reads is not None for s in lists), role
        proven += len(lists)
        stripped = dataclasses.replace(bundle, sections=tuple(dataclasses.replace(s, item_reads=None) for s in bundle.sections))
        counter = Counter(get_tokenizer(bundle.tokenizer))
        with_proofs, without = PreparedRole.prepare(bundle, counter), PreparedRole.prepare(stripped, counter)
        assert with_proofs.memo_sections == without.memo_sections, role
        assert dict(with_proofs.memo_unscored) == dict(without.memo_unscored), role
        stripped_bundles[role] = stripped
    assert proven >= 15  # the shipped roles have list sections to prove
    older = Runtime(stripped_bundles)
    for role, state_file in SHIPPED:
        data = state(state_file)
        for provider in PROVIDERS:
            for _ in range(2):  # the second render is served by the item memo
                req = older.render(role, data, provider=provider)
                assert json.dumps(req.to_payload()) == json.dumps(rt.render(role, data, provider=provider).to_payload())


def test_a_bundle_with_an_unknown_item_reads_is_refused():
    """`item_reads` is one of three proofs on a list section; anything else is PM801, naming the section."""
    import dataclasses

    from promptmill.core.errors import BuildError
    from promptmill.runtime.bundle import _plain_bundle, role_from_dict

    bundle = promptmill.load(ROOT / "build").bundle("executor")
    data = _plain_bundle(bundle)
    index = next(i for i, s in enumerate(data["sections"]) if "item_reads" in s)
    assert role_from_dict(data) == bundle  # the field as written reads back
    data["sections"][index]["item_reads"] = "everything"
    with pytest.raises(
        BuildError, match=rf"sections\[{index}\]: item_reads 'everything' is not one of item, item-without-score, more"
    ) as err:
        role_from_dict(data)
    assert err.value.code == "PM801"
    static = next(i for i, s in enumerate(bundle.sections) if s.kind == "static")
    data = _plain_bundle(
        dataclasses.replace(
            bundle, sections=tuple(dataclasses.replace(s, item_reads="item") if i == static else s for i, s in enumerate(bundle.sections))
        )
    )
    with pytest.raises(BuildError, match="on a list section"):
        role_from_dict(data)
