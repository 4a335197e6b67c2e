"""Which model decides what (issue 33, models): a role's `model:` decides its wire, counting and limits as
`render --model` does; ids, ratios and limits are checked where they are written; a likely typo of a known
id is said even when a catch-all row serves it; no request body names a model its wire does not serve.

The CLI runs in-process (tests/cli_inprocess.py): what is checked here is what a command says, exits with and
writes; the same rules through a real `promptmill` process are tests/cases/hostile/models/ (test_hostile_cases.py)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from cli_inprocess import run_cli
from promptmill import build_in_memory
from promptmill.runtime.models import (
    MAX_LIMIT_TOKENS,
    RATIO_MAX,
    RATIO_MIN,
    default_table,
    id_problem,
    row_problems,
)

ROLE = """\
kind: role
id: r
model: {model}
{extra}sections:
  - {{id: a, text: "You answer questions about tides."}}
  - {{id: b, text: "What is a neap tide?", message: user}}
"""


def cli(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return run_cli(root, *args)


def project(make_project, model: str, extra: str = "", config: str = "prompts: prompts\n") -> Path:
    return make_project({"promptmill.yaml": config, "prompts/r.yaml": ROLE.format(model=model, extra=extra)})


# -- 4. the role's model decides its wire, counting and limits -------------------------------------------


def test_a_role_model_decides_its_wire_as_render_model_does(make_project):
    """`model: claude-sonnet-4-5` with no provider rendered as exact o200k_base text (ratio 1); `--model`
    gave Anthropic with ratio 1.2. Now both are the same render."""
    root = project(make_project, "claude-sonnet-4-5")
    own = cli(root, "render", "r", "--format", "json")
    assert own.returncode == 0, own.stderr
    forced = cli(root, "render", "r", "--format", "json", "--model", "claude-sonnet-4-5")
    mine, theirs = json.loads(own.stdout), json.loads(forced.stdout)
    assert mine["provider"] == theirs["provider"] == "anthropic"
    assert mine["exact"] is False and mine["ratio"] == theirs["ratio"] == 1.2
    assert (mine["tokens"], mine["budget"], mine["margin_tokens"]) == (theirs["tokens"], theirs["budget"], theirs["margin_tokens"])
    assert mine["budget_origins"]["provider"] == "model claude-sonnet-4-5 (row claude-sonnet-4*)"
    body = cli(root, "render", "r", "--format", "anthropic")
    assert body.returncode == 0 and json.loads(body.stdout)["model"] == "claude-sonnet-4-5"


def test_a_role_model_caps_the_reserve_at_its_reply_limit_as_render_model_does(make_project):
    root = project(make_project, "claude-3-haiku-20240307", extra="budget: {max_tokens: 20000, reserve: 6000}\n")
    own = json.loads(cli(root, "render", "r", "--format", "json").stdout)
    forced = json.loads(cli(root, "render", "r", "--format", "json", "--model", "claude-3-haiku-20240307").stdout)
    assert own["reserve"] == forced["reserve"] == 4096 and own["budget"] == forced["budget"]


def test_snapshot_batch_and_hovers_follow_the_role_model(make_project, tmp_path):
    root = project(make_project, "claude-sonnet-4-5")
    (root / "examples").mkdir()
    (root / "examples" / "r.state.yaml").write_text("{}\n")
    done = cli(root, "snapshot")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "=== r → anthropic" in (root / "snapshots" / "r" / "r.txt").read_text()
    # batch: no --provider, the model's wire (it said PM840 "rendered for text, which has no batch file format")
    assert cli(root, "compile").returncode == 0
    (root / "rows.jsonl").write_text("{}\n")
    done = cli(root, "batch", "render", "r", "--input", "rows.jsonl", "--out", "out")
    assert done.returncode == 0, done.stdout + done.stderr
    line = json.loads((root / "out" / "requests-00001.jsonl").read_text().splitlines()[0])
    assert line["params"]["model"] == "claude-sonnet-4-5" and line["params"]["messages"]
    # the language server's budget hover renders the bundle: Anthropic's estimate, not exact text
    from lsprotocol import types

    from promptmill.lsp.features.sections import budget_hover

    runtime, _ = build_in_memory(root)
    text = ROLE.format(model="claude-sonnet-4-5", extra="budget: {max_tokens: 9000}\n")
    line_no = text.splitlines().index("budget: {max_tokens: 9000}")
    hover = budget_hover({"r": runtime.bundle("r")}, "r", root, text, types.Position(line_no, 1))
    assert hover is not None and "ratio 1.2" in hover.contents.value


def test_an_explicit_provider_wins_and_one_that_cannot_serve_is_a_positioned_error(make_project):
    root = project(make_project, "claude-sonnet-4-5", extra="provider: anthropic-vertex\n")
    rt, _ = build_in_memory(root)
    assert rt.bundle("r").provider == "anthropic-vertex"
    root = project(make_project, "claude-sonnet-4-5", extra="provider: text\n")
    assert build_in_memory(root)[0].bundle("r").provider == "text"  # a wire of no provider serves any model
    root = project(make_project, "claude-sonnet-4-5", extra="provider: openai\n")
    done = cli(root, "compile")
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert "prompts/r.yaml:4:11: error[PM010]" in done.stdout + done.stderr
    assert not (root / "build" / "manifest.json").exists()


def test_an_inherited_provider_that_cannot_serve_is_reported_where_the_model_is_named(make_project):
    root = make_project(
        {
            "prompts/base.yaml": "kind: role\nid: base\nabstract: true\nprovider: openai\n"
            "sections:\n  - {id: b, text: hi, message: user}\n",
            "prompts/r.yaml": "kind: role\nid: r\nextends: base\nmodel: claude-sonnet-4-5\n",
        }
    )
    done = cli(root, "lint")
    said = done.stdout + done.stderr
    assert done.returncode == 1 and "prompts/r.yaml:4:8: error[PM010]" in said and "set `provider: anthropic` on role 'r'" in said


def test_the_project_default_provider_gives_way_to_a_role_model_it_cannot_serve(make_project):
    root = project(make_project, "claude-sonnet-4-5", config="prompts: prompts\nprovider: openai\n")
    assert build_in_memory(root)[0].bundle("r").provider == "anthropic"
    root = project(make_project, "claude-sonnet-4-5", config="prompts: prompts\nprovider: anthropic-bedrock\n")
    assert build_in_memory(root)[0].bundle("r").provider == "anthropic-bedrock"  # it can: it stays
    both = make_project(
        {
            "promptmill.yaml": "prompts: prompts\nmodel: gemini-2.5-pro\nprovider: openai\n",
            "prompts/r.yaml": "kind: role\nid: r\nsections:\n  - {id: b, text: hi, message: user}\n",
        }
    )
    done = cli(both, "lint")
    assert done.returncode == 1 and "promptmill.yaml:3:11: error[PM010]" in done.stdout + done.stderr


# -- 5. no body for a model its wire does not serve: render and batch say the same ----------------------


@pytest.mark.parametrize("wire", ["anthropic", "bedrock", "gemini"])
def test_render_refuses_a_wire_that_cannot_serve_the_model_as_batch_does(make_project, wire):
    root = project(make_project, "gpt-4o-mini")
    done = cli(root, "render", "r", "--format", wire)
    assert done.returncode == 1 and "gpt-4o-mini" not in done.stdout
    assert "error[PM010]" in done.stderr and f"the {wire} wire sends requests to" in done.stderr
    assert cli(root, "compile").returncode == 0
    (root / "rows.jsonl").write_text("{}\n")
    batch = cli(root, "batch", "render", "r", "--input", "rows.jsonl", "--out", "out", "--provider", wire)
    if wire != "bedrock":  # bedrock's batch says first that it writes Claude's body only (PM010 too)
        assert done.stderr.splitlines()[0] in batch.stderr
    assert batch.returncode == 1 and "PM010" in batch.stderr and not (root / "out" / "requests-00001.jsonl").exists()
    # --model names one it serves: fine
    ok = cli(root, "render", "r", "--format", "anthropic", "--model", "claude-haiku-4-5")
    assert ok.returncode == 0 and json.loads(ok.stdout)["model"] == "claude-haiku-4-5"


# -- 2. ids ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("bad", ["gpt-4o ", "gpt-4o\n", " gpt-4o", "gpt\t4o", "gpt-4o\x00", "gpt-4o\u200b", "", "x" * 300])
def test_ids_with_whitespace_or_control_characters_are_refused(bad):
    assert id_problem(bad) is not None
    assert id_problem("us.anthropic.claude-sonnet-4-5-20250929-v1:0") is None and id_problem("gpt-4.1-mini") is None


def test_a_role_model_id_with_trailing_whitespace_is_a_positioned_error(make_project):
    root = project(make_project, '"gpt-4o "')
    done = cli(root, "compile")
    assert done.returncode == 1 and "prompts/r.yaml:3:8: error[PM201]" in done.stdout + done.stderr
    root = project(make_project, "gpt-4o")
    done = cli(root, "render", "r", "--model", "gpt-4o\n", "--format", "openai")
    assert done.returncode == 1 and "error[PM010]" in done.stderr and "newline" in done.stderr and '"model"' not in done.stdout
    assert cli(root, "compile").returncode == 0
    (root / "rows.jsonl").write_text("{}\n")
    done = cli(root, "batch", "render", "r", "--input", "rows.jsonl", "--out", "out", "--model", "gpt-4o ")
    assert done.returncode == 1 and "error[PM010]" in done.stderr and "holds a space" in done.stderr


# -- 1. rows: ratios and limits bounded, positioned --------------------------------------------------------


@pytest.mark.parametrize(
    ("counting", "extra", "key_line", "says"),
    [
        ("{encoding: o200k_base, ratio: 5e-324}", "", 5, "counting.ratio: the ratio 5e-324 is outside"),
        ("{encoding: o200k_base, ratio: 0.05}", "", 5, "counting.ratio"),
        ("{encoding: o200k_base, ratio: 1.2}", "    max_output_tokens: 1000000000\n", 7, "max_output_tokens"),
        ("{encoding: o200k_base, ratio: 1.2}", "    cache: {min_tokens: 1000000000000}\n", 7, "cache.min_tokens"),
    ],
)
def test_a_row_out_of_bounds_is_a_positioned_error_not_pm000(make_project, counting, extra, key_line, says):
    config = (
        "prompts: prompts\nmodels:\n  - pattern: mymodel*\n    provider: anthropic\n"
        f"    counting: {counting}\n    context_window: 200000\n{extra}"
    )
    root = project(make_project, "mymodel-1", config=config)
    for command in (["render", "r"], ["compile"], ["lint"], ["models"]):
        done = cli(root, *command)
        said = done.stdout + done.stderr
        assert done.returncode == 1 and "PM000" not in said, (command, said)
        assert f"promptmill.yaml:{key_line}:" in said and says in said, (command, said)


def test_shipped_rows_are_within_the_bounds():
    from importlib import resources

    data = json.loads(resources.files("promptmill").joinpath("data", "models.json").read_bytes())
    for row in data["models"]:
        assert row_problems(row) == [], row["pattern"]
    for model in data["known_ids"]:
        assert id_problem(model) is None and default_table().resolve(model) is not None, model
        assert default_table().near_miss(model) is None
    assert RATIO_MIN <= 1.2 <= RATIO_MAX and MAX_LIMIT_TOKENS == 100_000_000


# -- 3. did you mean, even where a catch-all row serves -----------------------------------------------------


def test_a_typo_served_by_a_catch_all_row_gets_did_you_mean(make_project):
    root = project(make_project, "claude-sonet-4-5")
    done = cli(root, "lint")
    said = done.stdout + done.stderr
    assert done.returncode == 0 and "prompts/r.yaml:3:8: warning[PM507]" in said and "did you mean 'claude-sonnet-4-5'?" in said


@pytest.mark.parametrize(
    ("model", "near"),
    [
        ("claude-sonet-4-5", "claude-sonnet-4-5"),
        ("claude-sonnet-4.5", "claude-sonnet-4-5"),
        ("gpt-4o-mnii", "gpt-4o-mini"),
        ("gemini-2.5-flsh", "gemini-2.5-flash"),
        ("claude-sonnet-4-5", None),  # known
        ("claude-sonnet-4-6", None),  # a newer version
        ("claude-opus-4-8", None),
        ("gpt-6", None),
        ("claude-sonnet-4-5-20260101", None),  # a dated snapshot
        ("gpt-4o-2024-08-06", None),
        ("o5-mini", None),
    ],
)
def test_near_misses_are_typos_not_new_versions(model, near):
    assert default_table().near_miss(model) == near


def test_no_typo_warning_for_known_ids_or_a_project_row(make_project):
    for model in ("claude-sonnet-4-5", "claude-sonnet-4-6"):
        done = cli(project(make_project, model), "lint")
        assert "PM507" not in done.stdout + done.stderr, model
    config = "prompts: prompts\nmodels:\n  - {pattern: claude-sonet*, provider: anthropic, context_window: 100000}\n"
    done = cli(project(make_project, "claude-sonet-4-5", config=config), "lint")
    assert "PM507" not in done.stdout + done.stderr
