"""`collect`: a provider's batch results file -> replies checked by the role's output contract.

Reads the results line by line (OpenAI, Anthropic or Gemini shape, told apart
per line), matches each to a request of the batch folder by its custom id and
runs the role's output contract (`parse_reply`) on the reply:

    replies.jsonl    {"custom_id", "data"}                      the validated reply data
    failures.jsonl   {"custom_id", "code", "reason", "repair"}  why it cannot be used

`repair` is the message to send back to the model, where the contract gives
one. Requests that have no result are failures too ("no result"). Checks that
compare the reply with the render state (`preserve`) need that state, which a
results file does not hold: they are not run here.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from types import SimpleNamespace
from typing import Any, cast

# promptmill internals this module uses (kept together for the package move)
from ..core.errors import ConfigError, PromptmillError, ReplyError
from ..runtime.engine import Runtime
from ..runtime.reply import parse_reply
from ..runtime.request import PromptRequest
from . import formats
from .shards import AtomicFile


class ResultError(PromptmillError):
    """A results line that cannot be read, matches no request, or carries no reply (PM873)."""

    code = "PM873"


def read_result(line: dict) -> tuple[str | None, Any]:
    """(custom id, the reply: text or tool-call arguments) of one results line; ResultError when it has none."""
    if "custom_id" in line and "response" in line or "error" in line and "custom_id" in line:  # OpenAI
        custom_id = line.get("custom_id")
        if line.get("error"):
            raise ResultError(f"the provider reports an error: {_short(line['error'])}")
        response = line.get("response") or {}
        if response.get("status_code") not in (None, 200):
            raise ResultError(f"the request failed with HTTP {response.get('status_code')}: {_short(response.get('body'))}")
        try:
            message = response["body"]["choices"][0]["message"]
        except (KeyError, IndexError, TypeError):
            raise ResultError("the response has no choices[0].message") from None
        calls = message.get("tool_calls") or []
        if not message.get("content") and calls:
            return custom_id, calls[0]["function"]["arguments"]
        return custom_id, message.get("content") or ""
    if "custom_id" in line and "result" in line:  # Anthropic
        result = line["result"] or {}
        if result.get("type") != "succeeded":
            error = result.get("error")
            raise ResultError(f"the request {result.get('type')}" + (f": {_short(error)}" if error else ""))
        blocks = (result.get("message") or {}).get("content") or []
        text = "".join(b.get("text", "") for b in blocks if b.get("type") == "text")
        tools = [b["input"] for b in blocks if b.get("type") == "tool_use"]
        return line["custom_id"], tools[0] if tools and not text.strip() else text
    if "key" in line:  # Gemini
        if line.get("error") or "response" not in line:
            raise ResultError(f"the provider reports an error: {_short(line.get('error'))}")
        try:
            parts = line["response"]["candidates"][0]["content"]["parts"]
        except (KeyError, IndexError, TypeError):
            raise ResultError("the response has no candidates[0].content.parts") from None
        text = "".join(p.get("text", "") for p in parts)
        calls = [p["functionCall"].get("args", {}) for p in parts if "functionCall" in p]
        return line["key"], calls[0] if calls and not text.strip() else text
    raise ResultError("not a results line of OpenAI, Anthropic or Gemini (no custom_id or key)")


def _short(value: Any, limit: int = 200) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _request_ids(folder: Path) -> dict[str, None]:
    ids: dict[str, None] = {}
    for path in sorted(folder.glob("requests-[0-9][0-9][0-9][0-9][0-9].jsonl")):
        with path.open("rb") as f:
            for raw in f:
                line = json.loads(raw)
                ids[line.get("custom_id", line.get("key"))] = None
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
    summary = json.loads(summary_path.read_text(encoding="utf-8")) if summary_path.is_file() else {}
    role = role or summary.get("role")
    provider = provider or summary.get("provider")
    build = build or summary.get("build")
    if not role or not build or provider not in formats.PROVIDERS:
        raise ConfigError(f"{summary_path} is missing; cannot tell the role, provider and build of this batch", code="PM011",
                          hint="pass the folder `promptmill batch` wrote, or --role, --provider and --build")
    bundle = Runtime.load(build).bundle(role)
    # parse_reply reads only these four fields of a request
    req = cast(PromptRequest, SimpleNamespace(role=role, output=bundle.output, provider=provider, state=None))
    requests = _request_ids(folder)
    answered: set[str] = set()
    target = Path(out) if out is not None else folder
    target.mkdir(parents=True, exist_ok=True)
    replies, failures = AtomicFile(target / "replies.jsonl"), AtomicFile(target / "failures.jsonl")
    counts = {"results": 0, "replies": 0, "failures": 0, "missing": 0}
    done = False
    try:
        try:
            source = Path(results).open("rb")
        except OSError as exc:
            raise ConfigError(f"cannot read results file {results}: {exc.strerror}", code="PM011") from None
        with source:
            for number, raw in enumerate(source, 1):
                if not raw.strip():
                    continue
                counts["results"] += 1
                custom_id = None
                try:
                    try:
                        line = json.loads(raw)
                    except ValueError as exc:
                        raise ResultError(f"line {number} is not JSON: {exc}") from None
                    if not isinstance(line, dict):
                        raise ResultError(f"line {number} is not a JSON object")
                    custom_id = line.get("custom_id", line.get("key"))
                    if custom_id not in requests:
                        raise ResultError(f"line {number}: custom id {custom_id!r} matches no request of {folder}")
                    if custom_id in answered:
                        raise ResultError(f"line {number}: a second result for custom id {custom_id!r}")
                    answered.add(custom_id)
                    custom_id, reply = read_result(line)
                    data = parse_reply(req, reply)
                except PromptmillError as exc:
                    record = {"custom_id": custom_id, "code": exc.code, "reason": exc.message}
                    if isinstance(exc, ReplyError):
                        record["repair"] = exc.repair_message()
                    failures.write(formats.dumps(record))
                    counts["failures"] += 1
                    continue
                replies.write(formats.dumps({"custom_id": custom_id, "data": data}))
                counts["replies"] += 1
        for custom_id in requests:
            if custom_id not in answered:
                failures.write(formats.dumps({"custom_id": custom_id, "code": "PM873", "reason": "no result for this request"}))
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
