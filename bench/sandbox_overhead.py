"""How much the work and size guards cost: promptmill's sandbox vs a plain Jinja sandbox.

Prints the ratio of render times for a few everyday templates. Run:
    PYTHONPATH=compiler python bench/sandbox_overhead.py
"""

from __future__ import annotations

import timeit

from jinja2 import StrictUndefined
from jinja2.sandbox import ImmutableSandboxedEnvironment

from promptmill.runtime.jinja.sandbox import compile_template, render

STATE = {
    "task": {"title": "Fix the parser", "steps": [f"step {i}: do the thing" for i in range(50)]},
    "memory": [{"text": f"note {i} " * 20, "score": i / 100} for i in range(200)],
    "tools": {f"tool_{i}": {"description": "does things", "args": ["a", "b"]} for i in range(20)},
}

TEMPLATES = {
    "loop-with-loop-vars": ("# {{ task.title }}\n{% for s in task.steps %}\n{{ loop.index }}. {{ s|trim }}\n{% endfor %}"),
    "memory-items": "{% for m in memory %}\n- ({{ '%.2f'|format(m.score) }}) {{ m.text }}\n{% endfor %}",
    "to-json": "{{ tools|tojson }}",
    "join-map": "{{ memory|map(attribute='text')|map('upper')|join('\\n') }}",
}


def main() -> None:
    plain = ImmutableSandboxedEnvironment(undefined=StrictUndefined, trim_blocks=True, lstrip_blocks=True)
    print(f"{'template':24} {'plain ms':>9} {'guarded ms':>10} {'ratio':>6}")
    for name, source in TEMPLATES.items():
        base = plain.from_string(source)
        ours = compile_template(source)
        assert base.render(STATE) == render(ours, STATE), name
        n = 200
        t_plain = min(timeit.repeat(lambda b=base: b.render(STATE), number=n, repeat=3)) / n
        t_ours = min(timeit.repeat(lambda o=ours: render(o, STATE), number=n, repeat=3)) / n
        print(f"{name:24} {t_plain * 1e3:9.3f} {t_ours * 1e3:10.3f} {t_ours / t_plain:6.2f}")


if __name__ == "__main__":
    main()
