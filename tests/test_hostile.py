"""Hostile projects end to end: every limit gives a clear diagnostic from lint and the CLI, fast.

The loader's own tests (tests/test_loader.py, tests/test_discovery.py) check each
limit at the file level; here the same inputs go through `promptmill lint` and
`promptmill compile` in a real project next to a good role, which must still
be checked, and the command must exit 1 with `file:line:col: error[CODE]`,
never a traceback. Limits are listed in docs/limits.md.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner

import promptmill
from promptmill.cli.main import main
from promptmill.compiling import api
from promptmill.core.errors import CompileError

GOOD = """\
kind: role
id: good
budget: {max_tokens: 1000, reserve: 100}
inputs: {type: object, properties: {topic: {type: string}}}
sections:
  - id: topic
    template: "Topic: {{ topic }}"
"""


def _sections(n: int, first: int = 0, *, head: str = "kind: role\nid: big\n") -> str:
    return head + "sections:\n" + "".join(f"- {{id: s{i}, text: t}}\n" for i in range(first, first + n))


def _alias_bomb() -> str:
    lines = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for prev, name in zip("abcdefgh", "bcdefghi", strict=True):
        lines.append(f"{name}: &{name} [" + ",".join([f"*{prev}"] * 9) + "]")
    return "\n".join(lines) + "\n"


def _big_sparse(path: Path) -> None:
    with open(path, "wb") as handle:  # 50 MB, sparse: nothing that large is written or read
        handle.write(b"kind: role\n")
        handle.truncate(50 * 1024 * 1024)


# name -> (how to write prompts/bad.yaml, expected code, line, col)
CASES: dict[str, tuple[Callable[[Path], None], str, int, int]] = {
    "alias-bomb": (lambda p: p.write_text(_alias_bomb()), "PM111", 6, 11),
    "aliases-101": (lambda p: p.write_text("a: &a x\nb: [" + ", ".join(["*a"] * 101) + "]\n"), "PM107", 2, 405),
    "nesting-10000": (lambda p: p.write_text("kind: role\nid: deep\nx: " + "[" * 10_000 + "]" * 10_000 + "\n"), "PM108", 3, 67),
    "file-50mb": (_big_sparse, "PM105", 0, 0),
    "sections-100000": (lambda p: p.write_text(_sections(100_000)), "PM105", 0, 0),
    "sections-1001": (lambda p: p.write_text(_sections(1_001)), "PM612", 3, 1),  # and 2:5 for the role
    "line-1mb": (lambda p: p.write_text("kind: role\nid: x\ndescription: " + "x" * 1_000_000 + "\n"), "PM112", 3, 65_537),
    "latin-1": (lambda p: p.write_bytes("kind: role\nid: caf\xe9\n".encode("latin-1")), "PM102", 2, 8),
    "nul-byte": (lambda p: p.write_bytes(b"kind: role\nid: a\x00b\n"), "PM102", 2, 6),
    "binary": (lambda p: p.write_bytes(bytes(range(256)) * 4), "PM102", 2, 118),
}


def _project(tmp_path: Path, write: Callable[[Path], None] | None = None) -> Path:
    prompts = tmp_path / "prompts"
    prompts.mkdir()
    (prompts / "good.yaml").write_text(GOOD)
    if write is not None:
        write(prompts / "bad.yaml")
    return tmp_path


@pytest.mark.parametrize("name", sorted(CASES))
def test_hostile_file_gives_one_clear_error(name, tmp_path):
    write, code, line, col = CASES[name]
    root = _project(tmp_path, write)
    started = time.perf_counter()
    result = promptmill.lint(root)
    took = time.perf_counter() - started
    bad = [d for d in result.diagnostics if d.file.endswith("bad.yaml") and d.severity == "error"]
    assert (code, line, col) in [(d.code, d.line, d.col) for d in bad], [d.format() for d in bad]
    assert {d.code for d in bad} == {code}
    assert not [d for d in result.diagnostics if d.file.endswith("good.yaml")]  # the good role is still checked
    assert took < 10, f"{name}: {took:.1f}s to refuse"
    out = CliRunner().invoke(main, ["lint", str(root)])
    assert out.exit_code == 1 and f"error[{code}]" in out.output and "Traceback" not in out.output
    with pytest.raises(CompileError):
        promptmill.compile(root)
    assert not (root / "build" / "manifest.json").exists()


def test_sections_over_the_limit_after_composition(tmp_path):
    prompts = tmp_path / "prompts"
    prompts.mkdir()
    (prompts / "base.yaml").write_text(_sections(600, head="kind: role\nid: base\nabstract: true\n"))
    (prompts / "child.yaml").write_text(_sections(600, 600, head="kind: role\nid: child\nextends: base\n"))
    diags = [d for d in promptmill.lint(tmp_path).diagnostics if d.severity == "error"]
    assert [(Path(d.file).name, d.code, d.line, d.col) for d in diags] == [("child.yaml", "PM612", 2, 5)]
    assert "composes 1,200 sections" in diags[0].message


def test_symlink_loops_in_the_prompts_folder_are_skipped(tmp_path):
    root = _project(tmp_path)
    prompts = root / "prompts"
    (prompts / "loop").symlink_to(prompts)
    (prompts / "a.yaml").symlink_to(prompts / "b.yaml")
    (prompts / "b.yaml").symlink_to(prompts / "a.yaml")
    (prompts / "sub").mkdir()
    (prompts / "sub" / "up").symlink_to(prompts / "sub")
    result = promptmill.lint(root)
    warnings = sorted((Path(d.file).name, d.code) for d in result.diagnostics)
    assert warnings == [("a.yaml", "PM110"), ("b.yaml", "PM110"), ("loop", "PM110"), ("up", "PM110")]
    assert result.ok() and result.roles == 1
    assert promptmill.compile(root).compiled == ("good",)


def test_a_file_that_vanishes_between_discovery_and_loading_is_pm100(tmp_path, monkeypatch):
    root = _project(tmp_path)
    promptmill.compile(root)
    before = (root / "build" / "manifest.json").read_bytes()
    (root / "prompts" / "more.yaml").write_text(GOOD.replace("id: good", "id: more"))
    real = api.discover

    def discover_then_delete(*args, **kwargs):
        paths, diags = real(*args, **kwargs)
        for path in paths:
            if path.name == "more.yaml":
                path.unlink()  # another process deletes it right after the folder was listed
        return paths, diags

    monkeypatch.setattr(api, "discover", discover_then_delete)
    with pytest.raises(CompileError) as err:
        promptmill.compile(root, force=True)
    found = [(Path(d.file).name, d.code) for d in err.value.diagnostics]
    assert found == [("more.yaml", "PM100")]
    assert "does not exist" in err.value.diagnostics[0].message
    assert (root / "build" / "manifest.json").read_bytes() == before  # the previous build is untouched
    (root / "prompts" / "more.yaml").write_text(GOOD.replace("id: good", "id: more"))
    out = CliRunner().invoke(main, ["lint", str(root)])
    assert out.exit_code == 1 and "PM100" in out.output and "Traceback" not in out.output


def test_a_folder_that_vanishes_between_discovery_and_loading_is_pm100(tmp_path, monkeypatch):
    root = _project(tmp_path)
    sub = root / "prompts" / "sub"
    sub.mkdir()
    for n in range(3):
        (sub / f"r{n}.yaml").write_text(GOOD.replace("id: good", f"id: r{n}"))
    real = api.discover

    def discover_then_delete(*args, **kwargs):
        paths, diags = real(*args, **kwargs)
        if sub.exists():
            for path in sorted(sub.iterdir()):
                path.unlink()
            sub.rmdir()
        return paths, diags

    monkeypatch.setattr(api, "discover", discover_then_delete)
    result = promptmill.lint(root)
    assert sorted((Path(d.file).name, d.code) for d in result.diagnostics) == [
        ("r0.yaml", "PM100"), ("r1.yaml", "PM100"), ("r2.yaml", "PM100")
    ]


def test_files_changing_under_a_running_compile_never_crash_it(tmp_path):
    """A thread deletes, rewrites and breaks files while compiles run: each compile either
    succeeds or reports diagnostics; nothing else escapes."""
    root = _project(tmp_path)
    promptmill.compile(root)
    prompts = root / "prompts"
    names = [prompts / f"r{n}.yaml" for n in range(12)]
    stop = threading.Event()

    def churn() -> None:
        n = 0
        while not stop.is_set():
            path = names[n % len(names)]
            action = n % 4
            if action == 0:
                path.unlink(missing_ok=True)
            elif action == 1:
                path.write_text(GOOD.replace("id: good", f"id: {path.stem}"))
            elif action == 2:
                path.write_text("kind: role\nid: [broken\n")
            else:
                tmp = path.with_suffix(".tmp")
                tmp.write_text(GOOD.replace("id: good", f"id: {path.stem}"))
                os.replace(tmp, path)
            n += 1

    thread = threading.Thread(target=churn)
    thread.start()
    outcomes = {"compiled": 0, "refused": 0}
    try:
        for _ in range(40):
            try:
                promptmill.compile(root)
                outcomes["compiled"] += 1
            except CompileError as exc:
                assert exc.diagnostics and all(d.code.startswith("PM") for d in exc.diagnostics)
                outcomes["refused"] += 1
    finally:
        stop.set()
        thread.join()
    assert sum(outcomes.values()) == 40
    promptmill.load(root / "build")  # whatever compiled last is loadable


@pytest.mark.parametrize("key", ["runtime", "attachments", "extra"])
def test_state_nested_20000_levels_is_pm812_not_a_recursion_error(key):
    from providers_support import runtime, state

    deep: object = "bottom"
    for _ in range(20_000):
        deep = [deep]
    data = {**state("companion-chat.state.yaml"), key: deep}
    with pytest.raises(promptmill.StateError) as err:
        runtime().render("companion-chat", data)
    assert err.value.code == "PM812" and "nested" in str(err.value)


@pytest.mark.timeout(20)
@pytest.mark.parametrize("run", ["x" * 200_000, "中文" * 50_000])
def test_a_long_run_without_spaces_renders_in_linear_time(run):
    """A state text that is one long pre-token (no spaces) is counted in linear time.
    tiktoken before 0.13 merges such a piece in quadratic time: one count of 200,000
    `x` took 14 s here (tiktoken 0.12), so the floor is tiktoken>=0.13 (issue 12)."""
    from providers_support import TOK, runtime, state

    data = {**state("companion-chat.state.yaml"), "summary": run}
    for provider in ("text", "openai"):
        req = runtime().render("companion-chat", data, provider=provider)
        assert req.tokens <= req.budget and req.section("context_summary").status in ("truncated", "dropped")
    assert TOK.count(run) > 10_000
