"""Allocation lifecycle.

Sources: the interface spec ``002`` ("Lifecycle of
Allocations": Allocated -> Completed / Preempted / Expired) and the gang design
``001`` ("Scheduler storage object changes", Allocation
``released``; "AllocationRelease Response and Request"): a release initiated by
the core marks the allocation released (``Releasing``) and only the shim's
confirmation ends it, as Replaced, Expired or Preempted.
"""

from __future__ import annotations

from ._core import Lifecycle, StateSpec, dormant, edges

S = "002 Spec, 'Lifecycle of Allocations'"
G = "001 Gang design"

LIFECYCLE = Lifecycle(
    name="allocation",
    description=(
        "Resources bound to a node for an ask: ends when the RM stops it, or, for a "
        "release the core starts (timeout, preemption, placeholder replacement), when "
        "the RM confirms that release."
    ),
    initial="Allocated",
    states=[
        StateSpec("Allocated", f"{S}: 'Allocated by Scheduler' (or recovered from the RM)"),
        StateSpec("Releasing", f"{G}, 'Allocation' field released: sent to the shim, unconfirmed"),
        StateSpec("Completed", f"{S}: 'Stopped by RM'", True),
        StateSpec("Preempted", f"{S}: 'Preempted by Scheduler'", True),
        StateSpec("Expired", f"{S}: 'Timeout (Part of Allocation ask)'", True),
        StateSpec("Replaced", f"{G}, 'Scheduler logic changes': placeholder replaced", True),
    ],
    transitions=[
        *edges(
            ("stop", ["Allocated"], "Completed", f"{S}: 'Stopped by RM'"),
            ("stop", ["Releasing"], "Completed",
             f"{G}, 'AllocationRelease': an RM-initiated release wins over a pending one"),
            ("release", ["Allocated"], "Releasing",
             f"{G}, 'Scheduler logic changes' step 2: marked for release, shim informed"),
        ),
        *dormant(
            "a preemption is a release the core starts: the victim goes Releasing and only "
            "the RM's PREEMPTED_BY_SCHEDULER confirmation ends it (001 'AllocationRelease')",
            *edges(("preempt", ["Allocated"], "Preempted", f"{S}: 'Preempted by Scheduler'")),
        ),
        *edges(
            ("preempt", ["Releasing"], "Preempted",
             f"{G}, 'TerminationType': the shim confirmed PREEMPTED_BY_SCHEDULER"),
        ),
        *dormant(
            "a timeout is a release the core starts: the allocation goes Releasing and only "
            "the RM's TIMEOUT confirmation ends it (001 'AllocationRelease')",
            *edges(("expire", ["Allocated"], "Expired", f"{S}: 'Timeout'")),
        ),
        *edges(
            ("expire", ["Releasing"], "Expired",
             f"{G}, 'TerminationType': the shim confirmed TIMEOUT"),
            ("replace", ["Releasing"], "Replaced",
             f"{G}, 'Scheduler logic changes' step 4: the shim confirmed PLACEHOLDER_REPLACED"),
        ),
    ],
    state_sets={"held": ["Allocated", "Releasing"]},
)

HELD = LIFECYCLE.state_sets["held"]
"""Still bound to its node and counted (a release the core started is unconfirmed)."""
