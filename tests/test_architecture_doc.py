"""docs/ARCHITECTURE.md's module map stays true to the package.

- every module under compiler/promptmill (subpackages included) has exactly one
  row, and every row names a module that exists;
- every module marked `runtime` or `both` imports neither yaml, jsonschema,
  watchdog nor click at import time (each checked in a fresh interpreter);
- rendering every shipped role for every provider, turning it into payloads,
  a report and a parsed reply imports no promptmill module outside those rows.
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
SIDES = {"runtime", "both", "compile", "CLI"}
FORBIDDEN = ("yaml", "jsonschema", "watchdog", "click")
ROW = re.compile(r"^\|\s*`([^`]+)`\s*\|\s*([^|]+?)\s*\|")


def _module_map() -> dict[str, str]:
    """Rows of the module map table: relative path -> side."""
    text = DOC.read_text(encoding="utf-8")
    section = text.split("## Module map", 1)[1].split("\n## ", 1)[0]
    rows: dict[str, str] = {}
    for line in section.splitlines():
        m = ROW.match(line)
        if m is None:
            continue
        path, side = m.group(1), m.group(2)
        assert path not in rows, f"{path} is listed twice in the module map"
        rows[path] = side
    return rows


def _modules_on_disk() -> set[str]:
    return {p.relative_to(PACKAGE).as_posix() for p in PACKAGE.rglob("*.py") if "__pycache__" not in p.parts}


def _dotted(path: str) -> str:
    parts = ["promptmill", *path[: -len(".py")].split("/")]
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


MAP = _module_map()
RUNTIME_SIDE = sorted(p for p, side in MAP.items() if side in ("runtime", "both"))


def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(ROOT / "compiler")}


def test_map_lists_every_module_and_nothing_else() -> None:
    on_disk = _modules_on_disk()
    assert on_disk, "no modules found: wrong package path?"
    missing = sorted(on_disk - set(MAP))
    extra = sorted(set(MAP) - on_disk)
    assert not missing, f"modules missing from docs/ARCHITECTURE.md's module map: {missing}"
    assert not extra, f"docs/ARCHITECTURE.md lists modules that do not exist: {extra}"


def test_every_side_is_known() -> None:
    bad = {p: side for p, side in MAP.items() if side not in SIDES}
    assert not bad, f"unknown sides (use one of {sorted(SIDES)}): {bad}"


def test_runtime_column_is_not_empty() -> None:
    # guards the parser: a table it cannot read would make the import test vacuous
    assert len(RUNTIME_SIDE) >= 20


@pytest.fixture(scope="module")
def import_results() -> dict[str, subprocess.CompletedProcess[str]]:
    """Import each runtime/both module in its own fresh interpreter (run in parallel)."""
    code = (
        "import importlib, json, sys\n"
        "importlib.import_module(sys.argv[1])\n"
        f"print(json.dumps(sorted(set({FORBIDDEN!r}) & set(sys.modules))))\n"
    )
    procs = {
        path: subprocess.Popen(
            [sys.executable, "-c", code, _dotted(path)],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=_env(), cwd=ROOT,
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
    assert result.returncode == 0, f"importing {_dotted(path)} failed:\n{result.stderr}"
    imported = json.loads(result.stdout.strip().splitlines()[-1])
    assert imported == [], f"{_dotted(path)} is marked {MAP[path]} but importing it imports {imported}"


def test_render_path_stays_inside_the_runtime_rows() -> None:
    """Everything the runtime imports while rendering is marked runtime or both."""
    states = {
        p.name.split(".")[0]: yaml.safe_load(p.read_text(encoding="utf-8"))
        for p in sorted((ROOT / "prompts" / "examples").glob("*.state.yaml"))
    }
    assert len(states) >= 5
    code = (
        "import json, sys, promptmill\n"
        "from promptmill.core.errors import PromptmillError\n"
        "from promptmill.runtime.wire import PROVIDERS\n"
        "states = json.load(sys.stdin)\n"
        f"rt = promptmill.load({str(ROOT / 'build')!r})\n"
        "done = 0\n"
        "for role, state in states.items():\n"
        "    for provider in PROVIDERS:\n"
        "        try:\n"
        "            req = rt.render(role, state, provider=provider)\n"
        "            req.to_payload()\n"
        "            req.report()\n"
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
        [sys.executable, "-c", code], input=json.dumps(states), capture_output=True, text=True,
        env=_env(), cwd=ROOT, timeout=300,
    )
    assert out.returncode == 0, out.stderr
    lines = out.stdout.strip().splitlines()
    assert int(lines[-2]) >= len(states) * 3, "too few renders succeeded for the check to mean much"
    allowed = {_dotted(p) for p in RUNTIME_SIDE}
    outside = sorted(set(json.loads(lines[-1])) - allowed)
    assert not outside, f"the render path imports modules not marked runtime or both: {outside}"
