"""Validate loaded documents against the template JSON Schemas.

Every jsonschema error becomes a `Diagnostic` at the offending node, worded for
YAML authors ("expected a mapping, got a list") and, for unknown keys and enum
values, with a "did you mean" hint. Also exposes the shipped schemas for
`promptmill schema KIND` and editors.
"""

from __future__ import annotations

import json
from functools import cache
from importlib import resources
from typing import Any

import jsonschema
from jsonschema.exceptions import ValidationError, best_match

from ..core.choices import SCHEMA_NAMES, TEMPLATE_KINDS
from ..core.diagnostics import Diagnostic
from ..core.jsontypes import JSON
from ..core.suggest import did_you_mean, suggest
from ..core.typenames import phrase, phrase_of
from .loader import DocPath, Document


@cache
def schema_text(name: str) -> str:
    """The shipped JSON Schema `name` (see SCHEMA_NAMES) as text."""
    if name not in SCHEMA_NAMES:
        raise KeyError(name)
    return resources.files("promptmill").joinpath("schemas", f"{name}.schema.json").read_text("utf-8")


@cache
def load_schema(name: str) -> JSON:
    schema: JSON = json.loads(schema_text(name))
    return schema


@cache
def _validator(name: str) -> jsonschema.Draft202012Validator:
    return jsonschema.Draft202012Validator(load_schema(name))


def _where(path: DocPath) -> str:
    parts: list[str] = []
    for p in path:
        parts.append(f"[{p}]" if isinstance(p, int) else (f".{p}" if parts else str(p)))
    return "".join(parts) or "the document"


def _diagnose(doc: Document, err: ValidationError) -> list[Diagnostic]:
    path = tuple(err.absolute_path)
    validator = err.validator
    schema: Any = err.schema  # jsonschema types these as possibly unset; on an error they are set
    value: Any = err.validator_value
    if validator in ("anyOf", "oneOf") and err.context:
        # report the alternative that came closest, at its own node; an alternative of the
        # value's own type first (a string id with a bad character is PM206, not "expected a mapping")
        wrong_type = {e.schema_path[0] for e in err.context if e.validator == "type" and not e.path}
        same_type = [e for e in err.context if e.schema_path[0] not in wrong_type]
        return _diagnose(doc, best_match(same_type or err.context))
    where = _where(path)
    if validator == "additionalProperties" and isinstance(err.instance, dict):
        allowed = list((schema.get("properties") or {}).keys())
        out = []
        for key in err.instance:
            if key in allowed:
                continue
            close = suggest(key, allowed)
            out.append(
                Diagnostic.at(
                    doc.key_pos(path + (key,)),
                    "PM202",
                    f"unknown key '{key}' in {where}",
                    hint=did_you_mean([close]) if close else f"allowed keys: {', '.join(allowed)}",
                )
            )
        return out
    if validator == "required":
        # The missing names are read off the instance, not off jsonschema's wording.
        # jsonschema reports each missing name as its own error; check_document
        # drops the repeats this gives.
        have = err.instance if isinstance(err.instance, dict) else {}
        return [
            Diagnostic.at(
                doc.pos(path),
                "PM203" if name == "kind" else "PM204",
                f"missing required key '{name}' in {where}",
            )
            for name in (err.validator_value if isinstance(err.validator_value, list) else [])
            if name not in have
        ]
    if validator == "type":
        expected = value
        names = [expected] if isinstance(expected, str) else list(expected)
        want = " or ".join(phrase_of(n) for n in names)
        return [Diagnostic.at(doc.pos(path), "PM205", f"{where}: expected {want}, got {phrase(err.instance)}")]
    if validator in ("enum", "const"):
        options = value if validator == "enum" else [value]
        if path and path[-1] == "kind" and len(path) == 1:
            close = suggest(str(err.instance), list(TEMPLATE_KINDS))
            return [
                Diagnostic.at(
                    doc.pos(path),
                    "PM203",
                    f"unknown kind {err.instance!r}; expected one of: {', '.join(TEMPLATE_KINDS)}",
                    hint=did_you_mean([close]) if close else None,
                )
            ]
        close = suggest(str(err.instance), [str(o) for o in options]) if isinstance(err.instance, str) else None
        shown = ", ".join(_shown(o) for o in options)
        return [
            Diagnostic.at(
                doc.pos(path),
                "PM201",
                f"{where}: {_shown(err.instance)} is not allowed; expected {'one of: ' if len(options) > 1 else ''}{shown}",
                hint=did_you_mean([close]) if close else None,
            )
        ]
    titled_id = isinstance(err.schema, dict) and str(err.schema.get("title", "")).endswith(" id")
    if validator == "pattern" and path and (path[-1] in ("id", "extends", "output", "fragment") or titled_id):
        return [_invalid_id(doc, path, where, err)]
    return [Diagnostic.at(doc.pos(path), "PM201", f"{where}: {err.message}")]


def _invalid_id(doc: Document, path: DocPath, where: str, err: Any) -> Diagnostic:
    """PM206 for an id that does not match its pattern, naming the first character at fault."""
    value = err.instance
    nested = "/" in str(err.validator_value)  # template ids; section and rule ids have one segment
    rule = "ASCII letters, digits, '_', '.' and '-', starting with a letter or digit" + ("; segments separated by '/'" if nested else "")
    bad = next((ch for ch in value if not (ch.isascii() and (ch.isalnum() or ch in "_.-/" and (nested or ch != "/")))), None)
    if bad is not None and not bad.isprintable():
        hint = f"remove the character {bad!r}"
    elif bad is not None:
        hint = f"'{bad}' is not allowed" + (" (only ASCII letters are)" if bad.isalpha() else "")
    else:
        hint = None
    return Diagnostic.at(doc.pos(path), "PM206", f"{where}: {_shown(value)} is not a valid id ({rule})", hint=hint)


def _shown(value: Any) -> str:
    """A value quoted for a message: JSON, with non-ASCII letters as they are written."""
    return json.dumps(value, ensure_ascii=False)


def check_document(doc: Document, kind: str | None = None) -> list[Diagnostic]:
    """Diagnostics for `doc` against the schema of its kind (or `kind` when given).

    Returns [] when the document is valid.
    """
    data = doc.data
    if not isinstance(data, dict):
        return [
            Diagnostic.at(
                doc.pos(()),
                "PM200",
                f"expected a mapping at the top level (with kind: role|constraints|output|fragment), got {phrase(data)}",
            )
        ]
    if kind is None:
        found = data.get("kind")
        if found is None:
            return [
                Diagnostic.at(
                    doc.pos(()),
                    "PM203",
                    "missing 'kind'; expected one of: " + ", ".join(TEMPLATE_KINDS),
                )
            ]
        if found not in TEMPLATE_KINDS:
            close = suggest(str(found), list(TEMPLATE_KINDS))
            return [
                Diagnostic.at(
                    doc.pos(("kind",)),
                    "PM203",
                    f"unknown kind {found!r}; expected one of: {', '.join(TEMPLATE_KINDS)}",
                    hint=did_you_mean([close]) if close else None,
                )
            ]
        kind = found
    out: list[Diagnostic] = []
    for err in _validator(kind).iter_errors(data):
        out.extend(_diagnose(doc, err))
    return list(dict.fromkeys(out))
