"""Scheduling invariants: what must be true right after a ``schedule()`` call."""

from __future__ import annotations

from collections.abc import Iterator

from scheduler import resources as res
from scheduler.policies import ordered_apps

from .registry import CheckContext, Violation, invariant
from .walk import partitions


@invariant(
    "scheduling.maximal",
    "Right after schedule(), no pending ask that may be scheduled (its application may "
    "start, its queue path has headroom, it is not parked on a placeholder or waiting "
    "for its gang's placeholders) fits the free room of a schedulable node that is not "
    "reserved for another ask.",
    "004 'Implementation' (skip requests that can not be satisfied and find the next); "
    "CONTRACT schedule(): 'schedules until no further allocation ... can be made'",
    "The cycle stopped early or skipped an ask it could have placed: work waits while "
    "room is free (a stale cache, a wrong skip, a policy that hides an application).",
    needs=("after_schedule",),
)
def _maximal(ctx: CheckContext) -> Iterator[Violation]:
    for p in partitions(ctx.scheduler):
        if p.predicates is not None or p.state == "Stopped":
            continue
        nodes = [n for n in p.node_order]
        for queue in p.queues.values():
            if not queue.is_leaf:
                continue
            for app in ordered_apps(queue, p.capacity):
                if app.state not in ("Accepted", "Running", "Completing") \
                        or not p._can_start(app):
                    continue
                gang_pending = bool(app.placeholder_ask) and any(
                    k.placeholder for k in app.pending_asks.values())
                for ask in app.pending_asks.values():
                    if ask.parked_on or (gang_pending and not ask.placeholder):
                        continue
                    if not p._headroom(app, ask):
                        continue
                    for node in nodes:
                        if node.reservation not in (None, (app.id, ask.key)):
                            continue
                        if res.fits(ask.resource, node.available):
                            yield Violation(
                                "scheduling.maximal", f"ask {p.name}/{app.id}/{ask.key}",
                                f"left pending although node {node.id} has room "
                                f"{res.to_str(node.available)} for {res.to_str(ask.resource)}")
                            break
