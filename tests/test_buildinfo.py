"""Which runtime build is running (runtime/buildinfo.py, `promptmill --version`), in both states.

The development virtualenv installs promptmill editable: pure Python, nothing compiled.
CI's compiled step (.ci/run) installs the wheel built with PROMPTMILL_MYPYC=1 and runs
this file with PROMPTMILL_EXPECT_COMPILED=1: then every module of COMPILED must be
the extension, not the .py beside it.
"""

from __future__ import annotations

import ast
import importlib
import os
import subprocess
import sys
from pathlib import Path

import promptmill
from promptmill.runtime import buildinfo

ROOT = Path(__file__).resolve().parents[1]
EXPECT_COMPILED = os.environ.get("PROMPTMILL_EXPECT_COMPILED") == "1"


def test_the_running_build_is_the_expected_one():
    mods = [importlib.import_module(f"promptmill.{name}") for name in buildinfo.COMPILED]
    if EXPECT_COMPILED:
        assert buildinfo.compiled_modules() == buildinfo.COMPILED
        assert all(not m.__file__.endswith(".py") for m in mods), [m.__file__ for m in mods]
        assert buildinfo.build_description().startswith("compiled (mypyc): fit, fill, counting")
    else:
        assert buildinfo.compiled_modules() == ()
        assert all(m.__file__.endswith(".py") for m in mods)
        assert buildinfo.build_description() == "pure Python"


def test_version_says_which_build_runs():
    out = subprocess.run([sys.executable, "-m", "promptmill.cli", "--version"], capture_output=True, text=True, check=True).stdout
    assert out == f"promptmill, version {promptmill.__version__}\nruntime: {buildinfo.build_description()}\n"


def test_a_partly_compiled_install_names_both_halves(monkeypatch):
    monkeypatch.setattr(buildinfo, "_is_extension", lambda name: name in ("runtime.fit", "runtime.schema.closures"))
    assert buildinfo.compiled_modules() == ("runtime.fit", "runtime.schema.closures")
    desc = buildinfo.build_description()
    assert desc.startswith("compiled (mypyc): fit, closures; pure Python: fill, counting, statelimits")


def test_setup_py_compiles_exactly_compiled_and_only_when_asked():
    """setup.py reads COMPILED from buildinfo.py; every name is a module that exists.
    Without PROMPTMILL_MYPYC (or for metadata only) it never imports mypyc."""
    for name in buildinfo.COMPILED:
        assert (ROOT / "compiler" / "promptmill" / Path(*name.split("."))).with_suffix(".py").is_file(), name
    tree = ast.parse((ROOT / "setup.py").read_text(encoding="utf-8"))
    imports = [n for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module and n.module.startswith("mypyc")]
    assert all(n.col_offset > 0 for n in imports), "setup.py imports mypyc at top level: a pure build would need mypy"
    code = (
        "import sys, runpy, setuptools; setuptools.setup = lambda **kw: print(sorted(kw)); "
        "sys.argv = ['setup.py', *sys.argv[1:]]; runpy.run_path('setup.py'); print('mypyc' in sys.modules)"
    )
    env = {k: v for k, v in os.environ.items() if k != "PROMPTMILL_MYPYC"}
    for argv, extra in ((["bdist_wheel"], {}), (["dist_info"], {"PROMPTMILL_MYPYC": "1"}), (["bdist_wheel"], {"PROMPTMILL_MYPYC": "0"})):
        out = subprocess.run(
            [sys.executable, "-c", code, *argv], cwd=ROOT, env={**env, **extra}, capture_output=True, text=True, check=True
        )
        assert out.stdout.split() == ["['ext_modules']", "False"], (argv, extra, out.stdout)


def test_a_missing_module_is_not_counted_compiled(monkeypatch):
    monkeypatch.setattr(buildinfo, "COMPILED", ("runtime.no_such_module",))
    assert buildinfo.compiled_modules() == ()
