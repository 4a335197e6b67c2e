"""promptmill.ratios.json: the token ratios `promptmill counts --write` measured, which compile reads.

    {"ratios": {"claude-sonnet-4-5": {"ratio": 1.27, "source": "measured by promptmill counts ..."}}}

Reads and writes go through `core.userfiles` with the project as the root: a
file that links out of the project is PM017 (never read, never written
through), a FIFO or device is PM100, a file over `RATIOS_LIMIT` is PM105, and a
write replaces the file in one rename. Every ratio is checked with the model
table's own bound (`runtime.models.ratio_problem`), so the file can hold
nothing that a later compile would refuse; a bad entry is PM010 at its
line:col, with a hint to delete it (measuring again would store the same).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from pathlib import Path
from typing import Any

from ..core.errors import ConfigError
from ..core.userfiles import MiB, read_bytes, write_text
from ..runtime.models import ratio_problem

RATIOS_FILE = "promptmill.ratios.json"  # ratios `promptmill counts --write` measured; committed, read by compile
RATIOS_LIMIT = MiB  # one entry per model: a few hundred bytes each
_BAD_ID = re.compile(r"[\s\x00-\x1f\x7f]")


def ratios_path(root: Path) -> Path:
    return Path(root) / RATIOS_FILE


def read_raw(root: Path) -> bytes | None:
    """The file's bytes through the guard (PM017/PM100/PM105), or None when there is none."""
    path = ratios_path(root)
    if not os.path.lexists(path):
        return None
    return read_bytes(path, limit=RATIOS_LIMIT, root=root, what="ratios file")


def parse(raw: bytes, *, strict: bool = True) -> dict[str, Any]:
    """The whole document ({"ratios": {...}, ...}); PM010 positioned at what is wrong.

    `strict`: each entry's ratio is checked too (compile); `counts --write` reads
    with strict=False so that measuring a model again can replace a bad entry."""
    text = raw.decode("utf-8", errors="replace")

    def constant(name: str) -> Any:
        raise ValueError(f"{name} is not a number JSON allows")

    try:
        data = json.loads(raw, parse_constant=constant)
    except json.JSONDecodeError as err:
        raise _bad(err.lineno, err.colno, err.msg) from None
    except (ValueError, RecursionError) as err:  # not UTF-8, NaN/Infinity, nested too deeply
        at = next((start for tok, start in _tokens(text) if tok in ("NaN", "Infinity", "-Infinity")), 0)
        raise _bad(*_line_col(text, at), str(err) if isinstance(err, ValueError) else "nested too deeply") from None
    if not isinstance(data, dict) or not isinstance(data.get("ratios"), dict):
        raise _bad(*position(text, ("ratios",)), 'expected an object with "ratios": {MODEL: {"ratio": NUMBER, "source": TEXT}}')
    for model, entry in data["ratios"].items():
        if not model or _BAD_ID.search(model):
            raise _bad(
                *position(text, ("ratios",), key=model),
                f"{model!r} is not a model id (empty, or with whitespace or control characters)",
                model,
            )
        if not isinstance(entry, dict) or "ratio" not in entry:
            raise _bad(
                *position(text, ("ratios", model)), f'the entry of model {model!r} is not {{"ratio": NUMBER, "source": TEXT}}', model
            )
        problem = ratio_problem(entry["ratio"]) if strict else None
        if problem is not None:
            raise _bad(*position(text, ("ratios", model, "ratio")), f"model {model!r}: {problem}", model, MEASURE_AGAIN)
    return data


def read_ratios(root: Path) -> tuple[dict[str, dict[str, Any]], str | None]:
    """The measured ratios ({model: {ratio, source}}) and the file's sha256 (None: no file)."""
    raw = read_raw(root)
    if raw is None:
        return {}, None
    return parse(raw)["ratios"], hashlib.sha256(raw).hexdigest()


def write(root: Path, data: dict[str, Any]) -> Path:
    """Replace the file with `data` (sorted, indented), in one rename, never through a link."""
    path = ratios_path(root)
    text = json.dumps(dict(sorted(data.items())), indent=2, sort_keys=True) + "\n"
    write_text(path, text, root=root, what="ratios file")
    return path


MEASURE_AGAIN = (
    "A ratio this far from 1 is not a tokenizer's difference: check the role's model and the provider's address before measuring again"
)


def _bad(line: int, col: int, problem: str, model: str | None = None, more: str = "") -> ConfigError:
    if model is not None:
        hint = f"delete the entry {json.dumps(model)} from {RATIOS_FILE}: compile then uses the model table's ratio for it" + (
            f". {more}" if more else ""
        )
    else:
        hint = f"fix the file, or delete it: `promptmill counts --write` writes a new one ({RATIOS_FILE} holds only measured ratios)"
    return ConfigError(f"{RATIOS_FILE}:{line}:{col}: {problem}", code="PM010", hint=hint)


_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|[{}\[\]:,]|[^\s{}\[\]:,"]+')


def position(text: str, path: tuple[str, ...], *, key: str | None = None) -> tuple[int, int]:
    """Line and column (1-based) of the value at `path` in JSON `text` (of the key `key` inside it, when
    given); the last of repeated keys, as json.loads keeps; 1:1 when it cannot be found."""
    tokens = _tokens(text)
    try:
        i = 0
        steps = [*path] if key is None else [*path, key]
        for n, step in enumerate(steps):
            if tokens[i][0] != "{":
                return 1, 1
            i, found, want_key = i + 1, None, key is not None and n == len(steps) - 1
            while tokens[i][0] != "}":
                name = json.loads(tokens[i][0])
                if name == step:
                    found = i if want_key else i + 2
                i = _skip(tokens, i + 2)
                if tokens[i][0] == ",":
                    i += 1
            if found is None:
                return 1, 1
            i = found
        return _line_col(text, tokens[i][1])
    except (IndexError, ValueError):
        return 1, 1


def _tokens(text: str) -> list[tuple[str, int]]:
    return [(m.group(), m.start()) for m in _TOKEN.finditer(text)]


def _skip(tokens: list[tuple[str, int]], i: int) -> int:
    """The index after the JSON value that starts at tokens[i]."""
    depth = 0
    while True:
        tok = tokens[i][0]
        depth += tok in ("{", "[")
        depth -= tok in ("}", "]")
        i += 1
        if depth == 0:
            return i


def _line_col(text: str, offset: int) -> tuple[int, int]:
    line = text.count("\n", 0, offset) + 1
    return line, offset - (text.rfind("\n", 0, offset) + 1) + 1
