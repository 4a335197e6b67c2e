"""The line each provider's batch API accepts, and its per-file limits.

    OpenAI     {"custom_id", "method": "POST", "url": "/v1/chat/completions", "body": {model, ...payload}}
    Anthropic  {"custom_id", "params": {model, max_tokens, ...payload}}
    Gemini     {"key", "request": {...payload}}       (the model is named when the batch is created)
    text       {"custom_id", "prompt"}                (no provider API: one prompt a line)

A body is exactly the single-render payload (`req.to_<provider>()`) plus the
model. Lines are compact JSON with sorted keys kept as the payload builds them
(insertion order), UTF-8, one per line: the same row gives the same bytes.
"""

from __future__ import annotations

import json
from typing import NamedTuple

PROVIDERS = ("openai", "anthropic", "gemini", "text")
OPENAI_URL = "/v1/chat/completions"


class Limits(NamedTuple):
    requests: int  # requests in one file
    bytes: int  # bytes of one file


# the providers' documented limits for one batch input file
LIMITS = {
    "openai": Limits(50_000, 200 * 1024 * 1024),
    "anthropic": Limits(100_000, 256 * 1024 * 1024),
    "gemini": Limits(10**12, 2 * 1024 * 1024 * 1024),
    "text": Limits(10**12, 2 * 1024 * 1024 * 1024),
}


def line(provider: str, custom_id: str, payload: dict, model: str | None, max_tokens: int | None) -> dict:
    """The batch input line of one request."""
    if provider == "openai":
        return {"custom_id": custom_id, "method": "POST", "url": OPENAI_URL, "body": {"model": model, **payload}}
    if provider == "anthropic":
        params = {"model": model, **payload}
        if "max_tokens" not in params:
            params["max_tokens"] = max_tokens
        return {"custom_id": custom_id, "params": params}
    if provider == "gemini":
        return {"key": custom_id, "request": payload}
    return {"custom_id": custom_id, "prompt": payload["prompt"]}


def dumps(data: dict) -> bytes:
    """One JSONL line (with its newline), the same bytes for the same data."""
    return (json.dumps(data, ensure_ascii=False, separators=(",", ":")) + "\n").encode("utf-8")
