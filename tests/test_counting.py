"""Exact counting: piece counts plus local join corrections equal a full encode."""

from __future__ import annotations

import random

import pytest
from hypothesis import given
from hypothesis import strategies as st

from promptmill.runtime.counting import CountCache, Counter
from promptmill.runtime.tokenizers import get_tokenizer

ENCODINGS = ["o200k_base", "cl100k_base"]

# Characters chosen to exercise every pre-tokenizer branch: letters of each
# case, digits, punctuation, '/', apostrophes and contractions, whitespace of
# several kinds, combining marks, CJK, emoji, symbols.
TRICKY = list("aZzQ09 \n\r\t./'-:_,;\"()[]{}<>|#*`~!?$%^&+=@\\") + [
    "é",
    "\u0301",
    "中",
    "😀",
    "\u00a0",
    "\u2028",
    "ß",
    "İ",
    "ǅ",
    "ʰ",
    "٣",
    "Ⅳ",
    "²",
    "\u200b",
    "\x1c",
    "’",
    "«",
    "™",
    "€",
    "\n\n",
    "  ",
    "'s",
    "'t",
    "'ll",
    "n't",
    "//",
    "...",
    "the",
    " file",
    ".\n",
    "- ",
    "1234",
]
pieces = st.lists(st.sampled_from(TRICKY), min_size=0, max_size=12).map("".join)


@pytest.mark.parametrize("name", ENCODINGS)
def test_hard_join_rules_hold_on_random_strings(name):
    tok = get_tokenizer(name)
    rng = random.Random(1234)
    checked = 0
    for _ in range(40_000):
        a = "".join(rng.choice(TRICKY) for _ in range(rng.randint(1, 8)))
        b = "".join(rng.choice(TRICKY) for _ in range(rng.randint(1, 8)))
        if not tok.hard_join(a[-1], b[0]):
            continue
        checked += 1
        assert tok.count(a + b) == tok.count(a) + tok.count(b), (a, b)
    assert checked > 5_000


@pytest.mark.parametrize("name", ENCODINGS)
@given(parts=st.lists(pieces, min_size=0, max_size=10))
def test_count_parts_equals_full_encode(name, parts):
    counter = Counter(get_tokenizer(name))
    assert counter.count_parts(parts) == get_tokenizer(name).count("".join(parts))


@pytest.mark.parametrize("name", ENCODINGS)
def test_count_parts_on_prompt_like_pieces(name):
    tok = get_tokenizer(name)
    counter = Counter(tok)
    rng = random.Random(7)
    words = ["read", "file", "config.yaml", "Don't", "/usr/bin", "x=1;", "—", "中文", "🙂"]
    ends = [".", ":", "", ")", "!", " ", "\n", "'", "/"]
    for _ in range(300):
        parts = []
        for _ in range(rng.randint(1, 12)):
            item = " ".join(rng.choice(words) for _ in range(rng.randint(1, 6))) + rng.choice(ends)
            parts.append(rng.choice(["", "- ", "  ", "/"]) + item)
            parts.append(rng.choice(["\n", "\n\n", "\n\n---\n\n", " | ", ""]))
        assert counter.count_parts(parts) == tok.count("".join(parts))


def test_pieces_are_tokenized_once_and_the_whole_never():
    tok = get_tokenizer("o200k_base")
    counter = Counter(tok)
    items = [f"- entry {i}: the build step {i} wrote report_{i}.json." for i in range(50)]
    parts = []
    for item in items:
        parts += [item, "\n"]
    first = counter.count_parts(parts)
    encoded_once = counter.encoded_chars
    whole = len("".join(parts))
    # only pieces and short join regions were encoded, not the assembled text again
    assert encoded_once < whole * 1.2
    assert counter.count_parts(parts) == first == tok.count("".join(parts))
    assert counter.encoded_chars == encoded_once  # second time: all cache hits


def test_non_additive_tokenizer_counts_whole_text():
    tok = get_tokenizer("approx")
    counter = Counter(tok)
    assert counter.count_parts(["abc", "de"]) == tok.count("abcde") == 2


def test_cache_is_bounded():
    cache = CountCache(max_chars=1000)
    for i in range(10_000):
        cache.put(f"text number {i}", i)
    assert cache.chars <= 2 * 1000 + 100
    assert cache.get("text number 9999") == 9999


@pytest.mark.parametrize("name", ENCODINGS)
def test_remembered_soft_joins_give_the_full_encode_in_any_layout(name):
    """count_parts remembers each soft join between two pieces; the pieces recur here in
    many orders, so most joins are answered from memory, and every total must still be exact."""
    tok = get_tokenizer(name)
    counter = Counter(tok)
    rng = random.Random(5)
    pool = ["".join(rng.choice(TRICKY) for _ in range(rng.randint(1, 10))) for _ in range(40)]
    for _ in range(3_000):
        parts = rng.choices(pool, k=rng.randint(2, 8))
        assert counter.count_parts(parts) == tok.count("".join(parts)), parts
    assert len(counter._joins) > 50


# -- a long run without a split (issue 33) ------------------------------------------------------


def _word(n: int, seed: int = 33) -> str:
    rng = random.Random(seed)
    return "".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(n))


def test_a_long_text_met_again_is_counted_once():
    """A text over the count cache's key limit (a 1 MB word in a state) used to be encoded on
    every use: once per wire of the preview, and again when assembled. The long-text memo
    keeps the count; a new string of the same text is found too."""
    from promptmill.runtime import counting

    counter = Counter(get_tokenizer("o200k_base"))
    word = _word(counting.MAX_KEY_CHARS + 5_000)
    first = counter.count(word)
    assert first == len(get_tokenizer("o200k_base").encode(word))
    again = "".join([word[:10], word[10:]])  # equal text, another object
    assert again is not word and counter.count(again) == first and counter.count(word) == first
    assert counter.encoded_chars == len(word)
    assert counter.count_parts(["Q: ", word]) == counter.count("Q: " + word)


def test_the_long_text_memo_is_bounded(monkeypatch):
    from promptmill.runtime import counting

    monkeypatch.setattr(counting, "MAX_KEY_CHARS", 50)
    counter = Counter(get_tokenizer("cl100k_base"), CountCache(max_key_chars=50))
    texts = [_word(60 + i, seed=i) for i in range(counting.LONG_TEXTS + 3)]
    for t in texts:
        counter.count(t)
    assert len(counter._long) == counting.LONG_TEXTS and counter._long_chars == sum(map(len, texts[-counting.LONG_TEXTS :]))
    monkeypatch.setattr(counting, "LONG_CHARS", 200)
    huge = _word(300, seed=99)
    counter.count(huge)  # longer than the memo's whole size: counted, not kept
    assert huge not in counter._long
    counter.count(_word(70, seed=100))  # the next one kept pushes the oldest out down to the size
    assert counter._long_chars == sum(map(len, counter._long)) <= 200
