"""Named invariants of the scheduler design, and the checker and explorer that hold them.

``REGISTRY`` maps each invariant's name to its statement, the seed section it
enforces, what a violation means, and a read-only check. ``check_all`` runs
them against a :class:`CheckContext`. The random checker (``runner``, driven
by ``yunikorn-fsm check``) and the explorer (``invariants.explore``, driven by
``yunikorn-fsm explore``) run them, with the model shim's protocol rules,
after every step.
"""

from __future__ import annotations

from . import accounting, backoff, gang, lifecycle, order, preemption, priority, scheduling
from .recorder import LifecycleRecorder
from .registry import REGISTRY, CheckContext, Invariant, Violation, check_all, results

__all__ = [
    "REGISTRY",
    "CheckContext",
    "Invariant",
    "LifecycleRecorder",
    "Violation",
    "accounting",
    "backoff",
    "check_all",
    "gang",
    "lifecycle",
    "order",
    "preemption",
    "priority",
    "results",
    "scheduling",
]
