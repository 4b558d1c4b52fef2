"""Asks waiting for the cluster to grow: YuniKorn's inspection of outstanding requests.

YuniKorn inspects the pending asks once a second and tells the RM, once per ask,
``FAILED`` "waiting for cluster resources" for every ask a node search found no
room for although it fits its queue's and its user's headroom; YuniKorn's
Kubernetes shim turns that into the signal a cluster autoscaler scales up on
(apache/yunikorn-core be3bb48 pkg/scheduler/scheduler.go inspectOutstandingRequests;
partition.go calculateOutstandingRequests; objects/queue.go GetOutstandingRequests;
objects/application.go getOutstandingRequests, canReplace).

Here the inspection runs at the end of a partition's scheduling cycle once the
clock reached its due time, and it is armed (due one second later) only while
some ask is eligible and not told yet, so a world with nothing waiting comes to
rest: the timer it sets only makes a clock that jumps from timer to timer stop
there (``docs/design-notes.md``, "Asks waiting for the cluster to grow").
"""

from __future__ import annotations

from collections.abc import Iterator

from statemachines.application import SCHEDULABLE

from .. import si
from ..objects import Application, Ask
from . import eligibility
from .state import PartitionState

INTERVAL = 1.0
"""Seconds between the inspections (YuniKorn's ``internalInspectOutstandingRequests``)."""

WAITING = "waiting for cluster resources to become available"
"""The reason of the FAILED state a waiting ask is told once."""


def after_cycle(p: PartitionState) -> None:
    """Inspect if due, else arm the inspection when an ask waits untold."""
    now = p.core.clock.now()
    due = p.inspect_due
    if due is not None and now >= due:
        p.inspect_due = None
        box = p.core.outbox(p.rm_id)
        for ask in list(eligible(p)):
            ask.waiting_told = True
            box.scheduling.append((ask.app.id, ask.key, si.SchedulingState.FAILED, WAITING))
        return
    if due is None and next(eligible(p), None) is not None:
        p.inspect_due = now + INTERVAL
        p.inspect_token += 1
        p.core.schedule_timer(INTERVAL, "inspect", p, p.inspect_token, p.timer_owner)


def eligible(p: PartitionState) -> Iterator[Ask]:
    """The asks to tell now, in the order they were first searched.

    An ask qualifies while it is pending and placeable as a normal ask (its
    application may be scheduled and start, it has no required node, it is not
    swapping in for a placeholder nor could it replace one), fits every ``max``
    below root and its user's and groups' limits, and was not told before. An
    ask that left (placed, removed, replaced by an update) leaves the list.
    """
    searched = p.searched
    for key, ask in list(searched.items()):
        app = ask.app
        if ask.waiting_told or ask.state != "Pending" or app.asks.get(ask.key) is not ask \
                or p.apps.get(app.id) is not app:
            del searched[key]
            continue
        if ask.required_node or ask.parked_on or app.state not in SCHEDULABLE \
                or eligibility.queue_slot(app) or eligibility.user_slot(p, app) \
                or (not ask.placeholder and eligibility.gang_waiting(app)) \
                or could_replace(app, ask) or eligibility.queue_headroom(app, ask) \
                or eligibility.user_headroom(p, app, ask):
            continue
        yield ask


def could_replace(app: Application, ask: Ask) -> bool:
    """A real ask of a task group that still has a placeholder to swap with: held (or
    preempted and not yet confirmed gone) or still asked for (YuniKorn's canReplace)."""
    if ask.placeholder or not ask.task_group:
        return False
    group = ask.task_group
    return any(a.placeholder and a.task_group == group and (a.state == "Allocated" or a.preempted)
               for a in app.allocations.values()) or any(
        k.placeholder and k.task_group == group for k in app.pending_asks.values())
