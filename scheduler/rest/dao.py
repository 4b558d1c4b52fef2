"""YuniKorn's JSON shapes (apache/yunikorn-core be3bb48 pkg/webservice/dao) from a snapshot.

Conventions kept: flat resource maps (``{"memory": 10}``), times in Unix nanoseconds,
``omitempty`` fields left out when empty or zero (``_omit``), the fields YuniKorn never
omits always present. Shaping runs outside the core's lock.
"""

from __future__ import annotations

import math
from typing import Any

from .metrics import Book, allocation_delay_ns
from .snapshot import AllocationCopy, AppCopy, AskCopy, NodeCopy, PartitionCopy, QueueCopy

CLUSTER_NAME = "kubernetes"
"""YuniKorn's fixed cluster name (pkg/webservice/handlers.go ``getClusterJSON``)."""


def _ns(seconds: float) -> int:
    return int(seconds * 1e9)


def _omit(d: dict[str, Any], *keep: str) -> dict[str, Any]:
    """Go's ``omitempty``: drop empty maps, lists, strings, zeros and false, except ``keep``."""
    return {k: v for k, v in d.items() if k in keep or v not in (None, "", 0, False, {}, [])}


def abs_used(capacity: dict[str, int] | None, used: dict[str, int]) -> dict[str, int]:
    """Percent used per resource of ``capacity`` (YuniKorn ``CalculateAbsUsedCapacity``):
    0 for nothing used, 100 for any use of a zero capacity, capped at the int32 maximum;
    a resource absent from ``used`` is left out."""
    out: dict[str, int] = {}
    for name, cap in (capacity or {}).items():
        if name not in used:
            continue
        value = used[name]
        if value <= 0:
            out[name] = 0
        elif cap <= 0:
            out[name] = 100
        else:
            out[name] = min(int(value / cap * 100), 2**31 - 1)
    return out


def cluster(p: PartitionCopy, start: float) -> dict[str, Any]:
    return _omit({"startTime": _ns(start), "rmBuildInformation": [],
                  "partition": p.name, "clusterName": CLUSTER_NAME}, "partition", "clusterName")


def partition(p: PartitionCopy) -> dict[str, Any]:
    states: dict[str, int] = {}
    for app in p.apps.values():
        states[app.state] = states.get(app.state, 0) + 1
    states["total"] = len(p.apps)
    capacity = _omit({"capacity": p.capacity, "usedCapacity": p.allocated,
                      "utilization": abs_used(p.capacity, p.allocated)})
    return _omit({
        "clusterId": p.rm_id, "name": p.name, "capacity": capacity,
        "nodeSortingPolicy": _omit({"type": p.node_policy, "resourceWeights": p.node_weights}),
        "preemptionEnabled": p.preemption_enabled, "quotaPreemptionEnabled": False,
        "totalNodes": len(p.nodes), "applications": states,
        "totalContainers": sum(a.allocation_count for a in p.apps.values()),
        "state": p.state,
    }, "clusterId", "name", "capacity", "nodeSortingPolicy", "preemptionEnabled",
        "quotaPreemptionEnabled")


def headroom(p: PartitionCopy, q: QueueCopy) -> dict[str, int] | None:
    """What the queue may still use (YuniKorn ``Queue.getHeadRoom``): down the path from
    root, each queue with a max leaves its max less its usage (for the resources its max
    names), the smallest per resource; root's max is the partition's total."""
    path: list[QueueCopy] = []
    cur: QueueCopy | None = q
    while cur is not None:
        path.append(cur)
        cur = p.queues.get(cur.parent) if cur.parent else None
    room: dict[str, int] | None = None
    for queue in reversed(path):
        limit = queue.max if queue.parent else (p.capacity or None)
        if limit is None:
            continue
        own = {k: v - queue.allocated.get(k, 0) for k, v in limit.items()}
        room = own if room is None else {
            k: min(own[k], room[k]) if k in own and k in room else own.get(k, room.get(k, 0))
            for k in sorted({*own, *room})}
    return room


def queue(p: PartitionCopy, q: QueueCopy, subtree: bool = True) -> dict[str, Any]:
    """``PartitionQueueDAOInfo``: the queue and, with ``subtree``, its children nested."""
    limit = q.max if q.parent else (p.capacity or None)
    children = [p.queues[c] for c in sorted(q.children) if c in p.queues]
    return _omit({
        "queuename": q.path, "status": q.state, "partition": p.name,
        "pendingResource": q.pending, "maxResource": limit or {},
        "guaranteedResource": q.guaranteed or {}, "allocatedResource": q.allocated,
        "preemptingResource": q.preempting, "headroom": headroom(p, q) or {},
        "isLeaf": q.is_leaf, "isManaged": q.managed, "properties": q.properties,
        "parent": q.parent,
        "children": [queue(p, c) for c in children] if subtree else [],
        "childNames": [c.path for c in children],
        "absUsedCapacity": abs_used(limit, q.allocated),
        "maxRunningApps": q.max_applications, "runningApps": q.running_apps,
        "currentPriority": q.priority if q.priority > -(2**31) else -(2**31),
        "sortingPolicy": q.sort_policy, "prioritySorting": q.priority_sort,
        "preemptionEnabled": p.preemption_enabled, "isPreemptionFence": q.preemption_fence,
        "preemptionDelay": f"{q.preemption_delay:g}s",
        "isPriorityFence": q.priority_fence, "priorityOffset": q.priority_offset,
    }, "queuename", "partition", "isLeaf", "isManaged", "currentPriority", "prioritySorting",
        "preemptionEnabled", "isPreemptionFence", "isPriorityFence")


def allocation(a: AllocationCopy) -> dict[str, Any]:
    if a.shaped is None:
        a.shaped = _allocation(a)
    return a.shaped


def _allocation(a: AllocationCopy) -> dict[str, Any]:
    asked, made = allocation_delay_ns(a)
    return _omit({
        "allocationKey": a.key, "allocationTags": a.tags, "requestTime": asked,
        "allocationTime": made, "allocationDelay": made - asked, "resource": a.resource,
        "priority": str(a.priority), "nodeId": a.node_id, "applicationId": a.app_id,
        "placeholder": a.placeholder, "placeholderUsed": False,
        "taskGroupName": a.task_group, "preempted": a.preempted, "originator": a.originator,
    }, "allocationKey")


def request(k: AskCopy) -> dict[str, Any]:
    return _omit({
        "allocationKey": k.key, "allocationTags": k.tags, "requestTime": _ns(k.created),
        "resource": k.resource, "priority": str(k.priority), "requiredNodeId": k.required_node,
        "applicationId": k.app_id, "placeholder": k.placeholder, "taskGroupName": k.task_group,
        "triggeredPreemption": k.preempted, "originator": k.originator,
    }, "allocationKey")


def application(a: AppCopy, book: Book) -> dict[str, Any]:
    """``ApplicationDAOInfo``: placeholders apart, in ``placeholderData`` per task group."""
    groups: dict[str, dict[str, Any]] = {}
    for x in a.allocations:
        if x.placeholder:
            g = groups.setdefault(x.task_group, {"count": 0, "minResource": x.resource})
            g["count"] += 1
    outcomes = book.outcomes(a.partition, a.id)
    for name, (replaced, timed_out) in sorted(outcomes.items()):
        g = groups.setdefault(name, {"count": 0, "minResource": {}})
        g["count"] += replaced + timed_out
        g["replaced"], g["timedout"] = replaced, timed_out
    placeholders = [_omit({"taskGroupName": name, **g}) for name, g in sorted(groups.items())]
    log = [_omit({"time": t, "applicationState": s}) for t, s in book.state_log(a.partition, a.id)]
    finished = a.state in ("Completed", "Failed", "Rejected", "Expired")
    return _omit({
        "applicationID": a.id, "usedResource": a.allocated, "pendingResource": a.pending,
        "partition": a.partition, "queueName": a.queue, "submissionTime": _ns(a.submit_time),
        "finishedTime": _ns(a.state_since) if finished else None,
        "requests": [request(k) for k in a.asks if k.pending_repeats > 0],
        "allocations": [allocation(x) for x in a.allocations],
        "applicationState": a.state, "user": a.user, "groups": a.groups,
        "stateLog": log, "placeholderData": placeholders,
        "maxRequestPriority": max((k.priority for k in a.asks if k.pending_repeats > 0),
                                  default=0),
    }, "applicationID", "partition", "queueName")


def node(n: NodeCopy) -> dict[str, Any]:
    reservations = [f"{app}|{key}" for app, key in n.reservations]
    return _omit({
        "nodeID": n.id, "attributes": n.attributes, "capacity": n.capacity,
        "allocated": n.allocated, "occupied": n.occupied, "available": n.available,
        "allocations": [allocation(x) for x in n.allocations],
        "schedulable": n.state == "Schedulable", "isReserved": bool(n.reservations),
        "reservations": reservations,
    }, "nodeID", "schedulable", "isReserved")


def nodes(p: PartitionCopy) -> list[dict[str, Any]]:
    return [node(n) for n in p.nodes.values()]


def node_utilisation(p: PartitionCopy) -> dict[str, Any]:
    """Nodes in ten buckets of used percent per resource type (YuniKorn
    ``getPartitionNodesUtilJSON``: bucket ``max(ceil(percent / 10) - 1, 0)``)."""
    buckets: dict[str, list[list[str]]] = {}
    for n in p.nodes.values():
        used = abs_used(n.capacity, n.allocated)
        for name in n.capacity:
            index = int(max(math.ceil(used[name] / 10) - 1, 0)) if name in used else 0
            buckets.setdefault(name, [[] for _ in range(10)])[min(index, 9)].append(n.id)
    result = [{"type": name, "utilization": [
        _omit({"bucketName": f"{k * 10}-{(k + 1) * 10}%", "numOfNodes": len(names),
               "nodeNames": names}) for k, names in enumerate(lists)]}
        for name, lists in sorted(buckets.items())]
    return _omit({"clusterId": p.rm_id, "partition": p.name, "utilizations": result},
                 "clusterId", "partition")


def health(partitions: list[PartitionCopy]) -> dict[str, Any]:
    """``SchedulerHealthDAOInfo`` from checks of the snapshot (YuniKorn runs its own set
    periodically, pkg/scheduler/health_checker.go): no negative resource, and each
    partition's usage equal to what its nodes hold."""
    negative = [f"{p.name}/{where}" for p in partitions for where, r in (
        [("partition", p.allocated)] + [(f"node {n.id}", n.allocated) for n in p.nodes.values()]
        + [(f"queue {q.path}", q.allocated) for q in p.queues.values()])
        if any(v < 0 for v in r.values())]
    unequal = []
    for p in partitions:
        total: dict[str, int] = {}
        for n in p.nodes.values():
            for k, v in n.allocated.items():
                total[k] = total.get(k, 0) + v
        if {k: v for k, v in total.items() if v} != {k: v for k, v in p.allocated.items() if v}:
            unequal.append(p.name)
    checks = [
        _omit({"Name": "Negative resources", "Succeeded": not negative,
               "Description": "Check for negative resources in the partitions",
               "DiagnosisMessage": ", ".join(negative)}, "Succeeded"),
        _omit({"Name": "Consistency of data", "Succeeded": not unequal,
               "Description": "Check if a partition's allocated resource equals the sum "
                              "of its nodes' allocated resources",
               "DiagnosisMessage": ", ".join(unequal)}, "Succeeded"),
    ]
    return {"Healthy": not negative and not unequal, "HealthChecks": checks}


def history(records: list[tuple[int, int, int]], index: int, field: str) -> list[dict[str, Any]]:
    """``ApplicationHistoryDAOInfo`` / ``ContainerHistoryDAOInfo``: counts as strings."""
    return [_omit({"timestamp": r[0], field: str(r[index])}) for r in records]
