"""Shared test settings: a bounded hypothesis profile so the suite stays fast,
and an empty user folder so a developer's own ~/.config/promptmill never leaks
into a test.

Set HYPOTHESIS_PROFILE=long for a longer fuzzing run (see README, Testing).
"""

import os

import pytest
from hypothesis import HealthCheck, settings

settings.register_profile(
    "ci", max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.register_profile(
    "long", max_examples=5000, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


@pytest.fixture(autouse=True)
def _empty_user_dir(tmp_path_factory, monkeypatch):
    """Point PROMPTMILL_USER_DIR at an empty folder (tests may set their own)."""
    monkeypatch.setenv("PROMPTMILL_USER_DIR", str(tmp_path_factory.mktemp("promptmill-user")))
