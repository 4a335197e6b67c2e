"""docs/ARCHITECTURE.md's tour of the folders stays true to the package.

- every folder of compiler/promptmill with modules has a `### `folder/`` paragraph,
  every paragraph names a folder that exists, and each module is named in its
  folder's paragraph;
- every module of the runtime side (core/, runtime/, wires/, explain/, replies/ and
  promptmill/__init__.py) imports
  neither yaml, jsonschema, watchdog nor click at import time, nor boto3 (the
  `bedrock` extra, needed to send only), each checked in a fresh interpreter;
- rendering every shipped role for every provider, turning it into payloads,
  a report and a parsed reply imports no promptmill module outside those
  folders, and no more of them than RENDER_BUDGET.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "compiler" / "promptmill"
DOC = ROOT / "docs" / "ARCHITECTURE.md"
FORBIDDEN = ("yaml", "jsonschema", "watchdog", "click", "boto3", "botocore")
RUNTIME_FOLDERS = ("core", "runtime", "wires", "explain", "replies")
# promptmill modules (packages included) the render below loads, besides the wire modules the registry names
# (the render tries every wire, one module each: adding a wire is adding a module)
# 47 before wires/, explain/, replies/ and runtime/filters/ (their packages, runtime/registry.py, placed.py,
# filters/plain.py), runtime/itemproof.py and runtime/asciibpe.py
RENDER_BUDGET = 55
HEADING = re.compile(r"^### `([a-z_/]+)/`\s*$", re.M)


def _paragraphs() -> dict[str, str]:
    """Folder -> the text of its paragraph in the tour."""
    text = DOC.read_text(encoding="utf-8")
    section = text.split("## The folders", 1)[1].split("\n## ", 1)[0]
    parts = HEADING.split(section)
    return {parts[i]: parts[i + 1] for i in range(1, len(parts), 2)}


def _folders_on_disk() -> dict[str, list[str]]:
    """Folder (relative, posix) -> its module file names, __init__.py aside."""
    out: dict[str, list[str]] = {}
    for init in PACKAGE.rglob("__init__.py"):
        folder = init.parent.relative_to(PACKAGE).as_posix()
        if folder != ".":
            out[folder] = sorted(p.name for p in init.parent.glob("*.py") if p.name != "__init__.py")
    return out


def _dotted(path: Path) -> str:
    parts = ["promptmill", *path.relative_to(PACKAGE).with_suffix("").parts]
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


PARAGRAPHS = _paragraphs()
RUNTIME_SIDE = sorted(
    [_dotted(PACKAGE / "__init__.py")] + [_dotted(p) for folder in RUNTIME_FOLDERS for p in (PACKAGE / folder).rglob("*.py")]
)


def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(ROOT / "compiler")}


def test_every_folder_has_a_paragraph_and_names_its_modules() -> None:
    on_disk = _folders_on_disk()
    assert len(on_disk) >= 8, "no folders found: wrong package path?"
    assert len(PARAGRAPHS) >= 8, "the tour's headings were not found: the check would be vacuous"
    assert not sorted(set(on_disk) - set(PARAGRAPHS)), (
        f"folders without a paragraph in docs/ARCHITECTURE.md: {sorted(set(on_disk) - set(PARAGRAPHS))}"
    )
    assert not sorted(set(PARAGRAPHS) - set(on_disk)), f"paragraphs for folders that do not exist: {sorted(set(PARAGRAPHS) - set(on_disk))}"
    unnamed = {f: [m for m in mods if f"`{m}`" not in PARAGRAPHS[f]] for f, mods in on_disk.items()}
    unnamed = {f: ms for f, ms in unnamed.items() if ms}
    assert not unnamed, f"modules not named in their folder's paragraph: {unnamed}"


def test_runtime_side_is_not_empty() -> None:
    # guards the glob: an empty list would make the import test vacuous
    assert len(RUNTIME_SIDE) >= 30


@pytest.fixture(scope="module")
def import_results() -> dict[str, subprocess.CompletedProcess[str]]:
    """Import each module of core/ and runtime/ in its own fresh interpreter (run in parallel)."""
    code = (
        "import importlib, json, sys\n"
        "importlib.import_module(sys.argv[1])\n"
        f"print(json.dumps(sorted(set({FORBIDDEN!r}) & set(sys.modules))))\n"
    )
    procs = {
        path: subprocess.Popen(
            [sys.executable, "-c", code, path],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=_env(),
            cwd=ROOT,
        )
        for path in RUNTIME_SIDE
    }
    results = {}
    for path, proc in procs.items():
        out, err = proc.communicate(timeout=120)
        results[path] = subprocess.CompletedProcess(proc.args, proc.returncode, out, err)
    return results


@pytest.mark.parametrize("path", RUNTIME_SIDE)
def test_runtime_module_imports_no_compile_time_package(path: str, import_results) -> None:
    result = import_results[path]
    assert result.returncode == 0, f"importing {path} failed:\n{result.stderr}"
    imported = json.loads(result.stdout.strip().splitlines()[-1])
    assert imported == [], f"{path} is on the runtime side but importing it imports {imported}"


def test_render_path_stays_inside_the_runtime_rows() -> None:
    """Everything the runtime imports while rendering lives on the runtime side."""
    states = {
        p.name.split(".")[0]: yaml.safe_load(p.read_text(encoding="utf-8"))
        for p in sorted((ROOT / "prompts" / "examples").glob("*.state.yaml"))
    }
    assert len(states) >= 5
    code = (
        "import json, sys, promptmill\n"
        "from promptmill.core.errors import PromptmillError\n"
        "from promptmill.runtime.registry import WIRE_NAMES\n"
        "states = json.load(sys.stdin)\n"
        f"rt = promptmill.load({str(ROOT / 'build')!r})\n"
        "done = 0\n"
        "for role, state in states.items():\n"
        "    for provider in WIRE_NAMES:\n"
        "        try:\n"
        "            req = rt.render(role, state, provider=provider)\n"
        "            req.to_payload()\n"
        "            req.explain()\n"
        "        except PromptmillError:\n"  # a role may not suit a provider (e.g. PM842)
        "            continue\n"
        "        done += 1\n"
        "        for reply in ('{}', 'no json here', '[1, 2]'):\n"
        "            try:\n"
        "                req.parse_reply(reply)\n"
        "            except PromptmillError:\n"
        "                pass\n"
        "print(done)\n"
        "print(json.dumps(sorted(m for m in sys.modules if m == 'promptmill' or m.startswith('promptmill.'))))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        input=json.dumps(states),
        capture_output=True,
        text=True,
        env=_env(),
        cwd=ROOT,
        timeout=300,
    )
    assert out.returncode == 0, out.stderr
    lines = out.stdout.strip().splitlines()
    assert int(lines[-2]) >= len(states) * 3, "too few renders succeeded for the check to mean much"
    loaded = set(json.loads(lines[-1]))
    outside = sorted(loaded - set(RUNTIME_SIDE))
    assert not outside, f"the render path imports modules outside {RUNTIME_FOLDERS}: {outside}"
    from promptmill.runtime.registry import WIRES

    wire_modules = {target.split(":")[0] for target in WIRES.values()}
    assert wire_modules <= loaded, "the render did not reach every wire"
    rest = loaded - wire_modules
    assert len(rest) <= RENDER_BUDGET, f"rendering loads {len(rest)} promptmill modules besides the wires (budget {RENDER_BUDGET})"


def _strict_modules() -> set[str]:
    """The modules pyproject.toml's mypy override checks with --strict's flags."""
    import tomllib

    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    blocks = [b for b in config["tool"]["mypy"].get("overrides", []) if b.get("disallow_any_generics")]
    assert len(blocks) == 1, "expected one [[tool.mypy.overrides]] block with --strict's flags"
    return set(blocks[0]["module"])


def test_the_types_section_names_the_strict_folders_pyproject_lists() -> None:
    text = DOC.read_text(encoding="utf-8")
    assert "### Strict folders" in text, "docs/ARCHITECTURE.md lost its 'Strict folders' part"
    para = text.split("### Strict folders", 1)[1].split(" are checked as ", 1)[0]
    named = set(re.findall(r"`([a-z_]+)(?:/|\.py)`", para))
    listed = {m.removeprefix("promptmill").removeprefix(".").removesuffix(".*") or "__init__" for m in _strict_modules()}
    assert named == listed, f"the doc names {sorted(named)}, pyproject.toml's override lists {sorted(listed)}"
    on_disk = set(_folders_on_disk()) | {p.stem for p in PACKAGE.glob("*.py")}
    assert listed <= on_disk, f"the override lists modules that do not exist: {sorted(listed - on_disk)}"


# what a render must not load: compile time (the template checks, the YAML loader, click), what comes
# after the request (the account of a render, the reply reader) and Jinja, unless a section needs it
NOT_ON_THE_RENDER_PATH = (
    "jinja2",
    "yaml",
    "jsonschema",
    "click",
    "promptmill.compiling",
    "promptmill.lints",
    "promptmill.compose",
    "promptmill.source",
    "promptmill.explain",
    "promptmill.replies",
)


def _loaded_by_render(role: str) -> list[str]:
    state = yaml.safe_load((ROOT / "prompts" / "examples" / f"{role}.state.yaml").read_text(encoding="utf-8"))
    code = (
        "import json, sys, promptmill\n"
        f"rt = promptmill.load({str(ROOT / 'build')!r})\n"
        "state = json.load(sys.stdin)\n"
        f"for wire in ('text', 'openai', 'anthropic'):\n"
        f"    rt.render({role!r}, state, provider=wire).to_payload()\n"
        f"print(json.dumps(sorted(m for m in sys.modules if m.startswith({NOT_ON_THE_RENDER_PATH!r}))))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], input=json.dumps(state), capture_output=True, text=True, env=_env(), cwd=ROOT, timeout=120
    )
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("role", ["executor", "planner", "companion-chat", "replanner"])
def test_a_render_loads_nothing_after_the_request_and_no_jinja(role: str) -> None:
    """The bundle is the program: these roles' templates all compiled to plans, and the compiler proved
    what their items read, so a render (text, OpenAI and Anthropic payloads) imports no Jinja, nothing of
    compile time and neither explain/ nor replies/."""
    assert _loaded_by_render(role) == []


def test_a_role_with_a_fallback_section_loads_jinja_and_only_jinja() -> None:
    """The extractor has a section whose template needs Jinja (docs/bundle-format.md, fallback sections):
    Jinja loads for it, nothing else does; this also shows the check above can see Jinja load."""
    assert _loaded_by_render("extractor") == sorted(m for m in _loaded_by_render("extractor") if m.startswith("jinja2"))
    assert "jinja2" in _loaded_by_render("extractor")
