"""SI dialects: the seed's (``f59a9f4``), today's (``2858f4d``), and the translation between them.

The core speaks the seed's model (``scheduler.si``), the reference of the
design. A shim written against today's interface (``scheduler.si.today``)
speaks of pods by ``allocationKey``; this module is the only place that maps
one onto the other, in both directions:

- inbound, :class:`TodayRequests` turns today's requests into the core's
  partition operations: an ``Allocation`` without a node is an ask of one; one
  with a node is a pod already bound (``Partition.bind_allocation``, the
  recovery path); a ``foreign`` one (a pod the scheduler does not manage) is
  counted in its node's occupied resource; a release by key releases that
  key's allocation and withdraws its ask; ``CREATE_DRAIN`` creates a node and
  drains it;
- outbound, :class:`TodayCallback` turns the core's answers into today's
  messages for the shim's callback: allocations and releases by key, ask
  releases folded into ``released``, ``RejectedAllocation``, events with their
  change detail.

Where YuniKorn decides what today's messages mean, the rule is cited from
apache/yunikorn-core ``be3bb48`` (``scheduler/context.go``,
``scheduler/partition.go``, ``objects/allocation.go``).

A RM's dialect is decided by what it sends: the first request whose content
only one dialect can say fixes it for the registration (:func:`seed_only`
lists the seed's own content; today's messages are their own classes).
Requests both dialects can say (applications, plain node actions, releases
by key) decide nothing and are read in the RM's dialect.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final, Protocol

from . import resources as res
from . import si
from .si import today
from .si.base import construct_all

SEED_VERSION: Final = "f59a9f4"
"""The commit of apache/yunikorn-scheduler-interface the seed's spec (``002``) is at."""
TODAY_VERSION: Final = today.VERSION


class Dialect(enum.StrEnum):
    """Which SI a resource manager speaks."""

    SEED = "seed"
    """The seed's interface spec (``002``, ``f59a9f4``): asks with repeats, allocations by uuid."""
    TODAY = "today"
    """The interface as YuniKorn's shims use it now (``2858f4d``): one pod, one key."""

    @property
    def version(self) -> str:
        """The scheduler interface commit this dialect follows."""
        return SEED_VERSION if self is Dialect.SEED else TODAY_VERSION

    @property
    def label(self) -> str:
        """How a reader names it in a message: ``the seed's SI (f59a9f4)``."""
        who = "the seed's" if self is Dialect.SEED else "today's"
        return f"{who} SI ({self.version})"


def seed_only(request: si.AllocationRequest | si.NodeRequest) -> list[str]:
    """The fields of a seed message that today's SI can not say, by their spec names.

    Empty when the request means the same in both dialects (releases by key,
    plain node actions).
    """
    found: list[str] = []
    if isinstance(request, si.AllocationRequest):
        if request.asks:
            found.append("asks")
        if request.releases is not None:
            if request.releases.allocation_asks_to_release:
                found.append("releases.allocationAsksToRelease")
            found.extend(f"releases.allocationsToRelease[{i}].UUID"
                         for i, r in enumerate(request.releases.allocations_to_release)
                         if r.uuid)
    else:
        for i, n in enumerate(request.nodes):
            if n.occupied_resource is not None:
                found.append(f"nodes[{i}].occupiedResource")
            if n.existing_allocations:
                found.append(f"nodes[{i}].existingAllocations")
    return found


def today_allocation_request(request: si.AllocationRequest) -> today.AllocationRequest:
    """A seed request with nothing of the seed's own (``seed_only`` empty) in today's words."""
    releases = request.releases
    if releases is None:
        return today.AllocationRequest(rm_id=request.rm_id)
    return today.AllocationRequest(rm_id=request.rm_id, releases=today.AllocationReleasesRequest(
        allocations_to_release=[today.AllocationRelease(
            partition_name=r.partition_name, application_id=r.application_id,
            termination_type=r.termination_type.value, message=r.message,
            allocation_key=r.allocation_key) for r in releases.allocations_to_release]))


def today_node_request(request: si.NodeRequest) -> today.NodeRequest:
    """A seed node request with nothing of the seed's own in today's words."""
    return today.NodeRequest(rm_id=request.rm_id, nodes=[
        today.NodeInfo(node_id=n.node_id, action=n.action.value, attributes=n.attributes,
                       schedulable_resource=n.schedulable_resource) for n in request.nodes])


# ----------------------------------------------------------------- inbound

class PartitionOps(Protocol):
    """What the translation needs of a partition (``scheduler.partition.Partition``)."""

    @property
    def name(self) -> str: ...
    @property
    def apps(self) -> Mapping[str, Any]: ...
    @property
    def nodes(self) -> Mapping[str, Any]: ...

    def add_ask(self, msg: si.AllocationAsk) -> None: ...
    def release_asks(self, rel: si.AllocationAskRelease) -> None: ...
    def release_allocations(self, rel: si.AllocationRelease) -> None: ...
    def add_node(self, info: si.NodeInfo) -> None: ...
    def update_node(self, info: si.NodeInfo) -> None: ...
    def bind_allocation(self, msg: si.Allocation) -> None: ...
    def resize_allocation(self, uuid: str, resource: dict[str, int]) -> str: ...
    def roll_back(self, app_id: str, key: str, message: str) -> str: ...


@dataclass
class Foreign:
    """The pods a today's RM reported as ``foreign`` on one partition, by key."""

    pods: dict[str, tuple[str, dict[str, int]]] = field(default_factory=dict)
    """allocation key -> (node id, resource)."""

    def occupied(self, node_id: str) -> dict[str, int]:
        total: dict[str, int] = {}
        for node, resource in self.pods.values():
            if node == node_id:
                res.add_into(total, resource)
        return total


Reject = Callable[[str, str, str], None]
"""``reject(application_id, allocation_key, reason)``: the core's refusal of one pod."""
Note = Callable[[si.EventRecordType, str, str, str], None]
"""``note(kind, object_id, message, reference_id)``: an event for the RM."""


class TodayRequests:
    """Today's requests of one RM as the core's partition operations."""

    def __init__(self, partition: Callable[[str], PartitionOps | None],
                 reject: Reject, note: Note, new_uuid: Callable[[str, str], str]) -> None:
        self._partition = partition
        self._reject = reject
        self._note = note
        self._new_uuid = new_uuid
        self.foreign: dict[str, Foreign] = {}
        """Per partition name: the pods the scheduler does not manage."""

    # -- AllocationRequest ------------------------------------------------------
    def update_allocation(self, request: today.AllocationRequest) -> None:
        """Pods first, then releases, as YuniKorn's handleRMUpdateAllocationEvent orders them."""
        for pod in request.allocations:
            p = self._partition(pod.partition_name)
            if p is None:
                self._reject(pod.application_id, pod.allocation_key,
                             f"partition {pod.partition_name} does not exist")
            elif pod.foreign:
                self._foreign_pod(p, pod)
            elif pod.node_id:
                self._bound_pod(p, pod)
            else:
                self._ask(p, pod)
        if request.releases is not None:
            for rel in request.releases.allocations_to_release:
                p = self._partition(rel.partition_name)
                if p is None:
                    self._note(si.EventRecordType.QUEUE, rel.partition_name,
                               f"partition {rel.partition_name} is not known: release ignored",
                               "")
                elif not rel.application_id:
                    self._release_foreign(p, rel)
                else:
                    self._release(p, rel)

    @staticmethod
    def _live(p: PartitionOps, app_id: str, key: str) -> list[Any]:
        """The allocations of ``key`` the core still holds, oldest first.

        A key whose ask never had a repeat allocated has none (the common case of
        a new pod: no walk over the application's allocations).
        """
        app = p.apps.get(app_id)
        if app is None:
            return []
        ask = app.asks.get(key)
        if ask is not None and ask.allocated_count == 0:
            return []
        return [a for a in app.allocations.values() if a.ask_key == key]

    def _ask(self, p: PartitionOps, pod: today.Allocation) -> None:
        """A pod without a node: an ask of one; sent again for a running key, an update.

        YuniKorn treats an allocation re-sent for a known key as an update
        (``partition.go`` UpdateAllocation): a running pod's new size is an
        in-place resize.
        """
        placed = self._live(p, pod.application_id, pod.allocation_key)
        if placed:
            self._resent(p, pod, placed[0])
            return
        app = p.apps.get(pod.application_id)
        known = app.asks.get(pod.allocation_key) if app is not None else None
        # A key whose pod ended is a new pod when it comes again (YuniKorn forgets the key
        # with its allocation): in the seed's words, one repeat more than the key had.
        done = known.allocated_count if known is not None else 0
        p.add_ask(si.AllocationAsk.model_construct(
            allocation_key=pod.allocation_key, application_id=pod.application_id,
            partition_name=pod.partition_name, resource_ask=pod.resource_per_alloc,
            max_allocations=done + 1, priority=pod.priority, execution_timeout_milli_seconds=0,
            tags=dict(pod.allocation_tags), task_group_name=pod.task_group_name,
            placeholder=pod.placeholder, originator=pod.originator,
            preemption_policy=pod.preemption_policy))

    def _resent(self, p: PartitionOps, pod: today.Allocation, alloc: Any) -> None:
        """A running pod sent again: the same size changes nothing, another resizes it.

        Only the size is read, as YuniKorn reads only it for a known key
        (``partition.go`` UpdateAllocation); the node it names is not a move, once
        :meth:`_bound_pod` has found it known.
        """
        size = pod.resource_per_alloc.as_dict()
        if res.equal(alloc.resource, size):
            self._note(si.EventRecordType.REQUEST, pod.allocation_key,
                       f"allocation {pod.allocation_key} of application {pod.application_id} "
                       f"sent again unchanged: it runs on node {alloc.node.id}, nothing to do",
                       pod.application_id)
            return
        why = p.resize_allocation(alloc.uuid, size)
        if why:
            self._reject(pod.application_id, pod.allocation_key, why)

    def _bound_pod(self, p: PartitionOps, pod: today.Allocation) -> None:
        """A pod bound to a node: recovered, or placed by the RM itself."""
        if not pod.application_id:
            self._reject("", pod.allocation_key,
                         f"allocation {pod.allocation_key} has a node but no application and "
                         f"is not tagged {today.FOREIGN_TAG}")
            return
        placed = self._live(p, pod.application_id, pod.allocation_key)
        if placed and pod.node_id not in p.nodes:
            # YuniKorn looks the node up before the key: a known key on an unknown node is
            # refused, not read as an update (partition.go UpdateAllocation).
            self._reject(pod.application_id, pod.allocation_key,
                         f"node {pod.node_id} is not known in partition {p.name}: allocation "
                         f"{pod.allocation_key} runs on node {placed[0].node.id}")
            return
        if placed:
            self._resent(p, pod, placed[0])
            return
        p.bind_allocation(si.Allocation.model_construct(
            allocation_key=pod.allocation_key, allocation_tags=dict(pod.allocation_tags),
            uuid=self._new_uuid(pod.application_id, pod.allocation_key),
            resource_per_alloc=pod.resource_per_alloc, priority=pod.priority,
            node_id=pod.node_id, application_id=pod.application_id,
            partition_name=pod.partition_name, task_group_name=pod.task_group_name,
            placeholder=pod.placeholder))

    def _foreign_pod(self, p: PartitionOps, pod: today.Allocation) -> None:
        """A pod the scheduler does not manage: room taken on its node, nothing else.

        YuniKorn keeps such pods on their node only (``partition.go``
        handleForeignAllocation): never in a queue, an application or a user's
        usage. Here they are the node's occupied resource, which the seed's
        model already has for exactly that.
        """
        if not pod.node_id:
            self._reject(pod.application_id, pod.allocation_key,
                         f"foreign allocation {pod.allocation_key} has no node: only pods "
                         "already bound can be foreign")
            return
        if pod.node_id not in p.nodes:
            self._reject(pod.application_id, pod.allocation_key,
                         f"node {pod.node_id} of foreign allocation {pod.allocation_key} is "
                         f"not known in partition {p.name}")
            return
        book = self.foreign.setdefault(p.name, Foreign())
        before = book.pods.get(pod.allocation_key)
        book.pods[pod.allocation_key] = (pod.node_id, pod.resource_per_alloc.as_dict())
        if before is not None and before[0] != pod.node_id:
            self._occupy(p, book, before[0])
        self._occupy(p, book, pod.node_id)

    def _occupy(self, p: PartitionOps, book: Foreign, node_id: str) -> None:
        if node_id in p.nodes:
            p.update_node(si.NodeInfo.model_construct(
                node_id=node_id, action=si.NodeAction.UPDATE, attributes={},
                schedulable_resource=None,
                occupied_resource=si.resource_from_dict(book.occupied(node_id)),
                existing_allocations=[]))

    def _release_foreign(self, p: PartitionOps, rel: today.AllocationRelease) -> None:
        book = self.foreign.get(p.name)
        gone = book.pods.pop(rel.allocation_key, None) if book is not None else None
        if book is None or gone is None:
            self._note(si.EventRecordType.REQUEST, rel.allocation_key,
                       f"foreign allocation {rel.allocation_key} is not known: release "
                       "ignored", "")
            return
        self._occupy(p, book, gone[0])

    def _release(self, p: PartitionOps, rel: today.AllocationRelease) -> None:
        """A release by key: the key's allocations, then (unless TIMEOUT) its ask.

        YuniKorn removes the allocation and, for every type but ``TIMEOUT``,
        the request of the same key (``partition.go`` removeAllocation); an
        empty key means every allocation and ask of the application.
        """
        if rel.termination_type is today.TerminationType.SCHEDULING_FAILED_ON_RM:
            why = p.roll_back(rel.application_id, rel.allocation_key, rel.message)
            if why:
                self._note(si.EventRecordType.REQUEST, rel.allocation_key,
                           f"release SCHEDULING_FAILED_ON_RM ignored: {why}", rel.application_id)
            return
        ttype = si.TerminationType(rel.termination_type.value)
        key = rel.allocation_key
        app = p.apps.get(rel.application_id)
        if not key:
            # Asks first: the release of the last allocation may end the application, and
            # an ended application's asks go unconfirmed.
            if ttype != si.TerminationType.TIMEOUT and app is not None and app.asks:
                self._withdraw(p, rel, "")
            p.release_allocations(si.AllocationRelease.model_construct(
                partition_name=rel.partition_name, application_id=rel.application_id,
                uuid="", termination_type=ttype, message=rel.message, allocation_key=""))
            return
        placed = self._live(p, rel.application_id, key)
        for alloc in placed:
            p.release_allocations(si.AllocationRelease.model_construct(
                partition_name=rel.partition_name, application_id=rel.application_id,
                uuid=alloc.uuid, termination_type=ttype, message=rel.message,
                allocation_key=key))
        ask = app.asks.get(key) if app is not None else None
        pending = ask is not None and ask.state == "Pending"
        if pending and ttype != si.TerminationType.TIMEOUT:
            self._withdraw(p, rel, key)
        elif not placed and not pending and ttype == si.TerminationType.STOPPED_BY_RM:
            self._note(si.EventRecordType.REQUEST, key,
                       f"allocation {key} of application {rel.application_id} is not known: "
                       "release ignored", rel.application_id)

    @staticmethod
    def _withdraw(p: PartitionOps, rel: today.AllocationRelease, key: str) -> None:
        p.release_asks(si.AllocationAskRelease.model_construct(
            partition_name=rel.partition_name, application_id=rel.application_id,
            allocation_key=key, termination_type=si.TerminationType.STOPPED_BY_RM,
            message=rel.message))

    # -- NodeRequest --------------------------------------------------------------
    def node(self, info: today.NodeInfo, route: Callable[[si.NodeInfo], PartitionOps | None],
             refuse: Callable[[str, str], None]) -> None:
        """One node action; ``CREATE_DRAIN`` is a create and, once accepted, a drain."""
        action = info.action
        drain = action == today.NodeAction.CREATE_DRAIN
        seed = si.NodeInfo.model_construct(
            node_id=info.node_id,
            action=si.NodeAction.CREATE if drain else si.NodeAction(action.value),
            attributes=dict(info.attributes), schedulable_resource=info.schedulable_resource,
            occupied_resource=None, existing_allocations=[])
        p = route(seed)
        if p is None:
            refuse(info.node_id, seed.attributes.get("si/node-partition") or si.DEFAULT_PARTITION)
            return
        if seed.action == si.NodeAction.CREATE:
            known = p.nodes.get(info.node_id)
            p.add_node(seed)
            if drain and p.nodes.get(info.node_id) not in (None, known):
                p.update_node(si.NodeInfo.model_construct(
                    node_id=info.node_id, action=si.NodeAction.DRAIN_NODE, attributes={},
                    schedulable_resource=None, occupied_resource=None,
                    existing_allocations=[]))
            return
        p.update_node(seed)
        if action == today.NodeAction.DECOMISSION and info.node_id not in p.nodes:
            book = self.foreign.get(p.name)
            if book is not None:
                for key in [k for k, (n, _) in book.pods.items() if n == info.node_id]:
                    del book.pods[key]


# ---------------------------------------------------------------- outbound


_DETAILS: Final[dict[tuple[str, str], today.EventChangeDetail]] = {
    **{("application", state): today.EventChangeDetail[f"APP_{state.upper()}"]
       for state in ("New", "Accepted", "Running", "Completing", "Completed", "Failing",
                     "Failed", "Resuming", "Expired")},
    ("application", "Rejected"): today.EventChangeDetail.APP_REJECT,
    ("ask", "Allocated"): today.EventChangeDetail.REQUEST_ALLOC,
    ("ask", "Rejected"): today.EventChangeDetail.REQUEST_CANCEL,
    ("allocation", "Completed"): today.EventChangeDetail.ALLOC_CANCEL,
    ("allocation", "Preempted"): today.EventChangeDetail.ALLOC_PREEMPT,
    ("allocation", "Expired"): today.EventChangeDetail.ALLOC_TIMEOUT,
    ("allocation", "Replaced"): today.EventChangeDetail.ALLOC_REPLACED,
    ("node", "Draining"): today.EventChangeDetail.NODE_SCHEDULABLE,
    ("node", "Schedulable"): today.EventChangeDetail.NODE_SCHEDULABLE,
    ("node", "Removed"): today.EventChangeDetail.NODE_DECOMISSION,
}
"""The change detail of a transition event, by the object's kind and the state it enters."""


QUOTA_SUMMARY: Final = "Quota Preemption results summary: "
"""How a quota preemption's queue event begins (``partition.quota_preemption.SUMMARY``)."""


def change_detail(event: si.EventRecord) -> today.EventChangeDetail:
    """The change detail YuniKorn gives the event the core sent (none where it has none).

    The core reports every transition as ``<noun> <name> ... (<source> -> <dest>)``
    (``scheduler.context.transition_message``): the noun and the state entered decide.
    """
    text = event.message
    if not text.endswith(")"):
        return today.EventChangeDetail.QUEUE_PREEMPTION \
            if event.type is si.EventRecordType.QUEUE and text.startswith(QUOTA_SUMMARY) \
            else today.EventChangeDetail.DETAILS_NONE
    arrow = text.rfind(" -> ")
    noun = text[:text.find(" ")]
    return _DETAILS.get((noun, text[arrow + 4:-1]), today.EventChangeDetail.DETAILS_NONE) \
        if arrow > 0 else today.EventChangeDetail.DETAILS_NONE


def today_allocation_response(response: si.AllocationResponse) -> today.AllocationResponse:
    """The core's answer about pods as today's message: by key, ask releases in ``released``."""
    gone: list[si.AllocationRelease | si.AllocationAskRelease] = [
        *response.released, *response.released_asks]
    released = [today.AllocationRelease.model_construct(
        partition_name=r.partition_name, application_id=r.application_id,
        termination_type=today.TerminationType(r.termination_type.value), message=r.message,
        allocation_key=r.allocation_key) for r in gone]
    return today.AllocationResponse.model_construct(
        new=[today.Allocation.model_construct(
            allocation_key=a.allocation_key, allocation_tags=a.allocation_tags,
            resource_per_alloc=a.resource_per_alloc, priority=a.priority, node_id=a.node_id,
            application_id=a.application_id, partition_name=a.partition_name,
            task_group_name=a.task_group_name, placeholder=a.placeholder, originator=False,
            preemption_policy=None)
            for a in response.new],
        released=released,
        rejected_allocations=[today.RejectedAllocation.model_construct(
            allocation_key=r.allocation_key, application_id=r.application_id, reason=r.reason)
            for r in response.rejected])


_TYPES: Final = {member: today.EventRecordType(member.value) for member in si.EventRecordType}


def today_events(events: Iterable[si.EventRecord]) -> list[today.EventRecord]:
    """The core's events as today's records (thousands per scheduling call: built in one loop)."""
    types = _TYPES
    return construct_all(today.EventRecord, [
        {"type": types[e.type], "object_id": e.object_id, "message": e.message,
         "timestamp_nano": e.timestamp_nano, "event_change_type": e.event_change_type,
         "event_change_detail": change_detail(e), "reference_id": e.reference_id,
         "resource": None}
        for e in events])


class TodayCallback:
    """A shim's callback that speaks today's SI, behind the core's seed-dialect answers.

    Application and node answers are the same messages in both dialects and
    pass through; predicates too.
    """

    def __init__(self, shim: Any) -> None:
        self.shim = shim
        for optional in ("predicates", "preemption_predicates"):
            method = getattr(shim, optional, None)
            if method is not None:
                setattr(self, optional, method)

    def update_allocation(self, response: si.AllocationResponse) -> None:
        self.shim.update_allocation(today_allocation_response(response))

    def update_application(self, response: si.ApplicationResponse) -> None:
        self.shim.update_application(response)

    def update_node(self, response: si.NodeResponse) -> None:
        self.shim.update_node(response)

    def send_event(self, events: list[si.EventRecord]) -> None:
        """Today's records; none built for a shim whose ``wants_events`` is false now."""
        if getattr(self.shim, "wants_events", True):
            self.shim.send_event(today_events(events))

    def update_container_scheduling_state(
        self, request: si.UpdateContainerSchedulingStateRequest
    ) -> None:
        self.shim.update_container_scheduling_state(
            today.UpdateContainerSchedulingStateRequest.model_construct(
                application_id=request.application_id, allocation_key=request.allocation_key,
                state=request.state, reason=request.reason))
