"""The typed template model, built from schema-valid documents.

`build_template(doc, layer, source)` turns one validated YAML document into a
`Role`, `ConstraintSet`, `OutputContract` or `Fragment`, and reports what a JSON
Schema cannot say: a section with no source or two, an invalid embedded JSON
Schema, a malformed condition. Every object keeps its document so later checks
can point at `file:line:col`.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from ..core.diagnostics import Diagnostic, Position
from ..core.suggest import did_you_mean, nearest
from ..runtime import conditions
from ..source.loader import Document
from ..source.project import Layer
from .slowregex import slow_regex

SOURCES = ("text", "template", "each", "constraints", "output", "fragment", "history", "tools")
ITEM_SOURCES = ("each", "history", "tools")
MAX_SECTIONS = 1_000  # per role file, and per role after composition (PM612)
DEFAULT_ITEM_NAMES = {"each": "item", "history": "turn", "tools": "tool"}


@dataclass(frozen=True)
class Located:
    """Mixin: a template object that knows where it was written."""

    doc: Document
    path: tuple

    def pos(self, *sub: Any) -> Position:
        return self.doc.pos(self.path + sub)

    def key_pos(self, *sub: Any) -> Position:
        return self.doc.key_pos(self.path + sub)


@dataclass(frozen=True)
class SectionDef(Located):
    id: str
    source: str | None  # which content key; None for pure overrides (remove)
    data: dict
    patches: tuple[SectionDef, ...] = ()  # child definitions merged into this one, in order

    def get(self, key: str, default: Any = None) -> Any:
        return self.data.get(key, default)

    def owner(self, key: str) -> SectionDef:
        """The definition that set `key` last (a child's patch or this one), for positions."""
        for patch in reversed(self.patches):
            if key in patch.data:
                return patch
        return self


@dataclass(frozen=True)
class Template(Located):
    kind: str
    id: str
    layer: Layer
    source_file: str  # stable source id for bundles
    data: dict

    def get(self, key: str, default: Any = None) -> Any:
        return self.data.get(key, default)


@dataclass(frozen=True)
class Role(Template):
    sections: tuple[SectionDef, ...] = ()

    @property
    def abstract(self) -> bool:
        return bool(self.data.get("abstract", False))

    @property
    def extends(self) -> str | None:
        return self.data.get("extends")


@dataclass(frozen=True)
class Rule:
    id: str
    text: str
    when: dict | None
    pos: Position


@dataclass(frozen=True)
class ConstraintSet(Template):
    rules: tuple[Rule, ...] = ()

    @property
    def title(self) -> str | None:
        return self.data.get("title")


@dataclass(frozen=True)
class OutputContract(Template):
    fields: tuple[dict, ...] = field(default_factory=tuple)  # normalised outputs: name, description, type, required


@dataclass(frozen=True)
class Fragment(Template):
    @property
    def text(self) -> str:
        return self.data["text"]


def condition_diagnostics(doc: Document, path: tuple, cond: Any, *, roots: bool = True) -> list[Diagnostic]:
    """Shape problems of a condition at `path`, as diagnostics (`roots`: see conditions.problems)."""
    out = []
    for where, code, message in conditions.problems(cond, roots=roots):
        sub = tuple(int(p) if p.isdigit() else p for p in where)
        out.append(Diagnostic.at(doc.pos(path + sub), code, message))
    for where, leaf in conditions.leaves(cond):
        pattern = leaf.get("value")
        why = slow_regex(pattern) if leaf["op"] == "regex" and isinstance(pattern, str) else None
        if why:
            out.append(
                Diagnostic.at(
                    doc.pos(path + where + ("value",)),
                    "PM613",
                    f"regex '{pattern}' {why}: on a crafted state value it backtracks until the render's regex deadline (PM821)",
                    hint="make the pattern unambiguous or possessive, e.g. (a+)+ -> a+, (a|aa)+ -> a+, \\d*\\d* -> \\d*",
                )
            )
    return out


@lru_cache(maxsize=4096)
def _schema_problems(canonical: str) -> tuple[tuple[str, str], ...]:
    from ..runtime.schema.validate import check_schema

    return tuple(check_schema(json.loads(canonical)))


def too_many_sections(pos: Position, role: str, count: int, how: str) -> Diagnostic:
    """PM612: a role with more sections than MAX_SECTIONS (`how`: "lists" or "composes")."""
    return Diagnostic.at(
        pos,
        "PM612",
        f"role '{role}' {how} {count:,} sections; the limit is {MAX_SECTIONS:,}",
        hint="merge small sections, or move repeated content into an `each:` section over a list in the state",
    )


def valid_schema(schema: Any) -> bool:
    """True when `schema` is JSON and a valid JSON Schema (later checks may rely on its shape)."""
    try:
        return not _schema_problems(json.dumps(schema, sort_keys=True, allow_nan=False))
    except (TypeError, ValueError):
        return False


def _schema_diagnostics(doc: Document, path: tuple, schema: Any, what: str) -> list[Diagnostic]:
    """Metaschema problems of an embedded JSON Schema (cached by content: roles often share one)."""
    try:
        canonical = json.dumps(schema, sort_keys=True, allow_nan=False)
    except ValueError:
        return [Diagnostic.at(doc.pos(path), "PM701", f"{what} holds a value that is not JSON")]
    out = []
    for where, message in _schema_problems(canonical):
        out.append(
            Diagnostic.at(
                doc.pos(path + _pointer_path(schema, where)),
                "PM701",
                f"{what} is not a valid JSON Schema: {where}: {message}",
                hint=_choice_hint(message),
            )
        )
    return out


def _pointer_path(schema: Any, pointer: str) -> tuple:
    """The document path, below the schema, of a JSON pointer into it (`/properties/a/type`), as far
    as it leads: the diagnostic points at the value that is wrong, not at the schema's first line."""
    out: list[str | int] = []
    node = schema
    for raw in pointer.split("/")[1:] if pointer.startswith("/") else ():
        part = raw.replace("~1", "/").replace("~0", "~")
        if isinstance(node, list) and part.isdigit() and int(part) < len(node):
            out.append(int(part))
            node = node[int(part)]
        elif isinstance(node, dict) and part in node:
            out.append(part)
            node = node[part]
        else:
            break
    return tuple(out)


_NOT_ONE_OF = re.compile(r"'([^']*)' is not one of \[(.*)\]")


def _choice_hint(message: str) -> str | None:
    """'did you mean 'string'?' for jsonschema's "'strng' is not one of ['array', ...]"."""
    found = _NOT_ONE_OF.fullmatch(message)
    if found is None:
        return None
    close = nearest(found[1], re.findall(r"'([^']*)'", found[2]))
    return did_you_mean(close) if close else None


def _section(doc: Document, path: tuple, data: dict, in_child: bool) -> tuple[SectionDef, list[Diagnostic]]:
    diags: list[Diagnostic] = []
    present = [k for k in SOURCES if k in data]
    # `template` is the per-item template of each/history/tools, not a source of its own there
    if "template" in present and any(k in data for k in ITEM_SOURCES):
        present.remove("template")
    if "declare" in data and not present:
        present.append("tools")  # a tools section of static declarations only
    sid = data["id"]
    source = present[0] if present else None
    if len(present) > 1:
        diags.append(
            Diagnostic.at(
                doc.pos(path),
                "PM201",
                f"section '{sid}' has several sources ({', '.join(present)}); give exactly one",
            )
        )
    elif not present and not data.get("remove") and not in_child:
        diags.append(
            Diagnostic.at(
                doc.pos(path),
                "PM204",
                f"section '{sid}' has no content; give one of: {', '.join(SOURCES)}",
            )
        )
    if data.get("remove") and len(data) > 2:
        diags.append(Diagnostic.at(doc.pos(path), "PM201", f"section '{sid}': 'remove' takes no other keys"))
    if source == "each" and "template" not in data:
        diags.append(Diagnostic.at(doc.pos(path), "PM204", f"section '{sid}': 'each' needs a per-item 'template'"))
    if "before" in data and "after" in data:
        diags.append(Diagnostic.at(doc.pos(path), "PM201", f"section '{sid}': give 'before' or 'after', not both"))
    if data.get("trim") == "items" and source not in ITEM_SOURCES:
        diags.append(Diagnostic.at(doc.pos(path + ("trim",)), "PM201", f"section '{sid}': trim 'items' needs each, history or tools"))
    if "truncate" in data and data.get("trim") != "truncate":
        diags.append(Diagnostic.at(doc.pos(path + ("truncate",)), "PM201", f"section '{sid}': 'truncate' settings need trim: truncate"))
    for key in ("order_by", "keep", "step", "as", "item_separator"):
        if key in data and source not in ITEM_SOURCES:
            diags.append(Diagnostic.at(doc.pos(path + (key,)), "PM201", f"section '{sid}': '{key}' applies only to each, history or tools"))
    if "step" in data and source != "history":
        pass  # reported above for non-item sources; allowed but unused for each/tools
    if "wrap" in data and source != "fragment":
        diags.append(Diagnostic.at(doc.pos(path + ("wrap",)), "PM201", f"section '{sid}': 'wrap' applies only to fragment sections"))
    if "when" in data:
        diags.extend(condition_diagnostics(doc, path + ("when",), data["when"]))
    if "declare" in data:
        if source != "tools":
            diags.append(Diagnostic.at(doc.pos(path + ("declare",)), "PM201", f"section '{sid}': 'declare' applies only to tools sections"))
        diags.extend(_tool_diagnostics(doc, path + ("declare",), data["declare"]))
    return SectionDef(doc, path, sid, source, data), diags


def _tool_diagnostics(doc: Document, path: tuple, tools: list) -> list[Diagnostic]:
    """Declared tools: unique names, parameters a valid JSON Schema of an object (PM701)."""
    out = []
    seen: set[str] = set()
    for i, tool in enumerate(tools):
        name = tool.get("name")
        if name in seen:
            out.append(Diagnostic.at(doc.pos(path + (i, "name")), "PM201", f"tool '{name}' is declared twice in this section"))
        seen.add(name)
        params = tool.get("parameters")
        where = path + (i, "parameters")
        if isinstance(params, dict) and params.get("type") != "object":
            out.append(
                Diagnostic.at(doc.pos(where), "PM701", f"parameters of tool '{name}' must be a JSON Schema with type: object at the top")
            )
        out.extend(_schema_diagnostics(doc, where, params, f"parameters of tool '{name}'"))
    return out


def _normalise_outputs(outputs: Any) -> tuple[dict, ...]:
    if isinstance(outputs, dict):  # name -> description, or name -> {description, type, required}
        return tuple(
            {"name": k, "description": v or "", "type": "string", "required": False, "typed": False}
            if not isinstance(v, dict)
            else {
                "name": k,
                "description": v.get("description", ""),
                "type": v.get("type", "string"),
                "required": bool(v.get("required", False)),
                "typed": "type" in v,
            }
            for k, v in outputs.items()
        )
    result = []
    for o in outputs or ():
        result.append(
            {
                "name": o["name"],
                "description": o.get("description", ""),
                "type": o.get("type", "string"),
                "required": bool(o.get("required", False)),
            }
        )
    return tuple(result)


def build_template(doc: Document, layer: Layer, source_file: str) -> tuple[Template | None, list[Diagnostic]]:
    """Typed template for a schema-valid document, with semantic diagnostics."""
    data: dict = doc.data
    kind = data["kind"]
    tid = data["id"]
    diags: list[Diagnostic] = []
    common = dict(doc=doc, path=(), kind=kind, id=tid, layer=layer, source_file=source_file, data=data)
    if kind == "role":
        if len(data.get("sections", ())) > MAX_SECTIONS:
            diags.append(too_many_sections(doc.key_pos(("sections",)), tid, len(data["sections"]), "lists"))
        sections = []
        seen: dict[str, int] = {}
        in_child = "extends" in data
        for i, raw in enumerate(data.get("sections", ())):
            sec, sd = _section(doc, ("sections", i), raw, in_child)
            diags.extend(sd)
            if sec.id in seen:
                diags.append(
                    Diagnostic.at(
                        doc.pos(("sections", i, "id")),
                        "PM305",
                        f"section id '{sec.id}' is used twice in role '{tid}' (first at line {doc.pos(('sections', seen[sec.id])).line})",
                    )
                )
            seen.setdefault(sec.id, i)
            sections.append(sec)
        if "inputs" in data:
            diags.extend(_schema_diagnostics(doc, ("inputs",), data["inputs"], "inputs"))
        for i, rule in enumerate(data.get("inject", ())):
            if "when" in rule:
                diags.extend(condition_diagnostics(doc, ("inject", i, "when"), rule["when"]))
        for i, candidate in enumerate(data.get("extends_when", ())):
            diags.extend(condition_diagnostics(doc, ("extends_when", i, "when"), candidate["when"]))
        return Role(**common, sections=tuple(sections)), diags
    if kind == "constraints":
        rules = []
        seen_rules: set[str] = set()
        for i, raw in enumerate(data["rules"]):
            if raw["id"] in seen_rules:
                diags.append(Diagnostic.at(doc.pos(("rules", i, "id")), "PM305", f"rule id '{raw['id']}' is used twice in set '{tid}'"))
            seen_rules.add(raw["id"])
            if "when" in raw:
                diags.extend(condition_diagnostics(doc, ("rules", i, "when"), raw["when"]))
            rules.append(Rule(raw["id"], raw["text"], raw.get("when"), doc.pos(("rules", i))))
        return ConstraintSet(**common, rules=tuple(rules)), diags
    if kind == "output":
        fields_ = _normalise_outputs(data.get("outputs"))
        if "schema" in data:
            diags.extend(_schema_diagnostics(doc, ("schema",), data["schema"], "the reply schema"))
        elif not fields_:
            diags.append(Diagnostic.at(doc.pos(()), "PM204", f"output contract '{tid}' needs a 'schema' or 'outputs'"))
        for i, check in enumerate(data.get("checks", ())):
            if "where" in check:
                diags.extend(condition_diagnostics(doc, ("checks", i, "where"), check["where"], roots=False))
        return OutputContract(**common, fields=fields_), diags
    return Fragment(**common), diags
