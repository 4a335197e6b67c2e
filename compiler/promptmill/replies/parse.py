"""Check a model reply against the role's output contract.

    data = req.parse_reply(reply_text)          # or parse_reply(req, text)
    data = req.parse_reply(tool_use.input)      # arguments of the structured-return tool

Steps, each with its own error code (all `ReplyError`, with `repair_message()`):

1. size: more than `MAX_REPLY_CHARS` characters -> PM862;
2. find the JSON: the whole reply; else the first fenced block (```json, or a
   bare ``` block that holds JSON); else the first balanced `{...}`/`[...]`
   span of the prose that parses to the contract's shape (an object, or an
   array), never a piece of a span that failed to parse. Nothing that parses
   -> PM860, saying where it broke (line and column in the reply) or that it
   was cut off;
3. JSON Schema: every failing path (`reply.subtasks[2].id: ...`) -> PM861;
4. contract checks that need the render state (unique, references, acyclic,
   preserve; see `promptmill.replies.checks`) -> PM863.

A dict or list is taken as already-parsed arguments (Anthropic's
`tool_use.input`); OpenAI's `tool_call.function.arguments` is JSON text and is
passed as text. When an OpenAI request used strict structured output, optional
fields came back as `null` (strict mode makes them nullable); those nulls are
removed before the schema check.
"""

from __future__ import annotations

import json
import re
import weakref
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ..core.errors import ReplyError, StateError
from ..runtime.bundle import Contract
from ..runtime.schema.validate import Validator
from ..runtime.schemaforms import JSON_SCHEMA_STRICT, native_form
from ..runtime.statelimits import MAX_STATE_DEPTH, check_state_data
from ..runtime.wire import get_wire
from .checks import run_checks

if TYPE_CHECKING:
    from ..runtime.request import PromptRequest

MAX_REPLY_CHARS = 1_000_000
MAX_REPLY_DEPTH = MAX_STATE_DEPTH  # a reply is held to the render state's limits (it often becomes state)
MAX_CANDIDATES = 20
MAX_MESSAGE = 200  # characters of one failure message (they quote the offending value)
_FENCE = re.compile(r"```[ \t]*([A-Za-z0-9_-]*)[^\n]*\n(.*?)(```|\Z)", re.S)
_VALIDATORS: dict[int, tuple[weakref.ref, Validator]] = {}


class _JSONProblem(Exception):
    def __init__(self, message: str, pos: int, cut: bool = False):
        super().__init__(message)
        self.message = message
        self.pos = pos
        self.cut = cut


def _where(text: str, pos: int) -> str:
    line = text.count("\n", 0, pos) + 1
    col = pos - (text.rfind("\n", 0, pos) + 1) + 1
    return f"line {line}, column {col}"


def _no_constants(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


def _pairs(pairs: list[tuple[str, Any]]) -> dict:
    out: dict = {}
    for k, v in pairs:
        if k in out:
            raise ValueError(f"key {json.dumps(k)} appears twice in one object")
        out[k] = v
    return out


def _loads(text: str, offset: int) -> Any:
    try:
        return json.loads(text, parse_constant=_no_constants, object_pairs_hook=_pairs)
    except RecursionError:
        raise ReplyError(
            "the reply's JSON is nested too deeply",
            [("reply", f"is nested more than {MAX_REPLY_DEPTH} levels deep")],
            code="PM862",
        ) from None
    except json.JSONDecodeError as exc:
        if exc.pos >= len(text.rstrip()) or exc.msg.startswith("Unterminated string"):
            end = len(text.rstrip())
            raise _JSONProblem("", offset + end, cut=True) from None
        raise _JSONProblem(exc.msg, offset + exc.pos) from None
    except ValueError as exc:
        message = str(exc)
        if "integer string conversion" in message:  # Python's limit on digits of one integer
            message = "a number has too many digits"
        raise _JSONProblem(message, offset + _locate(text, exc)) from None


_CONSTANT = re.compile(r"-?(?:NaN|Infinity)")


def _locate(text: str, exc: ValueError) -> int:
    """Where in `text` the problem a parse hook raised lies: the NaN/Infinity, the repeated key
    (the hooks get values, not positions). Scans strings once, outside them only."""
    message = str(exc)
    key = None
    if message.startswith("key ") and " appears twice" in message:
        key = json.loads(message[4 : message.index(" appears twice")])
    objects: list[set[str] | None] = []  # per open bracket: the keys seen ({) or None ([)
    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        if ch == '"':
            end = i + 1
            while end < n and text[end] != '"':
                end += 2 if text[end] == "\\" else 1
            j = end + 1
            while j < n and text[j] in " \t\r\n":
                j += 1
            if key is not None and j < n and text[j] == ":" and objects and objects[-1] is not None:
                try:
                    name = json.loads(text[i : end + 1])
                except ValueError:
                    name = None
                if name == key and name in objects[-1]:
                    return i
                objects[-1].add(name)
            i = end + 1
            continue
        if ch in "{[":
            objects.append(set() if ch == "{" else None)
        elif ch in "}]" and objects:
            objects.pop()
        elif key is None and ch in "-NI" and (match := _CONSTANT.match(text, i)):
            return match.start()
        i += 1
    return 0


def _span(text: str, start: int) -> int | None:
    """End (exclusive) of the balanced bracket span opening at `start`; None when cut off."""
    stack = []
    in_string = escape = False
    for i in range(start, len(text)):
        ch = text[i]
        if in_string:
            if escape:
                escape = False
            elif ch == "\\":
                escape = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch in "{[":
            stack.append(ch)
        elif ch in "}]":
            if not stack or (stack[-1] == "{") != (ch == "}"):
                return i + 1  # mismatched: let the parser say where
            stack.pop()
            if not stack:
                return i + 1
    return None


def find_json(text: str, expected: str = "a JSON object") -> Any:
    """The JSON data a reply holds (see the module docstring for the search order).

    `expected` names what the contract wants, for the message when there is none."""
    stripped = text.strip()
    first: _JSONProblem | None = None
    if stripped[:1] in ("{", "["):
        try:
            return _loads(stripped, text.index(stripped[0]))
        except _JSONProblem as exc:
            first = exc
    fences = list(_FENCE.finditer(text))
    fences.sort(key=lambda m: m.group(1).lower() != "json")
    for m in fences:
        body = m.group(2)
        if m.group(1).lower() == "json" or body.strip()[:1] in ("{", "["):
            if not body.strip():
                continue
            try:
                return _loads(body, m.start(2))
            except _JSONProblem as exc:
                first = first or exc
    # Spans in the prose: the first of the expected shape wins. What lies inside a span
    # that failed to parse is a piece of broken JSON (the `[]` of `{"a": [], "b": [1,]}`),
    # never the reply, so the search resumes after the span.
    shape = list if expected == "a JSON array" else dict
    other: list[Any] = []  # the first span that parsed to the other shape
    pos = 0
    for _ in range(MAX_CANDIDATES):
        starts = [i for i in (text.find("{", pos), text.find("[", pos)) if i >= 0]
        if not starts:
            break
        start = min(starts)
        end = _span(text, start)
        if end is None:
            first = first or _JSONProblem("", len(text.rstrip()), cut=True)
            break
        try:
            data = _loads(text[start:end], start)
        except _JSONProblem as exc:
            first = first or exc
        else:
            if isinstance(data, shape):
                return data
            other = other or [data]
        pos = end
    if other and first is None:
        return other[0]
    if first is None:
        raise ReplyError(f"the reply holds no JSON; expected {expected}, bare or in a ```json block", code="PM860")
    if first.cut:
        raise ReplyError(
            f"the reply's JSON is cut off at {_where(text, first.pos)}: a string or bracket is never closed (truncated reply?)",
            code="PM860",
        )
    raise ReplyError(f"the reply's JSON does not parse at {_where(text, first.pos)}: {first.message}", code="PM860")


def json_shape(schema: Any) -> str:
    """What a reply matching `schema` is, for prose: "a JSON array" or "a JSON object"."""
    return "a JSON array" if isinstance(schema, Mapping) and schema.get("type") == "array" else "a JSON object"


def _validator(contract: Contract) -> Validator:
    found = _VALIDATORS.get(id(contract))
    if found is not None and found[0]() is contract:
        return found[1]
    validator = Validator(contract.schema)
    if len(_VALIDATORS) > 256:
        _VALIDATORS.clear()
    _VALIDATORS[id(contract)] = (weakref.ref(contract), validator)
    return validator


def strip_added_nulls(data: Any, schema: Any) -> Any:
    """`data` without the nulls OpenAI strict mode sends for optional, non-nullable fields."""
    if not isinstance(schema, Mapping):
        return data
    if isinstance(data, Mapping) and isinstance(schema.get("properties"), Mapping):
        required = set(schema.get("required", ()))
        out = {}
        for k, v in data.items():
            sub = schema["properties"].get(k)
            if v is None and k not in required and isinstance(sub, Mapping) and not _allows_null(sub):
                continue
            out[k] = strip_added_nulls(v, sub)
        return out
    if isinstance(data, list) and isinstance(schema.get("items"), Mapping):
        return [strip_added_nulls(v, schema["items"]) for v in data]
    return data


def _allows_null(schema: Mapping) -> bool:
    kind = schema.get("type")
    return kind == "null" or (isinstance(kind, list) and "null" in kind) or None in (schema.get("enum") or ())


def _check_data(data: Any, contract: Contract, retry: str) -> None:
    """Refuse a reply that is not JSON data a render state could hold: PM860 for a value
    JSON cannot carry (an overflowing number such as 1e999, a lone surrogate, an object),
    PM862 for more than MAX_REPLY_DEPTH levels of nesting."""
    try:
        check_state_data(data)
    except StateError as exc:
        too_big = exc.code == "PM812"
        summary = "the reply is too large or nested too deeply" if too_big else "the reply is not JSON data"
        errors = [("reply" + path.removeprefix("state"), message) for path, message in exc.errors]
        raise ReplyError(summary, errors, code="PM862" if too_big else "PM860", contract=contract.id, instruction=retry) from None


def _shorten(message: str) -> str:
    """A failure message cut in the middle when it quotes a long value (the end says what failed)."""
    if len(message) <= MAX_MESSAGE:
        return message
    return message[: MAX_MESSAGE - 70] + " ... " + message[-65:]


def _retry(contract: Contract) -> str:
    tool = (contract.return_tool or {}).get("name", "return_result")
    if contract.style == "return_call":
        return f"Call the `{tool}` tool again with corrected arguments."
    if contract.style == "returns":
        return "Reply again with only a JSON object holding the fields of the <returns> block."
    return f"Reply again with only the corrected {json_shape(contract.schema).removeprefix('a ')}: no prose, no code fence."


def parse_reply(req: PromptRequest, reply: str | Mapping[str, Any] | list, *, state: Mapping[str, Any] | None = None) -> Any:
    """The reply's data, checked against `req.output`; `ReplyError` otherwise (see module doc).

    `state` overrides the render state the `preserve` checks compare against
    (default: the state `req` was rendered with)."""
    contract = req.output
    if contract is None:
        raise ReplyError(f"role '{req.role}' has no output contract, so there is nothing to check the reply against", code="PM864")
    retry = _retry(contract)
    if isinstance(reply, (Mapping, list)):
        _check_data(reply, contract, retry)
        try:
            size = len(json.dumps(reply, ensure_ascii=False, default=str))
        except ValueError as exc:  # an int of more than 4300 digits, which Python will not print
            raise ReplyError(f"the reply is not JSON data: {exc}", code="PM860", contract=contract.id, instruction=retry) from None
        data: Any = reply
    elif isinstance(reply, str):
        size = len(reply)
        data = None
    else:
        raise ReplyError(f"a reply is text or the tool-call arguments (dict), not {type(reply).__name__}", code="PM860", instruction=retry)
    if size > MAX_REPLY_CHARS:
        raise ReplyError(
            f"the reply has {size} characters, more than the limit of {MAX_REPLY_CHARS}",
            code="PM862",
            contract=contract.id,
            instruction=retry,
        )
    if isinstance(reply, str):
        try:
            data = find_json(reply, json_shape(contract.schema))
        except ReplyError as exc:
            raise ReplyError(exc.summary, exc.errors, code=exc.code, contract=contract.id, instruction=retry) from None
        _check_data(data, contract, retry)
    # the wire by its name: batch collect passes a stand-in with only role, output, provider and state
    strict = contract.style == "native" and get_wire(req.provider).schema_form == JSON_SCHEMA_STRICT
    if strict and native_form(contract, JSON_SCHEMA_STRICT) is not None:
        data = strip_added_nulls(data, contract.schema)
    errors = [(p, _shorten(m)) for p, m in _validator(contract).errors(data, root="reply")]
    if errors:
        raise ReplyError(
            f"the reply does not match output contract '{contract.id}'", errors, code="PM861", contract=contract.id, instruction=retry
        )
    if contract.checks:
        failures = run_checks(contract.checks, data, state if state is not None else req.state)
        if failures:
            raise ReplyError(
                f"the reply fails the checks of output contract '{contract.id}'",
                failures,
                code="PM863",
                contract=contract.id,
                instruction=retry,
            )
    return data
