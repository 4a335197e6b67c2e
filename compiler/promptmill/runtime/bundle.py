"""The compiled bundle: the only thing that crosses from compile time to run time.

A build folder holds `manifest.json` and one JSON bundle per role. Bundles are
data (no code): sections in order, static text already rendered and counted,
dynamic parts as checked Jinja source, the inputs schema, the budget with where
each value came from, and the hashes of every source file. Both sides use these
frozen dataclasses; `to_json` is deterministic (same bundle, same bytes) and
`from_dict` rejects anything malformed with a `BuildError` (PM801).

`schemas/bundle.schema.json` and `schemas/manifest.schema.json` describe the
same format for other tools.
"""

from __future__ import annotations

import json
import types
import typing
from dataclasses import asdict, dataclass, field, fields, replace
from functools import cached_property
from typing import Any

from ..core.errors import BuildError

FORMAT = "promptmill-bundle"
MANIFEST_FORMAT = "promptmill-build"
FORMAT_VERSION = 1
# Bundle format 2 = format 1 plus `parents` (a role whose parent is chosen at render
# time). A bundle is written as version 2 only when it has parents, so every other
# bundle stays byte for byte what version 1 wrote; both versions are read.
PARENTS_FORMAT_VERSION = 2

SECTION_KINDS = ("static", "template", "each", "rules", "history", "tools")
# what a list section's per-item text reads (`Section.item_reads`, proven by the compiler: itemmemo.item_reads)
ITEM_READS = (
    "item",  # the item alone (and pure globals): the item memo may hold its text
    "item-without-score",  # the item alone through fixed fields, never the one it is ordered by (`order_by`, one name)
    "more",  # anything else (other state, an impure filter): never memoised
)
TRIM_POLICIES = ("never", "drop", "items", "truncate")
MESSAGE_ROLES = ("system", "user", "assistant")
STABILITIES = ("stable", "semi", "dynamic")


@dataclass(frozen=True)
class Origin:
    """Where a value came from: a file position and the role that declared it."""

    file: str
    line: int
    col: int
    role: str = ""

    def __str__(self) -> str:
        where = f"{self.file}:{self.line}:{self.col}"
        return f"{self.role} ({where})" if self.role else where


@dataclass(frozen=True)
class Budget:
    """Effective budget of a role; `origins` says where each value came from."""

    max_tokens: int
    reserve: int
    margin: float | None = None
    context_window: int | None = None
    origins: dict[str, str] = field(default_factory=dict)
    ratio: float | None = None  # the role's model's tokens per counted token, where its provider publishes no tokenizer


@dataclass(frozen=True)
class RuleLine:
    """One line of a conditional constraints section (a set title or a rule)."""

    text: str
    group: int  # index of the constraint set; a title shows only if a rule of its group does
    is_title: bool = False
    when: dict | None = None
    rule_id: str = ""


@dataclass(frozen=True)
class Section:
    """One compiled section. `kind` decides which fields matter:

    - static: `text` (the body; the title line is placed separately) with `tokens`
      counted at compile time;
    - template: `template` rendered with the state;
    - each / tools / history: `template` rendered per item of the list at `path`
      (tools: the static `declared` tools come first, then the state's);
    - rules: `rules`, lines kept when their condition holds.
    """

    id: str
    kind: str
    priority: int
    trim: str
    message: str
    stability: str
    title: str | None = None
    title_tokens: int = 0  # tokens of title + "\n"
    text: str | None = None
    tokens: int = 0
    template: str | None = None
    plan: tuple | None = None  # fast substitution plan for simple templates
    path: tuple[str, ...] = ()
    item_name: str = "item"
    item_separator: str = "\n"
    order_by: tuple[str, ...] = ()
    order_desc: bool = True
    keep: str = "first"
    step: int = 1
    declared: tuple[dict, ...] = ()  # tools: static declarations {name, description, parameters}
    rules: tuple[RuleLine, ...] = ()
    truncate_keep: str = "head"
    truncate_marker: str = "[…truncated]"
    when: dict | None = None
    fragment: str | None = None
    context: dict | None = None  # observability: position, layer, rule of injected context
    origin: Origin | None = None
    # list sections: what the per-item text reads, proven at compile time (ITEM_READS);
    # None in bundles of older compilers, where the runtime parses the template to learn it
    item_reads: str | None = None

    @cached_property
    def report_fields(self) -> dict[str, Any]:
        """The fields every render's report of this section copies (`RenderedSection.made`)."""
        return {
            "id": self.id,
            "kind": self.kind,
            "message": self.message,
            "stability": self.stability,
            "priority": self.priority,
            "trim": self.trim,
            "fragment": self.fragment,
            "origin": str(self.origin) if self.origin is not None else None,
        }


@dataclass(frozen=True)
class Contract:
    """A compiled output contract."""

    id: str
    style: str
    schema: dict
    instructions: str
    return_tool: dict | None = None
    checks: tuple[dict, ...] = ()
    native: dict | None = None  # provider forms of the schema: openai_strict (None: not expressible), gemini
    origin: Origin | None = None


@dataclass(frozen=True)
class SourceRef:
    file: str
    sha256: str


@dataclass(frozen=True)
class ParentChoice:
    """One candidate parent of a role whose parent is chosen at render time: when
    `when` holds on the render state, the role renders as `bundle` (the role
    compiled with `parent` as its parent)."""

    parent: str
    when: dict
    bundle: RoleBundle


@dataclass(frozen=True)
class RoleBundle:
    """Everything the runtime needs to render one role. With `parents`, the runtime
    renders the first candidate whose condition holds, else this bundle (the role
    with its `extends` parent, `default_parent`)."""

    id: str
    tokenizer: str
    budget: Budget
    separator: str
    sections: tuple[Section, ...]
    inputs: dict
    description: str = ""
    category: str = ""
    model: str | None = None
    provider: str = "text"
    tool_mode: str = "inline"
    cache: bool = True
    output: Contract | None = None
    lazy_paths: tuple[tuple[str, ...], ...] = ()
    # what the compiler proved about the items of lazy paths (compiling/proofs.py; runtime/itemproof.py)
    item_proofs: tuple[dict, ...] = ()
    events: tuple[dict, ...] = ()
    sources: tuple[SourceRef, ...] = ()
    source_hash: str = ""
    format: str = FORMAT
    format_version: int = FORMAT_VERSION
    parents: tuple[ParentChoice, ...] = ()
    default_parent: str | None = None

    def to_json(self) -> str:
        return dumps(_plain_bundle(self))


def _plain_bundle(bundle: RoleBundle) -> dict:
    """A bundle's JSON data: `parents` and `default_parent` only in format 2 bundles."""
    data = _plain(bundle)
    for section in data["sections"]:
        if section["item_reads"] is None:  # sections that are not lists read as before the field existed
            del section["item_reads"]
    if data["budget"].get("ratio") is None:  # bundles of exactly counted models read as before the field existed
        data["budget"].pop("ratio", None)
    if not data["item_proofs"]:  # a role without proofs reads as before the field existed
        del data["item_proofs"]
    if not bundle.parents:
        del data["parents"], data["default_parent"]
    else:
        data["format_version"] = PARENTS_FORMAT_VERSION
        data["parents"] = [{"parent": c.parent, "when": c.when, "bundle": _plain_bundle(c.bundle)} for c in bundle.parents]
    return data


@dataclass(frozen=True)
class ManifestEntry:
    file: str  # path of the bundle, relative to the build folder
    sha256: str  # of the bundle file's bytes
    source_hash: str
    sources: tuple[str, ...] = ()  # source files the role depends on


@dataclass(frozen=True)
class Manifest:
    roles: dict[str, ManifestEntry]
    promptmill_version: str
    inputs: dict[str, str] = field(default_factory=dict)  # every source file -> sha256
    tokenizers: dict[str, str] = field(default_factory=dict)  # hf:<sha> -> relative path
    format: str = MANIFEST_FORMAT
    format_version: int = FORMAT_VERSION
    abstract: tuple[str, ...] = ()  # abstract role ids (not built; named when someone asks to render one)

    def to_json(self) -> str:
        return dumps(_plain(self))


def _compact(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, allow_nan=False, separators=(", ", ": "))


def dumps(data: Any) -> str:
    """Deterministic JSON text, one top-level field per line and one list element
    (a section, a role) per line: readable in diffs, written by the C encoder."""
    lines = ["{"]
    items = list(data.items())
    for n, (key, value) in enumerate(items):
        comma = "," if n < len(items) - 1 else ""
        if isinstance(value, list) and value:
            lines.append(f"  {json.dumps(key)}: [")
            lines.extend(f"    {_compact(v)}{',' if i < len(value) - 1 else ''}" for i, v in enumerate(value))
            lines.append(f"  ]{comma}")
        elif isinstance(value, dict) and value and key in ("roles", "inputs"):
            lines.append(f"  {json.dumps(key)}: {{")
            entries = list(value.items())
            lines.extend(f"    {json.dumps(k)}: {_compact(v)}{',' if i < len(entries) - 1 else ''}" for i, (k, v) in enumerate(entries))
            lines.append(f"  }}{comma}")
        else:
            lines.append(f"  {json.dumps(key)}: {_compact(value)}{comma}")
    lines.append("}")
    return "\n".join(lines) + "\n"


def _plain(obj: Any) -> Any:
    if hasattr(obj, "__dataclass_fields__"):
        return {f.name: _plain(getattr(obj, f.name)) for f in fields(obj)}
    if isinstance(obj, (list, tuple)):
        return [_plain(x) for x in obj]
    if isinstance(obj, dict):
        return {k: _plain(v) for k, v in obj.items()}
    return obj


_RECOMPILE = "recompile with this promptmill: promptmill compile"


def _any(value: Any) -> bool:
    return True


def _check_of(hint: Any) -> typing.Callable[[Any], bool]:
    """Whether a value has the (outer) type of annotation `hint` (element types are not checked): the check,
    worked out once per annotation. `_build` runs it on every field of every bundle a runtime loads, and
    working it out on each call (typing.get_origin) was most of the time `promptmill render --build` took."""
    origin = typing.get_origin(hint)
    if origin in (typing.Union, types.UnionType):
        checks = tuple(_check_of(arg) for arg in typing.get_args(hint))
        if _any in checks:
            return _any
        return lambda value: any(check(value) for check in checks)
    base = origin or hint
    if base is Any:
        return _any
    if base is type(None):
        return lambda value: value is None
    if base is bool:
        return lambda value: isinstance(value, bool)
    if base is int:
        return lambda value: isinstance(value, int) and not isinstance(value, bool)
    if base is float:
        return lambda value: isinstance(value, (int, float)) and not isinstance(value, bool)
    if isinstance(base, type):
        return lambda value: isinstance(value, base)
    return _any


# per dataclass: its field names, and the check of each field's annotation
_SHAPES: dict[type, tuple[frozenset[str], dict[str, typing.Callable[[Any], bool]]]] = {}


def _shape(cls: type) -> tuple[frozenset[str], dict[str, typing.Callable[[Any], bool]]]:
    shape = _SHAPES.get(cls)
    if shape is None:
        hints = typing.get_type_hints(cls)
        known = frozenset(f.name for f in fields(cls))
        shape = _SHAPES[cls] = (known, {name: _check_of(hints[name]) for name in known})
    return shape


def _build(cls: type, data: Any, where: str) -> Any:
    if not isinstance(data, dict):
        raise BuildError(f"{where}: expected an object")
    known, checks = _shape(cls)
    unknown = data.keys() - known
    if unknown:
        raise BuildError(f"{where}: unknown fields {sorted(unknown)} (written by another promptmill?)", hint=_RECOMPILE)
    for name, value in data.items():
        if not checks[name](value):
            raise BuildError(f"{where}.{name}: {type(value).__name__} is not a valid value ({value!r:.60})", hint=_RECOMPILE)
    try:
        return cls(**data)
    except TypeError as exc:
        raise BuildError(f"{where}: {exc}", hint=_RECOMPILE) from exc


def _list(data: dict, key: str, where: str, item: type | None = None) -> list:
    """`data[key]` (default []) when it is a list (of `item`s), else PM801."""
    value = data.get(key, [])
    if not isinstance(value, list) or (item is not None and not all(isinstance(v, item) for v in value)):
        raise BuildError(f"{where}.{key}: expected a list" + (f" of {item.__name__}" if item else ""), hint=_RECOMPILE)
    return value


def _tuple(value: Any) -> tuple:
    return tuple(_tuple(v) for v in value) if isinstance(value, list) else value


def role_from_dict(data: Any, where: str = "bundle") -> RoleBundle:
    """Rebuild a `RoleBundle` from parsed JSON, checking its shape."""
    if not isinstance(data, dict):
        raise BuildError(f"{where}: expected an object")
    version = data.get("format_version")
    if data.get("format") != FORMAT or version not in (FORMAT_VERSION, PARENTS_FORMAT_VERSION) or isinstance(version, bool):
        raise BuildError(
            f"{where}: bundle format {data.get('format')!r} version {data.get('format_version')!r} "
            f"is not {FORMAT!r} version {FORMAT_VERSION} or {PARENTS_FORMAT_VERSION}",
            hint="recompile with this promptmill: promptmill compile",
        )
    d = dict(data)
    if (version == PARENTS_FORMAT_VERSION) != bool(d.get("parents")) or ("default_parent" in d and version != PARENTS_FORMAT_VERSION):
        raise BuildError(f"{where}: format version {version} goes with `parents` only in version {PARENTS_FORMAT_VERSION}", hint=_RECOMPILE)
    d.pop("format_version")
    parents = d.pop("parents", [])
    bundle = _role_from_dict(d, where)
    if not parents:
        return bundle
    if not isinstance(parents, list):
        raise BuildError(f"{where}.parents: expected a list", hint=_RECOMPILE)
    choices = []
    for i, raw in enumerate(parents):
        at = f"{where}.parents[{i}]"
        if not isinstance(raw, dict) or set(raw) != {"parent", "when", "bundle"} or not isinstance(raw["parent"], str):
            raise BuildError(f"{at}: expected an object with parent, when and bundle", hint=_RECOMPILE)
        from . import conditions

        if not isinstance(raw["when"], dict) or conditions.problems(raw["when"], roots=False):
            raise BuildError(f"{at}.when: not a well-formed condition", hint=_RECOMPILE)
        inner = raw["bundle"]
        if not isinstance(inner, dict) or "parents" in inner or inner.get("format_version") != FORMAT_VERSION:
            raise BuildError(f"{at}.bundle: expected a version {FORMAT_VERSION} bundle without parents", hint=_RECOMPILE)
        candidate = role_from_dict(inner, f"{at}.bundle")
        if candidate.id != bundle.id:
            raise BuildError(f"{at}.bundle: holds role '{candidate.id}', not '{bundle.id}'", hint=_RECOMPILE)
        choices.append(ParentChoice(raw["parent"], raw["when"], candidate))
    return replace(bundle, parents=tuple(choices))


def _role_from_dict(d: dict, where: str) -> RoleBundle:
    try:
        d["budget"] = _build(Budget, d["budget"], f"{where}.budget")
        sections = []
        for i, raw in enumerate(_list(d, "sections", where, dict)):
            s = dict(raw)
            at = f"{where}.sections[{i}]"
            s["path"] = tuple(_list(s, "path", at, str))
            s["order_by"] = tuple(_list(s, "order_by", at, str))
            s["declared"] = tuple(_list(s, "declared", at, dict))
            s["plan"] = _tuple(s["plan"]) if s.get("plan") is not None else None
            s["rules"] = tuple(_build(RuleLine, r, f"{where}.sections[{i}].rules") for r in _list(s, "rules", at))
            if s.get("origin") is not None:
                s["origin"] = _build(Origin, s["origin"], f"{where}.sections[{i}].origin")
            section = _build(Section, s, f"{where}.sections[{i}]")
            _check_section(section, f"{where}.sections[{i}]")
            sections.append(section)
        d["sections"] = tuple(sections)
        if d.get("output") is not None:
            if not isinstance(d["output"], dict):
                raise BuildError(f"{where}.output: expected an object", hint=_RECOMPILE)
            out = dict(d["output"])
            out["checks"] = tuple(_list(out, "checks", f"{where}.output", dict))
            if out.get("origin") is not None:
                out["origin"] = _build(Origin, out["origin"], f"{where}.output.origin")
            d["output"] = _build(Contract, out, f"{where}.output")
        lazy = _list(d, "lazy_paths", where, list)
        if not all(isinstance(part, str) for p in lazy for part in p):
            raise BuildError(f"{where}.lazy_paths: expected lists of names", hint=_RECOMPILE)
        d["lazy_paths"] = tuple(tuple(p) for p in lazy)
        from .itemproof import proof_ok

        proofs = _list(d, "item_proofs", where, dict)
        for i, proof in enumerate(proofs):
            if not proof_ok(proof) or tuple(proof["path"]) not in d["lazy_paths"]:
                raise BuildError(f"{where}.item_proofs[{i}]: not a well-formed item proof of a lazy path", hint=_RECOMPILE)
        d["item_proofs"] = tuple(proofs)
        d["events"] = tuple(_list(d, "events", where, dict))
        d["sources"] = tuple(_build(SourceRef, s, f"{where}.sources") for s in _list(d, "sources", where))
    except (KeyError, TypeError, AttributeError, ValueError) as exc:
        raise BuildError(f"{where}: malformed bundle ({exc!r})", hint="recompile: promptmill compile") from exc
    return _build(RoleBundle, d, where)


def _check_section(s: Section, where: str) -> None:
    if s.kind not in SECTION_KINDS or s.trim not in TRIM_POLICIES:
        raise BuildError(f"{where}: unknown kind {s.kind!r} or trim {s.trim!r}")
    if s.message not in MESSAGE_ROLES or s.stability not in STABILITIES:
        raise BuildError(f"{where}: unknown message {s.message!r} or stability {s.stability!r}")
    if s.kind == "static" and s.text is None:
        raise BuildError(f"{where}: static section without text")
    if s.kind == "tools" and (not s.path and not s.declared):
        raise BuildError(f"{where}: tools section without a state path or declared tools")
    if s.kind in ("template", "each", "tools", "history") and s.template is None:
        raise BuildError(f"{where}: {s.kind} section without template")
    if s.item_reads is not None and (s.item_reads not in ITEM_READS or s.kind not in ("each", "tools", "history")):
        raise BuildError(f"{where}: item_reads {s.item_reads!r} is not one of {', '.join(ITEM_READS)} on a list section")
    from . import conditions
    from .plans import plan_ok

    for what, cond in [("when", s.when), *((f"rules[{i}].when", r.when) for i, r in enumerate(s.rules))]:
        if cond is not None and conditions.problems(cond, roots=False):
            raise BuildError(f"{where}.{what}: not a well-formed condition", hint=_RECOMPILE)
    if s.plan is not None and not plan_ok(s.plan):
        raise BuildError(f"{where}.plan: not a well-formed template plan", hint=_RECOMPILE)


def manifest_from_dict(data: Any, where: str = "manifest.json") -> Manifest:
    """Rebuild a `Manifest`, refusing other formats with a clear message."""
    if not isinstance(data, dict) or data.get("format") != MANIFEST_FORMAT:
        raise BuildError(f"{where}: not a promptmill build manifest")
    if data.get("format_version") != FORMAT_VERSION:
        raise BuildError(
            f"{where}: build format version {data.get('format_version')!r} was written by promptmill "
            f"{data.get('promptmill_version', '?')}; this promptmill reads version {FORMAT_VERSION}",
            hint="recompile with this promptmill: promptmill compile",
        )
    d = dict(data)
    try:
        d["roles"] = {
            k: _build(ManifestEntry, {**v, "sources": tuple(v.get("sources", ()))}, f"{where}.roles.{k}") for k, v in d["roles"].items()
        }
    except (KeyError, TypeError, AttributeError) as exc:
        raise BuildError(f"{where}: malformed manifest ({exc!r})") from exc
    abstract = d.get("abstract", [])
    if not isinstance(abstract, list) or not all(isinstance(a, str) for a in abstract):
        raise BuildError(f"{where}.abstract: expected a list of role ids", hint=_RECOMPILE)
    d["abstract"] = tuple(abstract)
    return _build(Manifest, d, where)


def plain(obj: Any) -> Any:
    """Plain JSON data of a bundle dataclass (for reports and tests)."""
    return _plain(obj) if not hasattr(obj, "__dataclass_fields__") else asdict(obj)
