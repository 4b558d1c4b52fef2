"""A recording RM callback for tests, examples and the checker.

It keeps every message the core sent, in order, and offers the views a shim
needs: allocations it was told about, releases to confirm, rejections.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from . import si


class RecordingShim:
    """Records every callback; ``predicates`` is optional (None: every node passes)."""

    def __init__(self, predicates: Callable[[si.PredicatesArgs], bool] | None = None) -> None:
        self.messages: list[tuple[str, Any]] = []
        if predicates is not None:
            self.predicates = predicates

    # -- the callback surface ------------------------------------------------
    def update_allocation(self, response: si.AllocationResponse) -> None:
        self.messages.append(("update_allocation", response))

    def update_application(self, response: si.ApplicationResponse) -> None:
        self.messages.append(("update_application", response))

    def update_node(self, response: si.NodeResponse) -> None:
        self.messages.append(("update_node", response))

    def send_event(self, events: list[si.EventRecord]) -> None:
        self.messages.append(("send_event", events))

    def update_container_scheduling_state(
        self, request: si.UpdateContainerSchedulingStateRequest
    ) -> None:
        self.messages.append(("update_container_scheduling_state", request))

    # -- views -----------------------------------------------------------------
    def of(self, kind: str) -> list[Any]:
        return [m for k, m in self.messages if k == kind]

    @property
    def allocations(self) -> list[si.Allocation]:
        return [a for r in self.of("update_allocation") for a in r.new]

    @property
    def released(self) -> list[si.AllocationRelease]:
        return [a for r in self.of("update_allocation") for a in r.released]

    @property
    def released_asks(self) -> list[si.AllocationAskRelease]:
        return [a for r in self.of("update_allocation") for a in r.released_asks]

    @property
    def rejected_asks(self) -> list[si.RejectedAllocationAsk]:
        return [a for r in self.of("update_allocation") for a in r.rejected]

    @property
    def accepted_apps(self) -> list[str]:
        return [a.application_id for r in self.of("update_application") for a in r.accepted]

    @property
    def rejected_apps(self) -> list[si.RejectedApplication]:
        return [a for r in self.of("update_application") for a in r.rejected]

    @property
    def app_updates(self) -> list[si.UpdatedApplication]:
        return [a for r in self.of("update_application") for a in r.updated]

    @property
    def accepted_nodes(self) -> list[str]:
        return [n.node_id for r in self.of("update_node") for n in r.accepted]

    @property
    def rejected_nodes(self) -> list[si.RejectedNode]:
        return [n for r in self.of("update_node") for n in r.rejected]

    @property
    def events(self) -> list[si.EventRecord]:
        return [e for batch in self.of("send_event") for e in batch]

    @property
    def scheduling_states(self) -> list[si.UpdateContainerSchedulingStateRequest]:
        return self.of("update_container_scheduling_state")

    def clear(self) -> None:
        self.messages.clear()
