"""`collect`: a provider's batch results file -> replies checked by the role's output contract.

Reads the results line by line (OpenAI chat completions or Responses, Anthropic,
Gemini or Bedrock shape, told apart per line; Bedrock's records are
`{"recordId", "modelInput", "modelOutput"}` or `{"recordId", "modelInput", "error"}`,
the output a Claude message), matches each to a request of the batch folder by
its custom id and runs the role's output contract (`parse_reply`) on the reply:

    replies.jsonl    {"custom_id", "data"}                      the validated reply data
    failures.jsonl   {"custom_id", "line", "code", "reason", "repair"}  why it cannot be used

`line` is the results line (absent for a request without a result); a line
that cannot be read at all (not a JSON object, nested too deeply, longer
than `lines.MAX_LINE_BYTES`, a custom id that is not a string, a response of
the wrong shape) is a failure like any other, never the end of the run, and
strings are written with lone surrogates escaped so no write fails on them.
`repair` is the message to send back to the model, where the contract gives
one. Requests that have no result are failures too ("no result"). Checks that
compare the reply with the render state (`preserve`) need that state, which a
results file does not hold: they are not run here.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any, cast

# promptmill internals this module uses (kept together for the package move)
from ..core.errors import ConfigError, PromptmillError, ReplyError
from ..replies.parse import parse_reply
from ..runtime.engine import Runtime
from ..runtime.request import PromptRequest
from . import formats
from .lines import MAX_LINE_BYTES, Unreadable, json_object, lines
from .shards import AtomicFile


class ResultError(PromptmillError):
    """A results line that cannot be read, matches no request, or carries no reply (PM873)."""

    code = "PM873"


class BatchFolderError(PromptmillError):
    """The --batch folder's summary.json or a request file of it cannot be read (PM879)."""

    code = "PM879"


def read_result(line: dict) -> tuple[str | None, Any]:
    """(custom id, the reply: text or tool-call arguments) of one results line; ResultError when it has none.

    Every step into the line is checked: a response, message, content block or
    part that is not an object, or text that is not a string, is a ResultError
    naming where, never a TypeError."""
    if "custom_id" in line and ("response" in line or "error" in line):  # OpenAI
        custom_id = _id(line["custom_id"])
        if line.get("error"):
            raise ResultError(f"the provider reports an error: {_short(line['error'])}")
        response = _dig(line, ("response",), dict, default={})
        if response.get("status_code") not in (None, 200):
            raise ResultError(f"the request failed with HTTP {_short(response.get('status_code'))}: {_short(response.get('body'))}")
        if isinstance(response.get("body"), dict) and "output" in response["body"]:  # a Responses API result
            return custom_id, _responses_reply(_dig(response, ("body", "output"), list, where="response"))
        message = _dig(response, ("body", "choices", 0, "message"), dict, where="response")
        content = _dig(message, ("content",), str, default="", where="response.body.choices[0].message")
        calls = _dig(message, ("tool_calls",), list, default=[], where="response.body.choices[0].message")
        if not content and calls:
            arguments = _dig(calls, (0, "function", "arguments"), (str, dict), where="response.body.choices[0].message.tool_calls")
            return custom_id, arguments
        return custom_id, content
    if "custom_id" in line and "result" in line:  # Anthropic
        custom_id = _id(line["custom_id"])
        result = _dig(line, ("result",), dict, default={})
        if result.get("type") != "succeeded":
            error = result.get("error")
            raise ResultError(f"the request {_short(result.get('type'))}" + (f": {_short(error)}" if error else ""))
        return custom_id, _message_reply(_dig(result, ("message",), dict, where="result"), "result.message")
    if "key" in line:  # Gemini
        custom_id = _id(line["key"])
        if line.get("error") or "response" not in line:
            raise ResultError(f"the provider reports an error: {_short(line.get('error'))}")
        parts = _dig(line, ("response", "candidates", 0, "content", "parts"), list)
        text, calls = "", []
        for i, part in enumerate(parts):
            where = f"response.candidates[0].content.parts[{i}]"
            part = _dig(parts, (i,), dict, where="response.candidates[0].content.parts")
            text += _dig(part, ("text",), str, default="", where=where)
            if "functionCall" in part:
                calls.append(_dig(part, ("functionCall", "args"), dict, default={}, where=where))
        return custom_id, calls[0] if calls and not text.strip() else text
    if "recordId" in line:  # Bedrock batch inference (modelOutput: the model's own reply body)
        custom_id = _id(line["recordId"])
        if line.get("error") or "modelOutput" not in line:
            raise ResultError(f"the provider reports an error: {_short(line.get('error'))}")
        return custom_id, _message_reply(_dig(line, ("modelOutput",), dict), "modelOutput")
    raise ResultError("not a results line of OpenAI, Anthropic, Gemini or Bedrock (no custom_id, key or recordId)")


def _message_reply(message: dict, where: str) -> Any:
    """The reply of an Anthropic message (`content` blocks): its text, or the input of its tool call when it has no text."""
    blocks = _dig(message, ("content",), list, default=[], where=where)
    text, tools = "", []
    for i, block in enumerate(blocks):
        block = _dig(blocks, (i,), dict, where=f"{where}.content")
        if block.get("type") == "text":
            text += _dig(block, ("text",), str, default="", where=f"{where}.content[{i}]")
        elif block.get("type") == "tool_use":
            tools.append(_dig(block, ("input",), dict, where=f"{where}.content[{i}]"))
    return tools[0] if tools and not text.strip() else text


def _responses_reply(output: list) -> Any:
    """The reply of a Responses API `output`: the text of its `message` items' `output_text` parts, or
    the `arguments` of its first `function_call` when there is no text."""
    text, calls, refusals = "", [], []
    for i, item in enumerate(output):
        where = f"response.body.output[{i}]"
        item = _dig(output, (i,), dict, where="response.body.output")
        if item.get("type") == "message":
            content = _dig(item, ("content",), list, default=[], where=where)
            for j in range(len(content)):
                part = _dig(content, (j,), dict, where=f"{where}.content")
                if part.get("type") == "output_text":
                    text += _dig(part, ("text",), str, default="", where=f"{where}.content[{j}]")
                elif part.get("type") == "refusal":
                    refusals.append(_dig(part, ("refusal",), str, default="", where=f"{where}.content[{j}]"))
        elif item.get("type") == "function_call":
            calls.append(_dig(item, ("arguments",), (str, dict), where=where))
    if not text.strip() and not calls and refusals:
        raise ResultError(f"the model refused: {_short(' '.join(refusals))}")
    return calls[0] if calls and not text.strip() else text


_MISSING = object()
_KINDS = {dict: "an object", list: "a list", str: "a string", bool: "a boolean", int: "a number", float: "a number", type(None): "null"}


def _kind(value: Any) -> str:
    return _KINDS.get(type(value), type(value).__name__)


def _dig(value: Any, path: tuple, want: type | tuple[type, ...], *, default: Any = _MISSING, where: str = "") -> Any:
    """`value[path[0]][path[1]]...`, which must be a `want`; ResultError naming the step that is missing or of the wrong kind.
    A missing or null last step gives `default` when there is one."""
    shown = where
    for step in path:
        if isinstance(step, int):
            if not isinstance(value, list):
                raise ResultError(f"{shown or 'the line'} is {_kind(value)}, not a list")
            if step >= len(value):
                raise ResultError(f"{shown or 'the line'} has no item {step}")
            value, shown = value[step], f"{shown}[{step}]"
        else:
            if not isinstance(value, dict):
                raise ResultError(f"{shown or 'the line'} is {_kind(value)}, not an object")
            if value.get(step) is None and default is not _MISSING and step == path[-1]:
                return default
            if step not in value:
                raise ResultError(f"{shown or 'the line'} has no {step!r}")
            value, shown = value[step], f"{shown}.{step}" if shown else step
    if not isinstance(value, want):
        kinds = " or ".join(_KINDS[t] for t in (want if isinstance(want, tuple) else (want,)))
        raise ResultError(f"{shown} is {_kind(value)}, not {kinds}")
    return value


def _id(value: Any, number: int | None = None) -> str:
    if not isinstance(value, str):
        raise ResultError(("" if number is None else f"line {number}: ") + f"the custom id is {_kind(value)}, not a string")
    return value


def _short(value: Any, limit: int = 200) -> str:
    try:
        text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    except (RecursionError, ValueError):
        text = f"({_kind(value)} nested too deeply to show)"
    text = text if len(text) <= limit else text[: limit - 3] + "..."
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


def _dumps(data: dict) -> bytes:
    """One JSONL line that cannot fail to encode: a lone surrogate in a string is written as its JSON escape."""
    return (json.dumps(data, ensure_ascii=False, separators=(",", ":")) + "\n").encode("utf-8", "backslashreplace")


def _summary(path: Path) -> dict:
    if not path.is_file():
        return {}
    try:
        with path.open("rb") as f:
            raw = f.read(MAX_LINE_BYTES + 1)
    except OSError as exc:
        raise BatchFolderError(f"cannot read {path}: {exc.strerror}") from None
    if len(raw) > MAX_LINE_BYTES:
        raise BatchFolderError(f"{path} is larger than {MAX_LINE_BYTES:,} bytes; it is not a summary promptmill wrote")
    summary, why = json_object(raw, str(path))
    if summary is None:
        raise BatchFolderError(str(why), hint="pass the folder `promptmill batch` wrote, unchanged")
    for key in ("role", "provider", "build"):
        if summary.get(key) is not None and not isinstance(summary[key], str):
            raise BatchFolderError(
                f"{path}: '{key}' is {_kind(summary[key])}, not a string", hint="pass the folder `promptmill batch` wrote, unchanged"
            )
    return summary


def _request_ids(folder: Path) -> dict[str, None]:
    ids: dict[str, None] = {}
    for path in sorted(folder.glob("requests-[0-9][0-9][0-9][0-9][0-9].jsonl")):
        try:
            with path.open("rb") as f:
                for number, raw in lines(f):
                    where = f"{path}:{number}"
                    if isinstance(raw, Unreadable):
                        raise BatchFolderError(f"{where}: {raw.message}")
                    line, why = json_object(raw, where)
                    if line is None:
                        raise BatchFolderError(str(why), hint="pass the folder `promptmill batch` wrote, unchanged")
                    custom_id = line.get("custom_id", line.get("key", line.get("recordId")))
                    if not isinstance(custom_id, str):
                        raise BatchFolderError(
                            f"{where}: the custom id is {_kind(custom_id)}, not a string",
                            hint="pass the folder `promptmill batch` wrote, unchanged",
                        )
                    ids[custom_id] = None
        except OSError as exc:
            raise BatchFolderError(f"cannot read {path}: {exc.strerror}") from None
    return ids


def collect(
    results: str | os.PathLike[str],
    batch: str | os.PathLike[str],
    *,
    out: str | os.PathLike[str] | None = None,
    build: Any = None,
    role: str | None = None,
    provider: str | None = None,
) -> dict:
    """Check every reply of `results` against the output contract of the batch in folder `batch`.

    The role, provider and build come from the batch's summary.json unless given.
    Returns counts; writes replies.jsonl and failures.jsonl to `out` (default: `batch`).
    """
    folder = Path(batch)
    summary_path = folder / "summary.json"
    summary = _summary(summary_path)
    role = role or summary.get("role")
    provider = provider or summary.get("provider")
    build = build or summary.get("build")
    if not role or not build or provider not in formats.PROVIDERS:
        missing = "names no role, provider or build" if summary_path.is_file() else "is missing"
        raise ConfigError(
            f"{summary_path} {missing}; cannot tell the role, provider and build of this batch",
            code="PM011",
            hint="pass --batch the folder `promptmill batch` wrote, with its summary.json"
            " (from Python: collect(..., role=, provider=, build=))",
        )
    bundle = Runtime.load(build).bundle(role)
    # parse_reply reads only these four fields of a request
    req = cast(PromptRequest, SimpleNamespace(role=role, output=bundle.output, provider=provider, state=None))
    requests = _request_ids(folder)
    answered: set[str] = set()
    target = Path(out) if out is not None else folder
    try:
        target.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ConfigError(f"cannot create the output folder {target}: {exc.strerror}", code="PM014") from None
    try:
        source = Path(results).open("rb")
    except OSError as exc:
        raise ConfigError(f"cannot read results file {results}: {exc.strerror}", code="PM011") from None
    replies, failures = AtomicFile(target / "replies.jsonl"), AtomicFile(target / "failures.jsonl")
    counts = {"results": 0, "replies": 0, "failures": 0, "missing": 0}
    done = False
    try:
        with source:
            for number, raw in _read(source, results):
                counts["results"] += 1
                custom_id: str | None = None
                try:
                    line = _line(raw, number)
                    custom_id = _id(line.get("custom_id", line.get("key", line.get("recordId"))), number)
                    if custom_id not in requests:
                        raise ResultError(f"line {number}: custom id {_short(repr(custom_id), 80)} matches no request of {folder}")
                    if custom_id in answered:
                        raise ResultError(f"line {number}: a second result for custom id {custom_id!r}")
                    answered.add(custom_id)
                    _, reply = read_result(line)
                    data = parse_reply(req, reply)
                except RecursionError:
                    failures.write(
                        _dumps(
                            {
                                "custom_id": custom_id,
                                "line": number,
                                "code": "PM873",
                                "reason": f"line {number}: the reply is nested too deeply to check",
                            }
                        )
                    )
                    counts["failures"] += 1
                    continue
                except PromptmillError as exc:
                    record: dict[str, Any] = {"custom_id": custom_id, "line": number, "code": exc.code, "reason": exc.message}
                    if isinstance(exc, ReplyError):
                        record["repair"] = exc.repair_message()
                    failures.write(_dumps(record))
                    counts["failures"] += 1
                    continue
                replies.write(_dumps({"custom_id": custom_id, "data": data}))
                counts["replies"] += 1
        for custom_id in requests:
            if custom_id not in answered:
                failures.write(_dumps({"custom_id": custom_id, "code": "PM873", "reason": "no result for this request"}))
                counts["missing"] += 1
                counts["failures"] += 1
        done = True
    finally:
        if not done:
            replies.discard()
            failures.discard()
    replies.publish()
    failures.publish()
    return counts


def _read(source: Any, results: Any) -> Iterator[tuple[int, bytes | Unreadable]]:
    """The lines of the results file; a read error (not a write error of the loop) is PM011."""
    try:
        yield from lines(source)
    except OSError as exc:
        raise ConfigError(f"cannot read results file {results}: {exc.strerror}", code="PM011") from None


def _line(raw: bytes | Unreadable, number: int) -> dict:
    if isinstance(raw, Unreadable):
        raise ResultError(f"line {number}: {raw.message}")
    line, why = json_object(raw, f"line {number}")
    if line is None:
        raise ResultError(str(why))
    return line
