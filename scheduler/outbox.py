"""What the core tells a resource manager, batched per API call.

Everything one API call (or one ``schedule()``) decides for one RM is gathered
here and turned into SI messages once, at the end of the call: one
``NodeResponse``, one ``AllocationResponse``, one ``ApplicationResponse``, the
container scheduling states, then one ``send_event`` batch, in that fixed
order. Batching keeps the gang timeout's releases in a single
``AllocationResponse`` as ``001`` ("Cleanup") asks, and keeps message
construction off the scheduling hot path (``model_construct``, no validation).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from . import si
from .objects import Allocation

Delivery = tuple[Callable[..., Any], Any]


@dataclass(slots=True)
class RMOutbox:
    """Pending messages for one RM."""

    node_accepted: list[str] = field(default_factory=list)
    node_rejected: list[tuple[str, str]] = field(default_factory=list)
    app_accepted: list[str] = field(default_factory=list)
    app_rejected: list[tuple[str, str]] = field(default_factory=list)
    app_updated: list[tuple[str, str, float, str]] = field(default_factory=list)
    new: list[Allocation] = field(default_factory=list)
    released: list[tuple[str, str, str, str, si.TerminationType, str]] = field(
        default_factory=list
    )
    released_asks: list[tuple[str, str, str, si.TerminationType, str]] = field(
        default_factory=list
    )
    rejected_asks: list[tuple[str, str, str]] = field(default_factory=list)
    scheduling: list[tuple[str, str, si.SchedulingState, str]] = field(default_factory=list)
    events: list[tuple[si.EventRecordType, str, str, str, si.EventChangeType, int]] = field(
        default_factory=list
    )

    def empty(self) -> bool:
        return not (
            self.node_accepted or self.node_rejected or self.app_accepted or self.app_rejected
            or self.app_updated or self.new or self.released or self.released_asks
            or self.rejected_asks or self.scheduling or self.events
        )

    def build(self, callback: Any) -> list[Delivery]:
        """Turn the gathered decisions into ``(callback method, message)`` pairs."""
        out: list[Delivery] = []
        mc = si.NodeResponse.model_construct
        if self.node_accepted or self.node_rejected:
            out.append((callback.update_node, mc(
                accepted=[si.AcceptedNode.model_construct(node_id=n) for n in self.node_accepted],
                rejected=[si.RejectedNode.model_construct(node_id=n, reason=r)
                          for n, r in self.node_rejected],
            )))
        if self.new or self.released or self.released_asks or self.rejected_asks:
            # Repeats of one ask share their resource dict: build its message once.
            shared: dict[int, si.Resource] = {}
            out.append((callback.update_allocation, si.AllocationResponse.model_construct(
                new=[_allocation_message(a, shared) for a in self.new],
                released=[
                    si.AllocationRelease.model_construct(
                        partition_name=p, application_id=app, uuid=u, allocation_key=k,
                        termination_type=t, message=m)
                    for p, app, u, k, t, m in self.released
                ],
                released_asks=[
                    si.AllocationAskRelease.model_construct(
                        partition_name=p, application_id=app, allocation_key=k,
                        termination_type=t, message=m)
                    for p, app, k, t, m in self.released_asks
                ],
                rejected=[
                    si.RejectedAllocationAsk.model_construct(
                        allocation_key=k, application_id=app, reason=r)
                    for app, k, r in self.rejected_asks
                ],
            )))
        if self.app_accepted or self.app_rejected or self.app_updated:
            out.append((callback.update_application, si.ApplicationResponse.model_construct(
                accepted=[si.AcceptedApplication.model_construct(application_id=a)
                          for a in self.app_accepted],
                rejected=[si.RejectedApplication.model_construct(application_id=a, reason=r)
                          for a, r in self.app_rejected],
                updated=[
                    si.UpdatedApplication.model_construct(
                        application_id=a, state=s, state_transition_timestamp=int(ts * 1e9),
                        message=m)
                    for a, s, ts, m in self.app_updated
                ],
            )))
        for app_id, key, state, reason in self.scheduling:
            out.append((callback.update_container_scheduling_state,
                        si.UpdateContainerSchedulingStateRequest.model_construct(
                            application_id=app_id, allocation_key=key, state=state,
                            reason=reason)))
        if self.events:
            out.append((callback.send_event, [
                si.EventRecord.model_construct(
                    type=t, object_id=o, reference_id=ref, message=m, event_change_type=c,
                    timestamp_nano=ts)
                for t, o, ref, m, c, ts in self.events
            ]))
        return out


def _allocation_message(a: Allocation, shared: dict[int, si.Resource]) -> si.Allocation:
    resource = shared.get(id(a.resource))
    if resource is None:
        resource = shared[id(a.resource)] = si.resource_from_dict(a.resource)
    return si.Allocation.model_construct(
        allocation_key=a.ask_key,
        allocation_tags=dict(a.tags),
        uuid=a.uuid,
        resource_per_alloc=resource,
        priority=a.priority,
        node_id=a.node.id,
        application_id=a.app.id,
        partition_name=a.app.partition_name,
        task_group_name=a.task_group,
        placeholder=a.placeholder,
    )
