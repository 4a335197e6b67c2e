"""The optional compiled build: `PROMPTMILL_MYPYC=1 pip wheel --no-build-isolation --no-deps .`

Everything else about the package is in pyproject.toml. Without PROMPTMILL_MYPYC this
file adds nothing, so `pip install .` and `pip install -e .` stay pure Python and need
no compiler. With it, mypyc (from mypy, in the dev extra; not a runtime dependency)
compiles the runtime's hot modules to C extensions; the .py files ship beside them and
Python imports the extension first. `promptmill --version` says which is running.
The modules are COMPILED in compiler/promptmill/runtime/buildinfo.py (README, "Performance").
"""

from __future__ import annotations

import ast
import os
import sys
from pathlib import Path

from setuptools import setup

HERE = Path(__file__).resolve().parent
# the commands that build the extensions; metadata (dist_info, egg_info) and sdists do not,
# and an editable install stays pure (an extension beside the source would hide edits to it)
BUILD_COMMANDS = {"bdist_wheel", "build", "build_ext", "install"}


def _compiled_names() -> tuple[str, ...]:
    tree = ast.parse((HERE / "compiler" / "promptmill" / "runtime" / "buildinfo.py").read_text(encoding="utf-8"))
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "COMPILED" for t in node.targets):
            return tuple(ast.literal_eval(node.value))
    raise SystemExit("setup.py: no COMPILED tuple in compiler/promptmill/runtime/buildinfo.py")


def _ext_modules() -> list:
    if os.environ.get("PROMPTMILL_MYPYC", "") in ("", "0") or not BUILD_COMMANDS.intersection(sys.argv[1:]):
        return []
    from mypyc.build import mypycify  # only here: a pure build never imports mypy

    paths = [os.path.join("compiler", "promptmill", *name.split(".")) + ".py" for name in _compiled_names()]
    # mypyc's C files go to setuptools' scratch folder, not build/ (the compiled prompts)
    return mypycify(paths, opt_level="3", group_name="promptmill", target_dir=os.path.join(".setuptools-build", "mypyc"))


setup(ext_modules=_ext_modules())
