"""Generated types modules (`promptmill types`) checked by mypy and pyright, as an application would.

- a small application that uses the shipped prompts' module correctly passes both checkers; one with a
  misspelled state key and one reading a reply field the contract lacks each fail with the checker's words;
- round trip: every shipped role's example state (prompts/examples/<role>.state.yaml) type-checks against
  its inputs TypedDict, and a reply that jsonschema accepts against each contract type-checks against
  its reply type (one mypy run over all of them);
- a handful of random schemas (tests/schema_strategies.py) give modules that mypy --strict accepts;
- the starter project (`promptmill init`, one role) and projects of 0, 1, 2 and 7 roles give modules
  that mypy --strict accepts (one role: `render` has no overloads, its implementation is the typed one).

mypy runs in-process (mypy.api); pyright is the PyPI wrapper of the npm package, installed by the
dev extra. Both are slow, so each test batches its files into one run.
"""

from __future__ import annotations

import atexit
import json
import os
import shutil
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path
from typing import Any

import jsonschema
import yaml
from hypothesis import HealthCheck, Phase, example, given, settings
from mypy import api as mypy_api

import promptmill
from cli_inprocess import run_cli
from promptmill.compiling.typegen import pascal, types_module
from schema_strategies import documents

ROOT = Path(__file__).resolve().parents[1]
SHIPPED = ROOT / "prompts" / "promptmill_types.py"
BUILD = ROOT / "build"

APP = """\
import promptmill

from pm_types import ExecutorInputs, ExtractorMemoriesReply, render

rt = promptmill.load({build!r})
state: ExecutorInputs = {{"task_state": "goal: x", "subtask": {{"id": "s1", "description": "do it"}}}}
req = render(rt, "executor", state, budget=2000)
reply = req.parse_reply('{{"status": "done", "summary": "ok"}}')
status: str = reply["status"]
reason = reply.get("reason", "")
memories: ExtractorMemoriesReply = render(
    rt, "extractor", {{"subtask": {{"id": "a", "description": "b"}}, "tool_calls": [], "model_output": "x"}}
).parse_reply("[]")
print(status, reason, [m["summary"] for m in memories], req.tokens)
"""
BAD_KEY = """\
from pm_types import ExecutorInputs

state: ExecutorInputs = {"task_state": "goal: x", "subtask": {"id": "s1", "description": "do it"}, "sub_task": "s1"}
"""
BAD_REPLY = """\
import promptmill

from pm_types import render

rt = promptmill.load("build")
reply = render(rt, "executor", {"task_state": "x", "subtask": {"id": "s1", "description": "d"}}).parse_reply("{}")
print(reply["sumary"])
"""


_MYPY_CACHE: list[str] = []  # one cache folder for the module's runs, removed at exit


def mypy(folder: Path, *files: str) -> tuple[int, str]:
    """mypy --strict on `files` (from the working directory). The runs share an incremental cache in a
    temporary folder, so promptmill and the standard library are analysed once per test process rather than
    once per run (each took seconds); a file whose text changed is checked again, as mypy's cache keys on it."""
    if not _MYPY_CACHE:
        _MYPY_CACHE.append(tempfile.mkdtemp(prefix="promptmill-mypy-cache-"))
        atexit.register(shutil.rmtree, _MYPY_CACHE[0], ignore_errors=True)
    limit = sys.getrecursionlimit()  # mypy raises the process's limit to 2**14 and leaves it there: later tests
    try:  # in this process (the batch files' "nested too deeply" cases) depend on Python's own limit
        out, err, status = mypy_api.run(["--strict", "--cache-dir", _MYPY_CACHE[0], "--no-error-summary", "--hide-error-context", *files])
    finally:
        sys.setrecursionlimit(limit)
    return status, out + err


def pyright(folder: Path, *files: str) -> tuple[int, str]:
    exe = shutil.which("pyright")
    assert exe is not None, "pyright is in the dev extra: pip install -e '.[dev]'"
    (folder / "pyrightconfig.json").write_text(json.dumps({"typeCheckingMode": "strict", "pythonVersion": "3.11"}))
    done = subprocess.run([exe, *files], capture_output=True, text=True, cwd=folder, timeout=600)
    return done.returncode, done.stdout + done.stderr


def app_folder(tmp_path: Path) -> Path:
    folder = tmp_path / "app"
    folder.mkdir()
    shutil.copy(SHIPPED, folder / "pm_types.py")
    (folder / "good.py").write_text(APP.format(build=str(BUILD)))
    (folder / "bad_key.py").write_text(BAD_KEY)
    (folder / "bad_reply.py").write_text(BAD_REPLY)
    return folder


def lines_of(output: str, name: str) -> str:
    return "\n".join(line for line in output.splitlines() if name in line)


def test_mypy_accepts_the_app_and_catches_a_wrong_key_and_a_wrong_reply_field(tmp_path, monkeypatch):
    folder = app_folder(tmp_path)
    monkeypatch.chdir(folder)
    status, out = mypy(folder, "pm_types.py", "good.py", "bad_key.py", "bad_reply.py")
    assert status == 1, out
    assert lines_of(out, "good.py") == "" and lines_of(out, "pm_types.py") == "", out
    assert 'bad_key.py:3: error: Extra key "sub_task" for TypedDict "ExecutorInputs"  [typeddict-unknown-key]' in out
    assert 'bad_reply.py:7: error: TypedDict "ExecutorResultReply" has no key "sumary"  [typeddict-item]' in out


def test_pyright_accepts_the_app_and_catches_a_wrong_key_and_a_wrong_reply_field(tmp_path):
    folder = app_folder(tmp_path)
    status, out = pyright(folder, "pm_types.py", "good.py", "bad_key.py", "bad_reply.py")
    assert status == 1, out
    errors = [line for line in out.splitlines() if " - error: " in line]
    assert not [e for e in errors if "good.py" in e or "pm_types.py" in e], out
    assert '"sub_task" is an undefined item in type "ExecutorInputs"' in out
    assert '"sumary" is not a defined key in "ExecutorResultReply"' in out
    assert [e.split(" - ")[0].rsplit("/", 1)[1] for e in errors if "bad_key.py" in e] == ["bad_key.py:3:100"], out


def example_reply(schema: Any) -> Any:
    """A reply with every property, at the sizes the schema asks for (checked by jsonschema after)."""
    if "enum" in schema:
        return schema["enum"][0]
    kind = schema.get("type")
    if kind == "object":
        return {key: example_reply(sub) for key, sub in schema.get("properties", {}).items()}
    if kind == "array":
        return [example_reply(schema.get("items", {"type": "string"})) for _ in range(max(1, schema.get("minItems", 1)))]
    if kind == "string":
        return "x" * max(1, schema.get("minLength", 1))
    if kind == "integer":
        return schema.get("minimum", 1)
    if kind == "number":
        return 0.5
    if kind == "boolean":
        return True
    return None


def test_round_trip_example_states_and_replies_type_check(tmp_path, monkeypatch):
    rt = promptmill.load(BUILD)
    lines = ["from pm_types import *  # noqa: F403", ""]
    checked = set()
    for role in rt.roles:
        example = ROOT / "prompts" / "examples" / f"{role}.state.yaml"
        state = yaml.safe_load(example.read_text(encoding="utf-8"))
        rt.render(role, state)  # the example is a valid state
        lines.append(f"state_{pascal(role)}: {pascal(role)}Inputs = {state!r}")
        contract = rt.bundle(role).output
        if contract is not None and contract.id not in checked:
            checked.add(contract.id)
            reply = example_reply(contract.schema)
            jsonschema.validate(reply, contract.schema)
            lines.append(f"reply_{pascal(contract.id)}: {pascal(contract.id)}Reply = {reply!r}")
    assert len(checked) == 9 and len(rt.roles) == 11
    folder = tmp_path / "rt"
    folder.mkdir()
    shutil.copy(SHIPPED, folder / "pm_types.py")
    (folder / "examples.py").write_text("\n".join(lines) + "\n")
    monkeypatch.chdir(folder)
    status, out = mypy(folder, "pm_types.py", "examples.py")
    assert status == 0, out
    # and the check has teeth: one misspelled key in the same file fails it
    (folder / "examples.py").write_text("\n".join(lines).replace("'task_state'", "'taskstate'", 1) + "\n")
    status, out = mypy(folder, "pm_types.py", "examples.py")
    assert status == 1 and '"taskstate"' in out, out


@settings(
    max_examples=4, deadline=None, derandomize=True, phases=(Phase.explicit, Phase.generate), suppress_health_check=[HealthCheck.too_slow]
)
@given(documents(), documents())
@example({"type": "string"}, False)  # inputs that are no mapping: render's implementation took only mappings
def test_modules_from_random_schemas_type_check(tmp_path_factory, inputs, reply):
    from promptmill.runtime.bundle import Budget, Contract, RoleBundle

    def bundle(role: str, schema: Any, out: Any) -> RoleBundle:
        return RoleBundle(role, "o200k_base", Budget(1000, 100), "\n\n", (), schema, output=Contract("c", "json", out, "JSON."))

    folder = tmp_path_factory.mktemp("random")
    (folder / "pm_types.py").write_text(types_module({"r": bundle("r", inputs, reply), "s": bundle("s", {"type": "object"}, reply)}))
    (folder / "use.py").write_text(
        textwrap.dedent(
            """\
            import promptmill

            from pm_types import CReply, render

            def reply_of(rt: promptmill.Runtime, state: dict[str, object]) -> CReply:
                return render(rt, "s", state).parse_reply("{}")
            """
        )
    )
    cwd = os.getcwd()
    os.chdir(folder)
    try:
        status, out = mypy(folder, "pm_types.py", "use.py")
    finally:
        os.chdir(cwd)
    assert status == 0, out


STARTER_APP = """\
import promptmill

from pm_types import AnswerReply, HelpdeskInputs, render


def answer(rt: promptmill.Runtime, state: HelpdeskInputs) -> AnswerReply:
    reply = render(rt, "helpdesk", state).parse_reply('{"answer": "Yes.", "sources": []}')
    sources: list[str] = reply["sources"]
    print(sources)
    return reply
"""


def test_the_starter_projects_module_passes_mypy_strict(tmp_path, monkeypatch):
    """The careless case: `promptmill init`, then `promptmill types` (one role), then mypy --strict."""
    for args in (["init", "demo"], ["types", "demo", "-o", "demo/app/pm_types.py"]):
        done = run_cli(tmp_path, *args)  # in-process (tests/cli_inprocess.py): the module is the point here
        assert done.returncode == 0, done.stdout + done.stderr
    app = tmp_path / "demo" / "app"
    (app / "use.py").write_text(STARTER_APP)
    monkeypatch.chdir(app)
    status, out = mypy(app, "pm_types.py", "use.py")
    assert status == 0, out


def _role(role: str, reply: Any, inputs: Any) -> Any:
    from promptmill.runtime.bundle import Budget, Contract, RoleBundle

    output = None if reply is None else Contract(f"{role}-out", "json", reply, "JSON.")
    return RoleBundle(role, "o200k_base", Budget(1000, 100), "\n\n", (), inputs, output=output)


OBJECT = {"type": "object", "required": ["a"], "properties": {"a": {"type": "string"}}}
ROLE_SETS = {
    "none": {},
    "one_with_reply": {"r": (OBJECT, OBJECT)},
    "one_without_reply": {"r": (None, OBJECT)},
    "one_with_string_inputs": {"r": ({"type": "array", "items": {"type": "integer"}}, {"type": "string"})},
    "one_with_any_inputs": {"r": ({"type": "string"}, True)},
    "two": {"r": (OBJECT, OBJECT), "s": (None, {"type": "string"})},
    "many": {f"role-{i}": ((OBJECT if i % 2 else {"type": "string"}), (OBJECT if i % 3 else True)) for i in range(7)},
}


def test_modules_for_any_number_of_roles_pass_mypy_strict(tmp_path, monkeypatch):
    """0, 1 (with a reply, without one, inputs that are no mapping), 2 and 7 roles: every module passes
    mypy --strict, and a typed call through each one-role module keeps its reply type (one mypy run)."""
    files = []
    for name, roles in ROLE_SETS.items():
        bundles = {role: _role(role, reply, inputs) for role, (reply, inputs) in roles.items()}
        (tmp_path / f"pm_{name}.py").write_text(types_module(bundles), encoding="utf-8")
        files.append(f"pm_{name}.py")
    (tmp_path / "use_one.py").write_text(
        textwrap.dedent(
            """\
            import promptmill

            from pm_one_with_reply import RInputs, ROutReply, render


            def reply_of(rt: promptmill.Runtime, state: RInputs) -> ROutReply:
                return render(rt, "r", state).parse_reply("{}")
            """
        )
    )
    monkeypatch.chdir(tmp_path)
    status, out = mypy(tmp_path, *files, "use_one.py")
    assert status == 0, out


def readme_app() -> str:
    lines = (ROOT / "docs" / "typed.md").read_text(encoding="utf-8").split("\n")
    start = lines.index("<!-- python-types-app -->")
    assert lines[start + 1] == "```python"
    end = lines.index("```", start + 2)
    return "\n".join(lines[start + 2 : end]) + "\n"


def test_the_readme_flow_a_renamed_input_is_caught_by_mypy(tmp_path, monkeypatch):
    """docs/typed.md, "Typed application code": the app passes; after `task_state` becomes `task` in the
    executor's template and `promptmill types` runs, mypy names the stale key."""
    project = tmp_path / "project"
    shutil.copytree(ROOT / "prompts", project / "prompts", ignore=shutil.ignore_patterns("*.py"))
    shutil.copy(ROOT / "promptmill.yaml", project / "promptmill.yaml")
    (project / "app.py").write_text(readme_app())
    monkeypatch.chdir(project)
    promptmill.compile(".")
    promptmill.write_types("prompts/promptmill_types.py", ".")
    status, out = mypy(project, "app.py")
    assert status == 0, out
    role = project / "prompts" / "roles" / "executor.yaml"
    text = role.read_text(encoding="utf-8")
    renamed = text.replace("required: [task_state, subtask]", "required: [task, subtask]")
    renamed = renamed.replace("\n    task_state:", "\n    task:").replace("{{ task_state }}", "{{ task }}")
    assert renamed.count("task_state") == text.count("task_state") - 3
    role.write_text(renamed, encoding="utf-8")
    promptmill.write_types("prompts/promptmill_types.py", ".")
    status, out = mypy(project, "app.py")
    assert status == 1
    assert 'app.py:6: error: Missing key "task" for TypedDict "ExecutorInputs"  [typeddict-item]' in out
    assert 'app.py:6: error: Extra key "task_state" for TypedDict "ExecutorInputs"  [typeddict-unknown-key]' in out
