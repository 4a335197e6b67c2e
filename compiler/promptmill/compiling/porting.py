"""Port a `str.format` prompt to a role skeleton (`promptmill port-format FILE`).

`port_format(text, role_id)` reads a `str.format` template and returns the YAML
of a role with one `template` section that renders what `text.format(**state)`
gave: fields become Jinja expressions (`{a.b[0]}` -> `{{ a.b[0] }}`), a
conversion or format spec keeps its meaning through the sandbox's `str.format`
(`{x:.2f}` -> `{{ '{:.2f}'.format(x) }}`), and literal text that holds braces
goes inside `{% raw %}` (with `+` markers, so the block tags neither eat a
newline nor strip indentation). Every top-level field becomes a required input:
a string, an object (an array) when the template reads an attribute or key
(an index) of it, any value when it has a conversion or format spec. Positional fields
(`{}`, `{0}`) and nested fields in a format spec have no counterpart and are
PM015 with the line and column.
"""

from __future__ import annotations

import os
import re

from ..core.errors import PromptmillError
from ..core.fieldnames import split_field_name
from ..core.jsontypes import JSON
from ..runtime.filters.yamlemit import to_yaml
from ..source.schemacheck import load_schema

_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


class PortError(PromptmillError):
    """A `str.format` template that has no role counterpart (PM015)."""

    code = "PM015"


def _position(text: str, offset: int) -> tuple[int, int]:
    line = text.count("\n", 0, offset) + 1
    return line, offset - (text.rfind("\n", 0, offset) + 1) + 1


def _scan(text: str, where: str) -> list[tuple[str, str, int]]:
    """("text", literal, offset) and ("field", inside the braces, offset of '{') in order."""
    parts: list[tuple[str, str, int]] = []
    literal: list[str] = []
    i = 0

    def fail(offset: int, message: str) -> PortError:
        line, col = _position(text, offset)
        return PortError(f"{where}:{line}:{col}: {message}", hint="fix the template: str.format would refuse it too")

    while i < len(text):
        c = text[i]
        if c == "{" and text.startswith("{{", i):
            literal.append("{")
            i += 2
        elif c == "}" and text.startswith("}}", i):
            literal.append("}")
            i += 2
        elif c == "}":
            raise fail(i, "single '}' in the template: write '}}' for a literal brace")
        elif c == "{":
            depth, j = 1, i + 1
            while j < len(text) and depth:
                depth += {"{": 1, "}": -1}.get(text[j], 0)
                j += 1
            if depth:
                raise fail(i, "'{' is never closed: write '{{' for a literal brace")
            if literal:
                parts.append(("text", "".join(literal), i))
                literal = []
            parts.append(("field", text[i + 1 : j - 1], i))
            i = j
        else:
            literal.append(c)
            i += 1
    if literal:
        parts.append(("text", "".join(literal), len(text)))
    return parts


def _expression(field: str, offset: int, text: str, where: str, inputs: dict[str, JSON]) -> str:
    def fail(message: str, hint: str) -> PortError:
        line, col = _position(text, offset)
        return PortError(f"{where}:{line}:{col}: field {{{field}}}: {message}", hint=hint)

    name, spec = field, ""
    colon = name.find(":")
    if colon >= 0:
        name, spec = name[:colon], name[colon + 1 :]
    conversion = ""
    bang = name.find("!")
    if bang >= 0:
        name, conversion = name[:bang], name[bang + 1 :]
        if conversion not in ("r", "s", "a"):
            raise fail(f"unknown conversion '!{conversion}'", "use !r, !s or !a")
    if "{" in spec:
        raise fail("a field inside a format spec has no template counterpart", "write the spec out, e.g. {x:>10}")
    try:
        first, rest = split_field_name(name)
    except ValueError as exc:
        raise fail(f"malformed field name: {exc}", "write the field as str.format reads it, e.g. {task.id} or {items[0]}") from None
    if not isinstance(first, str) or not _NAME.match(first):
        raise fail("positional fields have no counterpart: the render state is a mapping", "give the field a name, e.g. {task}")
    expr = first
    reads_into = None  # the JSON type the first step into the value needs
    for is_attr, key in rest:
        reads_into = reads_into or ("array" if not is_attr and isinstance(key, int) else "object")
        if is_attr:
            key = str(key)  # an attribute step is always text
            if not _NAME.match(key) or key.startswith("_"):
                raise fail(f"attribute '{key}' cannot be read by a template", "read only public attributes")
            expr += f".{key}"
        else:
            expr += f"[{key}]" if isinstance(key, int) else f"[{_quoted(key)}]"
    known = inputs.setdefault(first, {"type": "string"})
    if reads_into:
        if known.get("type") in ("string", reads_into):
            known["type"] = reads_into
        else:
            known.pop("type", None)  # read both as a list and as an object: any value
    elif (spec or conversion) and known.get("type") == "string":
        known.pop("type")  # a spec such as .2f formats numbers: any JSON value
    if conversion or spec:
        fmt = "{" + (f"!{conversion}" if conversion else "") + (f":{spec}" if spec else "") + "}"
        return "{{ " + _quoted(fmt) + f".format({expr}) }}}}"
    return "{{ " + expr + " }}"


def _quoted(value: str) -> str:
    return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"


def _literal(chunk: str) -> str:
    """Literal text as template text: the span from its first brace to its last inside raw."""
    braces = [i for i, c in enumerate(chunk) if c in "{}"]
    if not braces:
        return chunk
    first, last = braces[0], braces[-1] + 1
    return chunk[:first] + "{%+ raw %}" + chunk[first:last] + "{% endraw +%}" + chunk[last:]


def port_format(text: str, role_id: str, *, where: str = "<template>") -> str:
    """The YAML of a role rendering what `text.format(**state)` gives (see the module doc)."""
    rule = load_schema("role")["properties"]["id"]  # the one rule for role ids: the role schema's
    if not (re.fullmatch(rule["pattern"], role_id) and len(role_id) <= rule["maxLength"]):
        raise PromptmillError(f"'{role_id}' is not a role id", code="PM010", hint="use letters, digits, '-', '_', '.' and '/'")
    if "endraw" in text:
        line, col = _position(text, text.index("endraw"))
        raise PortError(
            f"{where}:{line}:{col}: the template holds 'endraw', which would end a raw block early", hint="port this part by hand"
        )
    inputs: dict[str, JSON] = {}
    out = []
    for kind, value, offset in _scan(text, where):
        out.append(_literal(value) if kind == "text" else _expression(value, offset, text, where, inputs))
    role: JSON = {"kind": "role", "id": role_id}
    if inputs:
        role["inputs"] = {"type": "object", "required": list(inputs), "properties": inputs}
    template = "".join(out)
    if template.endswith("\n"):  # templates render without their last line break anyway
        template = template[:-1]
    role["sections"] = [{"id": "body", "template": template}]
    text = to_yaml(role)
    return text if text.endswith("\n") else text + "\n"


def port_template_file(path: str, role_id: str | None = None) -> str:
    """`port_format` of the text in file `path`; the role id defaults to the file's stem."""
    from pathlib import Path

    from ..core import userfiles

    file = Path(path)
    if not os.path.lexists(file):
        raise PromptmillError(f"{path}: no such file", code="PM011")
    text = userfiles.read_text(file, what="template to port")  # named on the command line: a regular file, size-capped
    return port_format(text, role_id or file.stem, where=path)
