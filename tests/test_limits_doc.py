"""docs/limits.md states the limits the code enforces: every number is read back from its constant."""

from __future__ import annotations

import importlib
import re
from pathlib import Path
from typing import Any

DOC = Path(__file__).resolve().parents[1] / "docs" / "limits.md"
ROW = re.compile(r"^\| (?P<what>[^|]+) \| (?P<value>[^|]+) \| `(?P<name>promptmill\.[\w.]+)` ")


def resolve(name: str) -> Any:
    parts = name.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            obj: Any = importlib.import_module(".".join(parts[:cut]))
        except ModuleNotFoundError:
            continue
        for attr in parts[cut:]:
            obj = obj[attr] if isinstance(obj, dict) else getattr(obj, attr)
        return obj
    raise AssertionError(f"cannot resolve {name}")


def rows() -> list[tuple[str, str, str]]:
    out = []
    for line in DOC.read_text(encoding="utf-8").splitlines():
        match = ROW.match(line)
        if match:
            out.append((match["what"].strip(), match["value"].strip(), match["name"]))
    return out


def test_every_documented_number_is_the_constant_in_the_code():
    found = rows()
    assert len(found) >= 25
    for what, value, name in found:
        number = re.match(r"[\d,.]+", value)
        assert number, f"{what}: no number in {value!r}"
        documented = float(number.group().replace(",", ""))
        assert resolve(name) == documented, f"{what}: docs say {value}, {name} is {resolve(name)}"
