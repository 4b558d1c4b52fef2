"""Named invariants of the scheduler design, and the checker and explorer that hold them.

``REGISTRY`` maps each invariant's name to its statement, the seed section it
enforces, what a violation means, and a read-only check. ``check_all`` runs
them against a :class:`CheckContext`. The random checker (``runner``, driven
by ``yunikorn-fsm check``) and the explorer (``invariants.explore``, driven by
``yunikorn-fsm explore``) run them, with the model shim's protocol rules,
after every step.
"""

from __future__ import annotations

# The property modules register their invariants on import, in the order they run.
from invariants.properties import (
    accounting,
    backoff,
    gangs,
    lifecycle,
    order,
    preemptions,
    priorities,
    scheduling,
)
from invariants.properties.catalog import (
    REGISTRY,
    CheckContext,
    Invariant,
    Violation,
    check_all,
    results,
)
from invariants.properties.recorder import LifecycleRecorder

# The property modules under their short names (the pinned exports).
gang = gangs
preemption = preemptions
priority = priorities

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
