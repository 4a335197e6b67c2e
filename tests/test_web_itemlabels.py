"""Dropped list items named by what they are (web/itemlabels.py), and the page's view lists them so."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from promptmill import load
from promptmill.runtime.bundle import Section
from promptmill.web.itemlabels import MAX_ITEMS, dropped_items, excerpt, label
from promptmill.web.session import view


def section(kind: str, path: tuple[str, ...], declared: tuple[dict, ...] = ()) -> Section:
    return Section(id="s", kind=kind, priority=1, trim="items", message="user", stability="dynamic", path=path, declared=declared)


@pytest.mark.parametrize(
    "kind, item, expected",
    [
        ("tools", {"name": "read_file", "description": "Read a file."}, "read_file"),
        (
            "history",
            {"role": "user", "content": "Maya: back from the long run, 16 km today!"},
            "user: “Maya: back from the long run, 16 km…”",
        ),
        (
            "history",
            {"role": "assistant", "content": [{"type": "text", "text": "Lungs catch up last."}]},
            "assistant: “Lungs catch up last.”",
        ),
        ("history", {"role": "assistant", "content": ""}, "assistant"),
        ("each", {"type": "decision", "summary": "Use typing.Protocol", "relevance": 0.7}, "decision: “Use typing.Protocol”"),
        ("each", {"key": "k1", "type": "note", "text": "hello"}, "k1: “hello”"),
        ("each", {"title": "Rotate keys", "body": "Settings, then API."}, "Rotate keys: “Settings, then API.”"),
        ("each", {"text": "Maya runs on Sundays", "relevance": 0.4}, "“Maya runs on Sundays”"),
        ("each", {"id": 7}, "7"),
        ("each", {"when": "2026-11-01", "score": 3}, "“2026-11-01”"),
        ("each", {"score": 3, "flag": True}, '{"flag": true, "score": 3}'),
        ("each", "  a plain   string item ", "“a plain string item”"),
        ("each", 42, "42"),
        ("each", ["a", 1], '["a", 1]'),
    ],
)
def test_label(kind, item, expected):
    assert label(kind, item) == expected


def test_excerpt_cuts_words_and_characters():
    assert excerpt("one two three four five six seven eight nine") == "one two three four five six seven eight…"
    assert excerpt("x" * 100) == "x" * 59 + "…"
    assert excerpt("  two\n lines ") == "two lines"


def test_dropped_items_name_their_state_path_after_the_declared_tools():
    spec = section("tools", ("ctx", "tools"), declared=({"name": "finish", "parameters": {}},))
    state = {"ctx": {"tools": [{"name": "read_file"}, {"name": "edit_file"}]}}
    assert dropped_items(spec, (0, 2), state) == [
        {"where": "declare[0]", "what": "finish"},
        {"where": "state.ctx.tools[1]", "what": "edit_file"},
    ]
    assert dropped_items(None, (0,), state) == [] and dropped_items(spec, (), state) == []


def test_at_most_max_items_are_named():
    spec = section("each", ("notes",))
    got = dropped_items(spec, range(MAX_ITEMS + 5), {"notes": [f"note {i}" for i in range(MAX_ITEMS + 5)]})
    assert len(got) == MAX_ITEMS and got[-1] == {"where": f"state.notes[{MAX_ITEMS - 1}]", "what": f"“note {MAX_ITEMS - 1}”"}


def test_the_view_names_dropped_history_turns():
    """The repo's companion-chat role at a small budget drops old turns: the view names each by role and words."""
    repo = Path(__file__).resolve().parents[1]
    runtime = load(repo / "build")
    state = yaml.safe_load((repo / "prompts/examples/companion-chat.state.yaml").read_text())
    full = runtime.render("companion-chat", state)
    for budget in range(full.tokens, 0, -25):  # the first budget that trims the history (step: 4 turns)
        req = runtime.render("companion-chat", state, budget=budget)
        history = next(s for s in req.sections if s.id == "history")
        if history.status == "trimmed":
            break
    assert history.status == "trimmed" and history.items_dropped
    got = view(req, runtime.bundle("companion-chat"))
    entry = next(d for d in got["dropped"] if d["section"] == "history")
    turns = state["history"]
    assert entry["items"] == [
        {"where": f"state.history[{i}]", "what": f"{turns[i]['role']}: “{excerpt(turns[i]['content'])}”"} for i in history.items_dropped
    ]
    note = next(s["items"] for s in got["sections"] if s["id"] == "history")
    assert (
        note.startswith(f"kept {len(history.items_kept)} of {len(turns)} items") and f"{turns[history.items_dropped[0]]['role']}: “" in note
    )
