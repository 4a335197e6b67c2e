"""Cache-aware history trimming: the oldest kept turn moves only in steps.

With `step: k`, whenever turns are dropped the oldest kept turn's index is a
multiple of k, on every wire and for any budget, so consecutive requests share
their prefix until the next step. bench/bench_history_cache.py measures what
that buys over a 50-turn conversation.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from promptmill.compiling.api import build_in_memory
from promptmill.core.errors import BudgetError

STEPS = (1, 2, 3, 4, 8)
ROLE = """kind: role
id: chat-{step}
budget: {{max_tokens: 100000, reserve: 100}}
inputs:
  type: object
  properties:
    history:
      type: array
      items: {{type: object, required: [role, content], properties: {{role: {{enum: [user, assistant]}}, content: {{type: string}}}}}}
    message: {{type: string}}
sections:
  - id: persona
    text: You are a tutor.
  - id: history
    history: history
    step: {step}
  - id: message
    template: "{{{{ message }}}}"
    trim: never
"""


@pytest.fixture(scope="module")
def rt(tmp_path_factory):
    root = tmp_path_factory.mktemp("history")
    (root / "prompts").mkdir()
    for step in STEPS:
        (root / "prompts" / f"chat-{step}.yaml").write_text(ROLE.format(step=step))
    runtime, _ = build_in_memory(root)
    return runtime


turn_text = st.text(alphabet="ab cd\nef.,'!/", min_size=1, max_size=40).filter(lambda s: s.strip())


@settings(max_examples=200, deadline=None)
@given(
    lengths=st.lists(turn_text, min_size=0, max_size=40),
    step=st.sampled_from(STEPS),
    budget=st.integers(min_value=20, max_value=400),
    provider=st.sampled_from(["openai", "text", "anthropic"]),
)
def test_oldest_kept_turn_is_a_multiple_of_step(rt, lengths, step, budget, provider):
    history = [{"role": "user" if i % 2 == 0 else "assistant", "content": text} for i, text in enumerate(lengths)]
    try:
        req = rt.render(f"chat-{step}", {"history": history, "message": "next?"}, budget=budget, provider=provider)
    except BudgetError:
        return
    assert req.tokens <= req.budget
    section = req.section("history")
    kept = section.items_kept
    if section.items_dropped and kept:
        assert kept[0] % step == 0, (kept, step)
    assert list(kept) == list(range(kept[0], len(history))) if kept else True  # the newest turns, contiguous


def test_consecutive_turns_share_the_prefix_until_the_next_step(rt):
    turns = [{"role": "user" if i % 2 == 0 else "assistant", "content": f"message number {i} " * 6} for i in range(40)]
    oldest = []
    for t in range(10, 40):
        req = rt.render("chat-4", {"history": turns[:t], "message": "go on"}, budget=260, provider="openai")
        oldest.append(req.section("history").items_kept[0])
    assert all(o % 4 == 0 for o in oldest)
    changes = sum(a != b for a, b in zip(oldest, oldest[1:], strict=False))
    assert 0 < changes <= len(oldest) // 4 + 1


def test_repair_keeps_the_step_alignment(rt):
    """When an estimate was short, the fitter removes the last unit added; for a history
    with a step that must not leave the oldest kept turn off a multiple of the step."""
    from promptmill.runtime.fill import make_candidate
    from promptmill.runtime.fit import Fitter, Placed
    from promptmill.wires import get_wire

    prepared = rt.prepared("chat-4")
    spec = next(s for s in prepared.bundle.sections if s.id == "history")
    history = [{"role": "user", "content": f"turn {i}"} for i in range(20)]
    cand = make_candidate(prepared, spec, 1, {"history": history}, {}, {})
    placed = Placed(cand, status="trimmed", kept=[19, 18, 17, 16, 15, 14, 13, 12], order_key=1)
    Fitter(prepared, get_wire("openai"), 100, {})._remove_last([placed])
    assert sorted(placed.kept) == [16, 17, 18, 19]
    placed = Placed(cand, status="trimmed", kept=[19, 18, 17, 16], order_key=1)
    Fitter(prepared, get_wire("openai"), 100, {})._remove_last([placed])
    assert placed.kept == [] and placed.status == "dropped"


@settings(max_examples=200, deadline=None)
@given(
    roles=st.lists(st.sampled_from(["user", "assistant"]), min_size=1, max_size=30),
    step=st.sampled_from(STEPS),
    budget=st.integers(min_value=20, max_value=400),
    provider=st.sampled_from(["anthropic", "gemini"]),
)
def test_trimmed_history_opens_with_a_user_turn_where_the_provider_needs_it(rt, roles, step, budget, provider):
    """Anthropic and Gemini refuse a conversation that opens with an assistant turn: a
    history that starts with the user must still do so after trimming, whatever the budget,
    and still start on a multiple of `step`."""
    roles[0] = "user"
    history = [{"role": r, "content": f"turn {i} says something"} for i, r in enumerate(roles)]
    try:
        req = rt.render(f"chat-{step}", {"history": history, "message": "next?"}, budget=budget, provider=provider)
    except BudgetError:
        return
    req.to_payload()  # PM842 when the first message is from the assistant
    kept = req.section("history").items_kept
    assert req.tokens <= req.budget
    if kept:
        assert roles[kept[0]] == "user"
        assert list(kept) == list(range(kept[0], len(history)))
        if req.section("history").items_dropped:
            assert kept[0] % step == 0, (kept, step)


def test_trimmed_history_on_the_shipped_chat_role_always_renders_for_anthropic_and_gemini():
    from providers_support import runtime, state

    chat = state("companion-chat.state.yaml")
    pattern = ["user", "assistant", "user", "user", "assistant"]  # a group chat: users talk in a row
    chat["history"] = [{"role": pattern[i % 5], "content": f"turn {i} " + "words " * 20} for i in range(60)]
    for provider in ("anthropic", "gemini"):
        # from 1,100: the never-trimmed sections (about 600 o200k tokens) fit every budget even at Claude's 1.53 ratio
        for budget in range(1100, 3000, 100):
            req = runtime().render("companion-chat", chat, provider=provider, budget=budget)
            first = next(m for m in req.to_payload()["messages" if provider == "anthropic" else "contents"])
            assert first["role"] == "user", (provider, budget)


@pytest.mark.parametrize("provider", ["anthropic", "gemini"])
def test_a_blank_first_turn_does_not_leave_an_assistant_turn_first(rt, provider):
    # blank turns are skipped; the turn after a skipped user turn may be the assistant's
    history = [{"role": "user", "content": " \n"}, {"role": "assistant", "content": "hello"}, {"role": "user", "content": "hi"}]
    req = rt.render("chat-1", {"history": history, "message": "next?"}, provider=provider)
    req.to_payload()
    assert req.section("history").items_kept == (2,)
    openai = rt.render("chat-1", {"history": history, "message": "next?"}, provider="openai")
    assert openai.section("history").items_kept == (1, 2)  # openai accepts an assistant turn first
