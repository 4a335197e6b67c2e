"""`promptmill types` (compiling/typegen.py): the module's text, what it does at run time,
the command, and `compile --check` finding a stale module (PM019).

tests/test_types_checkers.py runs mypy and pyright over generated modules."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
import textwrap
import uuid
import warnings
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

import promptmill
from promptmill.cli.main import main
from promptmill.compiling.typegen import check_types_file, pascal, types_module
from promptmill.runtime.bundle import Budget, Contract, RoleBundle
from schema_strategies import documents

ROOT = Path(__file__).resolve().parents[1]

ROLE = """\
kind: role
id: {id}
inputs:
  type: object
  required: [topic]
  properties:
    topic: {{type: string, description: what the note is about}}
    tone: {{enum: [dry, warm]}}
sections:
  - id: intro
    text: You write short notes.
  - id: topic
    template: "Topic: {{{{ topic }}}} {{{{ tone | default('') }}}}"
output: note-reply
"""
CONTRACT = """\
kind: output
id: note-reply
style: json
instructions: Reply with JSON.
schema:
  type: object
  additionalProperties: false
  required: [note]
  properties:
    note: {type: string}
    score: {type: integer}
"""
CONFIG = "prompts: prompts\ntypes:\n  path: app/pm_types.py\n"


def notes_project(make_project: Any, config: str = CONFIG) -> Path:
    return make_project({"promptmill.yaml": config, "prompts/note.yaml": ROLE.format(id="note"), "prompts/reply.yaml": CONTRACT})


def bundle(role: str, inputs: Any, reply: Any = None, contract: str = "reply") -> RoleBundle:
    output = None if reply is None else Contract(contract, "json", reply, "Reply with JSON.")
    return RoleBundle(role, "o200k_base", Budget(1000, 100), "\n\n", (), inputs, output=output)


def load_module(text: str, folder: Path) -> Any:
    """Import a generated module's text as a fresh module."""
    name = f"pm_types_{uuid.uuid4().hex}"
    path = folder / f"{name}.py"
    path.write_text(text, encoding="utf-8")
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def run(*args: str) -> Any:
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


@pytest.mark.parametrize(
    ("ident", "name"),
    [("executor", "Executor"), ("executor-result", "ExecutorResult"), ("agent/core.x_y", "AgentCoreXY"), ("1-shot", "T1Shot")],
)
def test_names_are_the_id_in_pascal_case(ident, name):
    assert pascal(ident) == name


def test_shipped_roles_get_predictable_typed_dicts():
    rt = promptmill.load(ROOT / "build")
    text = types_module({r: rt.bundle(r) for r in rt.roles})
    assert "class ExecutorInputs(TypedDict):" in text
    assert "class ExecutorResultReply(TypedDict):" in text
    assert '    status: Literal["done", "blocked"]\n' in text  # enum -> Literal
    assert "    reason: NotRequired[str]\n" in text  # not required -> NotRequired
    assert "    subtask: ExecutorInputsSubtask\n" in text  # nested object -> nested TypedDict
    assert "    memory: NotRequired[list[ExecutorInputsMemoryItem]]\n" in text  # array -> list
    assert "ExtractorMemoriesReply = list[ExtractorMemoriesReplyItem]" in text  # a reply that is an array
    assert 'role: Literal["executor"],\n    state: ExecutorInputs,' in text
    assert ") -> Request[ExecutorResultReply]: ..." in text
    assert f'TYPES_HASH = "{promptmill.types_hash(rt)}"' in text
    assert f'PROMPTMILL_VERSION = "{promptmill.__version__}"' in text
    assert text == types_module({r: rt.bundle(r) for r in reversed(rt.roles)})  # deterministic


def test_the_module_is_formatted_and_lint_clean(tmp_path):
    rt = promptmill.load(ROOT / "build")
    path = tmp_path / "pm_types.py"
    path.write_text(types_module({r: rt.bundle(r) for r in rt.roles}), encoding="utf-8")
    for args in (["format", "--check", "--line-length", "140"], ["check", "--select", "E,F,W,I,B,UP", "--line-length", "140"]):
        done = subprocess.run([sys.executable, "-m", "ruff", *args, str(path)], capture_output=True, text=True, cwd=tmp_path)
        assert done.returncode == 0, done.stdout + done.stderr


def test_the_committed_module_of_the_shipped_prompts_is_current():
    rt = promptmill.load(ROOT / "build")
    config = {"types": {"path": "prompts/promptmill_types.py"}}
    assert check_types_file(ROOT, config, {r: rt.bundle(r) for r in rt.roles}) is None


def test_render_through_the_module_renders_and_parses(tmp_path):
    rt = promptmill.load(ROOT / "build")
    module = load_module(types_module({r: rt.bundle(r) for r in rt.roles}), tmp_path)
    state = {"task_state": "goal: x", "subtask": {"id": "s1", "description": "do it"}}
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the build it was made from: no warning
        req = module.render(rt, "executor", state)
    assert req.text == rt.render("executor", state).text
    assert req.parse_reply('{"status": "done", "summary": "ok"}') == {"status": "done", "summary": "ok"}
    assert module.check_build(rt) is True


def test_another_build_warns_once(tmp_path, make_project):
    root = notes_project(make_project)
    old = load_module(types_module({"note": bundle("note", {"type": "object", "properties": {"topic": {"type": "string"}}})}), tmp_path)
    rt, _ = promptmill.build_in_memory(root)
    with pytest.warns(UserWarning, match=r"generated for another build .* regenerate it: promptmill types -o FILE"):
        old.render(rt, "note", {"topic": "tides"})
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        old.render(rt, "note", {"topic": "tides"})  # once
        assert old.check_build(rt) is False  # still says so, silently


def test_a_wording_change_keeps_the_hash(make_project):
    root = notes_project(make_project)
    before = promptmill.types_hash(promptmill.build_in_memory(root)[0])
    (root / "prompts" / "note.yaml").write_text(ROLE.format(id="note").replace("short notes", "long notes"))
    assert promptmill.types_hash(promptmill.build_in_memory(root)[0]) == before
    (root / "prompts" / "note.yaml").write_text(ROLE.format(id="note").replace("[dry, warm]", "[dry, warm, wry]"))
    assert promptmill.types_hash(promptmill.build_in_memory(root)[0]) != before


def test_keys_that_are_not_identifiers_use_the_functional_form(tmp_path):
    props = {k: {"type": "integer"} for k in ("class", "my-key", "str", "__x", "ok")}
    text = types_module({"odd": bundle("odd", {"type": "object", "required": ["class"], "properties": props})})
    assert 'OddInputs = TypedDict(\n    "OddInputs",' in text
    module = load_module(text, tmp_path)
    assert module.OddInputs.__required_keys__ == {"class"}
    assert module.OddInputs.__optional_keys__ == {"my-key", "str", "__x", "ok"}


def test_names_that_collide_get_a_number():
    text = types_module({"a-b": bundle("a-b", {"type": "object"}), "a_b": bundle("a_b", {"type": "object"})})
    assert "ABInputs = dict[str, Any]" in text and "ABInputs2 = dict[str, Any]" in text


@pytest.mark.parametrize(
    ("schema", "expected", "note"),
    [
        ({"type": "object", "patternProperties": {"^x": {"type": "string"}}}, "dict[str, Any]", "`patternProperties` not expressed"),
        ({"type": "string", "not": {"const": "a"}}, "str", "`not` not expressed"),
        ({"type": "integer", "if": {"minimum": 1}, "then": {"maximum": 3}}, "int", "`if` not expressed"),
        ({"$ref": "#/properties/v"}, "Any", "recursive $ref '#/properties/v' typed as Any"),
        ({"type": "string", "anyOf": [{"minLength": 1}, {"const": "b"}]}, "str", "`anyOf` beside other keywords not expressed"),
        ({"anyOf": [{"type": "string"}, {"type": "integer"}, {"type": "null"}]}, "str | int | None", ""),
        ({"enum": ["a", 1, None, 1.5, True]}, 'Literal["a", 1, True] | float | None', ""),
    ],
)
def test_what_a_type_cannot_say_widens_with_a_comment(tmp_path, schema, expected, note):
    inputs = {"type": "object", "properties": {"v": schema}}
    text = types_module({"r": bundle("r", inputs)})
    body = text.split("class RInputs(TypedDict):")[1].split("\n\n")[1]
    assert f"    v: NotRequired[{expected}]" in body
    assert note in body.split("\n")[0]
    assert "#" in body.split("\n")[0] or not note
    load_module(text, tmp_path)


def test_an_array_with_additional_property_schemas_is_a_dict_of_their_type():
    inputs = {
        "type": "object",
        "properties": {"tags": {"type": "object", "additionalProperties": {"type": "array", "items": {"type": "number"}}}},
    }
    assert "tags: NotRequired[dict[str, list[float]]]" in types_module({"r": bundle("r", inputs)})


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(documents(), documents())
def test_any_schema_generates_a_module_that_compiles(inputs, reply):
    text = types_module({"r": bundle("r", inputs, reply), "s": bundle("s", {"type": "object", "properties": {"p": reply}})})
    code = compile(text, "pm_types.py", "exec")  # valid Python
    exec(code, {"__name__": "pm_types_property"})  # and importable: the functional forms and aliases evaluate


# any text at all: printable or not, NUL, lone surrogates, line and paragraph separators, bidi
# controls, quotes and backslashes (also as the runs a docstring or an escape is made of)
_CHARS = st.one_of(st.characters(), st.characters(categories=["Cs", "Cc", "Cf", "Zl", "Zp", "Zs", "Co", "Cn"]))
_RUNS = st.sampled_from(['"', '"""', '""""', "\\", "\\N{BULLET}", "\\u", "\\x0", "'", "'''", "#", "{", "}", "\n", "\r", "\0", " "])
any_text = st.lists(st.one_of(_CHARS, _RUNS), max_size=40).map("".join)


def _one_line(text: str) -> str:
    return " ".join(text.split())[:200]


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(
    role=any_text,
    description=any_text,
    key=any_text,
    key_doc=any_text,
    enum=st.lists(any_text, max_size=3),
    contract=any_text,
    path=any_text,
)
@example(role="r", description='NUL \0 """ \\', key="k\0", key_doc='\0"""\\', enum=["\0", '"""'], contract="c\udc80", path='a"""b\\.py')
@example(role="", description="\ud800", key="", key_doc="", enum=[], contract="", path="")  # found by the property: a class docstring
@example(role="r\ud800", description='ends in a quote"', key="\udc80", key_doc="\u202e", enum=["\udfff"], contract="", path="\0\n")
def test_any_text_gives_a_module_that_compiles_imports_and_says_it_back(tmp_path, role, description, key, key_doc, enum, contract, path):
    """Descriptions, ids, keys, enum values and the module's path, whatever they hold: the module is
    printable source that compiles and imports, and the inputs' docstring reads back as the description."""
    inputs: dict[str, Any] = {"type": "object", "required": ["topic"], "properties": {"topic": {"type": "string", "description": key_doc}}}
    if enum:
        inputs["properties"]["tone"] = {"enum": enum, "description": description}
    reply = {"type": "object", "properties": {key: {"type": "string", "description": key_doc}}}
    output = Contract(contract, "json", reply, "J.")
    one = RoleBundle(role, "o200k_base", Budget(1000, 100), "\n\n", (), inputs, output=output, description=description)
    text = types_module({role: one}, path=path)
    assert all(c.isprintable() or c == "\n" for c in text), "a character that is not printable reached the source"
    compile(text, "pm_types.py", "exec")
    module = load_module(text, tmp_path)  # written as UTF-8 and imported
    doc = _one_line(description) or _one_line(f"The render state of role `{role}`.")
    doc = "".join(f"\\u{ord(c):04x}" if "\ud800" <= c <= "\udfff" else c for c in doc)  # a lone surrogate reads back as its escape
    assert getattr(module, pascal(role) + "Inputs").__doc__.rstrip(" ") == doc.rstrip(" ")


# -- the command and compile --check ------------------------------------------------------


def test_types_writes_the_module(make_project, monkeypatch):
    root = notes_project(make_project)
    monkeypatch.chdir(root)
    out = run("types", "-o", "app/pm_types.py")
    assert out.exit_code == 0, out.output
    assert out.output == "wrote app/pm_types.py\n"
    text = (root / "app" / "pm_types.py").read_text()
    assert "class NoteInputs(TypedDict):" in text and "class NoteReplyReply(TypedDict):" in text
    assert "    promptmill types -o app/pm_types.py\n" in text


def test_types_defaults_to_the_configured_path(make_project, monkeypatch):
    root = notes_project(make_project)
    monkeypatch.chdir(root)
    assert run("types").exit_code == 0
    assert (root / "app" / "pm_types.py").is_file()


def test_types_without_a_path_is_a_usage_error(make_project, monkeypatch):
    root = notes_project(make_project, config="prompts: prompts\n")
    monkeypatch.chdir(root)
    out = run("types")
    assert out.exit_code == 2 and "-o FILE" in out.output


def test_types_never_overwrites_a_file_it_did_not_write(make_project, monkeypatch):
    root = notes_project(make_project)
    monkeypatch.chdir(root)
    mine = root / "app" / "pm_types.py"
    mine.parent.mkdir()
    mine.write_text("# my own module\n")
    out = run("types")
    assert out.exit_code == 1
    assert "error[PM018]" in out.output and "was not written by `promptmill types`" in out.output
    assert mine.read_text() == "# my own module\n"


def test_compile_check_fails_when_the_module_is_missing_or_stale(make_project, monkeypatch):
    root = notes_project(make_project)
    monkeypatch.chdir(root)
    assert run("compile").exit_code == 0
    missing = run("compile", "--check")
    assert missing.exit_code == 1
    assert "app/pm_types.py: error[PM019] the types module app/pm_types.py does not exist" in missing.output
    assert "hint: regenerate it: promptmill types -o app/pm_types.py" in missing.output
    assert run("types").exit_code == 0
    assert run("compile", "--check").exit_code == 0
    # a template change the module was not regenerated for
    (root / "prompts" / "note.yaml").write_text(ROLE.format(id="note").replace("tone:", "mood:").replace("tone |", "mood |"))
    assert run("compile").exit_code == 0
    stale = run("compile", "--check")
    assert stale.exit_code == 1
    assert "error[PM019] the types module app/pm_types.py is stale" in stale.output
    assert run("types").exit_code == 0
    assert run("compile", "--check").exit_code == 0


def test_a_template_without_a_types_setting_is_not_checked(make_project, monkeypatch):
    root = notes_project(make_project, config="prompts: prompts\n")
    monkeypatch.chdir(root)
    assert run("compile").exit_code == 0
    assert run("compile", "--check").exit_code == 0


def test_the_types_setting_is_checked_by_the_project_schema(make_project, monkeypatch):
    root = notes_project(make_project, config=textwrap.dedent("prompts: prompts\ntypes:\n  path: app/pm_types.txt\n"))
    monkeypatch.chdir(root)
    out = run("compile")
    assert out.exit_code == 1 and "promptmill.yaml:3:9" in out.output
