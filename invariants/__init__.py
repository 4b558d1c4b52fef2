"""Named invariants of the scheduler design, and the stateful checker that runs them.

``REGISTRY`` maps each invariant's name to its statement, the seed section it
enforces, what a violation means, and a read-only check. ``check_all`` runs
them against a :class:`CheckContext`. The Hypothesis state machine in
:mod:`invariants.stateful` drives a scheduler at random and checks every
invariant after every step.
"""

from __future__ import annotations

from . import accounting, gang, lifecycle, scheduling
from .recorder import LifecycleRecorder
from .registry import REGISTRY, CheckContext, Invariant, Violation, check_all, results

__all__ = [
    "REGISTRY",
    "CheckContext",
    "Invariant",
    "LifecycleRecorder",
    "Violation",
    "accounting",
    "check_all",
    "gang",
    "lifecycle",
    "results",
    "scheduling",
]
