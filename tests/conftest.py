"""Shared test settings and fixtures: a bounded hypothesis profile so the suite
stays fast, an empty user folder so a developer's own ~/.config/promptmill never
leaks into a test, and `project`, the render cases' project (modules that need
another project define their own `project`, which overrides this one).

Set HYPOTHESIS_PROFILE=long for a longer fuzzing run (see README, Testing).
"""

import os
import shutil
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

settings.register_profile(
    "ci", max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.register_profile(
    "long", max_examples=5000, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))

RENDER_CASES = Path(__file__).parent / "cases" / "render"


@pytest.fixture(autouse=True)
def _empty_user_dir(tmp_path_factory, monkeypatch):
    """Point PROMPTMILL_USER_DIR at an empty folder (tests may set their own)."""
    monkeypatch.setenv("PROMPTMILL_USER_DIR", str(tmp_path_factory.mktemp("promptmill-user")))


@pytest.fixture
def project(tmp_path, monkeypatch) -> Path:
    """A copy of tests/cases/render/project with its state.yaml, as the working directory."""
    root = tmp_path / "project"
    shutil.copytree(RENDER_CASES / "project", root)
    shutil.copy(RENDER_CASES / "state.yaml", root / "state.yaml")
    monkeypatch.chdir(root)
    return root
