"""The preview API's request fields, checked before anything renders.

Every POST body is a JSON object whose fields each have one type; a field of
another type, or a field the endpoint does not take, is refused with 400 and
PM010 naming the field, what it must be and what it got. Nothing of a bad
request reaches the renderer (a list where a name belongs used to end in PM000).

    POST /api/render   role, state, budget, provider, model, wires
    POST /api/compare  role, state, budget, provider, model, against, other
    GET  /api/state    path (once)
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..core.errors import PromptmillError
from ..core.typenames import json_type

MAX_NAME_CHARS = 200  # a role, provider, wire or model name: far longer than any real one


class FieldError(PromptmillError):
    """A request field of the wrong type or value (400, PM010)."""

    code = "PM010"


# JSON Schema's type names (core/typenames.json_type) as an API client reads them
_KINDS = {"object": "an object", "array": "a list", "string": "text", "integer": "a number", "number": "a number", "boolean": "a boolean"}


def _kind(value: Any) -> str:
    """What a JSON value is, in words."""
    kind = json_type(value)
    return _KINDS.get(kind, kind)


def _fail(field: str, must: str, value: Any) -> FieldError:
    shown = repr(value) if isinstance(value, (str, int, float)) and len(repr(value)) <= 40 else _kind(value)
    return FieldError(f"bad request: field '{field}' must be {must}, not {shown}", hint=f"send '{field}' as {must}")


def name(field: str, value: Any, *, required: bool = False) -> str | None:
    """A name (role, provider, model): text without control characters, or null/"" when not required."""
    if value is None or value == "":
        if required:
            raise _fail(field, "a name (text)", value)
        return None
    if not isinstance(value, str):
        raise _fail(field, "a name (text)", value)
    if len(value) > MAX_NAME_CHARS or any(ord(c) < 32 or c == "\x7f" or "\ud800" <= c <= "\udfff" for c in value):
        raise FieldError(
            f"bad request: field '{field}' is not a name (control characters, or over {MAX_NAME_CHARS} characters)",
            hint=f"send '{field}' as a name",
        )
    return value


def text(field: str, value: Any) -> str:
    """Text (a state as YAML or JSON); null means empty."""
    if value is None:
        return ""
    if not isinstance(value, str):
        raise _fail(field, "text (the state as YAML or JSON)", value)
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise FieldError(
            f"bad request: field '{field}' holds a lone surrogate at character {exc.start} (not valid Unicode text)",
            hint="send the text as valid Unicode",
        ) from None
    return value


def budget(field: str, value: Any) -> int | None:
    """A whole number of tokens (a number or its digits as text), or null/"" for the role's."""
    if value is None or value == "":
        return None
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, str) and value.strip().lstrip("-").isdigit() and len(value) <= 20:
        value = int(value.strip())
    if isinstance(value, bool) or not isinstance(value, int):
        raise _fail(field, "a whole number of tokens, or null", value)
    return value  # its value (0, negative, past the context window) is the renderer's to judge: PM831 as data


def choice(field: str, value: Any, options: tuple[str, ...], default: str) -> str:
    if value is None or value == "":
        return default
    if not isinstance(value, str) or value not in options:
        raise _fail(field, " or ".join(repr(o) for o in options), value)
    return value


def names(field: str, value: Any, known: tuple[str, ...]) -> list[str] | None:
    """A list of distinct names out of `known` (the wires to render), or null for the default."""
    if value is None:
        return None
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise _fail(field, "a list of wire names", value)
    unknown = [v for v in value if v not in known]
    if unknown:
        shown = unknown[0] if len(unknown[0]) <= 40 else unknown[0][:40] + "…"
        raise FieldError(f"bad request: field '{field}' names no wire {shown!r}", hint="the wires: " + ", ".join(known))
    return list(dict.fromkeys(value))


Check = Callable[[dict[str, Any]], dict[str, Any]]


def _common(body: dict[str, Any]) -> dict[str, Any]:
    return {
        # null or "" is no role: the session's answer says why (nothing compiled yet: PM001; else PM802)
        "role": name("role", body.get("role")) or "",
        "state": text("state", body.get("state")),
        "budget": budget("budget", body.get("budget")),
        "provider": name("provider", body.get("provider")),
        "model": name("model", body.get("model")),
    }


def _allowed(body: dict[str, Any], fields: tuple[str, ...]) -> None:
    extra = [k for k in body if k not in fields]
    if extra:
        raise FieldError(f"bad request: no field '{extra[0]}' here", hint="the fields: " + ", ".join(fields))


RENDER_FIELDS = ("role", "state", "budget", "provider", "model", "wires")
COMPARE_FIELDS = ("role", "state", "budget", "provider", "model", "against", "other")


def render_request(body: Any, wires: tuple[str, ...]) -> dict[str, Any]:
    """The fields of a /api/render body, checked; FieldError for the first that is wrong."""
    if not isinstance(body, dict):
        raise FieldError(f"bad request: the body must be a JSON object, not {_kind(body)}")
    _allowed(body, RENDER_FIELDS)
    return {**_common(body), "wires": names("wires", body.get("wires"), wires)}


def compare_request(body: Any) -> dict[str, Any]:
    """The fields of a /api/compare body, checked."""
    if not isinstance(body, dict):
        raise FieldError(f"bad request: the body must be a JSON object, not {_kind(body)}")
    _allowed(body, COMPARE_FIELDS)
    return {
        **_common(body),
        "against": choice("against", body.get("against"), ("build", "state"), "build"),
        "other": text("other", body.get("other")),
    }


def state_query(query: dict[str, list[str]]) -> str:
    """The `path` of GET /api/state: given once."""
    extra = [k for k in query if k != "path"]
    if extra:
        raise FieldError(f"bad request: no parameter '{extra[0]}' here", hint="the parameters: path")
    paths = query.get("path", [])
    if len(paths) != 1:
        raise FieldError(
            f"bad request: parameter 'path' must be given once, not {len(paths)} times", hint="/api/state?path=FILE, a listed example state"
        )
    return paths[0]
