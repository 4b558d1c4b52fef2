"""The ledger: what every allocation and ask counts, on which objects, and how it ends.

An allocation counts on its node, its application (real or placeholder), every
queue of the application's path and the partition's index; a pending ask's
repeats count as pending on the application and the queue path. Binding,
unbinding and ending an allocation happen here, always on every account at
once (``003`` "Allocations": one update to application, queue and node), so
no flow can count on one object and forget another.
"""

from __future__ import annotations

from statemachines.application import LIVE, STARTED

from .. import policies, priority, si
from .. import resources as res
from ..objects import Allocation, Application, Ask, Queue
from ..resources import Resource
from .state import PartitionState


def bind(p: PartitionState, alloc: Allocation) -> None:
    """Count an allocation on node, application, queue path and partition."""
    r = alloc.resource
    node, app = alloc.node, alloc.app
    node.allocations[alloc.uuid] = alloc
    res.add_into(node.allocated, r)
    res.sub_from(node.available, r)
    p.node_order.update(node)
    app.allocations[alloc.uuid] = alloc
    res.add_into(app.placeholder_allocated if alloc.placeholder else app.allocated, r)
    policies.app_used(app)
    if app.queue is not None:
        for q in app.queue.ancestry():
            res.add_into(q.allocated, r)
            policies.queue_changed(q)
        p.users.add(app.limited_by, app.queue.chain, r, 1)
    p.allocations[alloc.uuid] = alloc
    update_running_count(p, app)


def unbind(p: PartitionState, alloc: Allocation) -> None:
    """Take an allocation off every account ``bind`` put it on."""
    r = alloc.resource
    node, app = alloc.node, alloc.app
    if node.allocations.pop(alloc.uuid, None) is not None:
        res.sub_from(node.allocated, r)
        node.recompute_available()
        p.node_order.update(node)
    if app.allocations.pop(alloc.uuid, None) is not None:
        res.sub_from(app.placeholder_allocated if alloc.placeholder else app.allocated, r)
        policies.app_used(app)
        for q in app.queue.ancestry() if app.queue else ():
            res.sub_from(q.allocated, r)
            policies.queue_changed(q)
            if alloc.preempted:
                # However it ends (confirmed, stopped by the RM, its node or application
                # removed), a preempted allocation stops counting as preempting.
                res.sub_from(q.preempting, r)
            if q.over_quota_reason:
                refresh_quota_flag(q, q.over_quota_reason)
        if app.queue is not None:
            p.users.add(app.limited_by, app.queue.chain, r, -1)
    p.allocations.pop(alloc.uuid, None)
    alloc.timer_token += 1
    update_running_count(p, app)


def add_pending(app: Application, ask: Ask) -> None:
    """Register a Pending ask's repeats on the application and its queue path."""
    app.asks[ask.key] = ask
    pending = app.pending_asks
    was_pending, old_priority = bool(pending), app.priority
    pending[ask.sort_key] = ask
    # One repeat adds the ask's own resource (adding a zero entry changes nothing).
    repeats = ask.pending_repeats
    delta = ask.resource if repeats == 1 else res.multiply(ask.resource, repeats)
    res.add_into(app.pending, delta)
    for q in app.queue.ancestry() if app.queue else ():
        res.add_into(q.pending, delta)
        policies.queue_changed(q)  # it joins its parent's order, or its pending grew
    if was_pending and ask.priority <= old_priority and pending.first() is not ask:
        # The new ask raises neither the application's priority nor whether it has pending
        # asks: nothing any order reads has changed (most asks of an arrival take this way).
        return
    priority.refresh_app(app)
    reorder(app, was_pending, old_priority)


def remove_pending(app: Application, ask: Ask) -> None:
    """Take a Pending ask's remaining repeats off the application and its queue path
    (the repeat of a started swap was taken off already, :func:`park`)."""
    was_pending, old_priority = bool(app.pending_asks), app.priority
    app.pending_asks.pop(ask.sort_key, None)
    delta = res.multiply(ask.resource, counted_repeats(ask))
    res.sub_from(app.pending, delta)
    for q in app.queue.ancestry() if app.queue else ():
        res.sub_from(q.pending, delta)
        policies.queue_changed(q)  # it leaves its parent's order, or its pending shrank
    ask.pending_repeats = 0
    priority.refresh_app(app)
    reorder(app, was_pending, old_priority)


def counted_repeats(ask: Ask) -> int:
    """The repeats the ask counts as pending: all but the one a started swap holds."""
    return ask.pending_repeats - 1 if ask.parked_on and ask.pending_repeats > 0 \
        else ask.pending_repeats


def park(app: Application, ask: Ask, placeholder_uuid: str) -> None:
    """A swap started (``001`` steps 1-3): the real ask waits for the placeholder's release
    and its repeat stops counting as pending, as in YuniKorn, which allocates the real ask
    at the match (apache/yunikorn-core be3bb48 pkg/scheduler/objects/application.go
    tryPlaceholderAllocate; partition.go allocate). Queue sorting reads the new pending."""
    ask.parked_on = placeholder_uuid
    _shift_pending(app, ask.resource, -1)
    _reprioritise(app)


def unpark(app: Application, ask: Ask) -> None:
    """The swap ended (its placeholder is gone, the ask removed or about to be placed):
    a repeat still pending counts as pending again."""
    if not ask.parked_on:
        return
    ask.parked_on = ""
    if ask.state == "Pending" and ask.pending_repeats > 0:
        _shift_pending(app, ask.resource, 1)
    _reprioritise(app)


def _reprioritise(app: Application) -> None:
    """A swap started or ended: the held repeat's priority leaves or rejoins the
    application's (:func:`scheduler.priority.app_priority`)."""
    old_priority = app.priority
    priority.refresh_app(app)
    reorder(app, bool(app.pending_asks), old_priority)


def _shift_pending(app: Application, r: Resource, sign: int) -> None:
    change = res.add_into if sign > 0 else res.sub_from
    change(app.pending, r)
    for q in app.queue.ancestry() if app.queue else ():
        change(q.pending, r)
        policies.queue_changed(q)


def consume_repeat(p: PartitionState, app: Application, ask: Ask) -> None:
    """One repeat of a pending ask became an allocation: move it out of pending."""
    r = ask.resource
    res.sub_from(app.pending, r)
    for q in app.queue.ancestry() if app.queue else ():
        res.sub_from(q.pending, r)
        if not q.pending:
            # It leaves its parent's order (a smaller pending is re-keyed by the mark of
            # ``bind``, which every allocation that consumes a repeat goes through).
            policies.queue_changed(q)
    ask.pending_repeats -= 1
    ask.allocated_count += 1
    if ask.pending_repeats == 0:
        old_priority = app.priority
        del app.pending_asks[ask.sort_key]
        priority.refresh_app(app)
        reorder(app, True, old_priority)
        p.core.fire(ask, "allocate", p.rm_id, app.id)
    elif ask.parked_on:
        _reprioritise(app)


def reorder(app: Application, was_pending: bool, old_priority: int) -> None:
    """The application's pending asks changed: mark what the kept orders read from that
    (``policies``). An application's key reads only whether it has pending asks (a
    queue's reads its pending amounts, marked where they change); a changed priority
    moves the application and may move every queue of its path."""
    if app.priority != old_priority:
        policies.app_changed(app)
        for q in app.queue.ancestry() if app.queue else ():
            policies.queue_changed(q)
    elif was_pending != bool(app.pending_asks):
        policies.app_changed(app)


def update_running_count(p: PartitionState, app: Application) -> None:
    """Keep ``running_apps`` on the queue path for ``maxapplications``.

    An application counts while it is tracked, live, and has started: it
    holds allocations, or it ran (Accepted -> Running, its first real
    allocation) and is Running or Completing (a completing application may
    run again at any time, so it keeps its slot; YuniKorn frees the slot on
    Completing and can then exceed the limit). A slot is only ever taken by
    an allocation, which the cycle checks: an application that never ran
    does not take one by going Completing (its asks withdrawn) or Running (an
    ask arriving then) - found by the checker.
    """
    counts = (
        p.apps.get(app.id) is app
        and app.state in LIVE
        and (bool(app.allocations) or (app.state in STARTED and app.ran))
    )
    if counts != app.counted_running and app.queue is not None:
        delta = 1 if counts else -1
        for q in app.queue.ancestry():
            q.running_apps += delta
        p.users.count(app.limited_by, app.queue.chain, delta)
        app.counted_running = counts


def refresh_quota_flag(queue: Queue, reason: str) -> None:
    """Flag (with why) or clear a queue whose usage sits above its ``max``."""
    if queue.max is not None and not res.within(queue.allocated, queue.max):
        if not queue.over_quota_reason:
            queue.over_quota_reason = reason
    else:
        queue.over_quota_reason = ""


def remove_allocation(p: PartitionState, alloc: Allocation, trigger: str, why: str = "") -> None:
    """End an allocation through ``trigger`` and take it off every account."""
    p.core.fire(alloc, trigger, p.rm_id, alloc.app.id, why)
    unbind(p, alloc)
    if alloc.replacing_key and trigger != "replace":
        ask = alloc.app.asks.get(alloc.replacing_key)
        if ask is not None and ask.parked_on == alloc.uuid:
            unpark(alloc.app, ask)


def report_release(
    p: PartitionState, alloc: Allocation, ttype: si.TerminationType, msg: str
) -> None:
    """Tell the RM about a release, in this call's ``AllocationResponse.released``."""
    p.core.outbox(p.rm_id).released(p.name, alloc.app.id, alloc.uuid, alloc.ask_key, ttype, msg)


def core_release(
    p: PartitionState, alloc: Allocation, ttype: si.TerminationType, msg: str, why: str = ""
) -> None:
    """Start a core-initiated release: mark it released and tell the RM (``001``)."""
    p.core.fire(alloc, "release", p.rm_id, alloc.app.id, why)
    alloc.release_type = ttype.value
    alloc.release_count += 1
    report_release(p, alloc, ttype, msg)
