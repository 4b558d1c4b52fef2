"""The state dump: a JSON-serialisable snapshot in the contract's schema.

Resources are plain dicts with sorted keys and no zero entries, so the same
state always serialises to the same bytes. The API calls it; nothing in the
partition flows depends on it.
"""

from __future__ import annotations

from typing import Any

from . import resources as res
from . import ugm
from .objects import Application, Node, Queue
from .partition.state import PartitionState
from .resources import Resource


def dump_partition(p: PartitionState) -> dict[str, Any]:
    return {
        "name": p.name,
        "rm_id": p.rm_id,
        "state": p.state,
        "queues": [_dump_queue(q, p.capacity, p.users) for q in p.queues.values()],
        "applications": [_dump_app(a) for a in p.apps.values()],
        "nodes": [_dump_node(n) for n in p.nodes.values()],
    }


def _r(r: Resource | None) -> dict[str, int] | None:
    return None if r is None else {k: r[k] for k in sorted(r) if r[k]}


def _rd(r: Resource) -> dict[str, int]:
    return {k: r[k] for k in sorted(r) if r[k]}


def _dump_queue(q: Queue, total: Resource, users: ugm.Tracker) -> dict[str, Any]:
    return {
        "path": q.path, "state": q.state, "parent": not q.is_leaf,
        "max": _r(q.max) if q.parent is not None else _root_max(total),
        "guaranteed": _r(q.guaranteed),
        "allocated": _rd(q.allocated), "pending": _rd(q.pending),
        "preempting": _rd(q.preempting),
        "sort_policy": q.sort_policy,
        "users": _tracked(users, q.path, ugm.USER),
        "groups": _tracked(users, q.path, ugm.GROUP),
    }


def _tracked(users: ugm.Tracker, path: str, kind: str) -> list[dict[str, Any]]:
    """Who uses the queue (its subtree) and how many of their applications run there."""
    return [{"name": name, "allocated": _rd(used), "running_applications": apps}
            for name, used, apps in users.on_queue(path, kind)]


def _root_max(total: Resource) -> dict[str, int] | None:
    """Root's ``max`` as YuniKorn reports it: the partition's total schedulable resource
    (the sum of its nodes' capacities, so it follows every node change), ``null`` while
    that is empty.

    It is shown, not enforced as a quota: every allocation already fits its node, so
    the total bounds the root's usage anyway (``docs/design-notes.md``).
    """
    return _r(total) or None


def _dump_app(a: Application) -> dict[str, Any]:
    return {
        "application_id": a.id, "queue": a.queue_path, "state": a.state, "user": a.user,
        "allocated": _rd(a.allocated), "placeholder_allocated": _rd(a.placeholder_allocated),
        "pending": _rd(a.pending), "placeholder_ask": _rd(a.placeholder_ask),
        "asks": [
            {"allocation_key": k.key, "pending_repeats": k.pending_repeats,
             "resource": _rd(k.resource), "placeholder": k.placeholder,
             "task_group": k.task_group, "state": k.state}
            for k in a.asks.values()
        ],
        "allocations": [
            {"uuid": x.uuid, "allocation_key": x.ask_key, "node_id": x.node.id,
             "resource": _rd(x.resource), "placeholder": x.placeholder,
             "task_group": x.task_group, "released": x.released, "preempted": x.preempted,
             "state": x.state}
            for x in a.allocations.values()
        ],
    }


def _dump_node(n: Node) -> dict[str, Any]:
    # In the order made: one ordinary ask, or any number of required-node asks.
    reserved = [{"application_id": a, "allocation_key": k} for a, k in n.reservations]
    return {
        "node_id": n.id, "state": n.state, "capacity": _rd(n.capacity),
        "occupied": _rd(n.occupied), "allocated": _rd(n.allocated),
        "available": _rd(res.sub_floor(n.available, {})), "reserved": reserved,
    }

