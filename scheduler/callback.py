"""The RM's side of the SI: ``ResourceManagerCallback`` as a typing Protocol.

``002`` "API Interface": the RM implements the callback and hands it over at
registration. The core calls these methods synchronously, on the thread whose
call made the decision, in decision order (``scheduler.delivery``).
``predicates`` is optional: a callback without it lets every node pass.
``preemption_predicates`` is optional too: a callback without it accepts the
core's first choice of node and victims.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol, runtime_checkable

from . import si

REQUIRED_METHODS = (
    "update_allocation",
    "update_application",
    "update_node",
    "send_event",
    "update_container_scheduling_state",
)
"""What every callback must offer; ``predicates`` and ``preemption_predicates`` are optional."""


@runtime_checkable
class ResourceManagerCallback(Protocol):
    """What the core tells an RM (the spec's ResourceManagerCallback, snake_case)."""

    def update_allocation(self, response: si.AllocationResponse) -> None: ...

    def update_application(self, response: si.ApplicationResponse) -> None: ...

    def update_node(self, response: si.NodeResponse) -> None: ...

    def send_event(self, events: list[si.EventRecord]) -> None: ...

    def update_container_scheduling_state(
        self, request: si.UpdateContainerSchedulingStateRequest
    ) -> None: ...


Predicates = Callable[[si.PredicatesArgs], object]
"""``predicates(args) -> bool``: may the ask go on the node (``002`` "Scheduler plugin")."""


def predicates_of(callback: ResourceManagerCallback) -> Predicates | None:
    """The callback's optional ``predicates`` method, or None (every node passes)."""
    method: Predicates | None = getattr(callback, "predicates", None)
    return method


PreemptionPredicates = Callable[[si.PreemptionPredicatesArgs], object]
"""``preemption_predicates(args) -> si.PreemptionPredicatesResponse``: may the ask go on the
node once the listed allocations are gone, and from which index on (``002`` "Scheduler
plugin")."""


def preemption_predicates_of(callback: ResourceManagerCallback) -> PreemptionPredicates | None:
    """The callback's optional ``preemption_predicates`` method, or None (first choice wins)."""
    method: PreemptionPredicates | None = getattr(callback, "preemption_predicates", None)
    return method
