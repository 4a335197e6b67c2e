"""`promptmill init`: the starter project lints, compiles and renders with no edits;
its CI, pre-commit and editor wiring point at things that exist and work.

Everything runs on real files in tmp_path through click's CliRunner.
"""

from __future__ import annotations

import glob
import json
import os
import re
import shlex
import subprocess
import tomllib
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

import promptmill
from promptmill.cli.main import main
from promptmill.cli.scaffold import ROLE, SCHEMA_DIR, STATE, init, scaffold_files
from promptmill.core.choices import TEMPLATE_KINDS
from promptmill.source.schemacheck import SCHEMA_NAMES, schema_text

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = Path(promptmill.__file__).resolve().parent
MODELINE = re.compile(r"^# yaml-language-server: \$schema=(\S+)$")


def run(*args: str):
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


@pytest.fixture
def scaffolded(tmp_path, monkeypatch) -> Path:
    monkeypatch.chdir(tmp_path)
    result = run("init", "demo")
    assert result.exit_code == 0, result.output
    monkeypatch.chdir(tmp_path / "demo")
    return tmp_path / "demo"


def kind_of(path: Path) -> str:
    return "project" if path.name == "promptmill.yaml" else yaml.safe_load(path.read_text())["kind"]


def templates(root: Path) -> list[Path]:
    return sorted([root / "promptmill.yaml", *(root / "prompts").rglob("*.yaml")])


# -- works with no edits ---------------------------------------------------------


def test_init_writes_the_listed_files(tmp_path):
    written = init(tmp_path / "new" / "demo")
    rels = sorted(p.relative_to(tmp_path / "new" / "demo").as_posix() for p in written)
    assert rels == sorted(scaffold_files())
    on_disk = sorted(p.relative_to(tmp_path / "new" / "demo").as_posix() for p in (tmp_path / "new" / "demo").rglob("*") if p.is_file())
    assert on_disk == rels
    for needed in (
        ".github/workflows/promptmill.yml",
        ".pre-commit-config.yaml",
        ".vscode/settings.json",
        "prompts/roles/helpdesk.yaml",
        "prompts/constraints/house-rules.yaml",
        "prompts/contracts/answer.yaml",
        "prompts/fragments/voice.yaml",
        STATE,
    ):
        assert needed in rels
    assert {f"{SCHEMA_DIR}/{name}.schema.json" for name in SCHEMA_NAMES} <= set(rels)
    assert not any("dot-" in rel or "@PROMPTMILL_VERSION@" in (tmp_path / "new" / "demo" / rel).read_text() for rel in rels)


def test_scaffold_lints_strict_compiles_and_renders(scaffolded):
    lint = run("lint", "--strict")
    assert lint.exit_code == 0, lint.output
    assert lint.output == "no problems in 4 files\n"
    assert promptmill.lint(".").diagnostics == ()  # not even an info
    compiled = run("compile")
    assert compiled.exit_code == 0, compiled.output
    assert compiled.output == "compiled 1 role, reused 0 unchanged, removed 0 stale files -> build/\n"
    check = run("compile", "--check")
    assert check.exit_code == 0
    assert check.output == "build/ is up to date (1 role)\n"
    rendered = run("render", ROLE, "--state", STATE)
    assert rendered.exit_code == 0, rendered.output
    assert "dropped: nothing" in rendered.output
    req = promptmill.load("build").render(ROLE, yaml.safe_load(Path(STATE).read_text()))
    assert [s.id for s in req.sections if s.present] == ["context:system:voice", "task", "format", "rules", "articles", "question"]
    messages = req.to_openai()["messages"]
    assert [m["role"] for m in messages] == ["system", "user"]
    assert "Ada asks: How do I rotate my API key?" in messages[1]["content"]
    assert req.parse_reply('{"answer": "Rotate it.", "sources": ["API keys"]}')["sources"] == ["API keys"]


def test_init_prints_the_next_steps(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    result = run("init", "demo")
    assert result.output.endswith(
        f"next:\n  cd demo\n  promptmill lint\n  promptmill compile\n  promptmill render {ROLE} --state {STATE}\n"
    )
    here = tmp_path / "here"
    here.mkdir()
    monkeypatch.chdir(here)
    assert "cd " not in run("init").output  # PATH defaults to the working folder


# -- refusing to overwrite ------------------------------------------------------


def test_init_refuses_to_overwrite_and_writes_nothing(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "demo" / "prompts" / "roles").mkdir(parents=True)
    (tmp_path / "demo" / "prompts" / "roles" / "helpdesk.yaml").write_text("mine\n")
    result = run("init", "demo")
    assert result.exit_code == 1
    assert "error[PM013]" in result.output
    assert "demo/prompts/roles/helpdesk.yaml" in result.output
    assert "--force" in result.output
    assert "Traceback" not in result.output
    assert sorted(p.name for p in (tmp_path / "demo").rglob("*") if p.is_file()) == ["helpdesk.yaml"]
    assert (tmp_path / "demo" / "prompts" / "roles" / "helpdesk.yaml").read_text() == "mine\n"
    forced = run("init", "demo", "--force")
    assert forced.exit_code == 0, forced.output
    assert (tmp_path / "demo" / "prompts" / "roles" / "helpdesk.yaml").read_bytes() == scaffold_files()["prompts/roles/helpdesk.yaml"]


def test_init_into_a_folder_with_other_files_keeps_them(tmp_path):
    (tmp_path / "README.md").write_text("my project\n")
    init(tmp_path)
    assert (tmp_path / "README.md").read_text() == "my project\n"


def test_init_on_a_file_is_an_error(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "taken").write_text("x")
    result = run("init", "taken")
    assert result.exit_code in (1, 2)  # click may reject it as a usage error first
    assert "Traceback" not in result.output
    with pytest.raises(promptmill.PromptmillError) as info:
        init(tmp_path / "taken")
    assert info.value.code == "PM013"


def test_init_where_a_folder_blocks_a_file_is_an_error(tmp_path):
    (tmp_path / "promptmill.yaml").mkdir()  # a folder where a file must go
    with pytest.raises(promptmill.PromptmillError) as info:
        init(tmp_path, force=True)
    assert info.value.code == "PM013"
    assert "cannot write" in info.value.message


# -- editor schema association --------------------------------------------------


def test_every_template_has_a_modeline_to_the_schema_promptmill_prints(scaffolded):
    for path in templates(scaffolded):
        first = path.read_text().splitlines()[0]
        match = MODELINE.match(first)
        assert match, f"{path}: no modeline"
        target = (path.parent / match.group(1)).resolve()
        assert target.is_file(), f"{path}: modeline points at {target}, which does not exist"
        kind = kind_of(path)
        assert target.name == f"{kind}.schema.json"
        assert target.read_text() == run("schema", kind).output


def test_vscode_settings_map_each_folder_to_its_schema(scaffolded):
    settings = json.loads((scaffolded / ".vscode" / "settings.json").read_text())["yaml.schemas"]
    matched: dict[Path, str] = {}
    for schema_path, globs in settings.items():
        target = scaffolded / schema_path
        assert target.is_file(), schema_path
        kind = target.name.removesuffix(".schema.json")
        assert target.read_text() == schema_text(kind)
        for pattern in globs:
            for hit in scaffolded.glob(pattern):
                assert hit not in matched, f"{hit} matched by two schemas"
                matched[hit] = kind
    assert {p: kind_of(p) for p in templates(scaffolded)} == matched
    assert "redhat.vscode-yaml" in (scaffolded / ".vscode" / "extensions.json").read_text()


def test_vscode_recommends_promptmills_extension(scaffolded):
    """The project recommends promptmill's own extension (editors/vscode, which starts the language
    server itself) by its id, publisher.name of its package.json; no generic client is configured."""
    package = json.loads((Path(__file__).resolve().parent.parent / "editors" / "vscode" / "package.json").read_text())
    recommended = json.loads((scaffolded / ".vscode" / "extensions.json").read_text())["recommendations"]
    assert f"{package['publisher']}.{package['name']}" in recommended
    assert "zsol.vscode-glspc" not in recommended
    assert not any(key.startswith("glspc.") for key in json.loads((scaffolded / ".vscode" / "settings.json").read_text()))


def test_schema_write_refreshes_the_editor_schemas(scaffolded):
    target = scaffolded / SCHEMA_DIR
    (target / "role.schema.json").write_text("{}")
    refused = run("schema", "--write", SCHEMA_DIR)
    assert refused.exit_code == 1
    assert "error[PM013]" in refused.output
    result = run("schema", "--write", SCHEMA_DIR, "--force")
    assert result.exit_code == 0, result.output
    assert result.output.count("wrote ") == len(SCHEMA_NAMES)
    for name in SCHEMA_NAMES:
        assert (target / f"{name}.schema.json").read_text() == schema_text(name)
    usage = run("schema")
    assert usage.exit_code == 2
    assert "--write" in usage.output


# -- CI and pre-commit ------------------------------------------------------------


def promptmill_commands(commands: list[str]) -> list[list[str]]:
    out = [shlex.split(c)[1:] for c in commands if c.startswith("promptmill ")]
    assert out, commands
    return out


def test_ci_workflow_commands_pass_on_the_compiled_scaffold(scaffolded):
    workflow = yaml.safe_load((scaffolded / ".github" / "workflows" / "promptmill.yml").read_text())
    steps = workflow["jobs"]["prompts"]["steps"]
    runs = [step["run"] for step in steps if "run" in step]
    install = next(step for step in steps if step.get("name", "").startswith("install promptmill"))
    assert install["name"] == f"install promptmill {promptmill.__version__}"
    # never a bare name from PyPI (promptmill is not published there): the user says where from, or the step fails
    assert install["env"] == {"PROMPTMILL_PIP": "${{ vars.PROMPTMILL_PIP }}"}
    script = install["run"]
    unset = subprocess.run(["bash", "-c", script], env={"PATH": os.environ["PATH"], "PROMPTMILL_PIP": ""}, capture_output=True, text=True)
    assert unset.returncode == 1
    assert "::error::set the repository variable PROMPTMILL_PIP" in unset.stdout
    assert 'pip install "$PROMPTMILL_PIP"' in script
    commands = promptmill_commands(runs)
    assert [c[:1] for c in commands] == [["lint"], ["compile"], ["test"], ["diff"]]
    assert "--check" in commands[1]
    assert "github" in commands[0] and "github" in commands[2]
    assert run("compile").exit_code == 0  # the user compiles and commits build/ once
    for args in commands[:3]:  # the shipped snapshots/ are what the starter renders
        result = run(*args)
        assert result.exit_code == 0, (args, result.output)
    checkout = next(step for step in steps if step.get("uses", "").startswith("actions/checkout"))
    assert checkout["with"]["fetch-depth"] == 0  # diff reads the base branch's commit


def test_ci_diff_step_writes_the_pull_requests_step_summary(scaffolded, tmp_path):
    workflow = yaml.safe_load((scaffolded / ".github" / "workflows" / "promptmill.yml").read_text())
    (step,) = [s for s in workflow["jobs"]["prompts"]["steps"] if "diff" in s.get("run", "")]
    assert step["if"] == "github.event_name == 'pull_request'"
    assert step["env"] == {"BASE_REF": "${{ github.base_ref }}"}  # never expanded into the script itself
    env = {
        "PATH": os.environ["PATH"],
        "HOME": str(tmp_path),
        "GIT_CONFIG_NOSYSTEM": "1",
        **{f"GIT_{who}_{what}": value for who in ("AUTHOR", "COMMITTER") for what, value in (("NAME", "t"), ("EMAIL", "t@example.com"))},
    }
    for args in (
        ["init", "-q", "-b", "main"],
        ["add", "-A"],
        ["commit", "-qm", "start"],
        ["update-ref", "refs/remotes/origin/main", "HEAD"],
    ):
        subprocess.run(["git", *args], cwd=scaffolded, env=env, check=True, capture_output=True)
    role = scaffolded / "prompts" / "roles" / "helpdesk.yaml"
    role.write_text(role.read_text().replace("using the help-centre articles", "using only the help-centre articles"))
    subprocess.run(["git", "commit", "-qam", "change"], cwd=scaffolded, env=env, check=True, capture_output=True)
    summary = tmp_path / "summary.md"
    done = subprocess.run(
        ["bash", "-c", step["run"]],
        cwd=scaffolded,
        env={**env, "BASE_REF": "main", "GITHUB_STEP_SUMMARY": str(summary)},
        capture_output=True,
    )
    assert done.returncode == 0, done.stderr
    text = summary.read_text()
    assert text.startswith("### promptmill diff: `origin/main` → `HEAD`")
    assert "+| Answer the customer's question below using only the help-centre articles." in text


def test_pre_commit_hooks_pass_and_match_the_shipped_hook_definitions(scaffolded):
    config = yaml.safe_load((scaffolded / ".pre-commit-config.yaml").read_text())
    local = {hook["id"]: hook for hook in config["repos"][0]["hooks"]}
    shipped = {hook["id"]: hook for hook in yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())}
    assert set(local) == set(shipped) == {"promptmill-lint", "promptmill-compile-check", "promptmill-test"}
    assert run("compile").exit_code == 0
    for hook_id, hook in local.items():
        assert hook["entry"] == shipped[hook_id]["entry"]
        assert hook["language"] == "system"
        assert shipped[hook_id]["language"] == "python"
        assert hook["pass_filenames"] is False
        assert shipped[hook_id]["pass_filenames"] is False
        for definition in (hook, shipped[hook_id]):
            assert re.search(definition["files"], "prompts/roles/helpdesk.yaml")
            assert re.search(definition["files"], "promptmill.yaml")
            assert not re.search(definition["files"], "README.md")
        result = run(*promptmill_commands([hook["entry"]])[0])
        assert result.exit_code == 0, (hook_id, result.output)


# -- packaging and the repository's own modelines ----------------------------------


def test_every_starter_file_is_package_data():
    """setuptools expands package-data globs like glob.glob: hidden names are never matched,
    so the starter files are stored as `dot-NAME` and every one must match a pattern."""
    patterns = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"]["promptmill"]
    included = {hit for pattern in patterns for hit in glob.glob(pattern, root_dir=PACKAGE, recursive=True)}
    starter = [
        os.path.relpath(os.path.join(folder, name), PACKAGE)
        for folder, _, names in os.walk(PACKAGE / "starter")
        for name in names
        if "__pycache__" not in folder
    ]
    assert starter
    assert not [rel for rel in starter if rel not in included]
    assert not [rel for rel in starter if any(part.startswith(".") for part in Path(rel).parts)]


def repository_templates() -> list[Path]:
    found = [ROOT / "promptmill.yaml", *(ROOT / "prompts").rglob("*.yaml"), *(PACKAGE / "library").rglob("*.yaml")]
    return [p for p in sorted(found) if MODELINE.match(p.read_text().splitlines()[0])]


def test_repository_modelines_resolve_to_the_shipped_schemas():
    paths = repository_templates()
    assert len(paths) >= 17  # every shipped template and the project file carry one
    for path in paths:
        target = (path.parent / MODELINE.match(path.read_text().splitlines()[0]).group(1)).resolve()
        assert target.is_file(), f"{path}: modeline points at {target}"
        kind = kind_of(path)
        assert kind in (*TEMPLATE_KINDS, "project")
        assert target.read_text() == schema_text(kind), path
