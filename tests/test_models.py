"""The model table (runtime/models.py, data/models.json), a project's own rows, `promptmill models`."""

from __future__ import annotations

import json
from importlib import resources

import jsonschema
import pytest
from click.testing import CliRunner

from promptmill import CompileError, TokenizerError, build_in_memory, format_models, models
from promptmill.cli.main import main
from promptmill.runtime.models import default_table, resolve_model

ROLE = """\
kind: role
id: r
model: {model}
budget: {{max_tokens: 900000, reserve: 100}}
sections:
  - {{id: a, text: hello}}
"""


def _shipped_rows() -> list[dict]:
    return json.loads(resources.files("promptmill").joinpath("data", "models.json").read_bytes())["models"]


def test_the_most_specific_pattern_wins():
    assert resolve_model("claude-opus-4-7-20260416").pattern == "claude-opus-4-7*"
    assert resolve_model("claude-opus-4-1-20250805").pattern == "claude-opus-4*"
    assert resolve_model("claude-2.1").pattern == "claude*"
    assert resolve_model("gpt-4o-mini").pattern == "gpt-4o*"
    assert resolve_model("gpt-4-0613").pattern == "gpt-4*"
    assert resolve_model("gpt-4-turbo-2024-04-09").context_window == 128000
    assert resolve_model("llama-3") is None


def test_every_shipped_row_is_a_valid_project_row_with_a_source():
    from promptmill.source.schemacheck import load_schema

    schema = load_schema("project")
    row_schema = {**schema["properties"]["models"]["items"], "$defs": schema["$defs"]}
    rows = _shipped_rows()
    assert len({r["pattern"] for r in rows}) == len(rows)
    for row in rows:
        jsonschema.validate(row, row_schema)
        assert row["source"].strip(), row["pattern"]
        assert "max_output_tokens" in row and "cache" in row and "structured_output" in row, row["pattern"]


def test_estimated_rows_are_conservative():
    """No Claude ratio below the published figures: >= 1.5 from Opus 4.7 on, >= 1.2 before; no OpenAI estimate."""
    for info in default_table().rows():
        if info.provider == "openai":
            assert info.ratio == 1 and not info.estimate, info.pattern
        else:
            assert info.estimate and info.ratio >= 1.2, info.pattern
    assert resolve_model("claude-opus-4-7").ratio >= 1.5
    assert resolve_model("claude-some-future-model").ratio >= 1.5  # an unlisted Claude is treated as new


def test_an_unknown_model_says_did_you_mean():
    with pytest.raises(TokenizerError) as err:
        default_table().lookup("claud-opus-4-7")
    assert err.value.code == "PM502"
    assert "did you mean 'claude-opus-4-7*'" in (err.value.hint or "")
    with pytest.raises(TokenizerError) as err:
        default_table().lookup("zzz")
    assert "models:" in (err.value.hint or "")


def test_a_project_row_adds_a_model_and_overrides_a_shipped_one(make_project):
    root = make_project(
        {
            "promptmill.yaml": "models:\n"
            "  - {pattern: local-llama*, provider: openai, context_window: 4096, source: our server}\n"
            "  - pattern: claude-opus-4-7*\n"
            "    provider: anthropic\n"
            "    counting: {encoding: o200k_base, ratio: 1.61}\n"
            "    context_window: 1000000\n"
            "    source: measured by promptmill counts\n",
            "prompts/r.yaml": ROLE.format(model="local-llama-3"),
        }
    )
    rows = {r.pattern: r for r in models(root)}
    assert rows["local-llama*"].context_window == 4096 and rows["local-llama*"].origin == "promptmill.yaml:2"
    assert rows["claude-opus-4-7*"].ratio == 1.61 and rows["claude-opus-4-7*"].origin == "promptmill.yaml:3"
    assert rows["gpt-4o*"].origin == "promptmill"
    assert "local-llama*" in format_models(list(rows.values()))
    runtime, diags = build_in_memory(root)
    assert runtime.bundle("r").budget.context_window == 4096  # the project's row caps the budget
    assert runtime.bundle("r").budget.max_tokens == 4096
    assert not [d for d in diags if d.code == "PM502"]


@pytest.mark.parametrize(
    ("row", "line", "col"),
    [
        ("{pattern: x*, provider: mistral, context_window: 10}", 2, 29),
        ("{pattern: x*, provider: openai}", 2, 5),
        ("{pattern: x*, provider: openai, context_window: 10, counting: {ratio: 0}}", 2, 75),
        ("{pattern: 'a*b', provider: openai, context_window: 10}", 2, 15),
    ],
)
def test_a_malformed_row_is_a_positioned_error(make_project, row, line, col):
    root = make_project({"promptmill.yaml": f"models:\n  - {row}\n", "prompts/r.yaml": ROLE.format(model="gpt-4o")})
    with pytest.raises(CompileError) as err:
        models(root)
    (diag,) = [d for d in err.value.diagnostics if d.severity == "error"]
    assert (diag.line, diag.col) == (line, col), diag.format()
    with pytest.raises(CompileError):
        build_in_memory(root)


def test_models_command(make_project):
    runner = CliRunner()
    result = runner.invoke(main, ["models", str(make_project({"promptmill.yaml": "prompts: p\n"}))])
    assert result.exit_code == 0, result.output
    assert "claude-opus-4-7*" in result.output and "x1.53 (estimate)" in result.output
    assert "sammcj/ingest PR #65" in result.output
    bad = make_project({"promptmill.yaml": "models:\n  - {pattern: x*, provider: openai}\n"})
    result = runner.invoke(main, ["models", str(bad)])
    assert result.exit_code != 0 and "promptmill.yaml:2:5" in result.output and "Traceback" not in result.output


CLAUDE_ROLE = """\
kind: role
id: c
model: claude-opus-4-7
provider: anthropic
budget: {max_tokens: 3000, reserve: 500}
sections:
  - {id: a, text: "You answer questions about tides."}
  - id: small
    text: "Be brief."
    when: {path: model, op: eq, value: gpt-4o-mini}
"""


def test_a_role_renders_for_its_model_and_for_another(make_project, tmp_path):
    import promptmill

    root = make_project({"prompts/c.yaml": CLAUDE_ROLE})
    rt, _ = build_in_memory(root)
    own = rt.render("c")
    assert (own.provider, own.model, own.ratio) == ("anthropic", "claude-opus-4-7", 1.53) and not own.exact
    assert own.count_note == "estimated, ratio 1.53 for claude-opus-4-7"
    assert own.budget == int((3000 - 500 - 250) / 1.53) and own.model_budget == 2250  # 10% margin, then the ratio
    assert "Be brief." not in own.text
    other = rt.render("c", model="gpt-4o-mini")  # the model picks the wire
    assert (other.provider, other.model, other.ratio, other.exact) == ("openai", "gpt-4o-mini", 1.0, True)
    # a condition on `model` is decided for the model rendered for, not the role's (docs/providers.md, 'Models')
    assert other.to_payload()["model"] == "gpt-4o-mini" and "Be brief." in other.text
    assert other.budget == 2500 and other.count_note == "exact"
    both = rt.render("c", model="claude-sonnet-4-5", provider="anthropic")
    assert both.ratio == 1.2 and both.ratio_for == "claude-sonnet-4-5"
    with pytest.raises(TokenizerError) as err:
        rt.render("c", model="claud-opus-4-7")
    assert err.value.code == "PM502" and "did you mean 'claude-opus-4-7*'" in (err.value.hint or "")
    # a role with no Anthropic model, sent to Anthropic, is counted with the largest Anthropic ratio
    assert rt.render("c", model="gpt-4o", provider="anthropic").ratio == rt.models.max_ratio("anthropic")
    # the ratio is compiled into the bundle: a build on disk renders the same
    promptmill.compile(root, output=tmp_path / "b")
    loaded = promptmill.load(tmp_path / "b")
    assert loaded.bundle("c").budget.ratio == 1.53
    assert loaded.render("c").budget == own.budget


def test_the_budget_origins_name_what_a_render_counted_and_sent_for(make_project):
    """`render --model` counts with the model's tokenizer and, unless `--provider` is given, sends to
    its provider; the account must say so, not name the role's model (a newcomer was shown 'tokenizer
    from model gpt-4o' and 'provider from model gpt-4o' on a render for Claude)."""
    root = make_project({"prompts/r.yaml": "kind: role\nid: r\nmodel: gpt-4o\nsections:\n  - {id: a, text: hello}\n"})
    rt, _ = build_in_memory(root)
    own = rt.render("r").budget_origins
    assert (own["tokenizer"], own["provider"]) == ("model gpt-4o", "model gpt-4o (row gpt-4o*)")
    claude = rt.render("r", model="claude-sonnet-4-5").budget_origins
    assert claude["tokenizer"] == "model claude-sonnet-4-5 (row claude-sonnet-4*)"
    assert claude["provider"] == "render-time model claude-sonnet-4-5 (row claude-sonnet-4*)"
    assert rt.render("r", provider="text").budget_origins["provider"] == "render-time provider text"
    gpt4 = rt.render("r", model="gpt-4", provider="openai-responses").budget_origins
    assert (gpt4["tokenizer"], gpt4["provider"]) == ("model gpt-4 (row gpt-4*)", "render-time provider openai-responses")
    assert rt.render("r", model="gpt-4").budget_origins["provider"] == "render-time model gpt-4 (row gpt-4*)"
    assert rt.render("r", provider="openai").budget_origins["provider"] == "model gpt-4o (row gpt-4o*)"


MODEL_CONDITIONS = {
    "prompts/rules.yaml": """\
kind: constraints
id: house
rules:
  - {id: always, text: Cite the tide table.}
  - id: mini
    text: Answer in one line.
    when: {path: model, op: regex, value: "^gpt-4o-mini"}
""",
    "prompts/base.yaml": "kind: role\nid: base\nabstract: true\nsections:\n  - {id: who, text: You are careful.}\n",
    "prompts/quick.yaml": "kind: role\nid: quick\nabstract: true\nsections:\n  - {id: who, text: You are quick.}\n",
    "prompts/f.yaml": "kind: fragment\nid: n/openai\ntext: OpenAI house style.\n",
    "prompts/c.yaml": """\
kind: role
id: c
model: claude-opus-4-7
provider: anthropic
extends: base
extends_when:
  - {role: quick, when: {path: model, op: eq, value: gpt-4o-mini}}
context:
  before: []
sections:
  - {id: a, text: "You answer questions about tides."}
  - id: claude
    text: "Think step by step."
    when: {path: model, op: regex, value: "^claude"}
  - {id: rules, constraints: [house]}
""",
    "prompts/plain.yaml": """\
kind: role
id: plain
model: claude-opus-4-7
category: ops
sections:
  - {id: a, text: "You answer questions about tides."}
  - {id: ops, text: "Page the on-call.", when: {path: role.category, op: eq, value: ops}}
""",
}


def test_conditions_on_model_are_decided_for_the_model_rendered_for(make_project, tmp_path):
    import promptmill

    gpt = "{all: [{path: role.id, op: eq, value: c}, {path: model, op: regex, value: '^gpt'}]}"
    inject = f"inject:\n  - {{when: {gpt}, fragment: n/openai}}\n"
    root = make_project({**MODEL_CONDITIONS, "promptmill.yaml": "prompts: prompts\n" + inject})
    promptmill.compile(root, output=tmp_path / "b")
    for rt in (build_in_memory(root)[0], promptmill.load(tmp_path / "b")):
        own = rt.render("c").text
        assert "Think step by step." in own and "You are careful." in own
        assert "Answer in one line." not in own and "OpenAI house style." not in own
        mini = rt.render("c", model="gpt-4o-mini").text
        # sections, rule lines, injection rules and extends_when all read the render's model
        assert "Think step by step." not in mini and "Answer in one line." in mini and "OpenAI house style." in mini
        assert "You are quick." in mini and "You are careful." not in mini
        sonnet = rt.render("c", model="claude-sonnet-4-5", provider="anthropic").text
        assert sonnet == own  # another model the conditions treat alike renders alike
        # a role whose conditions do not read `model` renders the same text for any model
        plain = rt.render("plain").text
        assert "Page the on-call." in plain and rt.render("plain", model="gpt-4o-mini").text == plain
        assert all(s.when is None for s in rt.bundle("plain").sections)  # role.* is still settled at compile time


def test_a_project_ratio_reaches_every_render(make_project, tmp_path):
    import promptmill

    root = make_project(
        {
            "promptmill.yaml": "models:\n"
            "  - {pattern: claude-opus-4-7*, provider: anthropic, counting: {ratio: 1.6}, context_window: 2000, source: measured}\n",
            "prompts/c.yaml": CLAUDE_ROLE,
        }
    )
    rt, _ = build_in_memory(root)
    req = rt.render("c")
    assert req.ratio == 1.6 and req.max_tokens == 2000 and "promptmill.yaml:2" in req.budget_origins["ratio"]
    assert rt.render("c", model="claude-opus-4-7-20260416").ratio == 1.6
    promptmill.compile(root, output=tmp_path / "b")
    assert promptmill.load(tmp_path / "b").render("c").ratio == 1.6  # the role's own model: from its bundle


def test_render_command_takes_a_model(make_project):
    root = make_project({"prompts/c.yaml": CLAUDE_ROLE})
    runner = CliRunner()
    result = runner.invoke(main, ["render", "c", "--project", str(root), "--model", "claude-haiku-4-5"])
    assert result.exit_code == 0, result.output
    assert "estimated, ratio 1.2 for claude-haiku-4-5" in result.output and "/ ratio 1.2 =" in result.output
    result = runner.invoke(main, ["render", "c", "--project", str(root), "--model", "gpt-4o", "--format", "openai"])
    assert result.exit_code == 0 and json.loads(result.output)["model"] == "gpt-4o"
    result = runner.invoke(main, ["render", "c", "--project", str(root), "--model", "gtp-4o"])
    assert result.exit_code != 0 and "PM502" in result.output and "did you mean 'gpt-4o*'" in result.output


def test_an_unknown_role_model_is_a_warning_with_did_you_mean(make_project):
    from promptmill import lint

    root = make_project({"prompts/r.yaml": ROLE.format(model="claud-opus-4-7")})
    (diag,) = [d for d in lint(root).diagnostics if d.code == "PM507"]
    assert diag.severity == "warning" and (diag.line, diag.col) == (3, 8)
    assert "did you mean 'claude-opus-4-7*'" in (diag.hint or "")
    runtime, _ = build_in_memory(root)  # a warning: the role still compiles, with no window
    assert runtime.bundle("r").budget.context_window is None


def test_stats_says_which_roles_are_estimated(make_project):
    root = make_project({"prompts/c.yaml": CLAUDE_ROLE, "prompts/r.yaml": ROLE.format(model="gpt-4o")})
    result = CliRunner().invoke(main, ["stats", str(root)])
    assert result.exit_code == 0, result.output
    rows = {line.split()[0]: line for line in result.output.splitlines()[2:]}
    assert rows["c"].endswith("o200k_base, estimated, ratio 1.53 for claude-opus-4-7")
    assert rows["r"].endswith("o200k_base")


@pytest.mark.parametrize("wire", ["anthropic", "anthropic-vertex", "bedrock"])
def test_a_ratio_for_no_model_or_a_foreign_one_says_which(make_project, wire):
    """The ratio's origin says plainly that no model was named, or that the model is another
    provider's; the budget line's unit is then the wire's provider, not the role's model."""
    nomodel = ROLE.format(model="none").replace("model: none\n", "").replace("id: r", "id: plain")
    root = make_project(
        {"promptmill.yaml": "prompts: prompts\n", "prompts/r.yaml": ROLE.format(model="gpt-4o-mini"), "prompts/plain.yaml": nomodel}
    )
    runtime, _ = build_in_memory(root)
    plain = runtime.render("plain", {}, provider=wire)
    assert plain.budget_origins["ratio"] == f"wire {wire}: no model is named, so the largest ratio of its anthropic models in the table"
    foreign = runtime.render("r", {}, provider=wire, budget=2000)
    assert "gpt-4o-mini is not one of its models" in foreign.budget_origins["ratio"]
    line = foreign.explain()
    assert f"{foreign.model_budget} {wire} tokens" in line and "gpt-4o-mini tokens" not in line
