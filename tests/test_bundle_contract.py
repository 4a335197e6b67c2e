"""The bundle format is a contract (docs/bundle-format.md, schemas/bundle.schema.json, manifest.schema.json).

Every build the project ships or the tests' projects make validates against the schemas (and conftest.py's
hook checks every other build the suite makes); a build of another format version is refused as documented;
every plan step, plan expression, filter and condition form the runtime implements, read from its code, is
named in the document and in the schema, so a new one without documentation fails here; and the document's
condition and plan examples are what the runtime does.
"""

from __future__ import annotations

import ast
import hashlib
import json
import shutil
import sys
from pathlib import Path

import pytest

import promptmill
from bundle_contract import SCHEMAS, BuildCheck, is_bundle_file, problems
from promptmill.core.errors import BuildError
from promptmill.runtime import bundle as bundle_module
from promptmill.runtime import conditions, plans

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "bundle-format.md"
PROJECTS = sorted(
    [ROOT]
    + [p.parent for p in (ROOT / "tests" / "cases").rglob("promptmill.yaml") if "negative" not in p.parts]
    + [p.parent for p in (ROOT / "docs" / "examples").rglob("promptmill.yaml")]
)


def _build_problems(build: Path) -> list[str]:
    manifest = json.loads((build / "manifest.json").read_text("utf-8"))
    found = [f"manifest.json {p}" for p in problems("manifest", manifest)]
    for role, entry in manifest["roles"].items():
        assert is_bundle_file(entry["file"]), entry["file"]
        found += [f"{role} {p}" for p in problems("bundle", json.loads((build / entry["file"]).read_text("utf-8")))]
    return found


# ---------------------------------------------------------------- every build validates


def test_the_committed_build_matches_the_schemas():
    assert (ROOT / "build" / "manifest.json").is_file()
    assert _build_problems(ROOT / "build") == []


@pytest.mark.parametrize("project", PROJECTS, ids=lambda p: str(p.relative_to(ROOT)) or "prompts")
def test_every_shipped_and_fixture_project_builds_bundles_that_match_the_schemas(project: Path, tmp_path: Path):
    if project == ROOT:
        build = tmp_path / "build"
        promptmill.compile(ROOT, output=build, force=True)
    else:
        copy = tmp_path / "project"
        shutil.copytree(project, copy, ignore=shutil.ignore_patterns("build"))
        build = promptmill.compile(copy, force=True).build_dir
    manifest = json.loads((build / "manifest.json").read_text("utf-8"))
    assert manifest["roles"], f"{project} built no roles"
    assert _build_problems(build) == []


def test_a_format_2_bundle_with_parents_matches_the_schema(make_project):
    root = make_project(
        {
            "prompts/base.yaml": "kind: role\nid: base\nabstract: true\nsections:\n  - {id: a, text: Base}\n",
            "prompts/terse.yaml": "kind: role\nid: terse\nabstract: true\nsections:\n  - {id: a, text: Terse}\n",
            "prompts/task.yaml": (
                "kind: role\nid: task\nextends: base\n"
                "extends_when:\n  - {role: terse, when: {path: state.mode, op: eq, value: quick}}\n"
                "sections:\n  - {id: b, template: 'Do {{ mode }}'}\n"
                "inputs:\n  type: object\n  properties:\n    mode: {type: string}\n"
            ),
        }
    )
    build = promptmill.compile(root).build_dir
    manifest = json.loads((build / "manifest.json").read_text("utf-8"))
    data = json.loads((build / manifest["roles"]["task"]["file"]).read_text("utf-8"))
    assert data["format_version"] == 2 and data["parents"][0]["bundle"]["format_version"] == 1
    assert _build_problems(build) == []


def test_the_schemas_refuse_what_the_reader_refuses():
    """A broken plan step, condition, unknown field or version fails the schema as it fails `promptmill.load`."""
    manifest = json.loads((ROOT / "build" / "manifest.json").read_text("utf-8"))
    good = json.loads((ROOT / "build" / manifest["roles"]["executor"]["file"]).read_text("utf-8"))
    planned = next(i for i, s in enumerate(good["sections"]) if s["plan"])
    cases = {
        "unknown plan step": lambda d: d["sections"][planned].update(plan=[["zz", "x"]]),
        "plan step too long": lambda d: d["sections"][planned].update(plan=[["t", "x", "y"]]),
        "unknown filter": lambda d: d["sections"][planned].update(plan=[["f", ["x"], "shout"]]),
        "unknown comparison": lambda d: d["sections"][planned].update(plan=[["e", ["cmp", "like", ["c", 1], ["c", 2]]]]),
        "unknown operator": lambda d: d["sections"][planned].update(when={"path": "state.x", "op": "like", "value": 1}),
        "in without a list": lambda d: d["sections"][planned].update(when={"path": "state.x", "op": "in", "value": 1}),
        "two forms": lambda d: d["sections"][planned].update(
            when={"any": [{"path": "state.x", "op": "exists"}], "not": {"path": "state.x", "op": "exists"}}
        ),
        "unknown section field": lambda d: d["sections"][planned].update(colour="red"),
        "unknown bundle field": lambda d: d.update(colour="red"),
        "format version 3": lambda d: d.update(format_version=3),
    }
    assert problems("bundle", good) == []
    for name, breaks in cases.items():
        data = json.loads(json.dumps(good))
        breaks(data)
        assert problems("bundle", data), f"the schema accepts a bundle with {name}"
        with pytest.raises(BuildError):
            bundle_module.role_from_dict(data)


def test_the_hook_reports_a_build_that_does_not_match(tmp_path: Path, monkeypatch):
    from promptmill.compiling import api

    written = []
    # the session's own check (conftest.py) is set aside: these builds are meant to fail
    monkeypatch.setattr(api, "install_build", lambda build_dir, files, manifest, *a: written.append(sorted(files)))
    check = BuildCheck()
    with check.watch():
        manifest = b'{"format": "promptmill-build", "format_version": 1, "promptmill_version": "x", "roles": {}, "colour": 1}'
        api.install_build(tmp_path, {"roles/a.0123456789ab.json": b'{"format": "promptmill-bundle"}'}, manifest)
    assert written == [["roles/a.0123456789ab.json"]]  # the check wraps the writer, which still writes
    assert len(check.failures) == 2 and check.checked == 2
    assert "bundle" in check.failures[0] and "'format_version' is a required property" in check.failures[0]
    assert "manifest" in check.failures[1] and "colour" in check.failures[1]
    check.check("manifest", manifest, "again")
    assert check.checked == 2  # the same content is validated once


def test_the_published_schemas_are_what_the_generator_writes():
    sys.path.insert(0, str(ROOT / "tools"))
    try:
        from promptmill_bundle_schema import BUNDLE, MANIFEST
    finally:
        sys.path.remove(str(ROOT / "tools"))
    for name, schema in (("bundle", BUNDLE), ("manifest", MANIFEST)):
        assert (SCHEMAS / f"{name}.schema.json").read_text("utf-8") == json.dumps(schema, indent=2, ensure_ascii=False) + "\n", (
            f"run python tools/gen_schemas.py ({name})"
        )
        assert "docs/bundle-format.md" in schema["$comment"]


def test_every_property_of_the_schemas_says_what_it_does():
    missing = []

    def walk(node: object, at: str) -> None:
        if isinstance(node, dict):
            for key, sub in (node.get("properties") or {}).items():
                if not (isinstance(sub, dict) and sub.get("description")):
                    missing.append(f"{at}.{key}")
            for key, sub in node.items():
                if key not in ("if", "then", "not"):  # constraints on properties described where they are defined
                    walk(sub, f"{at}.{key}")
        elif isinstance(node, list):
            for i, sub in enumerate(node):
                walk(sub, f"{at}[{i}]")

    for name in ("bundle", "manifest"):
        walk(json.loads((SCHEMAS / f"{name}.schema.json").read_text("utf-8")), name)
    assert missing == []


# ---------------------------------------------------------------- versions are refused as documented


def _build_with(tmp_path: Path, change_bundle=None, change_manifest=None) -> Path:
    build = tmp_path / "build"
    shutil.copytree(ROOT / "build", build)
    manifest = json.loads((build / "manifest.json").read_text("utf-8"))
    if change_bundle is not None:
        entry = manifest["roles"]["executor"]
        data = json.loads((build / entry["file"]).read_text("utf-8"))
        change_bundle(data)
        raw = json.dumps(data).encode("utf-8")
        (build / entry["file"]).write_bytes(raw)
        entry["sha256"] = hashlib.sha256(raw).hexdigest()
    if change_manifest is not None:
        change_manifest(manifest)
    (build / "manifest.json").write_text(json.dumps(manifest), "utf-8")
    return build


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"format_version": 3}, "bundle format 'promptmill-bundle' version 3 is not 'promptmill-bundle' version 1 or 2"),
        ({"format_version": 0}, "bundle format 'promptmill-bundle' version 0 is not 'promptmill-bundle' version 1 or 2"),
        ({"format_version": True}, "bundle format 'promptmill-bundle' version True is not 'promptmill-bundle' version 1 or 2"),
        ({"format": "other-bundle"}, "bundle format 'other-bundle' version 1 is not 'promptmill-bundle' version 1 or 2"),
        ({"format_version": 2}, "format version 2 goes with `parents` only in version 2"),
    ],
)
def test_a_bundle_of_another_format_or_version_is_refused_by_load(tmp_path: Path, change: dict, message: str):
    build = _build_with(tmp_path, change_bundle=lambda d: d.update(change))
    with pytest.raises(BuildError) as caught:
        promptmill.load(build)
    assert caught.value.code == "PM801"
    assert caught.value.message.endswith(message)
    assert caught.value.hint == "recompile with this promptmill: promptmill compile"


def test_a_manifest_of_another_format_or_version_is_refused_by_load(tmp_path: Path):
    build = _build_with(tmp_path, change_manifest=lambda m: m.update(format_version=2))
    with pytest.raises(BuildError) as caught:
        promptmill.load(build)
    assert caught.value.code == "PM801"
    assert caught.value.message.endswith("build format version 2 was written by promptmill 0.1.0; this promptmill reads version 1")
    build = _build_with(tmp_path / "other", change_manifest=lambda m: m.update(format="other-build"))
    with pytest.raises(BuildError, match="not a promptmill build manifest"):
        promptmill.load(build)


def test_the_refusals_are_the_ones_the_document_names():
    doc = DOC.read_text("utf-8")
    for text in (
        "not a promptmill build manifest",
        "this promptmill reads version 1",
        "is not 'promptmill-bundle' version 1 or 2",
        "goes with `parents` only in version 2",
        "recompile with this promptmill: promptmill compile",
        "PM801",
    ):
        assert text in doc, text
    assert (bundle_module.FORMAT, bundle_module.MANIFEST_FORMAT) == ("promptmill-bundle", "promptmill-build")
    assert (bundle_module.FORMAT_VERSION, bundle_module.PARENTS_FORMAT_VERSION) == (1, 2), (
        "a new version: update docs/bundle-format.md, section 1"
    )


# ---------------------------------------------------------------- every operation is documented


def _function(module, name: str) -> ast.FunctionDef:
    """The definition of `name` in `module`'s source file (read from the file: the module may be compiled)."""
    source = ROOT / "compiler" / Path(*module.__name__.split(".")).with_suffix(".py")
    found = [n for n in ast.walk(ast.parse(source.read_text("utf-8"))) if isinstance(n, ast.FunctionDef) and n.name == name]
    assert len(found) == 1, f"{module.__name__}.{name} moved: update this test"
    return found[0]


def _compared_kinds(func: ast.FunctionDef) -> set[str]:
    """String constants `kind` is compared with (`kind == "t"`, `kind in ("pf", "sf")`) in `func`."""
    tree = func
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Compare) and isinstance(node.left, ast.Name) and node.left.id == "kind":
            for right in node.comparators:
                values = right.elts if isinstance(right, ast.Tuple) else [right]
                found |= {v.value for v in values if isinstance(v, ast.Constant) and isinstance(v.value, str)}
    return found


def _condition_forms() -> set[str]:
    """The combination keys `conditions.problems` tells apart (`path` is the comparison)."""
    tree = _function(conditions, "problems")
    for node in ast.walk(tree):
        if isinstance(node, ast.ListComp) and isinstance(node.generators[0].iter, ast.Tuple):
            return {e.value for e in node.generators[0].iter.elts} - {"path"}
    raise AssertionError("conditions.problems no longer lists the condition forms")


def _schema_values(schema: object) -> set[object]:
    """Every `const` and `enum` value anywhere in a schema."""
    out: set[object] = set()
    if isinstance(schema, dict):
        if "const" in schema:
            out.add(schema["const"])
        out.update(v for v in schema.get("enum", []) if isinstance(v, str))
        for sub in schema.values():
            out |= _schema_values(sub)
    elif isinstance(schema, list):
        for sub in schema:
            out |= _schema_values(sub)
    return out


def _doc_names() -> set[str]:
    import re

    return set(re.findall(r"`([^`\s]+)`", DOC.read_text("utf-8")))


def _implemented() -> dict[str, set[str]]:
    steps = _compared_kinds(_function(plans, "_check_steps"))
    exprs = _compared_kinds(_function(plans, "_check_expr"))
    assert steps >= {"t", "v", "for", "if"} and exprs >= {"c", "p", "cmp"}, "the plan checker changed shape: update this test"
    assert _compared_kinds(_function(plans, "_exec")) | {"if"} >= steps, "a plan step the checker accepts is not run"
    assert _compared_kinds(_function(plans, "_eval")) == exprs, "the plan expressions run and those checked differ"
    return {
        "plan step": steps,
        "plan expression": exprs,
        "filter": set(plans.FILTERS),
        "loop attribute": set(plans.LOOP_ATTRS),
        "plan comparison": set(plans._COMPARE),
        "condition operator": set(conditions.OPERATORS),
        "condition form": _condition_forms(),
        "condition root": set(conditions.ROOTS),
        "section kind": set(bundle_module.SECTION_KINDS),
        "trim policy": set(bundle_module.TRIM_POLICIES),
        "message": set(bundle_module.MESSAGE_ROLES),
        "stability": set(bundle_module.STABILITIES),
    }


def test_every_plan_step_expression_filter_and_condition_is_in_the_document():
    names = _doc_names()
    undocumented = {what: sorted(found - names) for what, found in _implemented().items() if found - names}
    assert undocumented == {}, "name them in docs/bundle-format.md (in backticks), saying what they do"


def test_every_plan_step_expression_filter_and_condition_is_in_the_schema():
    schema = json.loads((SCHEMAS / "bundle.schema.json").read_text("utf-8"))
    values = _schema_values(schema)
    implemented = _implemented()
    implemented.pop("condition root")  # roots are described in the path's description, not an enum
    implemented.pop("condition form")
    missing = {what: sorted(found - values) for what, found in implemented.items() if found - values}
    assert missing == {}, "regenerate the schema (python tools/gen_schemas.py) from tools/promptmill_bundle_schema.py"
    condition_forms = {key for name, d in schema["$defs"].items() if name.startswith("condition_") for key in d["required"]}
    assert condition_forms == _condition_forms()
    sys.path.insert(0, str(ROOT / "tools"))
    try:
        import promptmill_bundle_schema as gen
    finally:
        sys.path.remove(str(ROOT / "tools"))
    assert set(gen.PLAN_STEPS) == implemented["plan step"] and set(gen.PLAN_EXPRESSIONS) == implemented["plan expression"]


# ---------------------------------------------------------------- the document's examples are what the runtime does

CONDITION_STATE = {"mode": "quick", "n": 3, "flag": False, "tags": ["a", "b"], "items": [{"k": 1}], "meta": {"x": 1}, "z": None}


def _table_rows(columns: int) -> list[list[str]]:
    """Rows of the document's tables with `columns` cells, `\\|` read as `|`, ␠ as a space and ⏎ as a newline."""
    rows = []
    for line in DOC.read_text("utf-8").splitlines():
        if line.startswith("| `"):
            cells = [c.strip().replace("\0", "|") for c in line.replace("\\|", "\0").strip("|").split(" | ")]
            if len(cells) == columns:
                rows.append([c.replace("␠", " ").replace("⏎", "\n") for c in cells])
    return rows


def _code(cell: str) -> str:
    """The first code span of a cell (a note may follow it)."""
    assert cell.startswith("`") and "`" in cell[1:], cell
    return cell[1 : cell.index("`", 1)]


def test_the_condition_examples_are_what_the_runtime_evaluates():
    context = {"state": CONDITION_STATE, "role": {"id": "task", "category": "agent"}, "model": None, "provider": "text", "event": "start"}
    rows = [(json.loads(_code(c)), r) for c, r in _table_rows(2) if c.startswith("`{") and r in ("true", "false")]
    assert len(rows) >= 20 and {leaf["op"] for c, _ in rows for _, leaf in conditions.leaves(c)} == set(conditions.OPERATORS)
    for condition, result in rows:
        assert conditions.problems(condition) == [], condition
        assert conditions.evaluate(condition, context) is (result == "true"), condition


def test_the_plan_examples_are_what_the_compiler_plans_and_the_runtime_fills():
    from promptmill.runtime.jinja.sandbox import compile_template, render

    rows = [r for r in _table_rows(4) if r[1].startswith("`[[")]
    assert len(rows) >= 12
    for template, plan, state, output in rows:
        source, state = _code(template), json.loads(_code(state))
        built = plans.build_plan(source)
        assert json.loads(json.dumps(built)) == json.loads(_code(plan)), source
        filled = plans.run_plan(built, state)
        if output.startswith("defers"):
            assert filled is None, source
            continue
        assert filled == _code(output) == render(compile_template(source), state), source
