"""The scheduling cycle of one partition, and the timers it fires.

``004`` "Implementation": sort queues, applications and nodes; skip requests
that can not be satisfied and find the next; reserve against fragmentation.
One allocation per step, then the walk starts again from the root so every
sort sees the latest usage. Gang rules (``001``) decide which asks may go.
"""

from __future__ import annotations

from typing import Any

from statemachines.application import SCHEDULABLE

from .. import policies, si
from .. import resources as res
from ..objects import Allocation, Application, Queue
from ..preemption import ATTEMPTS_PER_LEAF
from . import (
    allocate,
    apps,
    appstate,
    eligibility,
    gang,
    ledger,
    preemptor,
    queues,
    quota_preemption,
    required_node,
    reservations,
    waiting,
)
from .state import PartitionState

TT = si.TerminationType
SS = si.SchedulingState

NOTHING, ALLOCATED, PROGRESS = 0, 1, 2
PREEMPTIONS_PER_LEAF = ATTEMPTS_PER_LEAF


def schedule(p: PartitionState) -> int:
    """Allocate until nothing more fits right now; returns the allocations made.

    Usage only grows during one call (releases are processed by API calls,
    never in the middle of a cycle), so an ask that found no node, or no
    queue headroom, is not tried again in the same call: this keeps a call
    with many unschedulable asks linear instead of quadratic.
    """
    if p.state == "Stopped":
        return 0
    p.reset_memos()
    count = allocate_reserved(p)
    try:
        while True:
            step = try_allocate(p, p.root)
            if step == NOTHING:
                waiting.after_cycle(p)
                return count
            if step == ALLOCATED:
                count += 1
    finally:
        # The memos serve one call; emptied at its end, a state between calls carries none
        # (an application backing off leaves none behind, so its state is the same whether
        # its last walk was in this call or an earlier one).
        p.reset_memos()


def allocate_reserved(p: PartitionState) -> int:
    """Place reserved asks whose node has room now; drop reservations that no longer hold."""
    count = 0
    for (app_id, key), node in list(p.reservations.items()):
        app = p.apps.get(app_id)
        ask = app.asks.get(key) if app is not None else None
        if app is None or ask is None or not reservations.still_valid(p, ask, node):
            reservations.cancel(p, app_id, key)
            continue
        if ask.required_node and not ask.preempted and not res.fits(ask.resource, node.available):
            # Required-node preemption (YuniKorn's reserved pass), within the headrooms and
            # only for an application that may start: the pass below could not place the
            # ask otherwise, and the victims would be killed for nothing.
            if not (eligibility.queue_headroom(app, ask) or eligibility.user_headroom(p, app, ask)
                    or eligibility.queue_slot(app) or eligibility.user_slot(p, app)):
                required_node.preempt(p, app, ask, node)
            continue
        if (res.fits(ask.resource, node.available) and not eligibility.queue_slot(app)
                and not eligibility.user_slot(p, app)
                and not eligibility.user_headroom(p, app, ask)
                and not eligibility.queue_headroom(app, ask)
                and allocate.predicates(p, ask, node, True)):
            allocate.allocate(p, app, ask, node)
            count += 1
    return count


def try_allocate(p: PartitionState, queue: Queue) -> int:
    """One step below ``queue``: ALLOCATED, PROGRESS (a replacement started) or NOTHING."""
    if queue.is_leaf:
        return try_leaf(p, queue)
    for child in policies.ordered_children(queue):
        step = try_leaf(p, child) if child.is_leaf else try_allocate(p, child)
        if step != NOTHING:
            return step
        p.rest_queue(child)
    return NOTHING


def try_leaf(p: PartitionState, queue: Queue) -> int:
    failed = p.failed
    no_node = p.no_node
    exhausted = p.exhausted
    now = p.core.clock.now()
    threshold = queue.backoff_asks
    for app in policies.ordered_apps(queue, p.capacity):
        if app.state not in SCHEDULABLE or app.id in exhausted:
            continue
        held = eligibility.queue_slot(app) or eligibility.user_slot(p, app)
        if held:
            for ask in app.pending_asks.values():
                allocate.set_scheduling_state(p, ask, SS.SKIPPED, held)
            continue
        if app.backoff_until > now:
            # Backing off: only placeholder replacement, which YuniKorn runs in a pass of
            # its own, goes on (apache/yunikorn-core be3bb48 objects/queue.go TryAllocate).
            if replace_only(p, app):
                return PROGRESS
            p.rest(app)
            continue
        # 001 "Scheduler logic changes": real asks wait until every placeholder
        # ask of the application is allocated ("ignored as a safety precaution").
        gang_pending = eligibility.gang_waiting(app)
        budget = [PREEMPTIONS_PER_LEAF]
        unschedulable = 0
        for ask in app.pending_asks.values():
            if threshold and unschedulable >= threshold:
                back_off(p, app, queue)
                break
            if (app.id, ask.key) in no_node:
                unschedulable += 1
                continue
            if ask.parked_on or (app.id, ask.key) in failed:
                continue
            if gang_pending and not ask.placeholder:
                reservations.cancel(p, app.id, ask.key)
                allocate.set_scheduling_state(p, ask, SS.SKIPPED, gang.WAITING_FOR_GANG)
                continue
            if ask.task_group and not ask.placeholder and app.placeholder_allocated:
                if gang.try_replace(p, app, ask):
                    return PROGRESS
                if gang.wait_for_preempted(p, app, ask):
                    continue
            over = eligibility.user_headroom(p, app, ask)
            if over:
                failed.add((app.id, ask.key))
                allocate.set_scheduling_state(p, ask, SS.SKIPPED, over)
                continue
            over = eligibility.queue_headroom(app, ask)
            if over:
                failed.add((app.id, ask.key))
                if ask.preempt_other and preemptor.try_preempt(p, app, ask, False, budget):
                    return PROGRESS
                allocate.set_scheduling_state(p, ask, SS.SKIPPED, over)
                continue
            if ask.required_node:
                step = required_node.try_required(p, app, ask)
                if step == ALLOCATED:
                    return ALLOCATED
                failed.add((app.id, ask.key))
                if step == PROGRESS:
                    return PROGRESS
                continue
            if not res.fits(ask.resource, p.room_ceiling()):
                failed.add((app.id, ask.key))
                no_node.add((app.id, ask.key))
                unschedulable += 1
                allocate.report_failed(p, app, ask)
                continue
            node = allocate.find_node(p, app, ask)
            if node is not None:
                allocate.allocate(p, app, ask, node)
                return ALLOCATED
            failed.add((app.id, ask.key))
            if p.predicates is None:
                p.failed_shapes.add(ask.resource)
            if not ask.preempt_other:
                if allocate.reserve_or_fail(p, app, ask) != allocate.NEW_RESERVATION:
                    no_node.add((app.id, ask.key))
                    unschedulable += 1
                continue
            # YuniKorn tries preemption unless this attempt just made a reservation.
            reserved = allocate.reserve_or_fail(p, app, ask, report=False)
            if reserved != allocate.NEW_RESERVATION:
                no_node.add((app.id, ask.key))
                if preemptor.try_preempt(p, app, ask, True, budget):
                    return PROGRESS
                unschedulable += 1
            if reserved == allocate.NO_RESERVATION:
                allocate.report_failed(p, app, ask)
        if p.exhausted is not exhausted:
            # Its asks cancelled a reservation: room came back and the applications set to
            # rest rejoin the order at the next walk, which starts again from the root.
            return PROGRESS
        # Nothing of this application can succeed again in this call.
        p.rest(app)
    return NOTHING


def back_off(p: PartitionState, app: Application, queue: Queue) -> None:
    """Too many of the application's asks found no node in one pass: skip it for the leaf's
    ``application.unschedasks.backoff.delay`` (YUNIKORN-3115, apache/yunikorn-core be3bb48
    pkg/scheduler/objects/application.go tryAllocate). The timer marks the end, so that a
    clock driven from timer to timer reaches it; the walk itself compares times."""
    app.backoff_until = p.core.clock.now() + queue.backoff_delay
    app.backoff_token += 1
    p.core.schedule_timer(queue.backoff_delay, "backoff", app, app.backoff_token,
                          p.timer_owner)
    p.core.event(p.rm_id, si.EventRecordType.APP, app.id,
                 f"application {app.id}: {queue.backoff_asks} asks found no node, not "
                 f"scheduled for {queue.backoff_delay:g} s", si.EventChangeType.NONE)


def replace_only(p: PartitionState, app: Application) -> bool:
    """An application backing off: its real asks may still replace placeholders."""
    if not app.placeholder_allocated:
        return False
    for ask in app.pending_asks.values():
        if ask.task_group and not ask.placeholder and not ask.parked_on \
                and (app.id, ask.key) not in p.failed and gang.try_replace(p, app, ask):
            return True
    return False


def on_timer(p: PartitionState, kind: str, target: Any, token: int) -> None:
    """A due timer of this partition (fired by the scheduler inside ``schedule()``).

    A timer whose target is no longer this partition's object (removed,
    replaced by a resync) or whose token moved on is ignored. The inspection of
    waiting asks runs at the end of the cycle that follows (``waiting``).
    """
    if kind == "queues":
        if target is p:
            queues.clean_drained(p, token)
        return
    if kind == "inspect":
        return
    if kind == quota_preemption.TIMER:
        quota_preemption.on_timer(p, target, token)
        return
    if kind == "execution":
        alloc: Allocation = target
        if alloc.timer_token == token and alloc.state == "Allocated" \
                and p.allocations.get(alloc.uuid) is alloc:
            ledger.core_release(p, alloc, TT.TIMEOUT, "execution timeout reached")
        return
    app: Application = target
    if p.apps.get(app.id) is not app:
        return
    if kind == "placeholder":
        if app.placeholder_token == token:
            gang.placeholder_timeout(p, app)
        return
    if kind == "backoff":
        return
    if app.timer_token != token:
        return
    if kind == "complete" and app.state == "Completing":
        app.completing_timed_out = True
        gang.release_placeholders(p, app, "application completing: placeholder not used")
        apps.after_release(p, app)
    elif kind == "expire" and app.LIFECYCLE.can(app.state, "expire"):
        appstate.fire_app(p, app, "expire")
        del p.apps[app.id]
