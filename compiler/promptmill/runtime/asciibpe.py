"""Exact BPE token ids of plain ASCII text from an encoding's ranks alone, before tiktoken's tables exist.

tiktoken builds its tables (o200k_base: 200,000 tokens into Rust hash maps, and its
pre-tokenizer regex) in about a quarter of a second. A process that renders once (a CLI
call, a serverless function's first request) pays that for a few thousand tokens. This
module encodes such text the way tiktoken does, from the same ranks: the encoding's own
pattern splits the text into pieces (with the `regex` module, which reads tiktoken's
patterns as its Rust engine does: tiktoken's `_educational.py` uses it the same way); a piece
that is a token is that token; any other piece is merged byte pair by byte pair, the pair
of lowest rank first and the leftmost of equal ranks, as tiktoken's `_byte_pair_merge`
does (src/lib.rs).

Only *plain ASCII* is taken (printable characters, tab, line feed and carriage return):
there the pattern's classes (letters, digits, white space) mean the same in every Unicode
version, so no difference between two regex engines' tables can change a count.
`TiktokenTokenizer` uses this for the first characters it counts and then builds tiktoken;
tests/test_asciibpe.py compares the ids with tiktoken's on random and real text.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

_PLAIN = re.compile(r"[\t\n\r\x20-\x7e]*")  # what `plain` accepts, whole
_NONE = 1 << 62  # rank of a pair that is no token (above every real rank)
# the longest piece merged here: merging takes time quadratic in a piece's length (16,000 letters without a
# space: 3 s), so a longer piece that is not one token is left to tiktoken (PieceTooLong); prose pieces are words
MAX_MERGE_BYTES = 128


class PieceTooLong(Exception):
    """A piece longer than MAX_MERGE_BYTES that is not one token: count the text with tiktoken."""


def plain(text: str) -> bool:
    """Whether `text` is plain ASCII: printable characters, tab, line feed and carriage return."""
    return text.isascii() and _PLAIN.fullmatch(text) is not None


class AsciiBPE:
    """`encode(text)`: the token ids tiktoken gives plain ASCII `text` (ordinary text: special
    tokens are not recognised), from `ranks` (bytes -> id) and the encoding's `pattern`; PieceTooLong
    when a piece is too long to merge here."""

    def __init__(self, ranks: Mapping[bytes, int], pattern: str) -> None:
        import regex

        self._ranks = ranks
        self._pieces = regex.compile(pattern).findall

    def encode(self, text: str) -> list[int]:
        ranks = self._ranks
        ids: list[int] = []
        for piece in self._pieces(text):
            raw = piece.encode("ascii")
            token = ranks.get(raw)
            if token is not None:
                ids.append(token)
            elif len(raw) <= MAX_MERGE_BYTES:
                ids.extend(_merge(ranks, raw))
            else:
                raise PieceTooLong(len(raw))
        return ids

    def count(self, text: str) -> int:
        return len(self.encode(text))


def _merge(ranks: Mapping[bytes, int], piece: bytes) -> list[int]:
    """The ids of a piece that is not one token: merge the adjacent pair of lowest rank (the
    leftmost of equals) until no pair is a token."""
    bounds = list(range(len(piece) + 1))  # where each part starts, and the end
    get = ranks.get
    pair = [get(piece[i : i + 2], _NONE) for i in range(len(piece) - 1)]  # part i joined with part i + 1
    while pair:
        best = min(pair)
        if best == _NONE:
            break
        i = pair.index(best)
        del bounds[i + 1]
        del pair[i]
        if i < len(pair):
            pair[i] = get(piece[bounds[i] : bounds[i + 2]], _NONE)
        if i > 0:
            pair[i - 1] = get(piece[bounds[i - 1] : bounds[i + 1]], _NONE)
    return [ranks[piece[bounds[k] : bounds[k + 1]]] for k in range(len(bounds) - 1)]
