"""The model shim: the RM side of the checker, and the protocol checks on what it is told.

It keeps what a real shim would know (the allocations it runs, the releases
it must confirm, the applications and asks it sent) and asserts, on every
message the core sends, what the SI's protocol allows (``002`` "RM and
scheduler updates"; ``001`` "AllocationRelease Response and Request").
"""

from __future__ import annotations

from dataclasses import dataclass, field

from scheduler import si

TT = si.TerminationType


@dataclass
class ShimAsk:
    """What the shim remembers of an ask it sent."""

    app_id: str
    key: str
    memory: int
    vcore: int
    repeats: int
    priority: int
    timeout_ms: int
    task_group: str = ""
    placeholder: bool = False

    def message(self, partition: str) -> si.AllocationAsk:
        return si.AllocationAsk(
            allocation_key=self.key, application_id=self.app_id, partition_name=partition,
            resource_ask=si.Resource.of(memory=self.memory, vcore=self.vcore),
            max_allocations=self.repeats, priority=self.priority,
            execution_timeout_milli_seconds=self.timeout_ms, task_group_name=self.task_group,
            placeholder=self.placeholder)


@dataclass
class ModelShim:
    """The RM side: what it was told, what it runs, what it must confirm."""

    view: dict[str, tuple[str, str]] = field(default_factory=dict)
    alloc_info: dict[str, si.Allocation] = field(default_factory=dict)
    to_confirm: list[si.AllocationRelease] = field(default_factory=list)
    confirmed: list[si.AllocationRelease] = field(default_factory=list)
    apps: dict[str, si.AddApplicationRequest] = field(default_factory=dict)
    gangs: dict[str, dict[str, tuple[int, int]]] = field(default_factory=dict)
    app_states: dict[str, str] = field(default_factory=dict)
    rejected_apps: list[str] = field(default_factory=list)
    rejected_asks: list[tuple[str, str]] = field(default_factory=list)
    rejected_nodes: list[str] = field(default_factory=list)
    accepted_nodes: list[str] = field(default_factory=list)
    events: int = 0
    core_releases: int = 0
    reasons: list[str] = field(default_factory=list)
    asks: dict[tuple[str, str], ShimAsk] = field(default_factory=dict)

    # -- callback surface -------------------------------------------------
    def update_allocation(self, response: si.AllocationResponse) -> None:
        for a in response.new:
            assert a.uuid not in self.view, f"allocation {a.uuid} announced twice"
            self.view[a.uuid] = (a.application_id, a.node_id)
            self.alloc_info[a.uuid] = a
        for r in response.released:
            if r.termination_type == TT.STOPPED_BY_RM:
                self.view.pop(r.uuid, None)
            else:
                assert r.uuid in self.view, f"core released {r.uuid}, which the shim never ran"
                assert all(x.uuid != r.uuid for x in self.to_confirm), \
                    f"core released {r.uuid} twice"
                self.to_confirm.append(r)
                self.core_releases += 1
        for ask_release in response.released_asks:
            if ask_release.termination_type == TT.TIMEOUT:
                self.asks.pop((ask_release.application_id, ask_release.allocation_key), None)
        for k in response.rejected:
            assert k.reason, "a rejection must say why"
            self.rejected_asks.append((k.application_id, k.allocation_key))
            self.reasons.append(k.reason)

    def update_application(self, response: si.ApplicationResponse) -> None:
        for a in response.accepted:
            self.app_states[a.application_id] = "New"
        for r in response.rejected:
            assert r.reason, "a rejection must say why"
            self.rejected_apps.append(r.application_id)
        for u in response.updated:
            self.app_states[u.application_id] = u.state

    def update_node(self, response: si.NodeResponse) -> None:
        for n in response.rejected:
            assert n.reason, "a rejection must say why"
            self.rejected_nodes.append(n.node_id)
        self.accepted_nodes += [n.node_id for n in response.accepted]

    def send_event(self, events: list[si.EventRecord]) -> None:
        self.events += len(events)

    def update_container_scheduling_state(
        self, request: si.UpdateContainerSchedulingStateRequest
    ) -> None:
        assert request.state != si.SchedulingState.UNKNOWN_SCHEDULING_STATE
