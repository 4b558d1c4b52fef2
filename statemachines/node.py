"""Node lifecycle.

Source: the interface spec ``002``, section "Schedulable
nodes registration and updates" (State transition of node) and
``NodeInfo.ActionFromRM``: DRAIN_NODE, DRAIN_TO_SCHEDULABLE ("if node is not
in draining state, error will be thrown") and DECOMISSION ("immediately stop
allocations on the node and remove the node"), which also applies to a
schedulable node.
"""

from __future__ import annotations

from ._core import Lifecycle, StateSpec, edges

S = "002 Spec, 'State transition of node'"

LIFECYCLE = Lifecycle(
    name="node",
    description=(
        "A node registered by the RM: schedulable, draining (keeps its allocations, "
        "takes no new ones), removed when decommissioned."
    ),
    initial="Schedulable",
    states=[
        StateSpec("Schedulable", f"{S}: SCHEDULABLE, takes new allocations"),
        StateSpec("Draining", f"{S}: DRAINING, no new allocations"),
        StateSpec("Removed", f"{S}: REMOVED, its allocations are gone", True),
    ],
    transitions=edges(
        ("drain", ["Schedulable"], "Draining", f"{S}: 'Asked by RM to DRAIN' (DRAIN_NODE)"),
        ("restore", ["Draining"], "Schedulable",
         f"{S}: 'Asked by RM to SCHEDULE again' (DRAIN_TO_SCHEDULABLE)"),
        ("remove", ["Draining"], "Removed", f"{S}: 'Asked by RM to REMOVE' (DECOMISSION)"),
        ("remove", ["Schedulable"], "Removed",
         "002 Spec, NodeInfo.DECOMISSION: 'immediately stop allocations on the node'"),
    ),
)
