"""docs/reference.md is exactly what tools/gen_reference.py generates from the schemas."""

from __future__ import annotations

import importlib.util
import json
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TOOL = ROOT / "tools" / "gen_reference.py"
_spec = importlib.util.spec_from_file_location("gen_reference", TOOL)
assert _spec is not None and _spec.loader is not None
gen_reference = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(gen_reference)


def fields(node: dict, prefix: str = "") -> set[str]:
    """Every dotted field path of a schema node, as the reference names them."""
    out: set[str] = set()
    for key, child in node.get("properties", {}).items():
        if key == "$schema" and not prefix:
            continue
        path = f"{prefix}.{key}" if prefix else key
        out.add(path)
        out |= fields(child, path)
    items = node.get("items")
    if isinstance(items, dict) and "$ref" not in items:
        out |= fields(items, f"{prefix}[]")
    for alt in node.get("anyOf", ()):
        out |= fields(alt, prefix)
    return out


def test_reference_is_up_to_date():
    committed = (ROOT / "docs" / "reference.md").read_text("utf-8")
    assert committed == gen_reference.render(), "docs/reference.md is stale: run python tools/gen_reference.py"


def test_every_kind_field_and_definition_is_documented():
    page = gen_reference.render()
    for kind in gen_reference.KINDS:
        schema = json.loads((gen_reference.SCHEMAS / f"{kind}.schema.json").read_text("utf-8"))
        section = page.split(f"\n## {kind}\n", 1)[1].split("\n## ", 1)[0]
        for path in fields(schema):
            assert f"| `{path}` |" in section, f"{kind}: field {path} missing"
        for name, definition in schema.get("$defs", {}).items():
            assert f"\n## {name} (shared definition)\n" in page
            for path in fields(definition):
                assert f"| `{path}` |" in page, f"{kind}: $defs/{name}: field {path} missing"


def test_a_schema_change_changes_the_reference(tmp_path):
    schemas = tmp_path / "schemas"
    shutil.copytree(gen_reference.SCHEMAS, schemas)
    role = json.loads((schemas / "role.schema.json").read_text("utf-8"))
    role["properties"]["budget"]["properties"]["reserve"]["description"] = "Changed | with a pipe."
    (schemas / "role.schema.json").write_text(json.dumps(role), "utf-8")
    page = gen_reference.render(schemas)
    assert page != gen_reference.render()
    assert "| `budget.reserve` | integer |  | 0 to 100000000 | Changed \\| with a pipe. |" in page


def test_check_mode_passes_on_the_committed_page():
    result = subprocess.run([sys.executable, str(TOOL), "--check"], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
