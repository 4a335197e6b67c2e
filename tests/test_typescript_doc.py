"""docs/typescript.md shows what the Python runtime renders: the output block of its TypeScript example
(runtimes/typescript/examples/render.mjs, whose own test, test/examples.test.mjs, checks that Node prints
that block) is what `promptmill.load("build").render(...)` gives for the same role, state and budget. So the
page's claim that both runtimes print it holds from both sides."""

from __future__ import annotations

import json
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PAGE = ROOT / "docs" / "typescript.md"
EXAMPLE = ROOT / "runtimes" / "typescript" / "examples" / "render.mjs"


def block(marker: str, lang: str) -> str:
    """The fenced block of `lang` after the line `<!-- marker -->` of the page."""
    text = PAGE.read_text(encoding="utf-8")
    at = text.index(f"<!-- {marker} -->\n")
    start = text.index(f"```{lang}\n", at) + len(f"```{lang}\n")
    return text[start : text.index("\n```\n", start) + 1]


def test_the_page_shows_the_example_file():
    assert block("example: render.mjs", "js") == EXAMPLE.read_text(encoding="utf-8")


def test_the_python_runtime_prints_the_output_the_page_shows():
    import promptmill

    source = EXAMPLE.read_text(encoding="utf-8")
    state = json.loads(re.search(r"parse\(`([^`]*)`\)", source).group(1))
    role = re.search(r'rt\.render\("([^"]+)"', source).group(1)
    budget = int(re.search(r"budget: (\d+)", source).group(1))
    req = promptmill.load(ROOT / "build").render(role, state, budget=budget)
    lines = [f"{req.tokens} of {req.budget} tokens ({req.tokenizer})"]
    lines += [f"{s.status:<8} {s.tokens:>3}  {s.id}" for s in req.sections]
    lines.append(req.text.split("\n")[-1])
    assert "\n".join(lines) + "\n" == block("output: render.mjs", "text")
    assert any(s.status == "dropped" for s in req.sections)  # the example shows the budget at work
