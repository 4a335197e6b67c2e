"""Tokenizers: shipped encodings load offline and match tiktoken's definitions."""

from __future__ import annotations

import hashlib
from importlib import resources

import pytest

from promptmill.core.errors import TokenizerError
from promptmill.runtime.tokenizers import (
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


@pytest.mark.parametrize("name", sorted(SHIPPED_ENCODINGS))
def test_shipped_files_number_their_tokens_in_order_so_the_ranks_need_no_parsing(name, monkeypatch):
    """_load_ranks takes the ranks as 0..n-1 in file order without parsing the rank column; that holds
    for every shipped file (proven here by parsing it) and gives tiktoken's own reading of the file."""
    import binascii

    from tiktoken.load import load_tiktoken_bpe

    from promptmill.runtime.tokenizers import _data_file, _load_ranks

    fields = _data_file(f"{name}.tiktoken").split()
    assert [int(r) for r in fields[1::2]] == list(range(len(fields) // 2))
    ranks = _load_ranks(name)
    assert ranks == {binascii.a2b_base64(t): int(r) for t, r in zip(fields[0::2], fields[1::2], strict=True)}
    path = resources.files("promptmill").joinpath("data", f"{name}.tiktoken")
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", "")  # read the file as it is; no copy in tiktoken's cache
    assert ranks == load_tiktoken_bpe(str(path), SHIPPED_ENCODINGS[name])  # tiktoken's parser of the same file


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


CLUSTERS = [
    "e\u0301\u0301a\u0308o\u0323\u0302 ",  # letters with combining marks
    "👨\u200d👩\u200d👧\u200d👦🏳\ufe0f\u200d🌈👍🏽 ",  # ZWJ sequences, a variation selector, a skin tone
    "क्षत्रिय ",  # Devanagari: virama and vowel signs
]


@pytest.mark.parametrize("name", ["o200k_base", "cl100k_base", "approx"])
@pytest.mark.parametrize("keep", ["head", "tail"])
@pytest.mark.parametrize("unit", CLUSTERS, ids=["combining", "emoji", "devanagari"])
def test_truncate_never_splits_a_character_cluster(name, keep, unit):
    """A cut never leaves a base letter without its marks, a mark without its base, or a
    dangling zero-width joiner: 'é' does not become 'e', a family emoji not a lone man."""
    import unicodedata

    tok = get_tokenizer(name)
    text = unit * 30

    def extends(ch: str) -> bool:
        return unicodedata.category(ch) in ("Mn", "Me", "Mc") or ch in "\u200d\ufe0f" or "\U0001f3fb" <= ch <= "\U0001f3ff"

    for n in range(1, 60):
        cut = tok.truncate(text, n, keep)
        assert tok.count(cut) <= n or (name != "approx" and tok.count(cut) <= n + 1)
        if keep == "head":
            assert text.startswith(cut)
            rest = text[len(cut) :]
            assert not (rest and cut and (extends(rest[0]) or cut[-1] == "\u200d")), (n, cut[-6:], rest[:3])
        else:
            assert text.endswith(cut)
            before = text[: len(text) - len(cut)]
            assert not (before and cut and (extends(cut[0]) or before[-1] == "\u200d")), (n, before[-3:], cut[:6])


def test_approx_is_marked_inexact():
    tok = get_tokenizer("approx")
    assert tok.exact is False
    assert tok.count("abcdefgh") == 2
    assert tok.count("abcdefghi") == 3


def _train_hf_tokenizer(path):
    """A tiny real BPE tokenizer.json, trained here (no download)."""
    from tokenizers import Tokenizer, models, pre_tokenizers, trainers

    tok = Tokenizer(models.BPE(unk_token="[UNK]"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    corpus = ["the quick brown fox jumps over the lazy dog", "prompts are compiled ahead of time"] * 50
    tok.train_from_iterator(corpus, trainers.BpeTrainer(vocab_size=120, special_tokens=["[UNK]"]))
    tok.save(str(path))
    return tok


def test_hugging_face_tokenizer_end_to_end(tmp_path):
    import promptmill

    hf = _train_hf_tokenizer(tmp_path / "tok.json")
    (tmp_path / "prompts").mkdir()
    (tmp_path / "prompts" / "r.yaml").write_text(
        "kind: role\nid: r\nbudget: {max_tokens: 60, reserve: 0, tokenizer: 'hf:tok.json'}\n"
        "inputs: {type: object, properties: {items: {type: array, items: {type: string}}}}\n"
        "sections:\n  - id: a\n    text: the quick brown fox\n"
        "  - id: b\n    each: items\n    template: '{{ item }}'\n"
    )
    promptmill.compile(tmp_path)
    shipped = list((tmp_path / "build" / "tokenizers").glob("*.json"))
    assert len(shipped) == 1  # the build carries its tokenizer
    (tmp_path / "tok.json").unlink()  # and does not need the original any more
    rt = promptmill.load(tmp_path / "build")
    req = rt.render("r", {"items": ["the lazy dog jumps"] * 40})
    assert req.tokens == len(hf.encode(req.text, add_special_tokens=False).ids) <= 60
    assert req.exact


def test_changed_tokenizer_file_recompiles(tmp_path):
    import promptmill

    _train_hf_tokenizer(tmp_path / "tok.json")
    (tmp_path / "prompts").mkdir()
    (tmp_path / "prompts" / "r.yaml").write_text(
        "kind: role\nid: r\nbudget: {max_tokens: 60, reserve: 0, tokenizer: 'hf:tok.json'}\nsections:\n  - id: a\n    text: hi\n"
    )
    promptmill.compile(tmp_path)
    assert promptmill.compile(tmp_path).up_to_date
    from tokenizers import Tokenizer, models, pre_tokenizers, trainers

    other = Tokenizer(models.BPE(unk_token="[UNK]"))
    other.pre_tokenizer = pre_tokenizers.Whitespace()
    other.train_from_iterator(["different words entirely"] * 20, trainers.BpeTrainer(vocab_size=60, special_tokens=["[UNK]"]))
    other.save(str(tmp_path / "tok.json"))
    assert promptmill.compile(tmp_path).compiled == ("r",)


def test_approximate_tokenizer_is_reported_as_such(tmp_path):
    import promptmill

    (tmp_path / "prompts").mkdir()
    (tmp_path / "prompts" / "r.yaml").write_text(
        "kind: role\nid: r\nbudget: {max_tokens: 100, reserve: 0, tokenizer: approx}\nsections:\n  - id: a\n    text: hello there\n"
    )
    assert any(d.code == "PM505" for d in promptmill.lint(tmp_path).diagnostics)
    promptmill.compile(tmp_path)
    req = promptmill.load(tmp_path / "build").render("r")
    assert req.exact is False and "estimate" in req.explain()


@pytest.mark.parametrize("name", ["o200k_base", "cl100k_base"])
def test_a_long_text_is_encoded_once_for_its_count_and_its_truncations(name, monkeypatch):
    """Fitting a long section counts it, then truncates it to a few lengths: one encode, not one per try."""
    import random

    from promptmill.runtime import tokenizers

    tok = tokenizers.TiktokenTokenizer(name, get_tokenizer(name)._enc)  # a private instance: its memo is ours
    rng = random.Random(7)
    text = "".join(rng.choice("abcdefghij") for _ in range(tokenizers.LONG_ENCODE_CHARS + 1000))
    calls = []
    real = tok._encode
    monkeypatch.setattr(tok, "_encode", lambda t: calls.append(len(t)) or real(t))
    ids = get_tokenizer(name)._enc.encode_ordinary(text)
    assert tok.count(text) == len(ids)
    for n in (10, 500, 3000):
        assert tok.truncate(text, n) == get_tokenizer(name)._enc.decode(ids[:n])
        assert tok.truncate(text, n, "tail") == get_tokenizer(name)._enc.decode(ids[-n:])
    assert calls == [len(text)]
    assert tok.count("short text") == 2 and calls == [len(text)]  # a short text is not memoised


def test_a_build_never_reads_through_a_link_out_of_it(tmp_path):
    """`promptmill.load` reads the build's bundles and tokenizer files inside the build only: a bundle or a
    tokenizer file replaced by a symbolic link to a copy elsewhere (the same bytes, so every hash matches)
    is PM017, not read; a tokenizer file that is a FIFO is said to be one, not 'missing'."""
    import os
    import shutil

    import promptmill

    _train_hf_tokenizer(tmp_path / "tok.json")
    (tmp_path / "prompts").mkdir()
    (tmp_path / "prompts" / "r.yaml").write_text(
        "kind: role\nid: r\nbudget: {max_tokens: 60, reserve: 0, tokenizer: 'hf:tok.json'}\nsections:\n  - id: a\n    text: hi\n"
    )
    promptmill.compile(tmp_path)
    build = tmp_path / "build"
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (shipped,) = (build / "tokenizers").glob("*.json")
    (bundle,) = (build / "roles").glob("r.*.json")
    for target in (shipped, bundle):
        copy = elsewhere / target.name
        shutil.copy2(target, copy)
        target.unlink()
        target.symlink_to(copy)
        with pytest.raises(promptmill.PromptmillError) as err:
            promptmill.load(build)
        assert err.value.code == "PM017" and "symbolic link" in err.value.message, err.value
        target.unlink()
        shutil.copy2(copy, target)
        assert promptmill.load(build).render("r").text == "hi"  # the same bytes, in the build: fine
    shipped.unlink()
    os.mkfifo(shipped)
    with pytest.raises(promptmill.PromptmillError) as err:
        promptmill.load(build)
    assert "FIFO" in err.value.message, err.value
