"""Which build of the runtime is running: the pure-Python modules, or the ones mypyc compiled.

`pip install .` installs pure Python. A wheel built with `PROMPTMILL_MYPYC=1` (setup.py)
also holds a C extension for each module in COMPILED; Python imports the extension
before the .py beside it. `promptmill --version` prints `build_description()`.
"""

from __future__ import annotations

import importlib.machinery
import importlib.util

# the modules under promptmill that the compiled build compiles (setup.py reads this tuple);
# chosen by measurement, docs/performance.md
COMPILED = (
    "runtime.fit",
    "runtime.fill",
    "runtime.counting",
    "runtime.statelimits",
    "runtime.itemproof",
    "runtime.plans",
    "runtime.schema.closures",
    "runtime.schema.json_values",
    "runtime.placed",  # the fitter's `Placed` and `Container`: were fit.py's until the wires' layouts needed them without it
)


def _is_extension(name: str) -> bool:
    spec = importlib.util.find_spec(f"promptmill.{name}")  # the loaded module's own spec once imported
    origin = (spec.origin or "") if spec is not None else ""
    return origin.endswith(tuple(importlib.machinery.EXTENSION_SUFFIXES))


def compiled_modules() -> tuple[str, ...]:
    """The modules of COMPILED that this interpreter loads (or has loaded) as compiled extensions; () when pure Python."""
    return tuple(name for name in COMPILED if _is_extension(name))


def build_description() -> str:
    """One line for `promptmill --version`: "pure Python" or "compiled (mypyc): fit, fill, ..."."""
    compiled = compiled_modules()
    if not compiled:
        return "pure Python"
    short = ", ".join(name.rsplit(".", 1)[-1] for name in compiled)
    pure = [name.rsplit(".", 1)[-1] for name in COMPILED if name not in compiled]
    return f"compiled (mypyc): {short}" + (f"; pure Python: {', '.join(pure)}" if pure else "")
