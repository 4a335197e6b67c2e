"""How composing an extends chain scales with its depth.

For chains of 60, 120 and 240 roles (each role adds a section after its
parent's; every tenth overrides the root section) this times composing the
leaf with a fresh composer (chain walk, sections, inputs, context) and
composing every role of the chain with one shared composer. Linear work shows
ratios near 2.0 per doubling for the leaf and near 4.0 for all roles (their
outputs alone grow quadratically: role k has k sections).

    PYTHONPATH=compiler python bench/compose_chain.py
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "compiler"))

from promptmill.compiling.api import load_project
from promptmill.compose.resolve import Composer


def project(root: Path, depth: int) -> None:
    (root / "prompts").mkdir(parents=True)
    (root / "promptmill.yaml").write_text("prompts: prompts\n")
    (root / "prompts" / "r0.yaml").write_text("kind: role\nid: r0\nsections:\n  - {id: s0, text: Root.}\n")
    for i in range(1, depth):
        text = f"kind: role\nid: r{i}\nextends: r{i - 1}\nsections:\n  - {{id: s{i}, after: s{i - 1}, text: L{i}.}}\n"
        if i % 10 == 0:
            text += f"  - {{id: s0, text: Root {i}.}}\n"
        (root / "prompts" / f"r{i}.yaml").write_text(text)


def best(fn, repeat: int = 5) -> float:
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


def measure(depth: int) -> tuple[int, float, float]:
    with tempfile.TemporaryDirectory() as tmp:
        project(Path(tmp), depth)
        loaded = load_project(tmp)
        cfg, doc = loaded.project.config, loaded.project.config_doc
        leaf = loaded.index.get("role", f"r{depth - 1}")
        roles = [loaded.index.get("role", f"r{i}") for i in range(depth)]

        def one() -> None:
            Composer(loaded.index, cfg, doc).compose(leaf)

        def every() -> None:
            composer = Composer(loaded.index, cfg, doc)
            for r in roles:
                composer.compose(r)

        return depth, best(one), best(every)


def main() -> None:
    rows = [measure(depth) for depth in (60, 120, 240)]
    print(f"{'depth':>6} {'leaf ms':>9} {'ratio':>6} {'all roles ms':>13} {'ratio':>6}")
    for n, (depth, one, every) in enumerate(rows):
        r1 = f"{one / rows[n - 1][1]:.2f}" if n else "-"
        r2 = f"{every / rows[n - 1][2]:.2f}" if n else "-"
        print(f"{depth:>6} {one * 1000:>9.2f} {r1:>6} {every * 1000:>13.1f} {r2:>6}")


if __name__ == "__main__":
    main()
