"""The checker's read-only view of a scheduler's live objects: the one door to its internals.

Invariants and the model shim read the core's objects only through the
functions here (an import-linter contract enforces it), so what the checker
relies on of the core's internals is listed in one place. Nothing here
changes an object; callers hold ``scheduler.lock`` while they read.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from scheduler import Scheduler
from scheduler.objects import Allocation, Application, Ask, Node, Queue
from scheduler.partition import PartitionState

__all__ = [
    "Allocation",
    "Application",
    "Ask",
    "Node",
    "PartitionState",
    "Queue",
    "partitions",
    "rms",
    "stateful_objects",
    "timers",
]


def rms(scheduler: Scheduler) -> list[Any]:
    """The registered resource managers (``.id``, ``.state``, ``.partitions``)."""
    return list(scheduler._rms.values())


def partitions(scheduler: Scheduler) -> list[PartitionState]:
    """Every partition of every RM, in registration order."""
    return [p for rm in rms(scheduler) for p in rm.partitions.values()]


def stateful_objects(scheduler: Scheduler) -> Iterator[tuple[str, Any, str]]:
    """``(lifecycle name, object, label)`` for every object that has a lifecycle."""
    for rm in rms(scheduler):
        yield "rm", rm, f"rm {rm.id}"
    for p in partitions(scheduler):
        yield "object", p, f"partition {p.name}"
        for q in p.queues.values():
            yield "object", q, f"queue {p.name}/{q.path}"
        for n in p.nodes.values():
            yield "node", n, f"node {p.name}/{n.id}"
        for a in p.apps.values():
            yield "application", a, f"application {p.name}/{a.id}"
            for k in a.asks.values():
                yield "ask", k, f"ask {p.name}/{a.id}/{k.key}"
            for x in a.allocations.values():
                yield "allocation", x, f"allocation {p.name}/{x.uuid}"


def next_due(scheduler: Scheduler) -> float | None:
    """When the earliest timer the core holds falls due (it may be a lapsed one)."""
    timers = scheduler._core._timers
    return min(t.due for t in timers) if timers else None


def timers(scheduler: Scheduler) -> list[tuple[float, str, Any, bool]]:
    """``(due, kind, target, live)`` for every timer the core holds, in due order.

    The core cancels a timer lazily, by moving its target's token on; a timer
    is live when its partition still holds the target and the token still
    matches (a lapsed one is dropped silently when it falls due).
    """
    held = {(rm.id, name): p for rm in rms(scheduler) for name, p in rm.partitions.items()}
    out = []
    for t in sorted(scheduler._core._timers):
        p = held.get(t.owner)
        live = False
        if p is not None and t.kind == "queues":
            live = t.target is p and p.cleanup_token == t.token
        elif p is not None and t.kind == "inspect":
            # The inspection of asks waiting for the cluster to grow, while armed.
            live = t.target is p and p.inspect_token == t.token and p.inspect_due is not None
        elif p is not None and t.kind == "quota":
            # A queue's quota-preemption start time: live while the switch is on and the
            # queue, still the partition's, sits above its max.
            q = t.target
            live = p.queues.get(q.path) is q and q.quota_token == t.token \
                and q.quota_start is not None and p.quota_preemption_enabled \
                and q.max is not None and any(q.allocated.get(k, 0) > v for k, v in q.max.items())
        elif p is not None and t.kind == "execution":
            live = p.allocations.get(t.target.uuid) is t.target and \
                t.target.timer_token == t.token
        elif p is not None and p.apps.get(t.target.id) is t.target:
            token = t.target.placeholder_token if t.kind == "placeholder" \
                else t.target.backoff_token if t.kind == "backoff" else t.target.timer_token
            # A backoff's end matters only while the application waits for something
            # (``explore.scope.next_live_timer`` asks whether its end lets anything happen).
            live = token == t.token and (t.kind != "backoff" or bool(t.target.pending_asks))
        out.append((t.due, t.kind, t.target, live))
    return out
