"""Generate docs/reference.md from the JSON Schemas in compiler/promptmill/schemas/.

Every template kind and promptmill.yaml gets a table of every field: its dotted
path, type, whether it is required, its default and allowed values when the
schema states them, and its description. Shared definitions (`$defs`: a
section, a condition) get a table of their own, linked from where they are
used. Run `python tools/gen_reference.py` after `tools/gen_schemas.py`;
tests/test_reference.py fails when the committed page differs from what this
script writes. `--check` exits 1 instead of writing when the page is stale.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
SCHEMAS = ROOT / "compiler" / "promptmill" / "schemas"
OUT = ROOT / "docs" / "reference.md"
KINDS = ("role", "constraints", "output", "fragment", "project")
YAML_TYPES = {"object": "mapping", "array": "list", "boolean": "true/false"}
NAMED_PATTERNS = {  # patterns worded for people; any other pattern is shown as is
    r"^[A-Za-z0-9][A-Za-z0-9_.-]*(/[A-Za-z0-9][A-Za-z0-9_.-]*)*$": "an id: letters, digits, `_` `.` `-`, segments joined by `/`",
    r"^[A-Za-z0-9][A-Za-z0-9_.-]*$": "letters, digits, `_` `.` `-`",
}

Row = tuple[str, str, bool, str, str]  # (path, type, required, values, description)


def _code(value: Any) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return f"`{text}`"


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


class Page:
    """Collects the rows of one schema; `$ref`s become links to definition tables."""

    def __init__(self, kind: str, schema: dict, anchors: dict[str, str]):
        self.kind = kind
        self.schema = schema
        self.anchors = anchors  # canonical JSON of a definition -> its anchor (shared across pages)

    def anchor(self, ref: str) -> str:
        name = ref.rsplit("/", 1)[-1]
        return self.anchors[json.dumps(self.schema["$defs"][name], sort_keys=True)]

    def type_of(self, node: dict) -> str:
        if "$ref" in node:
            name = node["$ref"].rsplit("/", 1)[-1]
            return f"[{name}](#{self.anchor(node['$ref'])})"
        if "const" in node:
            return _code(node["const"])
        if "anyOf" in node:
            return " or ".join(self.type_of(alt) for alt in node["anyOf"])
        types = node.get("type")
        if types is None:
            return "one of the values" if "enum" in node else "any"
        names = []
        for t in [types] if isinstance(types, str) else types:
            if t == "array" and isinstance(node.get("items"), dict):
                item = self.type_of(node["items"])
                names.append(f"list of ({item})" if " or " in item else f"list of {item}")
            else:
                names.append(YAML_TYPES.get(t, t))
        return " or ".join(names)

    @staticmethod
    def values_of(node: dict) -> str:
        parts = []
        if "enum" in node:
            parts.append("one of " + ", ".join(_code(v) for v in node["enum"]))
        if "default" in node:
            parts.append(f"default {_code(node['default'])}")
        low, high = node.get("minimum"), node.get("maximum")
        if low is not None and high is not None:
            parts.append(f"{low} to {high}")
        elif low is not None:
            parts.append(f"at least {low}")
        elif high is not None:
            parts.append(f"at most {high}")
        if node.get("minLength") and node.get("type") == "string" and "pattern" not in node:
            parts.append("not empty")
        if "maxLength" in node:
            parts.append(f"at most {node['maxLength']} characters")
        if "pattern" in node:
            parts.append(NAMED_PATTERNS.get(node["pattern"]) or f"matches {_code(node['pattern'])}")
        if node.get("minItems"):
            parts.append(f"at least {node['minItems']} item{'s' if node['minItems'] > 1 else ''}")
        if node.get("minProperties"):
            parts.append(f"at least {node['minProperties']} key{'s' if node['minProperties'] > 1 else ''}")
        return "; ".join(parts)

    def rows(self, node: dict, path: str = "", required: bool = False) -> list[Row]:
        out: list[Row] = []
        if path:
            description = node.get("description", "")
            out.append((path, self.type_of(node), required, self.values_of(node), description))
        out.extend(self.children(node, path))
        return out

    def children(self, node: dict, path: str) -> list[Row]:
        out: list[Row] = []
        prefix = f"{path}." if path else ""
        needed = set(node.get("required", ()))
        for key, child in node.get("properties", {}).items():
            if key == "$schema" and not path:
                continue  # editors' own key, described once in the page intro
            out.extend(self.rows(child, f"{prefix}{key}", key in needed))
        items = node.get("items")
        if isinstance(items, dict) and "$ref" not in items:
            out.extend(self.children(items, f"{path}[]"))
        for alt in node.get("anyOf", ()):
            out.extend(self.children(alt, path))
        return out


def _table(rows: list[Row]) -> list[str]:
    lines = ["| field | type | required | values | description |", "| --- | --- | --- | --- | --- |"]
    for path, type_, required, values, description in rows:
        lines.append(f"| `{path}` | {_cell(type_)} | {'yes' if required else ''} | {_cell(values)} | {_cell(description)} |")
    return lines


def render(schemas: Path = SCHEMAS) -> str:
    """The whole reference page as Markdown."""
    loaded = {kind: json.loads((schemas / f"{kind}.schema.json").read_text("utf-8")) for kind in KINDS}
    anchors: dict[str, str] = {}
    owners: list[tuple[str, str, dict]] = []  # (kind, def name, def) in first-seen order
    for kind, schema in loaded.items():
        for name, definition in schema.get("$defs", {}).items():
            key = json.dumps(definition, sort_keys=True)
            if key not in anchors:
                anchors[key] = f"def-{name}" if all(n != name for _, n, _ in owners) else f"def-{kind}-{name}"
                owners.append((kind, name, definition))
    lines = [
        "# Template reference",
        "",
        "<!-- Generated by tools/gen_reference.py from compiler/promptmill/schemas/*.schema.json; do not edit by hand. -->",
        "",
        "Every field of every template kind and of `promptmill.yaml`, generated from the",
        "JSON Schemas that `promptmill lint` checks templates against (`promptmill schema KIND`",
        "prints one). A path `a.b` is key `b` inside mapping `a`; `a[]` is an item of list `a`.",
        "Every file may also start with a `# yaml-language-server: $schema=...` comment, or set",
        "a `$schema` key, to point editors at its schema.",
        "",
        "Kinds: "
        + ", ".join(f"[{k}](#{k})" for k in KINDS)
        + ". Shared definitions: "
        + ", ".join(f"[{n}](#{anchors[json.dumps(d, sort_keys=True)]})" for _, n, d in owners)
        + ".",
    ]
    for kind, schema in loaded.items():
        page = Page(kind, schema, anchors)
        where = "The project file, `promptmill.yaml`" if kind == "project" else f"A file with `kind: {kind}`"
        lines += ["", f'<a id="{kind}"></a>', f"## {kind}", "", f"{schema['description']} ({where}; `promptmill schema {kind}`.)", ""]
        lines += _table(page.rows(schema))
    for kind, name, definition in owners:
        page = Page(kind, loaded[kind], anchors)
        anchor = anchors[json.dumps(definition, sort_keys=True)]
        lines += ["", f'<a id="{anchor}"></a>', f"## {name} (shared definition)", ""]
        if definition.get("description"):
            lines += [definition["description"], ""]
        rows = page.children(definition, "")
        lines += _table(rows) if rows else [f"Type: {page.type_of(definition)}."]
    return "\n".join(lines) + "\n"


def main(argv: list[str]) -> int:
    text = render()
    if "--check" in argv:
        if not OUT.is_file() or OUT.read_text("utf-8") != text:
            print(f"{OUT.relative_to(ROOT)} is stale: run python tools/gen_reference.py", file=sys.stderr)
            return 1
        return 0
    OUT.write_text(text, encoding="utf-8")
    print(f"wrote {OUT.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
