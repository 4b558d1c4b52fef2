"""Allocation ask lifecycle.

Source: the interface spec ``002``, section "Ask for more
resources" ("Lifecycle of AllocationAsk"): Initial -> Pending (asked by RM),
Pending -> Allocated, Initial/Pending -> Rejected (by the scheduler or asked by
the RM). An ask with ``maxAllocations`` > 1 stays Pending until its last repeat
is allocated.
"""

from __future__ import annotations

from ._core import Lifecycle, StateSpec, edges

S = "002 Spec, 'Lifecycle of AllocationAsk'"

LIFECYCLE = Lifecycle(
    name="ask",
    description=(
        "A request for resources from the RM: pending until every repeat is allocated, "
        "rejected when the scheduler refuses it or the RM (or a timeout) takes it back."
    ),
    initial="Initial",
    states=[
        StateSpec("Initial", f"{S}: received, not yet checked"),
        StateSpec("Pending", f"{S}: accepted, waiting for allocation"),
        StateSpec("Allocated", f"{S}: every repeat allocated", True),
        StateSpec("Rejected", f"{S}: refused by the scheduler or released by the RM", True),
    ],
    transitions=edges(
        ("ask", ["Initial"], "Pending", f"{S}: 'Asked By RM'"),
        ("allocate", ["Pending"], "Allocated", f"{S}: the last repeat was allocated"),
        ("reject", ["Initial"], "Rejected", f"{S}: 'Rejected by Scheduler'"),
        ("reject", ["Pending"], "Rejected",
         f"{S}: 'Scheduler or, Asked by RM' (removal, replacement, placeholder timeout)"),
    ),
)
