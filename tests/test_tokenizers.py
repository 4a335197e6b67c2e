"""Tokenizers: shipped encodings load offline and match tiktoken's definitions."""

from __future__ import annotations

import hashlib
from importlib import resources

import pytest

from promptmill.errors import TokenizerError
from promptmill.tokenizers import (
    SHIPPED_ENCODINGS,
    get_tokenizer,
    resolve_model,
)


@pytest.mark.parametrize("name", sorted(SHIPPED_ENCODINGS))
def test_shipped_file_hash_matches_tiktoken_expectation(name):
    import inspect

    import tiktoken_ext.openai_public as public

    raw = resources.files("promptmill").joinpath("data", f"{name}.tiktoken").read_bytes()
    assert hashlib.sha256(raw).hexdigest() == SHIPPED_ENCODINGS[name]
    # the hash promptmill pins is the one tiktoken's own definition expects
    assert SHIPPED_ENCODINGS[name] in inspect.getsource(getattr(public, name))


def test_known_counts():
    o200k = get_tokenizer("o200k_base")
    cl100k = get_tokenizer("cl100k_base")
    assert o200k.count("hello world") == 2
    assert cl100k.count("hello world") == 2
    assert o200k.count("") == 0
    # special-token text is counted as ordinary text, as providers do for user content
    assert o200k.count("<|endoftext|>") > 1


def test_same_instance_is_shared():
    assert get_tokenizer("o200k_base") is get_tokenizer("o200k_base")


def test_unknown_tokenizer_is_a_clear_error():
    with pytest.raises(TokenizerError) as err:
        get_tokenizer("o300k_base")
    assert err.value.code == "PM502"
    assert "o200k_base" in (err.value.hint or "")


def test_models_resolve_by_longest_prefix():
    assert resolve_model("gpt-4o-mini").tokenizer == "o200k_base"
    assert resolve_model("gpt-4").tokenizer == "cl100k_base"
    assert resolve_model("gpt-4-turbo-2024-04-09").context_window == 128000
    assert resolve_model("gpt-4").context_window == 8192
    claude = resolve_model("claude-sonnet-4")
    assert claude.estimate and claude.context_window == 200000
    assert resolve_model("llama-3") is None


@pytest.mark.parametrize("name", ["o200k_base", "cl100k_base", "approx"])
@pytest.mark.parametrize("keep", ["head", "tail"])
def test_truncate_respects_token_count(name, keep):
    tok = get_tokenizer(name)
    text = "Grüße aus Köln — 東京タワー 🙂 " * 40
    for n in (0, 1, 3, 17, 50):
        cut = tok.truncate(text, n, keep)
        assert tok.count(cut) <= n or (name != "approx" and tok.count(cut) <= n + 1)
        assert "\ufffd" not in cut
        if keep == "head":
            assert text.startswith(cut)
        else:
            assert text.endswith(cut)
    assert tok.truncate(text, 10**6, keep) == text


def test_approx_is_marked_inexact():
    tok = get_tokenizer("approx")
    assert tok.exact is False
    assert tok.count("abcdefgh") == 2
    assert tok.count("abcdefghi") == 3
