"""What the REST routes and the metrics read: a copy of the core's state, taken under its lock.

The copy is plain data (resource dicts copied, states as strings); the routes shape it
into YuniKorn's JSON outside the lock, so a slow client or a large tree never holds up
the scheduling cycle. Reading internals here (not ``state_dump()``) is what lets the
routes show the times, tags and priorities YuniKorn's web UI expects; every value is
copied, never computed, so the routes show exactly what the core holds.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any
from weakref import WeakKeyDictionary

from scheduler import Scheduler
from scheduler.objects import Allocation, Application, Ask, Node, Queue


@dataclass(slots=True)
class AskCopy:
    key: str
    app_id: str
    resource: dict[str, int]
    priority: int
    created: float
    required_node: str
    placeholder: bool
    task_group: str
    originator: bool
    preempted: bool
    pending_repeats: int
    state: str
    tags: dict[str, str]


@dataclass(slots=True)
class AllocationCopy:
    uuid: str
    key: str
    app_id: str
    node_id: str
    resource: dict[str, int]
    priority: int
    created: float
    placeholder: bool
    task_group: str
    originator: bool
    preempted: bool
    state: str
    tags: dict[str, str]
    ask_created: float | None
    """When its ask arrived (None once the ask is gone): YuniKorn's ``requestTime``."""
    shaped: dict[str, Any] | None = None
    """Its REST form once a route built it (``dao.allocation``): a copy is kept from one
    snapshot to the next while the allocation is unchanged, and so is its form."""


@dataclass(frozen=True)
class AppCopy:
    id: str
    partition: str
    queue: str
    state: str
    user: str
    groups: list[str]
    submit_time: float
    state_since: float
    allocated: dict[str, int]
    pending: dict[str, int]
    priority: int
    asks: list[AskCopy]
    allocations: list[AllocationCopy]
    """Both empty unless the snapshot was taken with this application's detail."""
    allocation_count: int


@dataclass(frozen=True)
class NodeCopy:
    id: str
    state: str
    attributes: dict[str, str]
    capacity: dict[str, int]
    occupied: dict[str, int]
    allocated: dict[str, int]
    available: dict[str, int]
    allocations: list[AllocationCopy]
    reservations: list[tuple[str, str]]


@dataclass(frozen=True)
class QueueCopy:
    path: str
    state: str
    is_leaf: bool
    managed: bool
    parent: str
    max: dict[str, int] | None
    guaranteed: dict[str, int] | None
    allocated: dict[str, int]
    pending: dict[str, int]
    preempting: dict[str, int]
    properties: dict[str, str]
    children: list[str]
    apps: list[str]
    max_applications: int
    running_apps: int
    priority: int
    priority_offset: int
    priority_fence: bool
    priority_sort: bool
    sort_policy: str
    preemption_fence: bool
    preemption_delay: float


@dataclass(frozen=True)
class PartitionCopy:
    rm_id: str
    name: str
    state: str
    capacity: dict[str, int]
    allocated: dict[str, int]
    node_policy: str
    node_weights: dict[str, float]
    preemption_enabled: bool
    queues: dict[str, QueueCopy]
    apps: dict[str, AppCopy]
    nodes: dict[str, NodeCopy]


@dataclass(frozen=True)
class Snapshot:
    """Every partition of every RM, in registration order, and what was taken when."""

    now: float
    partitions: list[PartitionCopy]
    configs: list[tuple[str, str]] = field(default_factory=list)
    """``(rm id, queues.yaml text)`` of each registered RM."""
    dump: dict[str, Any] = field(default_factory=dict)
    """``Scheduler.state_dump()`` of the same instant (the full state dump route)."""
    rms: list[tuple[str, str]] = field(default_factory=list)
    """``(rm id, lifecycle state)`` of each registered RM (the page's ``rm`` counts)."""

    def partition(self, name: str) -> PartitionCopy | None:
        """The first RM's partition of that name (YuniKorn names a partition without its
        cluster id, ``GetPartitionWithoutClusterID``; one RM is the usual deployment)."""
        for p in self.partitions:
            if p.name == name:
                return p
        return None


def _res(r: dict[str, int] | None) -> dict[str, int]:
    return {k: int(v) for k, v in sorted(r.items())} if r else {}


_KEPT: WeakKeyDictionary[Scheduler, dict[str, AllocationCopy]] = WeakKeyDictionary()
"""Per core, the allocation copies of its last detailed snapshot, by uuid."""


def _kept_alloc(a: Allocation, kept: dict[str, AllocationCopy],
                now: dict[str, AllocationCopy]) -> AllocationCopy:
    """The copy of ``a``, the last snapshot's when nothing it shows has changed since (a
    route over many allocations then copies and shapes only the new ones)."""
    ask = a.app.asks.get(a.ask_key)
    asked = ask.created if ask is not None else None
    copy = kept.get(a.uuid)
    if copy is None or copy.state != a.state or copy.preempted != a.preempted \
            or copy.ask_created != asked:
        copy = _alloc(a)
    now[a.uuid] = copy
    return copy


def _alloc(a: Allocation) -> AllocationCopy:
    ask = a.app.asks.get(a.ask_key)
    return AllocationCopy(
        uuid=a.uuid, key=a.ask_key, app_id=a.app.id, node_id=a.node.id,
        resource=_res(a.resource), priority=a.priority, created=a.created,
        placeholder=a.placeholder, task_group=a.task_group, originator=a.originator,
        preempted=a.preempted, state=a.state, tags=dict(a.tags),
        ask_created=ask.created if ask is not None else None)


def _ask(k: Ask) -> AskCopy:
    return AskCopy(
        key=k.key, app_id=k.app.id, resource=_res(k.resource), priority=k.priority,
        created=k.created, required_node=k.required_node, placeholder=k.placeholder,
        task_group=k.task_group, originator=k.originator, preempted=k.preempted,
        pending_repeats=k.pending_repeats, state=k.state, tags=dict(k.tags))


def _app(a: Application, detail: bool, copy: Callable[[Allocation], AllocationCopy]
         ) -> AppCopy:
    return AppCopy(
        id=a.id, partition=a.partition_name, queue=a.queue_path, state=a.state, user=a.user,
        groups=list(a.groups), submit_time=a.submit_time, state_since=a.state_since,
        allocated=_res(a.allocated), pending=_res(a.pending), priority=int(a.priority),
        asks=[_ask(k) for k in a.asks.values()] if detail else [],
        allocations=[copy(x) for x in a.allocations.values()] if detail else [],
        allocation_count=len(a.allocations))


def _node(n: Node, detail: bool, copy: Callable[[Allocation], AllocationCopy]) -> NodeCopy:
    available = {k: v for k, v in n.available.items() if v > 0}
    return NodeCopy(
        id=n.id, state=n.state, attributes=dict(n.attributes), capacity=_res(n.capacity),
        occupied=_res(n.occupied), allocated=_res(n.allocated), available=_res(available),
        allocations=[copy(x) for x in n.allocations.values()] if detail else [],
        reservations=list(n.reservations))


def _queue(q: Queue) -> QueueCopy:
    return QueueCopy(
        path=q.path, state=q.state, is_leaf=q.is_leaf, managed=q.managed,
        parent=q.parent.path if q.parent is not None else "",
        max=_res(q.max) if q.max is not None else None,
        guaranteed=_res(q.guaranteed) if q.guaranteed is not None else None,
        allocated=_res(q.allocated), pending=_res(q.pending), preempting=_res(q.preempting),
        properties=dict(q.properties), children=[c.path for c in q.children.values()],
        apps=list(q.apps), max_applications=int(q.max_applications or 0),
        running_apps=int(q.running_apps), priority=int(q.priority),
        priority_offset=int(q.priority_offset), priority_fence=bool(q.priority_fence),
        priority_sort=bool(q.priority_sort), sort_policy=str(q.sort_policy),
        preemption_fence=q.preemption_policy == "fence",
        preemption_delay=float(q.preemption_delay))


def capture(api: Scheduler, with_dump: bool = False,
            app_detail: Callable[[Application], bool] | bool = False,
            node_detail: bool = False) -> Snapshot:
    """Copy what the routes and metrics show; the lock is held only while copying.

    The asks and allocations of an application (``app_detail``: all, none, or those it
    says yes to) and the allocations of a node (``node_detail``) are copied only when a
    route shows them: a cluster of many allocations would otherwise hold the core's lock
    for every request, whatever it asked for."""
    def detailed(a: Application) -> bool:
        return app_detail(a) if callable(app_detail) else app_detail

    kept: dict[str, AllocationCopy] = {}
    now: dict[str, AllocationCopy] = {}

    def copy(a: Allocation) -> AllocationCopy:
        return _kept_alloc(a, kept, now)

    with api.lock:
        kept = _KEPT.setdefault(api, {})
        partitions = []
        configs = []
        rms = []
        for rm in api._rms.values():    # read-only: the RMs in registration order
            configs.append((rm.id, rm.config_text))
            rms.append((rm.id, str(rm.state)))
            for p in rm.partitions.values():
                order = p.node_order
                partitions.append(PartitionCopy(
                    rm_id=p.rm_id, name=p.name, state=p.state,
                    capacity=_res(p.capacity), allocated=_res(p.root.allocated),
                    node_policy=order.policy, node_weights=dict(order.weights),
                    preemption_enabled=p.preemption_enabled,
                    queues={path: _queue(q) for path, q in p.queues.items()},
                    apps={app_id: _app(a, detailed(a), copy) for app_id, a in p.apps.items()},
                    nodes={node_id: _node(n, node_detail, copy)
                           for node_id, n in p.nodes.items()}))
        if node_detail or app_detail is True:
            _KEPT[api] = now            # every live allocation was copied: the dead go
        else:
            kept.update(now)
        dump = api.state_dump() if with_dump else {}
        return Snapshot(now=api.clock.now(), partitions=partitions, configs=configs, dump=dump,
                        rms=rms)


def live_allocations(api: Scheduler) -> Iterator[Allocation]:
    """Every allocation the core holds, partition by partition (the caller holds the core's
    lock)."""
    for rm in api._rms.values():    # read-only, as in :func:`capture`
        for p in rm.partitions.values():
            yield from p.allocations.values()
