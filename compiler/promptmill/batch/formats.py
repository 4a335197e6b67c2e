"""The line each wire's batch API accepts, and its per-file limits (both defined by the wire).

    openai     {"custom_id", "method": "POST", "url": "/v1/chat/completions", "body": {model, ...payload}}
    openai-responses  {"custom_id", "method": "POST", "url": "/v1/responses", "body": {model, ...payload}}
    anthropic  {"custom_id", "params": {model, max_tokens, ...payload}}
    gemini     {"key", "request": {...payload}}       (the model is named when the batch is created)
    text       {"custom_id", "prompt"}                (no provider API: one prompt a line)

A body is exactly the single-render payload (`req.to_payload()`) plus the model. Lines are
compact JSON with keys kept as the payload builds them (insertion order), UTF-8, one per line:
the same row gives the same bytes.
"""

from __future__ import annotations

import json

from ..runtime.wire import BatchLimits, batch_wires, get_wire

PROVIDERS = batch_wires()  # the wires with a batch format: the names --provider takes for `batch`
# each wire's documented limits for one batch input file
LIMITS: dict[str, BatchLimits] = {name: get_wire(name).batch_limits for name in PROVIDERS}  # type: ignore[misc]


def line(wire: str, custom_id: str, payload: dict, model: str | None, max_tokens: int | None) -> dict:
    """The batch input line of one request."""
    return get_wire(wire).batch_line(custom_id, payload, model, max_tokens)


def payload_of(wire: str, line: dict) -> dict:
    """The payload inside a batch input line (`line` read back)."""
    return get_wire(wire).batch_payload(line)


_ENCODER = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"))  # made once: json.dumps with options makes one per call


def dumps(data: dict) -> bytes:
    """One JSONL line (with its newline), the same bytes for the same data."""
    return (_ENCODER.encode(data) + "\n").encode("utf-8")
