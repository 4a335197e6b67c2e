"""The `Wire` every API dialect implements: how a request is laid out, what it costs, its payload.

The counting model (message overhead, tool costs, margins) is documented in docs/providers.md
("Counting model"); a wire module subclasses `Wire` and sets what differs.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple

from ..core.errors import ProviderError
from .registry import WIRE_NAMES, find_wire

if TYPE_CHECKING:  # the wires load without the fitting machinery: the CLI lists them at start-up
    from .bundle import Contract, RoleBundle, Section
    from .counting import Counter
    from .placed import Container, Placed
    from .request import PromptRequest


# (id(contract), wire name) -> (contract, its forced tool): converted once per contract and wire, not on every render
_CONTRACT_TOOLS: dict[tuple[int, str], tuple[Contract, dict]] = {}


class BatchLimits(NamedTuple):
    """A provider's documented limits for one batch input file."""

    requests: int  # requests in one file
    bytes: int  # bytes of one file


class Wire:
    """One API dialect. Instances are shared and immutable: one per wire module."""

    name: str = ""
    provider: str = ""  # the vendor behind the API ("" for text and live)
    family: str = ""  # the model table's `provider` whose rows this wire serves ("": the wire's name)
    message_overhead: int = 0  # tokens per message (role markers, delimiters)
    fixed_overhead: int = 0  # tokens per request (reply priming)
    single: bool = False  # everything in one text (text, live)
    system_first: bool = False  # every system section goes into the leading system field
    system_blocks: bool = False  # ...as two blocks: the stable prefix, then the rest (each counted as a message)
    history_messages: bool = False  # history turns are separate messages
    user_first: bool = False  # the conversation must open with a user turn (a trimmed history starts on one)
    estimate: bool = False  # the provider's tokenizer is not the counting one
    default_margin: float = 0.0  # budget fraction held back when counts are estimates
    contract_as_tool: bool = False  # a native contract is sent as a forced call of its return tool
    schema_form: str | None = None  # the form of a native contract's schema this wire sends (schemaforms.py)
    batch_limits: BatchLimits | None = None  # None: the wire has no batch file format
    explicit_cache: bool = False  # the payload marks cache breakpoints: a render carries the model's limit of them
    metadata_field: str | None = None  # the request field that takes string tags (OpenAI `metadata`): batch lines trace their prompt

    def __repr__(self) -> str:
        return f"<wire {self.name}>"

    @property
    def models(self) -> str:
        """The model table's `provider` of the models this wire sends to: a variant of a wire
        (Claude on Vertex AI) counts with the rows of the models it serves (`anthropic`)."""
        return self.family or self.name

    # -- layout -----------------------------------------------------------
    def layout(self, bundle: RoleBundle) -> Layout:
        """How `bundle`'s sections become messages on this wire (`Fitter` asks it)."""
        return Layout(self, bundle)

    # -- tools and structured output ---------------------------------------
    def extra_tools(self, contract: Contract | None, tool_mode: str) -> list[dict]:
        """Declarations a payload carries beyond the role's tools: the structured-return tool when
        the contract is `return_call` with native tools, or `native` on a `contract_as_tool` wire."""
        from .tooldecl import return_tool

        if contract is None or self.single:
            return []
        if contract.style == "return_call" and tool_mode == "native":
            return [return_tool(contract)]
        if contract.style == "native" and self.contract_as_tool:
            return [self.contract_tool(contract)]
        return []

    def contract_tool(self, contract: Contract) -> dict:
        """The forced tool a native contract becomes on a `contract_as_tool` wire: its schema
        without the keywords the wire's profile rejects (schemaprofiles.py), so the request is never a 400."""
        from .schemaprofiles import profile_for, without_rejected
        from .tooldecl import return_tool

        key = (id(contract), self.name)
        entry = _CONTRACT_TOOLS.get(key)
        if entry is not None and entry[0] is contract:
            return dict(entry[1])
        tool = return_tool(contract)
        profile = profile_for(self)
        if profile is not None:
            tool["parameters"] = without_rejected(contract.schema, profile)
        if len(_CONTRACT_TOOLS) >= 256:
            _CONTRACT_TOOLS.clear()
        _CONTRACT_TOOLS[key] = (contract, tool)
        return dict(tool)

    def forced_tool(self, contract: Contract | None) -> str | None:
        """Name of the tool the model is forced to call (native contracts on `contract_as_tool` wires)."""
        if contract is not None and contract.style == "native" and self.contract_as_tool:
            from .tooldecl import return_tool

            return return_tool(contract)["name"]
        return None

    def tool_text(self, decl: Mapping[str, Any]) -> str:
        """The text whose tokens a declaration costs on this wire."""
        raise NotImplementedError(f"the {self.name} wire sends no tool declarations")

    def tool_item_cost(self, counter: Counter, text: str) -> int:
        """Cost of one more declaration whose `tool_text` is `text` (an estimate while filling)."""
        return counter.count(text)

    def tool_frame_cost(self, counter: Counter, forced: bool = False) -> int:
        """Cost of declaring any tools at all (the block around them, the tool-use prompt)."""
        return 0

    def tool_cost(self, counter: Counter, decls: Sequence[Mapping[str, Any]], forced: bool = False) -> int:
        """Tokens the declarations cost on this wire, by the documented counting model."""
        if not decls:
            return 0
        return sum(counter.count(self.tool_text(d)) for d in decls) + self.tool_frame_cost(counter, forced)

    def output_cost(self, counter: Counter, contract: Contract | None) -> int:
        """Tokens a native contract's structured-output field costs on this wire (0 without one)."""
        if contract is None or contract.style != "native" or self.schema_form is None:
            return 0
        return self.schema_cost(counter, contract)

    def schema_cost(self, counter: Counter, contract: Contract) -> int:
        """Tokens of a native contract's schema as this wire sends it (wires with a `schema_form`)."""
        raise NotImplementedError

    # -- payloads -----------------------------------------------------------
    def render(self, req: PromptRequest, *, model: str | None = None, max_tokens: int | None = None) -> dict:
        """The payload of a request fitted for this wire: a plain dict for the provider's SDK."""
        raise NotImplementedError

    @staticmethod
    def reply_limits(req: PromptRequest, model: str | None, max_tokens: int | None) -> tuple[str | None, int | None]:
        """The model and reply limit a payload carries: the role's (`model:`, `budget.reserve`) unless given."""
        limit = req.reserve if max_tokens is None else max_tokens
        return model or req.model, (limit if limit and limit > 0 else None)

    def batch_body(self, req: PromptRequest, model: str | None) -> dict:
        """The payload one batch line of this wire holds for `req` (default: `req.to_payload()`)."""
        return req.to_payload()

    def batch_check(self, model: str | None) -> None:
        """Raise a PromptmillError when this wire writes no batch lines for `model` (checked before any row)."""

    def batch_line(self, custom_id: str, payload: dict, model: str | None, max_tokens: int | None) -> dict:
        """The line of a batch input file for one request (`payload` is `render()`'s)."""
        raise ProviderError(f"the {self.name} wire has no batch format", code="PM840")

    def batch_payload(self, line: dict) -> dict:
        """The payload inside one of this wire's batch lines (`batch_line` read back)."""
        raise ProviderError(f"the {self.name} wire has no batch format", code="PM840")


class Layout:
    """One role's layout on one wire: which container each section opens or joins, and the messages."""

    def __init__(self, wire: Wire, bundle: RoleBundle) -> None:
        self.wire = wire
        self.native = bundle.tool_mode == "native" and not wire.single
        head: set[str] = set()
        for spec in bundle.sections:
            if spec.message == "system":
                if spec.stability != "stable":
                    break
                head.add(spec.id)
        self.stable_head = head  # system sections of the leading stable block (system_blocks wires)
        self.split_at = self._stable_split(bundle.sections) if wire.system_blocks else None

    def chat_turns(self, placed: Placed) -> bool:
        """A history section whose turns are messages of their own."""
        return placed.spec.kind == "history" and self.wire.history_messages

    def native_tools(self, placed: Placed) -> bool:
        """A tools section whose kept tools travel as declarations, not as text."""
        return placed.spec.kind == "tools" and self.native

    def _stable_split(self, sections: Sequence[Section]) -> str | None:
        """The section that ends the stable prefix inside a message, on block-based wires:
        it starts a block of its own so the cache breakpoint can sit right before it."""
        order = [s for s in sections if not (s.kind == "tools" and self.native)]
        order = [s for s in order if s.message == "system"] + [s for s in order if s.message != "system"]
        end = next((i for i, s in enumerate(order) if s.stability != "stable"), len(order))
        if 0 < end < len(order):
            first, prev = order[end], order[end - 1]
            if first.message != "system" and prev.message == first.message and first.kind != "history":
                return first.id
        return None

    def key(self, p: Placed) -> str:
        """Which container a section opens or joins (for cost estimates while filling)."""
        wire = self.wire
        if wire.single:
            return "text"
        if self.native_tools(p):
            return "tools"
        if wire.system_first and p.spec.message == "system":
            return "system" if not wire.system_blocks or p.spec.id in self.stable_head else "system+"
        if self.split_at is not None and p.spec.id == self.split_at:
            return p.spec.message + "+"
        return p.spec.message

    def containers(self, placed: list[Placed]) -> list[Container]:
        """The messages (or the one text) of the present sections, in the order they are sent."""
        from .placed import Container, turn_content

        wire = self.wire
        kept = [p for p in placed if p.present and not self.native_tools(p)]
        if wire.single:
            return [Container("text", kept)] if kept else []
        containers: list[Container] = []
        if wire.system_first:
            system = [p for p in kept if p.spec.message == "system"]
            split = len(system)
            if wire.system_blocks:
                split = next((i for i, p in enumerate(system) if p.spec.stability != "stable"), len(system))
            for block in (system[:split], system[split:]):
                if block:
                    containers.append(Container("system", block))
            kept = [p for p in kept if p.spec.message != "system"]
        for p in kept:
            if self.chat_turns(p):
                for i in sorted(p.kept):
                    role, _ = turn_content(p.cand.items[i], p.spec.id, i, p.spec.path)  # type: ignore[index]
                    containers.append(Container(role, [], turn=p.cand.items[i], turn_of=p))  # type: ignore[index]
                continue
            if containers and containers[-1].turn is None and containers[-1].role == p.spec.message and p.spec.id != self.split_at:
                containers[-1].placed.append(p)
            else:
                containers.append(Container(p.spec.message, [p]))
        return containers


def get_wire(name: str) -> Wire:
    """The wire called `name` (runtime/registry.py lists them); PM840 with a "did you mean" when there is none."""
    wire = find_wire(name)
    assert isinstance(wire, Wire), f"{name}: the registry's entry is not a Wire"
    return wire


def batch_wires() -> tuple[str, ...]:
    """Names of the wires with a batch file format (`Wire.batch_limits`), in registry order."""
    return tuple(name for name in WIRE_NAMES if get_wire(name).batch_limits is not None)
