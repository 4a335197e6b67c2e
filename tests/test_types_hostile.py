"""Hostile and careless input for `promptmill types` and the text it copies (issue 33), through the CLI
(in-process, or as a real process with its address space capped where a regression could read without end
or wait: /dev/zero, a FIFO, a huge file, output that is not UTF-8):

- a description, title, id or enum value holding NUL, a backslash, triple quotes, a bidi override or a
  line separator gives a module that imports (and says the text back, escaped);
- a lone surrogate written as a YAML escape (`"\\udc80"`) is PM102 at the escape in compile, lint and
  types (it was PM000 in compile and types, and lint said nothing); a surrogate pair is one character;
- `-o gen/` and `-o EXISTING_FOLDER` write `promptmill_types.py` inside the folder;
- `compile --check` reads the module promptmill.yaml names through the guard: a link to /dev/zero is
  PM017, a FIFO is PM100 (no hang), a huge file is stale without being read;
- writes never go through a link: a folder that links out of the project is PM017, a module path outside
  the project in promptmill.yaml is PM017, nothing outside changes.
"""

from __future__ import annotations

import os
import resource
import subprocess
import sys
from pathlib import Path

import pytest

from cli_inprocess import run_cli

COMPILER = Path(__file__).resolve().parents[1] / "compiler"
LIMIT_BYTES = 1 << 30  # the child's address space: today's code reading /dev/zero fails fast, not the machine


def _limit() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (LIMIT_BYTES, LIMIT_BYTES))


def cli(root: Path, *args: str, timeout: float = 60, process: bool = False) -> subprocess.CompletedProcess[str]:
    """`promptmill ARGS` in `root`: in-process (tests/cli_inprocess.py), or with `process` as a child with its
    address space capped (the cases that read /dev/zero, a FIFO or a huge file, where a regression would
    exhaust memory or wait forever, and those whose output holds bytes that are not UTF-8)."""
    if not process:
        done = run_cli(root, *args, keys=True)
        said = done.stdout + done.stderr
        assert "Traceback" not in said and "PM000" not in said, said
        return done
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in (str(COMPILER), os.environ.get("PYTHONPATH", "")) if p)}
    done = subprocess.run(
        [sys.executable, "-m", "promptmill.cli", *args],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        errors="replace",
        timeout=timeout,
        preexec_fn=_limit,
    )
    said = done.stdout + done.stderr
    assert "Traceback" not in said and "PM000" not in said, said
    return done


HOSTILE_ROLE = r"""kind: role
id: hostile
description: "NUL \0 here; quotes \"\"\" and \"\"\"\" ; a backslash \\ and \\N{BULLET}; bidi \u202e; LS \u2028; ends in a quote \""
inputs:
  type: object
  required: [topic]
  properties:
    topic: {type: string, description: "NUL \0, \"\"\" and \\ in a comment\r\nnext line \x1b[31m"}
    tone: {enum: ["\0", "\"\"\"", "\\", "\u202e", "a\nb"]}
sections:
  - id: intro
    title: "Title \0 \"\"\""
    text: "Hello \0 there."
output: hostile-reply
"""
HOSTILE_CONTRACT = r"""kind: output
id: hostile-reply
description: "reply \0 \"\"\""
style: json
instructions: Reply with JSON.
schema:
  type: object
  required: [note]
  properties:
    note: {type: string, description: "\0\"\"\"\\"}
    "we\u0000ird key": {type: integer, description: "\\"}
"""


def test_text_with_nul_quotes_and_backslashes_gives_a_module_that_imports(tmp_path):
    root = tmp_path / "p"
    (root / "prompts").mkdir(parents=True)
    (root / "prompts" / "hostile.yaml").write_text(HOSTILE_ROLE, encoding="utf-8")
    (root / "prompts" / "reply.yaml").write_text(HOSTILE_CONTRACT, encoding="utf-8")
    done = cli(root, "types", "-o", "app/pm_hostile.py")
    assert done.returncode == 0, done.stdout + done.stderr
    module = root / "app" / "pm_hostile.py"
    source = module.read_text(encoding="utf-8")
    assert "\0" not in source and "\x1b" not in source and "\u202e" not in source and "\u2028" not in source
    check = (
        "import pm_hostile as m\n"
        "doc = m.HostileInputs.__doc__\n"
        'assert doc.startswith(\'NUL \\0 here; quotes """ and\'), repr(doc)\n'
        "assert '\\\\N{BULLET}' in doc and '\\u202e' in doc, repr(doc)\n"
        "import typing\n"
        "tone = typing.get_type_hints(m.HostileInputs, include_extras=True)['tone']\n"
        "assert typing.get_args(typing.get_args(tone)[0]) == ('\\0', '\"\"\"', '\\\\', '\\u202e', 'a\\nb'), tone\n"
        "assert set(m.HostileReplyReply.__optional_keys__) == {'we\\0ird key'}\n"
        "print('imported')\n"
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join((str(COMPILER), str(module.parent)))}
    ran = subprocess.run([sys.executable, "-c", check], capture_output=True, text=True, env=env, timeout=60)
    assert ran.returncode == 0 and ran.stdout == "imported\n", ran.stdout + ran.stderr
    # the comment above `topic` holds the description escaped on one line
    assert '    # NUL \\x00, \\"\\"\\" and \\\\ in a comment next line \\x1b[31m\n' not in source  # (not the docstring escaping)
    assert '    # NUL \\x00, """ and \\\\ in a comment next line \\x1b[31m\n' in source


# -- lone surrogates ------------------------------------------------------------------------

SURROGATE_PLACES = {
    "description": ('description: "ok \\udc80"\n', "prompts/r.yaml:3:18"),
    "section text": ("description: ok\n", "prompts/r.yaml:6:15"),
    "title": ("description: ok\n", "prompts/r.yaml:7:17"),
    "id": ("description: ok\n", "prompts/r.yaml:2:7"),
    "enum value": ("description: ok\n", "prompts/r.yaml:12:23"),
    "key": ("description: ok\n", "prompts/r.yaml:12:6"),
}


def surrogate_role(place: str) -> str:
    lines = [
        "kind: role",
        'id: "r\\ud800"' if place == "id" else "id: r",
        SURROGATE_PLACES[place][0].rstrip("\n") if place == "description" else "description: ok",
        "sections:",
        "  - id: a",
        '    text: "Hi \\udfff"' if place == "section text" else "    text: Hi",
        '    title: "Top \\udc80"' if place == "title" else "    title: Top",
        "inputs:",
        "  type: object",
        "  properties:",
        "    x: {type: string}",
        '    "\\udc80": {enum: ["a", "\\udbff"]}' if place in ("key", "enum value") else "    y: {enum: [a, b]}",
    ]
    if place == "enum value":
        lines[-1] = '    y: {enum: ["a", "b\\udbff"]}'
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("place", sorted(SURROGATE_PLACES))
@pytest.mark.parametrize("command", [["compile"], ["lint"], ["types", "-o", "t.py"]], ids=" ".join)
def test_a_lone_surrogate_is_pm102_at_the_escape(tmp_path, place, command):
    root = tmp_path / "p"
    (root / "prompts").mkdir(parents=True)
    (root / "prompts" / "r.yaml").write_text(surrogate_role(place), encoding="utf-8")
    done = cli(root, *command)
    said = done.stdout + done.stderr
    assert done.returncode == 1, said
    where = SURROGATE_PLACES[place][1]
    assert f"{where}: error[PM102] the text holds a lone surrogate U+" in said, said
    assert "cannot be encoded as UTF-8" in said
    assert not (root / "t.py").exists() and not list(root.glob("build/roles/*"))


def test_a_surrogate_pair_escape_is_the_character_it_writes(tmp_path):
    root = tmp_path / "p"
    (root / "prompts").mkdir(parents=True)
    (root / "prompts" / "r.yaml").write_text(
        'kind: role\nid: r\ndescription: "smile \\ud83d\\ude00"\nsections:\n  - id: a\n    text: "Hi \\uD83D\\uDE00"\n', encoding="utf-8"
    )
    done = cli(root, "compile")
    assert done.returncode == 0, done.stdout + done.stderr
    bundle = next((root / "build" / "roles").glob("r.*.json")).read_text(encoding="utf-8")
    assert '"text": "Hi \U0001f600"' in bundle


# -- -o FOLDER -------------------------------------------------------------------------------

ROLE = "kind: role\nid: r\ndescription: a role\nsections:\n  - id: a\n    text: Hello.\n"


def small_project(tmp_path: Path, config: str = "prompts: prompts\n") -> Path:
    root = tmp_path / "p"
    (root / "prompts").mkdir(parents=True)
    (root / "prompts" / "r.yaml").write_text(ROLE, encoding="utf-8")
    (root / "promptmill.yaml").write_text(config, encoding="utf-8")
    return root


@pytest.mark.parametrize("output", ["gen/", "gen"])
def test_o_a_folder_writes_the_default_name_inside_it(tmp_path, output):
    root = small_project(tmp_path)
    if output == "gen":
        (root / "gen").mkdir()
    done = cli(root, "types", "-o", output)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout == "wrote gen/promptmill_types.py\n"
    assert (root / "gen").is_dir() and (root / "gen" / "promptmill_types.py").is_file()
    assert "    promptmill types -o gen/promptmill_types.py\n" in (root / "gen" / "promptmill_types.py").read_text(encoding="utf-8")


# -- compile --check reads the module through the guard ---------------------------------------

CONFIG = "prompts: prompts\ntypes:\n  path: app/pm_types.py\n"


def test_compile_check_with_the_module_linked_to_dev_zero_is_pm017(tmp_path):
    root = small_project(tmp_path, CONFIG)
    (root / "app").mkdir()
    os.symlink("/dev/zero", root / "app" / "pm_types.py")
    done = cli(root, "compile", "--check", timeout=30, process=True)
    said = done.stdout + done.stderr
    assert done.returncode == 1, said
    assert "app/pm_types.py: error[PM017] app/pm_types.py: the types module is behind a symbolic link that leads out of" in said


def test_compile_check_with_the_module_a_fifo_is_pm100_without_waiting(tmp_path):
    root = small_project(tmp_path, CONFIG)
    (root / "app").mkdir()
    os.mkfifo(root / "app" / "pm_types.py")
    done = cli(root, "compile", "--check", timeout=30, process=True)
    said = done.stdout + done.stderr
    assert done.returncode == 1, said
    assert "app/pm_types.py: error[PM100] app/pm_types.py: the types module is a FIFO (named pipe)" in said


def test_compile_check_with_a_huge_module_says_stale(tmp_path):
    root = small_project(tmp_path, CONFIG)
    (root / "app").mkdir()
    with open(root / "app" / "pm_types.py", "wb") as fh:
        fh.truncate(3 << 30)  # sparse: 3 GB claimed, no disk used; more than the child may hold
    done = cli(root, "compile", "--check", timeout=30, process=True)
    said = done.stdout + done.stderr
    assert done.returncode == 1, said
    assert "error[PM019] the types module app/pm_types.py is stale" in said


# -- writes: never through a link, never outside what the command owns ---------------------------


def test_o_into_a_folder_that_links_out_of_the_project_is_pm017(tmp_path):
    root = small_project(tmp_path)
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    os.symlink(outside, root / "gen")
    done = cli(root, "types", "-o", "gen/")
    said = done.stdout + done.stderr
    assert done.returncode == 1 and "error[PM017]" in said and "symbolic link that leads out of" in said, said
    assert list(outside.iterdir()) == []


def test_o_a_link_is_refused_and_its_target_untouched(tmp_path):
    root = small_project(tmp_path)
    mine = tmp_path / "mine.py"
    mine.write_text("# mine\n")
    os.symlink(mine, root / "pm.py")
    done = cli(root, "types", "-o", "pm.py")
    said = done.stdout + done.stderr
    assert done.returncode == 1 and "error[PM018]: pm.py is a symbolic link" in said, said
    assert mine.read_text() == "# mine\n" and os.path.islink(root / "pm.py")


def test_a_configured_path_outside_the_project_is_pm017_in_types_and_compile_check(tmp_path):
    root = small_project(tmp_path, "prompts: prompts\ntypes:\n  path: ../outside.py\n")
    done = cli(root, "types")
    said = done.stdout + done.stderr
    assert done.returncode == 1 and "error[PM017]" in said and "lies outside the project" in said, said
    assert not (tmp_path / "outside.py").exists()
    assert cli(root, "compile").returncode == 0
    check = cli(root, "compile", "--check")
    assert check.returncode == 1 and "error[PM017] the types module" in check.stdout + check.stderr


def test_o_outside_the_project_is_the_users_choice(tmp_path):
    root = small_project(tmp_path)
    done = cli(root, "types", "-o", "../app/pm.py")
    assert done.returncode == 0, done.stdout + done.stderr
    text = (tmp_path / "app" / "pm.py").read_text(encoding="utf-8")
    assert f"    promptmill types -o {(tmp_path / 'app' / 'pm.py').as_posix()}\n" in text


def test_a_file_that_only_quotes_the_header_is_not_overwritten(tmp_path):
    root = small_project(tmp_path)
    quoting = root / "notes.py"
    quoting.write_text('NOTE = "Generated by `promptmill types`; do not edit. After a template change, regenerate it:"\n')
    before = quoting.read_text()
    done = cli(root, "types", "-o", "notes.py")
    assert done.returncode == 1 and "error[PM018]" in done.stdout + done.stderr
    assert quoting.read_text() == before


@pytest.mark.parametrize("command", ["lint", "compile"])
def test_a_file_name_that_is_not_utf8_is_pm102(tmp_path, command):
    root = tmp_path / "p"
    (root / "prompts").mkdir(parents=True)
    (root / "prompts" / os.fsdecode(b"h\xff.yaml")).write_text(ROLE, encoding="utf-8")
    done = cli(root, command, process=True)
    said = done.stdout + done.stderr
    assert done.returncode == 1, said
    assert "h\\xff.yaml: error[PM102] the name is not UTF-8 text (byte 0xFF)" in said, said
    assert not (root / "build" / "manifest.json").exists()
