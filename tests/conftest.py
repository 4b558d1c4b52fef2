"""Hypothesis profiles: ``ci`` (bounded, the default) and ``deep`` (long runs).

Select with ``HYPOTHESIS_PROFILE=deep``; ``HYPOTHESIS_DEEP_EXAMPLES`` sets how
many examples the deep profile runs (default 20,000).
"""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

from invariants.random_search.runner import usable_cores

settings.register_profile(
    "ci",
    max_examples=150,
    stateful_step_count=50,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.register_profile(
    "deep",
    max_examples=int(os.environ.get("HYPOTHESIS_DEEP_EXAMPLES", "20000")),
    stateful_step_count=100,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


def pytest_xdist_auto_num_workers(config: object) -> int:
    """``-n auto`` (``pyproject.toml``) starts one worker per usable core, not per host core."""
    return usable_cores()
