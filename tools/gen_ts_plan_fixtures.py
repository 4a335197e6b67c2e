"""Write runtimes/typescript/test/fixtures/plan-values.json: what the Python runtime gives for the value
formatting a template plan does itself ('%' formats, str.format specs, round, the string filters, to_yaml,
to_json), so `test/pipeline-values.test.mjs` holds the TypeScript ports to Python byte for byte.

Run from the repository root: PYTHONPATH=compiler python tools/gen_ts_plan_fixtures.py
"""

from __future__ import annotations

import itertools
import json
import operator
from collections.abc import Callable
from pathlib import Path
from typing import Any

from promptmill.runtime.filters import plain
from promptmill.runtime.filters.yamlemit import to_yaml

OUT = Path("runtimes/typescript/test/fixtures/plan-values.json")

NUMBERS = [
    0,
    1,
    -1,
    7,
    42,
    -42,
    123456789,
    10**15,
    0.0,
    -0.0,
    0.5,
    1.5,
    2.5,
    -2.5,
    0.125,
    0.375,
    3.14159,
    2.675,
    1e-05,
    1e16,
    1.5e300,
    123.456,
    1e21,
    99.995,
    0.1 + 0.2,
    5e-324,
    True,
    False,
]
PRINTF = [
    "%s",
    "%d",
    "%i",
    "%f",
    "%.2f",
    "%.0f",
    "%.3e",
    "%e",
    "%g",
    "%.3g",
    "%10.2f",
    "%-8d|",
    "%+d",
    "% d",
    "%05d",
    "%x",
    "%X",
    "%o",
    "%#x",
    "%r",
    "%.1f%%",
    "%8s|",
    "%-8s|",
    "%.2s",
    "%+.1e",
    "%#.0f",
    "%G",
    "%E",
]
SPECS = [
    "",
    ">4",
    "<6",
    "^7",
    "05",
    "+",
    ".2f",
    ".0f",
    ",",
    "_",
    ",.2f",
    ".3e",
    ".2%",
    "x",
    "#x",
    "b",
    "o",
    "*>8",
    ".3g",
    "g",
    "10.4f",
    "=+8",
    "e",
    "%",
    ".1",
    ".3",
    "08.3f",
]
STRINGS = [
    "",
    "abc",
    "Hello world",
    "hello-world (x) [y] <z>",
    "ßtraße",
    "  padded  ",
    "it's",
    'say "hi"',
    "a\nb",
    "ǆemal",
    "x\ty",
    "ÉCOLE",
]
YAML_VALUES = [
    None,
    True,
    1,
    -3,
    1.5,
    1e16,
    1e-05,
    3.0,
    "",
    "plain",
    "yes",
    "no",
    "null",
    "~",
    "123",
    "1.5",
    "0x1F",
    "2024-01-01",
    "a: b",
    "a #b",
    "- x",
    "tail:",
    " lead",
    "multi\nline",
    "multi\nline\n",
    "multi\n\n",
    "\nstarts",
    "tab\there",
    "bell\x07",
    "é",
    "\u2028",
    [],
    {},
    [1, [2, 3], {"a": None}],
    {"k": "v", "n": {"m": [1, 2]}, "e": [], "s": "x\ny"},
    ["a", "b: c", {"x": 1, "y": [True, False]}],
]


def attempt(fn: Callable[..., Any], *args: Any) -> dict[str, Any]:
    try:
        return {"ok": fn(*args)}
    except (TypeError, ValueError, OverflowError) as exc:
        return {"error": type(exc).__name__}


def _rounded(value: Any, args: list[Any]) -> str:
    return json.dumps(plain.round_(value, *args))


def main() -> None:
    cases: dict[str, list[Any]] = {"printf": [], "format": [], "round": [], "strings": [], "yaml": [], "json": []}
    for fmt, value in itertools.product(PRINTF, NUMBERS + ["abc", None]):
        cases["printf"].append([fmt, json.dumps(value), attempt(operator.mod, fmt, value)])
    for spec, value in itertools.product(SPECS, NUMBERS + ["abc", None]):
        template = "{:" + spec + "}" if spec else "{}"
        cases["format"].append([template, json.dumps(value), attempt(template.format, value)])
    for value, args in itertools.product(
        [v for v in NUMBERS if not isinstance(v, bool)] + [1234.5678, -0.5, 0.05, 15, 25],
        [[], [0], [1], [2], [3], [-1], [-2], [1, "ceil"], [2, "floor"], [0, "ceil"], [-1, "floor"]],
    ):
        cases["round"].append([json.dumps(value), args, attempt(_rounded, value, args)])
    for name in ("upper", "lower", "capitalize", "title", "trim", "xml_escape", "xml_text"):
        for s in STRINGS:
            cases["strings"].append([name, s, getattr(plain, name)(s)])
    for value in YAML_VALUES:
        cases["yaml"].append([json.dumps(value), attempt(to_yaml, value)])
    for value in [{"k": [1, "é", None, 2.5, True]}, [], {}, "x\u2028y", 1e16, [{"a": {"b": []}}]]:
        cases["json"].append([json.dumps(value), plain.to_json(value)])
    OUT.write_text(json.dumps(cases, ensure_ascii=False, indent=0) + "\n", encoding="utf-8")
    print(f"{OUT}: {sum(map(len, cases.values()))} cases")


if __name__ == "__main__":
    main()
