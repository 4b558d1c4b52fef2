"""Queue and partition lifecycle (YuniKorn's "object state").

Sources: the cache removal design ``003`` ("Update and
Remove partition": partitions marked for deletion, then cleaned up) and the
issue's Active / Draining / Stopped; the edges follow Apache YuniKorn's
object state machine: a queue or partition removed from the configuration
drains, a draining one re-added becomes active again, and it stops once empty.
"""

from __future__ import annotations

from ._core import Lifecycle, StateSpec, edges

C = "003 Cache removal, 'Update and Remove partition'"

LIFECYCLE = Lifecycle(
    name="object",
    description=(
        "A queue or partition from the configuration: active, draining after it was "
        "removed from the configuration, stopped once nothing is left in it."
    ),
    initial="Active",
    states=[
        StateSpec("Active", f"{C}: configured and scheduling"),
        StateSpec("Draining", f"{C}: 'marks partitions for deletion', no new applications"),
        StateSpec("Stopped", f"{C}: 'removes queues, applications, nodes'", True),
    ],
    transitions=edges(
        ("remove", ["Active"], "Draining", f"{C}: removed from the configuration"),
        ("start", ["Draining"], "Active",
         "YuniKorn objectState Start: configured again by an update"),
        ("stop", ["Draining"], "Stopped", f"{C}: drained, cleanup done"),
        ("stop", ["Active"], "Stopped", "002 Spec: the owning RM left, removed at once"),
    ),
)
