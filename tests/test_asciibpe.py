"""The ranks-only BPE a tokenizer starts with gives tiktoken's ids on plain ASCII, and hands over to tiktoken.

runtime/asciibpe.py encodes plain ASCII (printable, tab, line feed, carriage return) from an
encoding's ranks and pattern, so that a process rendering once does not build tiktoken's tables.
Every count it gives must be tiktoken's: checked here on random text built from the pattern's
classes (letters of both cases, digits, contractions, punctuation, runs of white space and line
breaks), on long runs that make many merges, and on every plain line of this repository's
prompts and docs; then the hand-over: what a starting tokenizer counts, when it builds tiktoken,
and that its counts are the same before and after, also from eight threads at once.
"""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from promptmill.runtime import tokenizers
from promptmill.runtime.asciibpe import MAX_MERGE_BYTES, AsciiBPE, PieceTooLong, plain

ROOT = Path(__file__).resolve().parents[1]
NAMES = sorted(tokenizers.SHIPPED_ENCODINGS)


@pytest.fixture(scope="module")
def encodings():
    """name -> (tiktoken's encoding, the ranks-only BPE), from the same shipped file."""
    out = {}
    for name in NAMES:
        spec = tokenizers._encoding_spec(name, tokenizers._load_ranks(name))
        out[name] = (tokenizers._tiktoken_encoding(name, spec["mergeable_ranks"]), AsciiBPE(spec["mergeable_ranks"], spec["pat_str"]))
    return out


# pieces the patterns treat differently: words in either case, contractions, digits (split by threes),
# punctuation runs followed by line breaks or '/', white space before words and at the end of lines
ATOMS = st.sampled_from(
    [
        "a", "Z", "word", "Word", "WORD", "wORD", "camelCase", "x9", "9x", "1", "22", "333", "4444", "55555",
        "'s", "'S", "'t", "'re", "'RE", "'ve", "'m", "'ll", "'LL", "'d", "'D", "'x", "''", "don't", "I'LL",
        " ", "  ", "   ", "\t", "\n", "\r\n", "\n\n", " \n", "\t\n", "\r", " \r\n ",
        ".", ",", "...", "!?", "/", "//", "-", "--", "_", "__init__", "()", "[]", "{}", "<|endoftext|>", "#", "$", "%", "&*",
        "\\", "`", "~", "|", "+=", "@", "^", '"', "http://x.y/z?a=1&b=2", "snake_case_name", "path/to/file.py",
    ]
)  # fmt: skip
PLAIN_CHARS = st.characters(min_codepoint=0x20, max_codepoint=0x7E) | st.sampled_from("\t\n\r")


@given(text=st.lists(ATOMS | PLAIN_CHARS, max_size=40).map("".join))
def test_ids_are_tiktokens_on_plain_ascii(encodings, text):
    for name in NAMES:
        enc, bpe = encodings[name]
        try:
            ids = bpe.encode(text)
        except PieceTooLong:  # left to tiktoken: only when a piece that is no token is longer than the limit
            assert max(map(len, bpe._pieces(text))) > MAX_MERGE_BYTES, text
            continue
        assert ids == enc.encode_ordinary(text), (name, text)


@pytest.mark.parametrize("name", NAMES)
def test_long_runs_that_make_many_merges(encodings, name):
    enc, bpe = encodings[name]
    merged = 0
    for n in (1, 2, 3, 7, 40, 64, 300):
        for unit in ("a", "ab", "z9", " ", "\n", " \n", "\r\n", "\t", "0", "!", "'s", "aA"):
            for text in (unit * n, f"x{unit * n}y"):
                try:
                    ids = bpe.encode(text)
                except PieceTooLong:  # left to tiktoken: only a piece longer than the limit may be
                    assert len(text) > MAX_MERGE_BYTES, (name, unit, n)
                    continue
                assert ids == enc.encode_ordinary(text), (name, unit, n)
                merged += 1
    assert merged > 120


@pytest.mark.parametrize("name", NAMES)
def test_every_plain_line_of_the_prompts_and_docs(encodings, name):
    enc, bpe = encodings[name]
    files = [*ROOT.glob("prompts/**/*.yaml"), *ROOT.glob("docs/*.md"), ROOT / "README.md"]
    lines = 0
    for path in files:
        text = path.read_text(encoding="utf-8")
        chunks = [c for c in text.split("\n\n") if plain(c)]  # paragraphs keep their line breaks
        for chunk in chunks:
            try:
                ids = bpe.encode(chunk)
            except PieceTooLong:  # a long run without a split (a URL, an SVG path): tiktoken counts it
                continue
            assert ids == enc.encode_ordinary(chunk), (name, path, chunk[:80])
            lines += 1
    assert lines > 1000  # the corpus is really read


@pytest.mark.parametrize("name", NAMES)
def test_a_piece_too_long_to_merge_is_left_to_tiktoken(encodings, name):
    """Merging is quadratic in a piece's length (16,000 letters without a space took 3 s): up to
    MAX_MERGE_BYTES it merges, beyond that it raises PieceTooLong, unless the piece is one token."""
    import random

    enc, bpe = encodings[name]
    rng = random.Random(5)
    word = "".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(MAX_MERGE_BYTES - 1))
    assert bpe.encode(word) == enc.encode_ordinary(word)
    assert bpe.encode(f"say {word} now") == enc.encode_ordinary(f"say {word} now")  # " word": the limit exactly
    with pytest.raises(PieceTooLong):
        bpe.encode(f"say {word}x now")
    spaces = " " * 5000  # one piece, but a token of its own? no: runs of spaces merge fast, they are few tokens
    if len(spaces.encode()) > MAX_MERGE_BYTES and spaces.encode() not in enc._mergeable_ranks:
        with pytest.raises(PieceTooLong):
            bpe.encode(spaces + "x")


def test_a_starting_tokenizer_hands_a_long_word_to_tiktoken_at_once(monkeypatch):
    """A 20,000-letter word (the preview's hostile case is a million) is counted by tiktoken, which is
    built for it, in well under the seconds the ranks-only merge would take; the allowance is not spent."""
    import random
    import time

    name = "o200k_base"
    spec = tokenizers._encoding_spec(name, tokenizers._load_ranks(name))
    enc = tokenizers._tiktoken_encoding(name, spec["mergeable_ranks"])
    tok = tokenizers.TiktokenTokenizer(name, None, spec=spec)
    rng = random.Random(33)
    word = "".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(20_000))
    start = time.monotonic()
    assert tok.count(word) == len(enc.encode_ordinary(word))
    assert time.monotonic() - start < 10  # the ranks-only merge of this word takes minutes
    assert tok.backend == "tiktoken"


def test_plain_is_printable_ascii_tab_and_line_breaks_only():
    assert plain("") and plain("a b\tc\r\nd ~") and plain("x" * 10_000)
    for odd in ("\x00", "\x0b", "\x0c", "\x1c", "\x1f", "\x7f", "é", "\u2028", "\x85", "東"):
        assert not plain(f"ok{odd}ok"), repr(odd)


@pytest.mark.parametrize("name", NAMES)
def test_a_starting_tokenizer_counts_plain_text_without_tiktoken_then_hands_over(name, monkeypatch):
    monkeypatch.setattr(tokenizers, "STARTER_CHARS", 1000)
    spec = tokenizers._encoding_spec(name, tokenizers._load_ranks(name))
    enc = tokenizers._tiktoken_encoding(name, spec["mergeable_ranks"])
    tok = tokenizers.TiktokenTokenizer(name, None, spec=spec)
    assert tok.backend == "promptmill-bpe" and tok._enc is None
    text = "Summarise the open tickets, oldest first.\n  - id: 7 (don't reopen)\n"
    assert tok.count(text) == len(enc.encode_ordinary(text))
    assert tok._enc is None  # plain and within the allowance: tiktoken is not built
    # a text that is not plain ASCII builds tiktoken, and counts with it from then on
    assert tok.count("Grüße aus 東京") == len(enc.encode_ordinary("Grüße aus 東京"))
    assert tok.backend == "tiktoken" and tok._enc is not None
    assert tok.count(text) == len(enc.encode_ordinary(text))


@pytest.mark.parametrize("how", ["allowance", "encode", "truncate"])
def test_spending_the_allowance_encoding_or_truncating_builds_tiktoken(how, monkeypatch):
    monkeypatch.setattr(tokenizers, "STARTER_CHARS", 1000)
    name = "o200k_base"
    spec = tokenizers._encoding_spec(name, tokenizers._load_ranks(name))
    enc = tokenizers._tiktoken_encoding(name, spec["mergeable_ranks"])
    tok = tokenizers.TiktokenTokenizer(name, None, spec=spec)
    text = "one two three four five six seven eight nine ten " * 3  # 150 characters
    if how == "allowance":
        counts = [tok.count(text) for _ in range(10)]  # 1,500 characters: the seventh builds tiktoken
        assert counts == [len(enc.encode_ordinary(text))] * 10
    elif how == "encode":
        assert tok.encode(text) == enc.encode_ordinary(text)
    else:
        assert tok.truncate(text, 5) == enc.decode(enc.encode_ordinary(text)[:5])
    assert tok.backend == "tiktoken"


def test_eight_threads_on_a_starting_tokenizer_count_what_tiktoken_counts(monkeypatch):
    monkeypatch.setattr(tokenizers, "STARTER_CHARS", 20_000)
    name = "o200k_base"
    spec = tokenizers._encoding_spec(name, tokenizers._load_ranks(name))
    enc = tokenizers._tiktoken_encoding(name, spec["mergeable_ranks"])
    tok = tokenizers.TiktokenTokenizer(name, None, spec=spec)
    texts = [f"item {i}: fix the parser's edge case at line {i * 7}\n" * (i % 5 + 1) for i in range(200)]
    texts[137] = "a non-ASCII text, é, in the middle"
    expected = [len(enc.encode_ordinary(t)) for t in texts]
    got: dict[int, list[int]] = {}
    barrier = threading.Barrier(8)

    def work(k: int) -> None:
        barrier.wait()
        got[k] = [tok.count(t) for t in texts]

    threads = [threading.Thread(target=work, args=(k,)) for k in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert all(got[k] == expected for k in range(8))
    assert tok.backend == "tiktoken"


def test_the_shared_tokenizer_starts_from_the_ranks(monkeypatch):
    """get_tokenizer's o200k_base starts without tiktoken's tables (a fresh cache: the suite's is warm)."""
    monkeypatch.setattr(tokenizers, "_cache", {})
    tok = tokenizers.get_tokenizer("o200k_base")
    assert tok.backend == "promptmill-bpe"  # type: ignore[attr-defined]
    assert tok.count("hello world") == 2


def test_warm_builds_the_tables_of_the_tokenizer_a_render_would_count_with(monkeypatch):
    """`Runtime.warm(role, model=...)` (what a batch run does before it forks its workers) builds tiktoken's
    tables of the tokenizer that render counts with: the role's own, or the model's when it names another."""
    import promptmill

    monkeypatch.setattr(tokenizers, "_cache", {})
    rt = promptmill.load(ROOT / "build")
    assert rt.bundle("executor").tokenizer == "o200k_base" and rt.models.lookup("gpt-4").tokenizer == "cl100k_base"
    rt.warm("executor", model="gpt-4")
    assert tokenizers.get_tokenizer("cl100k_base").backend != "promptmill-bpe"
    assert tokenizers.get_tokenizer("o200k_base").backend == "promptmill-bpe"  # not the one this render counts with
    rt.warm("executor")
    assert tokenizers.get_tokenizer("o200k_base").backend != "promptmill-bpe"
