"""Tokenizers: how promptmill counts tokens.

`get_tokenizer(name)` returns a shared, thread-safe tokenizer:
- `o200k_base` (default) and `cl100k_base`: tiktoken, built offline from the
  official encoding files shipped in `promptmill/data/`, whose SHA-256 is checked
  on load against the hash tiktoken itself expects; the first STARTER_CHARS
  characters of plain ASCII are counted from the file's ranks alone
  (`asciibpe`, tiktoken's ids exactly), so a process that renders once never
  builds tiktoken's tables (about 0.25 s);
  with `promptmill[fast]` installed they count through quicktok (a faster exact
  BPE) loaded from the same verified files, kept only while it agrees with
  tiktoken on a fixed corpus checked at load (see `fast_encoder`); it loads once
  the tokenizer has counted FAST_AFTER_CHARS characters with tiktoken, so a short
  process (a CLI call, a first render) does not pay its load;
- `approx`: about four characters a token, for when nothing better exists; it is
  marked approximate (`exact = False`) and every report says so;
- `hf:PATH`: a Hugging Face `tokenizer.json` through the optional `tokenizers`
  package (`pip install 'promptmill[hf]'`), for local models.

`resolve_model(model)` maps a model name to its tokenizer and context window.
Every tokenizer can say whether a join between two characters is *hard* (no
pre-token crosses it); `counting.Counter` uses that to count concatenations
exactly from cached piece counts. See docs/ARCHITECTURE.md.
"""

from __future__ import annotations

import binascii
import functools
import hashlib
import math
import os
import shutil
import struct
import tempfile
import threading
import types
import unicodedata
import warnings
from array import array
from collections.abc import Sequence
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

import regex as _regex

from ..core.errors import TokenizerError
from .asciibpe import AsciiBPE, PieceTooLong, plain

if TYPE_CHECKING:
    import tiktoken

    from .models import ModelInfo

DEFAULT_TOKENIZER = "o200k_base"
LONG_ENCODE_CHARS = 65_536  # a text this long is encoded once for the truncations of it that follow
# characters a tokenizer counts with tiktoken before the fast backend (promptmill[fast]) loads: its load
# (about 1.5 s on the 2-core machine of bench/bench_cold.py) pays back only over many renders, and
# 256 Ki characters is about a hundred medium renders; the counts are the same before and after
FAST_AFTER_CHARS = 262_144
# plain ASCII characters a tokenizer counts from the ranks alone (runtime/asciibpe.py) before it builds
# tiktoken's tables (about 0.25 s for o200k_base): a CLI call or a first render of a few thousand tokens
# (`promptmill render executor` counts about 3,100 characters) does not pay the build; a process that
# goes on renders builds them within its first renders (16 Ki is two small ones), where a warm-up is,
# not later in a loop someone is timing; the counts are the same either side (tests/test_asciibpe.py)
STARTER_CHARS = 16_384

# SHA-256 of the official files; equal to `expected_hash` in tiktoken_ext/openai_public.py.
SHIPPED_ENCODINGS: dict[str, str] = {
    "o200k_base": "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d",
    "cl100k_base": "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7",
}
KNOWN_NAMES = (*SHIPPED_ENCODINGS, "approx")


@runtime_checkable
class Tokenizer(Protocol):
    """What the runtime needs from a tokenizer."""

    name: str
    exact: bool  # False for approximate counters; reports say so
    has_hard_joins: bool  # True when hard_join() can ever answer True

    def count(self, text: str) -> int: ...
    def truncate(self, text: str, n: int, keep: str = "head") -> str:
        """At most `n` tokens of `text`, cut at a token boundary: the start
        (`keep="head"`) or the end (`keep="tail"`); never a split character or
        character cluster (see `whole_clusters`)."""
        ...

    def hard_join(self, left: str, right: str) -> bool:
        """True when no token can span the join of char `left` and char `right`."""
        ...


def _is_symbol_or_punct(ch: str) -> bool:
    return unicodedata.category(ch)[0] in "PS"


class TiktokenTokenizer:
    """A tiktoken encoding (exact; the counting model OpenAI models use)."""

    exact = True
    has_hard_joins = True

    def __init__(
        self, name: str, encoding: tiktoken.Encoding | None, fast: Any = None, later: Any = None, *, spec: dict | None = None
    ) -> None:
        """`fast` (see fast_encoder) gives tiktoken's ids for the same text, proven at load; `later`, a
        callable returning such an encoder (or None), is called once FAST_AFTER_CHARS characters were counted.
        With `encoding` None, `spec` holds `tiktoken.Encoding`'s arguments: the first STARTER_CHARS characters
        of plain ASCII are counted from the ranks alone (`asciibpe`), and tiktoken's tables are built when
        that allowance is spent, on the first other text, or on the first encode or truncation."""
        self.name = name
        self._enc = encoding
        self._spec = spec if encoding is None else None
        self._last: tuple[str, Sequence[int]] | None = None  # the last long text encoded, and its ids (4 bytes each)
        self._later = later if fast is None else None
        self._left = FAST_AFTER_CHARS  # characters to count before `later` is asked
        self._starter: AsciiBPE | None = None
        if encoding is None:
            assert spec is not None
            self._starter = AsciiBPE(spec["mergeable_ranks"], spec["pat_str"])
            self._start_left = STARTER_CHARS
            self.backend = "promptmill-bpe"
            self._encode = self._starter_encode
            self._count = self._starter_count
            return
        self._install(fast)

    def _encoding(self) -> tiktoken.Encoding:
        """tiktoken's encoding, built now if it was not (then it counts from here on)."""
        enc = self._enc
        if enc is None:
            with _switch_lock:
                if self._enc is None:
                    import tiktoken

                    assert self._spec is not None
                    built = tiktoken.Encoding(**self._spec)
                    self._spec = None
                    self._enc = built
                    self._install(None)
                    self._starter = None  # tiktoken counts from here on (the ranks live on in its Encoding)
            enc = self._enc
            assert enc is not None
        return enc

    def load(self) -> None:
        """Build tiktoken's tables now, not on first need: a batch run builds them once before it forks
        its workers (`batch.pool`), so that no worker builds them again."""
        self._encoding()

    def _starter_count(self, text: str) -> int:
        starter = self._starter  # None once tiktoken is built (by another thread, maybe)
        if starter is not None and len(text) <= self._start_left and plain(text):
            try:
                value = starter.count(text)
            except PieceTooLong:  # a long run without a split: tiktoken's Rust merges it far faster
                pass
            else:
                self._start_left -= len(text)
                return value
        self._encoding()
        return self._count(text)

    def _starter_encode(self, text: str) -> list[int]:
        self._encoding()
        return self._encode(text)

    def _install(self, fast: Any) -> None:
        """Count and encode with `fast` (tiktoken when None); through the meters while `later` waits to be asked."""
        self._use(fast)
        if self._later is not None:
            self._encode = self._metered_encode
            self._count = self._metered_count

    def _use(self, fast: Any) -> None:
        encoding = self._enc
        assert encoding is not None  # built before a backend is chosen
        self.backend = "tiktoken" if fast is None else "quicktok"
        self._encode = encoding.encode_ordinary if fast is None else fast.encode_ordinary
        self._count = (lambda text: len(encoding.encode_ordinary(text))) if fast is None else fast.count

    def _metered_encode(self, text: str) -> list[int]:
        """tiktoken's ids (the meters run only once it is built), counting down to the fast backend's load."""
        self._left -= len(text)
        if self._left <= 0:
            self._switch()
        return self._enc.encode_ordinary(text)  # type: ignore[union-attr]

    def _metered_count(self, text: str) -> int:
        self._left -= len(text)
        if self._left <= 0:
            self._switch()
        return len(self._enc.encode_ordinary(text))  # type: ignore[union-attr]

    def _switch(self) -> None:
        """Ask `later` for the fast backend, once (tiktoken stays when it gives None)."""
        with _switch_lock:
            later, self._later = self._later, None
            if later is None:
                return
            self._use(later())

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        """Unpickled, it is the shared tokenizer of that name in the receiving process (which
        decides its own backend): quicktok's encoder does not pickle, and the tables need not travel."""
        return (get_tokenizer, (self.name,))

    def count(self, text: str) -> int:
        if len(text) >= LONG_ENCODE_CHARS:  # a text this long is usually truncated next: encode it once for both
            return len(self._ids(text))
        return self._count(text)

    def encode(self, text: str) -> list[int]:
        return self._encode(text)

    def _ids(self, text: str) -> Sequence[int]:
        """The ids of `text`; a long text is encoded once for its count and the truncations that
        follow (fitting tries a few lengths of the same text), not once per try. Kept compact
        (an array of 4-byte ids): an 8 MB state's ids weigh 32 MB at most, not ten times that."""
        if len(text) < LONG_ENCODE_CHARS:
            return self._encode(text)
        last = self._last
        if last is not None and last[0] == text:
            return last[1]
        tokens = array("I", self._encode(text))
        self._last = (text, tokens)
        return tokens

    def truncate(self, text: str, n: int, keep: str = "head") -> str:
        tokens = self._ids(text)
        if n >= len(tokens):
            return text
        if n <= 0:
            return ""
        part = list(tokens[:n] if keep == "head" else tokens[len(tokens) - n :])
        raw = self._encoding().decode_bytes(part)
        # A token may end (head) or start (tail) inside a UTF-8 sequence: drop the
        # partial character rather than emit a replacement character.
        if keep == "head":
            cut = raw.decode("utf-8", errors="ignore") if _partial_end(raw) else raw.decode("utf-8", errors="replace")
        else:
            cut = raw.decode("utf-8", errors="ignore") if _partial_start(raw) else raw.decode("utf-8", errors="replace")
        return whole_clusters(text, cut, keep)

    def hard_join(self, left: str, right: str) -> bool:
        # Rules proven against o200k_base and cl100k_base pre-tokenisation; see
        # docs/ARCHITECTURE.md and tests/test_counting.py.
        if left == "\n":
            return not right.isspace() and right != "/"
        if left.isalnum():
            if right.isspace():
                return True
            return right != "'" and _is_symbol_or_punct(right)
        return False


class ApproxTokenizer:
    """Characters / 4, rounded up. Approximate by design, never additive."""

    exact = False
    has_hard_joins = False
    chars_per_token = 4

    def __init__(self) -> None:
        self.name = "approx"

    def count(self, text: str) -> int:
        return math.ceil(len(text) / self.chars_per_token)

    def truncate(self, text: str, n: int, keep: str = "head") -> str:
        chars = max(0, n) * self.chars_per_token
        if chars >= len(text):
            return text
        return whole_clusters(text, text[:chars] if keep == "head" else text[len(text) - chars :], keep)

    def hard_join(self, left: str, right: str) -> bool:
        return False


class HFTokenizer:
    """A Hugging Face tokenizer.json (needs the optional `tokenizers` package)."""

    exact = True
    has_hard_joins = False

    def __init__(self, name: str, path: Path) -> None:
        try:
            from tokenizers import Tokenizer as _HF
        except ImportError as exc:  # pragma: no cover - depends on environment
            raise TokenizerError(
                f"tokenizer '{name}' needs the 'tokenizers' package",
                code="PM850",
                hint="pip install 'promptmill[hf]'",
            ) from exc
        try:
            self._tok = _HF.from_file(str(path))
        except Exception as exc:  # the library raises bare Exceptions on bad files
            raise TokenizerError(f"cannot load Hugging Face tokenizer {path}: {exc}", code="PM850") from exc
        self.name = name

    def count(self, text: str) -> int:
        return len(self._tok.encode(text, add_special_tokens=False).ids)

    def truncate(self, text: str, n: int, keep: str = "head") -> str:
        enc = self._tok.encode(text, add_special_tokens=False)
        if n >= len(enc.ids):
            return text
        if n <= 0:
            return ""
        if keep == "head":
            return whole_clusters(text, text[: enc.offsets[n - 1][1]], keep)
        return whole_clusters(text, text[enc.offsets[len(enc.ids) - n][0] :], keep)

    def hard_join(self, left: str, right: str) -> bool:
        return False


_CLUSTER = _regex.compile(r"\X")  # one extended grapheme cluster (Unicode UAX #29)
_CLUSTER_WINDOW = 4096  # characters looked at before a cut: boundaries depend on little context
_RI = ("\U0001f1e6", "\U0001f1ff")  # regional indicators pair up into flags counted from the run's start


def _window_start(text: str, at: int) -> int:
    """Where to start reading clusters so that the boundaries near `at` come out right."""
    start = max(0, at - _CLUSTER_WINDOW)
    while start > 0 and _RI[0] <= text[start - 1] <= _RI[1]:  # a flag's pairing needs the whole run
        start -= 1
    return start


def whole_clusters(text: str, cut: str, keep: str) -> str:
    """`cut` (a prefix of `text` for keep="head", a suffix for "tail") shortened so the cut
    does not split an extended grapheme cluster (`\\X` of the `regex` engine): no letter
    without its marks ('é' is not cut to 'e'), no mark without its letter, no emoji
    sequence left hanging on a zero-width joiner, no half flag, no Hangul syllable cut
    between its jamo, no CR without its LF."""
    at = len(cut) if keep == "head" else len(text) - len(cut)
    if at <= 0 or at >= len(text):
        return cut
    pair = text[at - 1 : at + 1]
    if pair.isascii() and pair != "\r\n":
        return cut  # UAX #29 breaks between any two ASCII characters but CR LF: no need to read clusters
    for match in _CLUSTER.finditer(text, _window_start(text, at)):
        if match.end() < at:
            continue
        if match.start() == at or match.end() == at:
            return cut  # the cut falls on a boundary
        return text[: match.start()] if keep == "head" else text[match.end() :]
    return cut


def _partial_end(raw: bytes) -> bool:
    """True when `raw` ends inside a multi-byte UTF-8 sequence."""
    for back in range(1, min(4, len(raw)) + 1):
        byte = raw[-back]
        if byte & 0xC0 != 0x80:  # a lead byte or ASCII
            need = 1 if byte < 0x80 else 2 if byte >> 5 == 0b110 else 3 if byte >> 4 == 0b1110 else 4
            return need > back
    return True


def _partial_start(raw: bytes) -> bool:
    """True when `raw` starts with UTF-8 continuation bytes."""
    return bool(raw) and raw[0] & 0xC0 == 0x80


def _data_file(name: str) -> bytes:
    return resources.files("promptmill").joinpath("data", name).read_bytes()


def _load_ranks(name: str) -> dict[bytes, int]:
    expected = SHIPPED_ENCODINGS[name]
    try:
        raw = _data_file(f"{name}.tiktoken")
    except OSError as exc:
        raise TokenizerError(f"shipped encoding file for '{name}' is missing: {exc}", code="PM850") from exc
    digest = hashlib.sha256(raw).hexdigest()
    if digest != expected:
        raise TokenizerError(
            f"encoding file for '{name}' failed its integrity check (sha256 {digest}, expected {expected})",
            code="PM850",
            hint="reinstall promptmill",
        )
    fields = raw.split()  # "token rank" lines: base64 token, decimal rank
    if len(fields) % 2:
        raise TokenizerError(f"encoding file for '{name}' has a line that is not 'token rank'", code="PM850")
    # The file is the one shipped (its hash matched), and every shipped file numbers its tokens 0, 1, 2, ...
    # in file order (tests/test_tokenizers.py parses the rank column to prove it), so the ranks are
    # range(n), not 200,000 int() calls: a cold `promptmill render` counts sooner.
    return dict(zip(map(binascii.a2b_base64, fields[0::2]), range(len(fields) // 2), strict=True))


def _tiktoken_encoding(name: str, ranks: dict[bytes, int] | None = None) -> tiktoken.Encoding:
    """Build the encoding from tiktoken's own definition, fed our verified file (or `ranks` read from it)."""
    import tiktoken

    return tiktoken.Encoding(**_encoding_spec(name, ranks))


def _encoding_spec(name: str, ranks: dict[bytes, int] | None = None) -> dict[str, Any]:
    """`tiktoken.Encoding`'s arguments from tiktoken's own definition (pattern, special tokens), with our
    verified file's ranks (or `ranks` read from it); building the encoding is left to the caller."""
    import tiktoken_ext.openai_public as public

    constructor = getattr(public, name, None)
    if constructor is None:  # pragma: no cover - depends on tiktoken version
        raise TokenizerError(f"installed tiktoken has no definition of '{name}'", code="PM850")

    def load_verified(url: str, expected_hash: str | None = None) -> dict[bytes, int]:
        if expected_hash is not None and expected_hash != SHIPPED_ENCODINGS[name]:
            raise TokenizerError(
                f"installed tiktoken expects a different '{name}' file than promptmill ships",
                code="PM850",
            )
        return ranks if ranks is not None else _load_ranks(name)

    # Run tiktoken's definition (pattern, special tokens) with our loader, without
    # touching tiktoken's module state.
    scope = dict(vars(public), load_tiktoken_bpe=load_verified)
    build = types.FunctionType(constructor.__code__, scope, constructor.__name__)
    return build()


FAST_ENV = "PROMPTMILL_FAST_TOKENIZER"  # "0", "off", "false" or "no": count with tiktoken alone
_QUICKTOK_FILES = {"cl100k_base": ("cl100k", "uniclass.bin"), "o200k_base": ("o200k", "uniclass_o200k.bin")}


def fast_enabled() -> bool:
    """False when the environment turns the fast backend off (`PROMPTMILL_FAST_TOKENIZER=0`)."""
    return os.environ.get(FAST_ENV, "").strip().lower() not in ("0", "off", "false", "no")


def self_check_corpus() -> list[str]:
    """Texts a fast backend must encode exactly as tiktoken before it is used: runs of letters,
    digits and whitespace, contractions, every script class the pre-tokenisers treat apart,
    emoji sequences, special-token look-alikes, and text shaped like prompts."""
    words = "Grüße aus Köln — 東京タワー 🙂 don't I'LL we've they'RE naïve café Ελληνικά русский עברית العربية हिन्दी 한국어"
    corpus = [
        "",
        "hello world",
        "a" * 3000,
        "ab" * 1500 + "Z" * 700,
        "1234567890" * 40,
        "3.14159 1,000,000 0x1F 10e-5 ١٢٣ 一二三",
        " " * 500 + "x" + "\n" * 300 + "\t\t \r\n" * 50 + "  \n  ",
        "trailing spaces   ",
        "\n\n\nleading newlines",
        "<|endoftext|><|fim_prefix|><|fim_middle|><|fim_suffix|><|endofprompt|><|im_start|>",
        "<|endoftext|>" * 20 + " <|endoftext |> < |endoftext|>",
        "👨\u200d👩\u200d👧\u200d👦🏳\ufe0f\u200d🌈👍🏽🇩🇪🇯🇵 e\u0301\u0301 क्षत्रिय \ud7a3\u1100\u1161",
        "\x00\x01\x7f\u00a0\u2028\u3000\ufeff\U0010ffff",
        "def f(x):\n    return [i**2 for i in range(100)]  # 1+2+3==6\n",
        '{"name": "search", "parameters": {"type": "object", "properties": {"q": {"type": "string"}}}}',
        "- [fact] The user's repo uses pytest; CI runs on 3.11 and 3.12 (score 0.873).\n",
        "!!!???...,,,;;;:::---___===+++***&&&%%%$$$###@@@",
        words * 30,
    ]
    corpus += [
        w + sep + v
        for w in ("A", "ab", "é", "東", "1", "'", " ", "\n", "!")
        for sep in ("", " ", "\n", "'")
        for v in ("s", "LL", "9", "🙂", " x")
    ]
    return corpus


def fast_available(name: str) -> bool:
    """Whether `name` may count through quicktok: it is installed (`promptmill[fast]`) and not turned off."""
    if name not in _QUICKTOK_FILES or not fast_enabled():
        return False
    try:
        import quicktok
    except ImportError:
        return False
    return callable(getattr(quicktok, "Tokenizer", None))  # not another package named quicktok


def fast_encoder(name: str, encoding: tiktoken.Encoding, ranks: dict[bytes, int] | None = None) -> Any:
    """quicktok's encoder for `name` built from promptmill's verified encoding file, or None.

    None when the fast backend is turned off (FAST_ENV), when quicktok (the
    `quicktok-v1` distribution, `pip install 'promptmill[fast]'`) is not installed
    or cannot load, and, with a RuntimeWarning, when its ids differ from
    tiktoken's on any text of `self_check_corpus()`. Nothing is downloaded: the
    vocabulary is written from the hash-checked file to a private temporary
    folder, loaded, and the folder removed."""
    if name not in _QUICKTOK_FILES or not fast_enabled():
        return None
    try:
        import quicktok
    except ImportError:
        return None
    if not callable(getattr(quicktok, "Tokenizer", None)):
        return None  # another package named quicktok (not quicktok-v1)
    stem, table = _QUICKTOK_FILES[name]
    try:
        fast = _load_quicktok(quicktok, name, stem, table, ranks if ranks is not None else _load_ranks(name))
    except Exception as exc:  # a quicktok that cannot load is no reason to stop counting
        warnings.warn(f"promptmill: the fast tokenizer could not load {name} ({exc}); counting with tiktoken", RuntimeWarning, stacklevel=3)
        return None
    for text in self_check_corpus():
        try:
            same = fast.encode_ordinary(text) == encoding.encode_ordinary(text) and fast.count(text) == len(encoding.encode_ordinary(text))
        except Exception:
            same = False
        if not same:
            warnings.warn(
                f"promptmill: the fast tokenizer disagrees with tiktoken on {name} (text {text[:40]!r}); counting with tiktoken",
                RuntimeWarning,
                stacklevel=3,
            )
            return None
    return fast


def _load_quicktok(quicktok: Any, name: str, stem: str, table: str, ranks: dict[bytes, int]) -> Any:
    """quicktok.Tokenizer(name) from a folder holding `ranks` in quicktok's format, no special
    tokens (promptmill counts special-token text as ordinary text), and quicktok's own
    Unicode class table (part of its pre-tokeniser, not of the vocabulary)."""
    folder = tempfile.mkdtemp(prefix="promptmill-quicktok-")
    try:
        short, long = struct.Struct("<H").pack, struct.Struct("<I").pack
        recs = sorted(ranks.items(), key=lambda kv: kv[1])
        Path(folder, f"{stem}.vocab").write_bytes(long(len(recs)) + b"".join([short(len(raw)) + raw + long(rank) for raw, rank in recs]))
        Path(folder, f"{stem}.special").write_bytes(struct.pack("<I", 0))
        shutil.copyfile(Path(quicktok.__file__).parent / "data" / table, Path(folder, table))
        return quicktok.Tokenizer(name, folder)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _fast_later(tok: TiktokenTokenizer, ranks: dict[bytes, int]) -> Any:
    """`tok`'s fast backend, from the ranks it already holds (not parsed from the file again)."""
    return fast_encoder(tok.name, tok._encoding(), ranks)


_lock = threading.Lock()
_switch_lock = threading.Lock()  # a tokenizer asking for its fast backend (TiktokenTokenizer._switch)
_cache: dict[str, Tokenizer] = {}


def get_tokenizer(name: str, *, base_dir: Path | None = None) -> Tokenizer:
    """Return the shared tokenizer called `name` (see module docstring).

    `hf:PATH` is resolved against `base_dir` when relative. Raises
    `TokenizerError` (PM502) for an unknown name.
    """
    key = name
    if name.startswith("hf:"):
        path = Path(name[3:])
        if not path.is_absolute() and base_dir is not None:
            path = base_dir / path
        key = f"hf:{path.resolve()}"
    cached = _cache.get(key)
    if cached is not None:
        return cached
    with _lock:
        cached = _cache.get(key)
        if cached is not None:
            return cached
        tok: Tokenizer
        if name in SHIPPED_ENCODINGS:
            spec = _encoding_spec(name, _load_ranks(name))
            shipped = TiktokenTokenizer(name, None, spec=spec)
            if fast_available(name):  # asked once tiktoken has counted FAST_AFTER_CHARS, so it is built by then
                shipped._later = functools.partial(_fast_later, shipped, spec["mergeable_ranks"])
            tok = shipped
        elif name == "approx":
            tok = ApproxTokenizer()
        elif name.startswith("hf:"):
            path = Path(key[3:])
            if not path.is_file():
                raise TokenizerError(f"Hugging Face tokenizer file not found: {path}", code="PM502")
            tok = HFTokenizer(name, path)
        else:
            raise TokenizerError(
                f"unknown tokenizer '{name}'",
                code="PM502",
                hint="use one of " + ", ".join(KNOWN_NAMES) + ", or hf:PATH/tokenizer.json",
            )
        _cache[key] = tok
        return tok


def counts_exactly(name: str, *, base_dir: Path | None = None) -> bool:
    """Whether the tokenizer called `name` counts exactly (`Tokenizer.exact`), without loading a shipped
    encoding for the answer: a batch run's parent process, whose workers did the counting, says how rows
    were counted and need not read an encoding file (0.15 s) to say it."""
    if name in SHIPPED_ENCODINGS:
        return TiktokenTokenizer.exact
    if name == "approx":
        return ApproxTokenizer.exact
    return get_tokenizer(name, base_dir=base_dir).exact


def resolve_model(model: str) -> ModelInfo | None:
    """Tokenizer and context window of a model name (the model table's most specific row), or None."""
    from .models import resolve_model as resolve  # the model table loads only when a model is asked about

    return resolve(model)


def known_models() -> list[str]:
    from .models import default_table

    return default_table().patterns
