"""Shared test settings: a bounded hypothesis profile so the suite stays fast.

Set HYPOTHESIS_PROFILE=long for a longer fuzzing run (see README, Testing).
"""

import os

from hypothesis import HealthCheck, settings

settings.register_profile(
    "ci", max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.register_profile(
    "long", max_examples=5000, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))
