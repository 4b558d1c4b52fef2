"""What the core tells a resource manager: one call's decisions, in the order they were made.

Everything one API call (or one ``schedule()``) decides for one RM is gathered
here and turned into SI messages once, at the end of the call. Decisions keep
their order: consecutive ones of one response kind share a message (so a gang
timeout's releases travel in a single ``AllocationResponse``, as ``001``
"Cleanup" asks) as long as reading the message's fields in order still gives
the decision order; otherwise a new message starts (a placeholder allocated
and then released in one cycle arrives allocation first). Container
scheduling states and events follow. Building messages at the end keeps their
construction off the scheduling hot path (``model_construct``, no validation).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from . import si
from .callback import ResourceManagerCallback
from .objects import Allocation
from .si.base import construct_all

Message = tuple[Callable[..., Any], Any]
"""A callback method and the message to call it with."""


NODE_REJECTED, NODE_ACCEPTED = 0, 1
ALLOC_NEW, ALLOC_RELEASED, ASK_RELEASED, ASK_REJECTED = 10, 11, 12, 13
APP_REJECTED, APP_ACCEPTED, APP_UPDATED = 20, 21, 22
"""Decision kinds: the tens say which response carries them, the units the field's place
in that response (the order a shim reads the fields in)."""


@dataclass(slots=True)
class RMOutbox:
    """Pending messages for one RM: its decisions in order, its states and events."""

    decisions: list[tuple[int, Any]] = field(default_factory=list)
    scheduling: list[tuple[str, str, si.SchedulingState, str]] = field(default_factory=list)
    events: list[dict[str, Any]] = field(default_factory=list)
    """The event records' fields, every one in declaration order (built once, at the end)."""
    stamp: int = 0
    """When the call began deciding for this RM, in nanoseconds: the timestamp of all its
    events (one call's decisions are made under one lock, as one step)."""

    def event(self, kind: si.EventRecordType, object_id: str, message: str,
              change: si.EventChangeType, reference_id: str = "") -> None:
        self.events.append({"type": kind, "object_id": object_id, "message": message,
                            "timestamp_nano": self.stamp, "event_change_type": change,
                            "reference_id": reference_id})

    # -- decisions, in the order they are made ---------------------------------
    def node_accepted(self, node_id: str) -> None:
        self.decisions.append((NODE_ACCEPTED, node_id))

    def node_rejected(self, node_id: str, reason: str) -> None:
        self.decisions.append((NODE_REJECTED, (node_id, reason)))

    def allocated(self, alloc: Allocation) -> None:
        self.decisions.append((ALLOC_NEW, alloc))

    def released(self, partition: str, app_id: str, uuid: str, key: str,
                 ttype: si.TerminationType, message: str) -> None:
        self.decisions.append((ALLOC_RELEASED, (partition, app_id, uuid, key, ttype, message)))

    def ask_released(self, partition: str, app_id: str, key: str, ttype: si.TerminationType,
                     message: str) -> None:
        self.decisions.append((ASK_RELEASED, (partition, app_id, key, ttype, message)))

    def ask_rejected(self, app_id: str, key: str, reason: str) -> None:
        self.decisions.append((ASK_REJECTED, (app_id, key, reason)))

    def app_accepted(self, app_id: str) -> None:
        self.decisions.append((APP_ACCEPTED, app_id))

    def app_rejected(self, app_id: str, reason: str) -> None:
        self.decisions.append((APP_REJECTED, (app_id, reason)))

    def app_updated(self, app_id: str, state: str, since: float, message: str) -> None:
        self.decisions.append((APP_UPDATED, (app_id, state, since, message)))

    def empty(self) -> bool:
        return not (self.decisions or self.scheduling or self.events)

    def build(self, callback: ResourceManagerCallback) -> list[Message]:
        """Turn the decisions into ``(callback method, message)`` pairs, in decision order.

        Consecutive decisions share one response while the shim, reading the
        response's fields in order, still sees them in the order they were
        made; otherwise a new response starts. Container scheduling states and
        events, which report on decisions, follow in one batch each.
        """
        out: list[Message] = []
        group: list[tuple[int, Any]] = []
        for decision in self.decisions:
            if group and (decision[0] // 10 != group[-1][0] // 10 or decision[0] < group[-1][0]):
                out.append(_response(callback, group))
                group = []
            group.append(decision)
        if group:
            out.append(_response(callback, group))
        report = callback.update_container_scheduling_state
        out.extend((report, request) for request in construct_all(
            si.UpdateContainerSchedulingStateRequest,
            ({"application_id": app_id, "allocation_key": key, "state": state, "reason": reason}
             for app_id, key, state, reason in self.scheduling)))
        if self.events:
            out.append((callback.send_event, construct_all(si.EventRecord, self.events)))
        return out


def _response(callback: ResourceManagerCallback, group: list[tuple[int, Any]]) -> Message:
    """One response message for a run of decisions of the same kind of response."""
    by: dict[int, list[Any]] = {}
    for kind, item in group:
        by.setdefault(kind, []).append(item)
    kind = group[0][0] // 10
    if kind == 0:
        return (callback.update_node, si.NodeResponse.model_construct(
            accepted=[si.AcceptedNode.model_construct(node_id=n)
                      for n in by.get(NODE_ACCEPTED, ())],
            rejected=[si.RejectedNode.model_construct(node_id=n, reason=r)
                      for n, r in by.get(NODE_REJECTED, ())],
        ))
    if kind == 1:
        return (callback.update_allocation, si.AllocationResponse.model_construct(
            new=_allocation_messages(by.get(ALLOC_NEW, [])),
            released=[
                si.AllocationRelease.model_construct(
                    partition_name=p, application_id=app, uuid=u, allocation_key=k,
                    termination_type=t, message=m)
                for p, app, u, k, t, m in by.get(ALLOC_RELEASED, ())
            ],
            released_asks=[
                si.AllocationAskRelease.model_construct(
                    partition_name=p, application_id=app, allocation_key=k,
                    termination_type=t, message=m)
                for p, app, k, t, m in by.get(ASK_RELEASED, ())
            ],
            rejected=[
                si.RejectedAllocationAsk.model_construct(
                    allocation_key=k, application_id=app, reason=r)
                for app, k, r in by.get(ASK_REJECTED, ())
            ],
        ))
    return (callback.update_application, si.ApplicationResponse.model_construct(
        accepted=[si.AcceptedApplication.model_construct(application_id=a)
                  for a in by.get(APP_ACCEPTED, ())],
        rejected=[si.RejectedApplication.model_construct(application_id=a, reason=r)
                  for a, r in by.get(APP_REJECTED, ())],
        updated=[
            si.UpdatedApplication.model_construct(
                application_id=a, state=st, state_transition_timestamp=int(ts * 1e9),
                message=m)
            for a, st, ts, m in by.get(APP_UPDATED, ())
        ],
    ))


def _allocation_messages(allocs: list[Allocation]) -> list[si.Allocation]:
    """The allocations' messages; allocations of equal size share one resource message
    (read-only for the shim), looked up by content once per run of one ask's repeats
    (they share the ask's resource map)."""
    shared: dict[tuple[tuple[str, int], ...], si.Resource] = {}
    last: object = None
    resource: si.Resource | None = None
    rows: list[dict[str, Any]] = []
    for a in allocs:
        if a.resource is not last:
            last = a.resource
            size = tuple(a.resource.items())
            found = shared.get(size)
            resource = found if found is not None else \
                shared.setdefault(size, si.resource_from_dict(a.resource))
        rows.append({  # every field, in declaration order
            "allocation_key": a.ask_key,
            "allocation_tags": dict(a.tags),
            "uuid": a.uuid,
            "resource_per_alloc": resource,
            "priority": a.priority,
            "node_id": a.node.id,
            "application_id": a.app.id,
            "partition_name": a.app.partition_name,
            "task_group_name": a.task_group,
            "placeholder": a.placeholder,
        })
    return construct_all(si.Allocation, rows)
