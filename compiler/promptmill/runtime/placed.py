"""What the fitter places: a section's candidate with its status (`Placed`), and the messages they
end up in (`Container`). Shared by the fitter (fit.py) and the wires' layouts (wire.py), which
group placed sections into messages, so neither imports the other's machinery.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..core.errors import StateError
from .bundle import Section
from .fill import Candidate, state_path


@dataclass
class Placed:
    cand: Candidate
    status: str = "pending"  # kept | trimmed | truncated | dropped | empty
    reason: str = ""
    body: str | None = None  # final body of non-list sections
    kept: list[int] = field(default_factory=list)  # kept item indices, in the order added
    offered: int = 0  # items rendered and counted
    order_key: int = 0  # when it was placed (for repair)

    @property
    def spec(self) -> Section:
        return self.cand.spec

    @property
    def is_list(self) -> bool:
        return self.cand.items is not None

    @property
    def present(self) -> bool:
        return self.status in ("kept", "trimmed", "truncated")

    def item_texts(self) -> list[str]:
        return [self.cand.rendered[i] for i in sorted(self.kept)]

    def pieces(self) -> list[str]:
        """The section as counted pieces: title line, then body or items with separators."""
        out = [self.spec.title + "\n"] if self.spec.title else []
        if self.is_list:
            # each item is counted together with the separator that follows it, so
            # item-to-item joins are hard; the last item stands alone
            kept = sorted(self.kept)
            units = self.cand.units
            out.extend(units[i] for i in kept[:-1])
            if kept:
                out.append(self.cand.rendered[kept[-1]])
        elif self.body:
            out.append(self.body)
        return out

    def text(self) -> str:
        return "".join(self.pieces())


@dataclass
class Container:
    """One message (or the whole text) of the final request."""

    role: str
    placed: list[Placed] = field(default_factory=list)
    turn: Any = None  # a history turn (chat wires): the item dict
    turn_of: Placed | None = None
    tokens: int = 0  # exact tokens of the content (set by exact_total)


def turn_content(turn: Any, section: str, index: int, path: tuple) -> tuple[str, str]:
    if not isinstance(turn, Mapping) or turn.get("role") not in ("user", "assistant") or not isinstance(turn.get("content"), str):
        raise StateError(
            "",
            [(state_path((*path, index)), f"history turns of section '{section}' need role user|assistant and string content")],
        )
    return turn["role"], turn["content"]
