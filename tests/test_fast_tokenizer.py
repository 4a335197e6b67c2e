"""The fast tokenizer backend (quicktok, `promptmill[fast]`) counts exactly as tiktoken, or is not used."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from promptmill.runtime import tokenizers
from promptmill.runtime.tokenizers import FAST_AFTER_CHARS, FAST_ENV, SHIPPED_ENCODINGS, fast_encoder, get_tokenizer, self_check_corpus

quicktok = pytest.importorskip("quicktok", reason="the fast backend is optional: pip install 'promptmill[fast]'")
if not callable(getattr(quicktok, "Tokenizer", None)):  # pragma: no cover - depends on environment
    pytest.skip("the installed 'quicktok' is not quicktok-v1 (no Tokenizer class)", allow_module_level=True)

NAMES = sorted(SHIPPED_ENCODINGS)
ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def pairs():
    """Per encoding: (tiktoken encoding, fast encoder built from the shipped file)."""
    out = {}
    for name in NAMES:
        ranks = tokenizers._load_ranks(name)
        enc = tokenizers._tiktoken_encoding(name, ranks)
        fast = fast_encoder(name, enc, ranks)
        assert fast is not None, f"quicktok is installed but was not used for {name}"
        out[name] = (enc, fast)
    return out


def _shipped_texts() -> list[str]:
    texts = [p.read_text(encoding="utf-8") for p in sorted((ROOT / "prompts").rglob("*.yaml"))]
    texts += [p.read_text(encoding="utf-8") for p in sorted((ROOT / "compiler" / "promptmill" / "library").rglob("*.yaml"))]
    assert texts
    return texts


@pytest.mark.parametrize("name", NAMES)
def test_parity_on_the_self_check_corpus_and_the_shipped_prompts(pairs, name):
    enc, fast = pairs[name]
    for text in [*self_check_corpus(), *_shipped_texts()]:
        ids = enc.encode_ordinary(text)
        assert fast.encode_ordinary(text) == ids, text[:80]
        assert fast.count(text) == len(ids), text[:80]


# adversarial pieces: letter runs, digits, whitespace runs, contractions, scripts, emoji, special-token look-alikes
PIECES = st.sampled_from(
    [
        "a",
        "Z",
        "é",
        "ß",
        "東京",
        "ру",
        "ע",
        "ع",
        "क्ष",
        "한",
        "7",
        "٣",
        "½",
        " ",
        "  ",
        "\n",
        "\r\n",
        "\t",
        "\u00a0",
        "\u3000",
        "'s",
        "'LL",
        "'ve",
        "'",
        ".",
        "!?",
        "-",
        "_",
        "{",
        '"',
        "🙂",
        "👍🏽",
        "\u200d",
        "\ufe0f",
        "🇩🇪",
        "\u0301",
        "<|endoftext|>",
        "<|fim_prefix|>",
        "<|im_start|>",
        "<|",
        "|>",
    ]
)
TEXTS = st.one_of(
    st.text(max_size=200),
    st.lists(PIECES, max_size=60).map("".join),
    st.tuples(st.sampled_from(["a", "x", "7", " ", "\n", "é", "東", "!", "🙂"]), st.integers(1, 3000)).map(lambda p: p[0] * p[1]),
    st.lists(st.tuples(PIECES, st.integers(1, 40)), max_size=8).map(lambda parts: "".join(p * n for p, n in parts)),
)


@settings(max_examples=300, deadline=None)
@given(text=TEXTS, index=st.integers(0, len(NAMES) - 1))
def test_every_count_and_encoding_equals_tiktoken(pairs, text, index):
    enc, fast = pairs[NAMES[index]]
    ids = enc.encode_ordinary(text)
    assert fast.encode_ordinary(text) == ids
    assert fast.count(text) == len(ids)


def _warmed(name: str):
    """The shared tokenizer of `name`, after it counted enough text to load its fast backend."""
    tok = get_tokenizer(name)
    tok.count("warm " * (FAST_AFTER_CHARS // 5 + 1))
    return tok


def test_the_fast_backend_loads_after_enough_text_and_counts_do_not_change():
    """A fresh tokenizer counts with tiktoken (a short process never pays quicktok's load); once it
    has counted FAST_AFTER_CHARS characters it asks for quicktok, and every count stays the same."""
    texts = [t for t in self_check_corpus() if t] * 3
    for name in NAMES:
        enc = tokenizers._tiktoken_encoding(name)
        calls = []

        def later(name=name, enc=enc, calls=calls):
            calls.append(name)
            return fast_encoder(name, enc)

        tok = tokenizers.TiktokenTokenizer(name, enc, later=later)
        assert tok.backend == "tiktoken"
        seen = 0
        for text in texts:
            assert tok.count(text) == len(enc.encode_ordinary(text))
            assert tok.encode(text) == enc.encode_ordinary(text)
            seen += 2 * len(text)
            assert tok.backend == ("quicktok" if seen >= FAST_AFTER_CHARS else "tiktoken"), (seen, tok.backend)
        big = "Grüße 東京 " * (FAST_AFTER_CHARS // 8)
        assert tok.count(big) == len(enc.encode_ordinary(big))
        assert tok.backend == "quicktok" and calls == [name]  # asked once
        assert tok.count(big) == len(enc.encode_ordinary(big))


def test_a_backend_that_gives_none_keeps_tiktoken_and_is_asked_once():
    enc = tokenizers._tiktoken_encoding("cl100k_base")
    calls = []
    tok = tokenizers.TiktokenTokenizer("cl100k_base", enc, later=lambda: calls.append(1))
    for _ in range(3):
        assert tok.count("x" * FAST_AFTER_CHARS) == len(enc.encode_ordinary("x" * FAST_AFTER_CHARS))
    assert tok.backend == "tiktoken" and calls == [1]


def test_shared_tokenizers_use_the_fast_backend_and_cut_as_tiktoken_does():
    text = "Grüße aus Köln — 東京タワー 🙂 " * 40
    for name in NAMES:
        tok = _warmed(name)
        assert tok.backend == "quicktok"
        reference = tokenizers.TiktokenTokenizer(name, tokenizers._tiktoken_encoding(name))
        assert reference.backend == "tiktoken"
        assert tok.count(text) == reference.count(text)
        for n in (0, 1, 7, 50, 10**6):
            for keep in ("head", "tail"):
                assert tok.truncate(text, n, keep) == reference.truncate(text, n, keep)


@pytest.mark.parametrize("value", ["0", "off", "false", "NO"])
def test_the_environment_turns_the_fast_backend_off(monkeypatch, value):
    monkeypatch.setenv(FAST_ENV, value)
    enc = tokenizers._tiktoken_encoding("cl100k_base")
    assert fast_encoder("cl100k_base", enc) is None
    assert tokenizers.TiktokenTokenizer("cl100k_base", enc, fast_encoder("cl100k_base", enc)).backend == "tiktoken"


def test_a_disagreement_found_by_the_self_check_disables_it_with_a_warning(monkeypatch):
    """A fast encoder that miscounts one text of the corpus (here: one rank changed in the
    vocabulary it is built from) is refused, with a warning, and tiktoken counts."""
    name = "cl100k_base"
    ranks = tokenizers._load_ranks(name)
    enc = tokenizers._tiktoken_encoding(name, ranks)
    bad = dict(ranks)
    bad[b"hello"], bad[b" world"] = ranks[b" world"], ranks[b"hello"]  # two tokens swap ids
    with pytest.warns(RuntimeWarning, match="disagrees with tiktoken"):
        assert fast_encoder(name, enc, bad) is None
    real = quicktok.Tokenizer

    class OffByOne:
        def __init__(self, *args):
            self._t = real(*args)

        def encode_ordinary(self, text):
            return self._t.encode_ordinary(text)

        def count(self, text):
            n = self._t.count(text)
            return n + 1 if "東京" in text else n

    monkeypatch.setattr(quicktok, "Tokenizer", OffByOne)
    with pytest.warns(RuntimeWarning, match="disagrees with tiktoken"):
        assert fast_encoder(name, enc, ranks) is None


def test_a_quicktok_that_cannot_load_is_skipped_with_a_warning(monkeypatch):
    def broken(*args):
        raise RuntimeError("quicktok: cannot open uniclass file")

    monkeypatch.setattr(quicktok, "Tokenizer", broken)
    enc = tokenizers._tiktoken_encoding("o200k_base")
    with pytest.warns(RuntimeWarning, match="could not load"):
        assert fast_encoder("o200k_base", enc) is None


def test_nothing_is_downloaded_and_no_file_is_left(monkeypatch, tmp_path):
    """The vocabulary comes from promptmill's verified file through a private folder that is removed."""
    import socket
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))

    def no_network(*args, **kwargs):
        raise AssertionError("the fast backend tried to use the network")

    monkeypatch.setattr(socket, "create_connection", no_network)
    monkeypatch.setattr(socket.socket, "connect", no_network)
    enc = tokenizers._tiktoken_encoding("o200k_base")
    assert fast_encoder("o200k_base", enc) is not None
    assert list(tmp_path.iterdir()) == []


def test_a_tokenizer_pickles_as_the_shared_one_of_its_name():
    """quicktok's encoder does not pickle; a tokenizer travels by name (to batch workers, Ray)."""
    import pickle

    for name in NAMES:
        tok = _warmed(name)
        assert tok.backend == "quicktok"
        assert pickle.loads(pickle.dumps(tok)) is tok
