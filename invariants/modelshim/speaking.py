"""The generator's seed steps as an RM of today's SI says them (``scheduler.si.today``).

The checker's actions draw the seed's requests; for an RM that speaks today's
dialect each one becomes what today's SI can say, written here from the SI's
own terms and never by the core's translation (``scheduler.dialect``, which an
import-linter contract keeps out of the checker): an ask of ``n`` repeats is
``n`` pods (keys ``K``, ``K-2`` ...) with no execution timeout; an ask release
is a release by key (one per pending pod for a release of every ask); a release
or confirmation by uuid is one by the allocation's key; a node's
``existingAllocations`` are pods bound to it, sent after the node; an
``occupiedResource`` is a ``foreign`` pod on the node; a joining node is
sometimes ``CREATE_DRAIN`` (and restored after its pods, as YuniKorn's shim
does); a pod's end sometimes ``SCHEDULING_FAILED_ON_RM`` (the RM could not bind
it). Requests today's SI can not say (an ask release with a type only the core
starts, other than ``TIMEOUT``) are left out. How the answers are read back is
``invariants/modelshim/bridge.py``.
"""

from __future__ import annotations

import random
from dataclasses import replace

from invariants.modelshim.bridge import OCCUPIED, running
from invariants.modelshim.requests import NODE_PARTITION
from invariants.readings import arithmetic as qty
from invariants.readings.shim import RMView
from scheduler import si
from scheduler.si import today
from scheduler.trace import Step

TT = si.TerminationType
NA = si.NodeAction
ROLLED_BACK = 0.2
"""How often an RM of today's dialect ends a running pod with ``SCHEDULING_FAILED_ON_RM``.
Never a placeholder: the core refuses to roll one back (its gang's real ask may hold its
node; a placeholder has no volumes whose binding fails), and the RM never asks."""
DRAINED = 0.4
"""How often a node joins with ``CREATE_DRAIN``; three in four are restored after its pods."""


def speak(step: Step, rv: RMView | None, rng: random.Random) -> list[Step]:
    """The generator's seed step as today's SI says it for ``rv``'s RM (maybe several
    steps, maybe none); ``rng`` is a stream of its own, drawn only for such RMs."""
    if rv is None:
        return [step]
    if step.call == "update_allocation" and isinstance(step.request, si.AllocationRequest):
        return _speak_allocation(step, rv, rng)
    if step.call == "update_node" and isinstance(step.request, si.NodeRequest):
        return _speak_nodes(step, rv, rng)
    return [step]


def _pods(ask: si.AllocationAsk) -> list[today.Allocation]:
    return [today.Allocation(
        allocation_key=ask.allocation_key if i == 0 else f"{ask.allocation_key}-{i + 1}",
        allocation_tags=dict(ask.tags), resource_per_alloc=ask.resource_ask,
        priority=ask.priority, application_id=ask.application_id,
        partition_name=ask.partition_name, task_group_name=ask.task_group_name,
        placeholder=ask.placeholder, originator=ask.originator,
        preemption_policy=ask.preemption_policy) for i in range(max(0, ask.max_allocations))]


def _speak_allocation(step: Step, rv: RMView, rng: random.Random) -> list[Step]:
    req: si.AllocationRequest = step.request
    pods = [_unresized(rv, pod) for ask in req.asks for pod in _pods(ask)]
    rels: list[today.AllocationRelease] = []
    if req.releases is not None:
        for ar in req.releases.allocation_asks_to_release:
            if ar.termination_type not in (TT.STOPPED_BY_RM, TT.TIMEOUT):
                continue  # a type only the core starts: today's SI has no ask release
            keys = [ar.allocation_key] if ar.allocation_key else sorted(
                k.key for k in rv.asks.values()
                if k.app == ar.application_id and k.pending > 0)
            rels += [today.AllocationRelease(
                partition_name=ar.partition_name, application_id=ar.application_id,
                termination_type=ar.termination_type.value, message=ar.message,
                allocation_key=key) for key in keys if key]
        for r in req.releases.allocations_to_release:
            known = rv.allocs.get(r.uuid)
            key = known.key if known is not None else r.allocation_key
            if r.uuid and not key:
                key = f"gone-{r.uuid}"  # names no pod: an empty key would name them all
            ttype = today.TerminationType(r.termination_type.value)
            if ttype is today.TerminationType.STOPPED_BY_RM and known is not None \
                    and known.releasing is None and not known.placeholder \
                    and rng.random() < ROLLED_BACK:
                ttype = today.TerminationType.SCHEDULING_FAILED_ON_RM
            rels.append(today.AllocationRelease(
                partition_name=r.partition_name, application_id=r.application_id,
                termination_type=ttype, message=r.message, allocation_key=key))
    if not pods and not rels:
        return []
    return [replace(step, request=today.AllocationRequest(
        rm_id=req.rm_id, allocations=pods,
        releases=today.AllocationReleasesRequest(allocations_to_release=rels)
        if rels else None))]


def _unresized(rv: RMView, pod: today.Allocation) -> today.Allocation:
    """A running placeholder is never resized: the core refuses it (its gang's
    placeholders stay within the ``placeholderAsk``), and the RM never asks."""
    held = running(rv, pod.application_id, pod.allocation_key)
    if held and held[0].placeholder:
        return pod.model_copy(update={
            "resource_per_alloc": si.resource_from_dict(held[0].resource)})
    return pod


def _speak_nodes(step: Step, rv: RMView, rng: random.Random) -> list[Step]:
    req: si.NodeRequest = step.request
    infos: list[today.NodeInfo] = []
    pods: list[today.Allocation] = []
    rels: list[today.AllocationRelease] = []
    restore: list[today.NodeInfo] = []
    for n in req.nodes:
        partition = n.attributes.get(NODE_PARTITION) or "default"
        action = today.NodeAction(n.action.value)
        if n.action == NA.CREATE and rng.random() < DRAINED:
            action = today.NodeAction.CREATE_DRAIN
            if rng.random() < 0.75:
                restore.append(today.NodeInfo(node_id=n.node_id,
                                              action=today.NodeAction.DRAIN_TO_SCHEDULABLE))
        if n.action != NA.UPDATE or n.schedulable_resource is not None \
                or n.occupied_resource is None:
            infos.append(today.NodeInfo(node_id=n.node_id, action=action,
                                        attributes=dict(n.attributes),
                                        schedulable_resource=n.schedulable_resource))
        if n.occupied_resource is not None:
            key = OCCUPIED + n.node_id
            if qty.positive(n.occupied_resource.as_dict()):
                pods.append(today.Allocation(
                    allocation_key=key, node_id=n.node_id, partition_name=partition,
                    allocation_tags={today.FOREIGN_TAG: today.FOREIGN_DEFAULT},
                    resource_per_alloc=n.occupied_resource))
            elif (partition, key) in rv.foreign:
                rels.append(today.AllocationRelease(partition_name=partition,
                                                    allocation_key=key))
        pods += [today.Allocation(
            allocation_key=a.allocation_key, allocation_tags=dict(a.allocation_tags),
            resource_per_alloc=a.resource_per_alloc, priority=a.priority,
            node_id=a.node_id or n.node_id, application_id=a.application_id,
            partition_name=a.partition_name, task_group_name=a.task_group_name,
            placeholder=a.placeholder) for a in n.existing_allocations]
    out: list[Step] = []
    if infos:
        out.append(replace(step, request=today.NodeRequest(rm_id=req.rm_id, nodes=infos)))
    if pods or rels:
        out.append(Step("update_allocation", request=today.AllocationRequest(
            rm_id=req.rm_id, allocations=pods,
            releases=today.AllocationReleasesRequest(allocations_to_release=rels)
            if rels else None)))
    if restore:
        out.append(Step("update_node", request=today.NodeRequest(rm_id=req.rm_id,
                                                                 nodes=restore)))
    return out
