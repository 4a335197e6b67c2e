"""The release works outside the repository: sdist and wheel, installed in an empty
virtualenv, run the tutorial (docs/tutorial.md) with no network.

`python -m build` makes the sdist from a copy of the checkout's files and the wheel
from that sdist, so a file the sdist forgets is missing from the wheel too. The wheel
goes into a new virtualenv in the temporary folder (outside the clone; nothing of the
checkout is on its path), with its dependencies from uv's cache when it has them. The
tutorial then runs there as docs/tutorial.md prints it, inside a network namespace of its own
(`unshare -n`: only loopback) when the machine allows one, so token counts must come
from the encoding files the wheel carries; every provider then renders the tutorial's
role from the installed build.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest

import promptmill
from test_tutorial import TUTORIAL, normal, play, tutorial_blocks

ROOT = Path(__file__).resolve().parent.parent
PROVIDERS = ("text", "openai", "anthropic", "gemini", "live")
# the starter's role names gpt-4o-mini: another provider's wire renders it for one of that provider's models
OTHER_MODEL = {"anthropic": ["--model", "claude-sonnet-4-5"], "gemini": ["--model", "gemini-2.5-flash"]}
# What the package must carry, as paths inside the wheel.
CARRIED = (
    "promptmill/py.typed",
    "promptmill/data/o200k_base.tiktoken",
    "promptmill/data/cl100k_base.tiktoken",
    "promptmill/data/models.json",
)
CARRIED_DIRS = ("schemas/", "library/", "starter/")


def _checkout_files() -> list[str]:
    """The files of this checkout that git tracks or would track (new, not ignored)."""
    out = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT,
        capture_output=True,
        check=True,
    ).stdout
    return [name for name in out.decode().split("\0") if name and (ROOT / name).is_file()]


def _no_network() -> list[str]:
    """A command prefix that cuts the network off, or [] where the machine cannot."""
    unshare = shutil.which("unshare")
    if unshare is None:
        return []
    probe = subprocess.run([unshare, "-n", "true"], capture_output=True)
    return [unshare, "-n"] if probe.returncode == 0 else []


@pytest.fixture(scope="module")
def dist(tmp_path_factory: pytest.TempPathFactory) -> Path:
    src = tmp_path_factory.mktemp("src")
    for name in _checkout_files():
        target = src / name
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / name, target)
    out = tmp_path_factory.mktemp("dist")
    proc = subprocess.run(
        [sys.executable, "-m", "build", "--no-isolation", "--outdir", str(out), str(src)],
        capture_output=True,
        text=True,
        timeout=300,
        env={k: v for k, v in os.environ.items() if k != "PROMPTMILL_MYPYC"},  # the default build: pure Python
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    return out


def test_sdist_and_wheel_carry_the_package_data(dist: Path):
    (wheel,) = dist.glob("promptmill-*.whl")
    (sdist,) = dist.glob("promptmill-*.tar.gz")
    assert wheel.name.startswith(f"promptmill-{promptmill.__version__}-")
    # the default build is pure Python: one wheel for every platform, no compiler needed (setup.py)
    assert wheel.name.endswith("-py3-none-any.whl"), wheel.name
    names = set(zipfile.ZipFile(wheel).namelist())
    assert not [n for n in names if n.endswith((".so", ".pyd"))]
    missing = [name for name in CARRIED if name not in names]
    assert not missing, f"the wheel lacks {missing}"
    for folder in CARRIED_DIRS:
        inside = [n for n in names if n.startswith(f"promptmill/{folder}") or f"/{folder}" in n]
        assert inside, f"the wheel carries nothing under {folder}"
    with tarfile.open(sdist) as tar:
        members = tar.getnames()
    top = members[0].split("/")[0]
    for name in ("pyproject.toml", "setup.py", "README.md", "LICENSE", "CHANGELOG.md"):
        assert f"{top}/{name}" in members, f"the sdist lacks {name}"


@pytest.fixture(scope="module")
def venv(dist: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    where = tmp_path_factory.mktemp("venv") / "env"
    assert not str(where).startswith(str(ROOT)), "the virtualenv must live outside the clone"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(where)], check=True)
    python = where / "bin" / "python"
    (wheel,) = dist.glob("promptmill-*.whl")
    uv = [sys.executable, "-m", "uv", "pip", "install", "--python", str(python), str(wheel)]
    proc = subprocess.run([*uv, "--offline"], capture_output=True, text=True, timeout=300)
    if proc.returncode != 0:  # uv's cache lacks a dependency: fetch it, pinned by the lock
        lock = ROOT / "requirements" / "dev.lock"
        proc = subprocess.run([*uv, "-c", str(lock)], capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return where


def test_installed_wheel_runs_the_tutorial_offline(venv: Path, tmp_path: Path):
    bin_dir = venv / "bin"
    env = {
        key: value
        for key, value in os.environ.items()
        if key not in ("PYTHONPATH", "VIRTUAL_ENV", "PROMPTMILL_DEBUG", "PROMPTMILL_USER_DIR")
    }
    env.update(
        PATH=f"{bin_dir}{os.pathsep}{env.get('PATH', '')}",
        PYTHONUNBUFFERED="1",
        PYTHONNOUSERSITE="1",
        NO_COLOR="1",
        LC_ALL="C.UTF-8",
        TIKTOKEN_CACHE_DIR=str(tmp_path / "empty-tiktoken-cache"),
        HOME=str(tmp_path / "home"),
    )
    (tmp_path / "home").mkdir()
    offline = _no_network()
    where = subprocess.run(
        [*offline, str(bin_dir / "python"), "-c", "import promptmill; print(promptmill.__file__)"],
        env=env,
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )
    assert where.returncode == 0, where.stderr
    assert where.stdout.strip().startswith(str(venv)), f"promptmill came from {where.stdout.strip()}"

    blocks = tutorial_blocks(TUTORIAL.read_text("utf-8").split("\n"))
    failures, _, commands = play(blocks, tmp_path, env, str(bin_dir / "python"), prefix=offline)
    assert not failures, "the installed wheel printed other tutorial output:\n\n" + "\n\n".join(failures)
    assert any(c.startswith("promptmill render") for c in commands)

    project = tmp_path / "tutorial" / "demo"
    manifest = json.loads((project / "build" / "manifest.json").read_text("utf-8"))
    roles = sorted(manifest["roles"])
    assert "helpdesk" in roles
    for provider in PROVIDERS:
        proc = subprocess.run(
            [
                *offline,
                str(bin_dir / "promptmill"),
                "render",
                "helpdesk",
                "--build",
                "build",
                "--state",
                "examples/helpdesk.state.yaml",
                "--format",
                provider,
                *OTHER_MODEL.get(provider, []),
            ],
            cwd=project,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert proc.returncode == 0, f"{provider}: {proc.stdout}{proc.stderr}"
        shown = normal(proc.stdout, tmp_path)
        assert shown and any(line.strip() for line in shown), f"{provider} rendered nothing"
        if provider not in ("text", "live"):
            assert isinstance(json.loads(proc.stdout), dict)
