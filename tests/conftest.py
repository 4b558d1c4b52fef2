"""Hypothesis profiles: ``ci`` (bounded, the default) and ``deep`` (long runs).

Select with ``HYPOTHESIS_PROFILE=deep``; ``HYPOTHESIS_DEEP_EXAMPLES`` sets how
many examples the deep profile runs (default 20,000).
"""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

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


def _usable_cores() -> int:
    """The cores this process may run on: its CPU affinity, capped by a cgroup v2 CPU quota.

    ``os.cpu_count()`` counts the host's cores, which a container limited to two of them
    does not have: ``-n auto`` would start a worker per host core, each starting servers
    and subprocesses of its own, and the suite would crawl.
    """
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (
        os.cpu_count() or 1)
    try:
        with open("/sys/fs/cgroup/cpu.max", encoding="ascii") as limit:
            quota, period = limit.read().split()[:2]
    except (OSError, ValueError):
        return cores
    if quota == "max":
        return cores
    return max(1, min(cores, -(-int(quota) // int(period))))


def pytest_xdist_auto_num_workers(config: object) -> int:
    """``-n auto`` (``pyproject.toml``) starts one worker per usable core."""
    return _usable_cores()
