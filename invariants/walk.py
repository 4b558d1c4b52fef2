"""Read-only traversal of a scheduler's live objects, for the checks."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from scheduler import Scheduler
from scheduler.partition import Partition


def rms(scheduler: Scheduler) -> list[Any]:
    return list(scheduler._rms.values())


def partitions(scheduler: Scheduler) -> list[Partition]:
    return scheduler.partitions()


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
