"""A project with two source versions and helpers to compare builds, for the crash tests.

Version "a" and version "b" differ in every way a build can: a shared fragment
changes (so the roles that use it get new bundles), some roles exist in only
one version (so the manifest lists different files and GC has work to do),
and some roles are identical in both (so an incremental compile reuses their
bundles from the build it replaces).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

COMPILER = Path(__file__).resolve().parents[1] / "compiler"
CONFIG = "prompts: prompts\nbuild: build\ntokenizer: o200k_base\nbudget: {max_tokens: 8000, reserve: 1000}\n"
FRAGMENT = """\
kind: fragment
id: shared/guide
name: Guide
description: Guidance shared by the even roles.
text: |
{body}
"""
ROLE = """\
kind: role
id: {rid}
description: Generated role {n} for the crash tests.
budget: {{max_tokens: 8000, reserve: 1000}}
inputs:
  type: object
  required: [topic]
  properties:
    topic: {{type: string}}
    notes:
      type: array
      items: {{type: object, required: [text], properties: {{text: {{type: string}}, score: {{type: number}}}}}}
sections:
  - id: intro
    text: |
      You are role {n}. {blurb}
{guide}  - id: topic
    title: "TOPIC:"
    template: "{{{{ topic }}}}"
    trim: never
  - id: notes
    title: "NOTES:"
    each: notes
    as: note
    template: "- {{{{ note.text }}}}"
    order_by: score
"""
GUIDE = "  - id: guide\n    fragment: shared/guide\n"
BLURB = "Answer briefly, check facts, and say what you changed. " * 4


def role_ids(version: str, roles: int) -> list[int]:
    """Role numbers of a version: 'b' drops the first two roles and adds three."""
    return list(range(roles)) if version == "a" else list(range(2, roles + 3))


def write_project(root: Path, version: str, roles: int = 40) -> None:
    """Write (or rewrite in place) the sources of `version` into `root`."""
    prompts = root / "prompts"
    if prompts.exists():
        shutil.rmtree(prompts)
    (prompts / "roles").mkdir(parents=True)
    (prompts / "fragments").mkdir()
    (root / "promptmill.yaml").write_text(CONFIG)
    body = "\n".join(f"  Guideline {i} ({version}): verify step {i} before the next one." for i in range(30))
    (prompts / "fragments" / "guide.yaml").write_text(FRAGMENT.format(body=body))
    for n in role_ids(version, roles):
        guide = GUIDE if n % 2 == 0 else ""  # odd roles are the same in both versions
        text = ROLE.format(rid=f"r-{n:03d}", n=n, blurb=BLURB, guide=guide)
        (prompts / "roles" / f"r-{n:03d}.yaml").write_text(text)


def snapshot(build: Path) -> dict[str, bytes]:
    """What a reader can load: manifest.json and every file it lists (raises OSError if missing)."""
    manifest = (build / "manifest.json").read_bytes()
    data = json.loads(manifest)
    files = {"manifest.json": manifest}
    for entry in data["roles"].values():
        files[entry["file"]] = (build / entry["file"]).read_bytes()
    for rel in data.get("tokenizers", {}):
        files[rel[3:]] = (build / rel[3:]).read_bytes()
    return files


def stray_files(build: Path, snap: dict[str, bytes]) -> list[str]:
    """Files in `build` that its manifest does not list (temporary or stale), lock aside."""
    found = []
    for path in build.rglob("*"):
        rel = path.relative_to(build).as_posix()
        if path.is_file() and rel not in snap and rel != ".lock":
            found.append(rel)
    return sorted(found)


def compile_command(project: Path, output: Path | None = None) -> list[str]:
    cmd = [sys.executable, "-m", "promptmill.cli.main", "compile", str(project)]
    if output is not None:
        cmd += ["-o", str(output)]
    return cmd


def child_env() -> dict[str, str]:
    return dict(os.environ, PYTHONPATH=str(COMPILER), NO_COLOR="1")


def start_compile(project: Path, output: Path | None = None) -> subprocess.Popen:
    return subprocess.Popen(compile_command(project, output), env=child_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE)
