"""Time the YAML loader on 1,000 typical role files of 3-5 KB.

Prints the total time for loading them with `promptmill.source.loader.load_file`
(libyaml events when available, and the pure-Python parser), next to PyYAML's
own `safe_load` with the C loader as a yardstick, and the ratios; then the
time each hostile input (50 MB file, alias bomb, deep nesting, huge line) takes
to be refused.

    PYTHONPATH=compiler python bench/bench_loader.py [--files 1000]
"""

from __future__ import annotations

import argparse
import pathlib
import tempfile
import time

import yaml

from promptmill.source import loader

SECTION = """\
  - id: {name}
    priority: {priority}
    trim: {trim}
    when:
      all:
        - exists: state.{name}
        - not: {{eq: [state.mode, "quiet"]}}
    template: |
      <{name}>
      {{% for item in state.{name} %}}
      - {{{{ item.title }}}}: {{{{ item.body | truncate(200) }}}}
        (score {{{{ item.relevance }}}}, source "{{{{ item.source }}}}")
      {{% endfor %}}
      </{name}>
"""

HEAD = """\
# A typical role: inputs schema, budget, and a handful of sections.
kind: role
id: roles/agent-{n}
description: >
  Executes one subtask of a larger plan, using the tools it is given
  and reporting back in the structured format below.
extends: roles/base
budget:
  max_tokens: 16000
  reserve: 2000
  tokenizer: o200k_base
inputs:
  type: object
  required: [task, subtask]
  properties:
    task: {{type: object, properties: {{id: {{type: string}}, title: {{type: string}}}}}}
    subtask:
      type: object
      required: [id, goal]
      properties:
        id: {{type: string, pattern: "^[a-z0-9-]+$"}}
        goal: {{type: string}}
        attempts: {{type: integer, minimum: 0}}
        ratio: {{type: number}}
        urgent: {{type: boolean}}
context:
  include: [constraints/common, constraints/executor]
  fragments: [fragments/identity, fragments/coding-standards]
sections:
  - id: identity
    priority: 100
    trim: never
    text: "You are a careful engineer. Follow the rules below; ask when unsure."
"""


def make_files(folder: pathlib.Path, count: int) -> list[pathlib.Path]:
    paths = []
    names = [
        "memory",
        "history",
        "files",
        "notes",
        "tools",
        "errors",
        "plan",
        "review",
        "docs",
        "logs",
    ]
    for n in range(count):
        body = HEAD.format(n=n) + "".join(
            SECTION.format(name=name, priority=50 - i, trim=("items" if i % 2 else "drop")) for i, name in enumerate(names[: 5 + n % 6])
        )
        path = folder / f"role_{n:04d}.yaml"
        path.write_text(body, encoding="utf-8")
        paths.append(path)
    return paths


def timed(fn, paths) -> float:
    start = time.perf_counter()
    for path in paths:
        fn(path)
    return time.perf_counter() - start


def hostile(folder: pathlib.Path) -> None:
    """Inputs the loader must refuse quickly: print how long each refusal takes."""
    sparse = folder / "huge.yaml"
    with open(sparse, "wb") as handle:
        handle.truncate(50 * 1024 * 1024)
    laughs = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    laughs += [f"{c}: &{c} [" + ",".join([f"*{p}"] * 9) + "]" for p, c in zip("abcdefgh", "bcdefghi", strict=True)]
    cases = {
        "50 MB file (load_file)": lambda backend: loader.load_file(sparse),
        "billion laughs 9x9": lambda backend: loader._load("\n".join(laughs), "b.yaml", loader.DEFAULT_LIMITS, backend),
        "10,000-level flow nesting": lambda backend: loader._load("[" * 10_000 + "]" * 10_000, "d.yaml", loader.DEFAULT_LIMITS, backend),
        "10,000-level block nesting": lambda backend: loader._load("- " * 10_000 + "x", "d.yaml", loader.DEFAULT_LIMITS, backend),
        "1 MB single line": lambda backend: loader._load("a: " + "x" * 1_000_000, "l.yaml", loader.DEFAULT_LIMITS, backend),
    }
    for name, run in cases.items():
        for backend in ("c", "python") if yaml.__with_libyaml__ else ("python",):
            start = time.perf_counter()
            doc, diags = run(backend)
            elapsed = time.perf_counter() - start
            assert doc is None and diags
            print(f"  {name:28} {backend:7} {diags[0].code}  {elapsed * 1000:8.1f} ms")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--files", type=int, default=1000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        paths = make_files(pathlib.Path(tmp), args.files)
        sizes = [p.stat().st_size for p in paths]
        print(f"{len(paths)} files, {min(sizes)}-{max(sizes)} bytes, {sum(sizes) / 1e6:.1f} MB in total")
        doc, diags = loader.load_file(paths[0])
        assert doc is not None and not diags, diags

        def pure(path):
            return loader._load(path.read_bytes(), path.as_posix(), loader.DEFAULT_LIMITS, "python")

        def safe_load(path):
            return yaml.load(path.read_bytes(), Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))

        timed(loader.load_file, paths[:50])  # warm up
        ours = timed(loader.load_file, paths)
        base = timed(safe_load, paths)
        python = timed(pure, paths)
        print(f"libyaml available: {yaml.__with_libyaml__}")
        print(f"promptmill load_file (default parser): {ours:.3f} s")
        print(f"promptmill, pure-Python parser:        {python:.3f} s")
        print(f"yaml.load(CSafeLoader), no positions:  {base:.3f} s")
        print(f"ratio load_file / CSafeLoader: {ours / base:.2f}")
        print("hostile inputs (refusal time):")
        hostile(pathlib.Path(tmp))


if __name__ == "__main__":
    main()
