"""Asks: the RM's new and updated asks, their removal, and the placeholder-size rule.

``003`` "ask add" / "ask delete": an ask with a known key is an update; the
RM's ``AllocationAskRelease`` removes asks and is confirmed back. ``001``
"Total placeholder size": placeholders may not ask for more than the
application's ``placeholderAsk``.
"""

from __future__ import annotations

import re

from statemachines.application import TAKES_ASKS

from .. import policies, preemption, si
from .. import resources as res
from ..objects import Application, Ask
from ..resources import Resource
from . import appstate, ledger, reservations
from .state import PartitionState

TT = si.TerminationType
ET = si.EventRecordType

CREATION_TIME_TAG = "creationTime"
"""The ask or allocation tag with the pod's creation time in Unix seconds (the SI's
``common.CreationTime``; YuniKorn reads it by this exact name)."""
_INT64 = re.compile(r"[+-]?[0-9]+")


def creation_time(tags: dict[str, str]) -> int | None:
    """The ``creationTime`` tag as Go's ``strconv.ParseInt(v, 10, 64)`` reads it, or None
    (missing, not a base-10 int64): YuniKorn then takes the time it reads the ask
    (apache/yunikorn-core be3bb48 pkg/scheduler/objects/allocation.go NewAllocationFromSI)."""
    value = tags.get(CREATION_TIME_TAG)
    if value is None or not _INT64.fullmatch(value):
        return None
    n = int(value)
    return n if -2**63 <= n < 2**63 else None


def note_created(app: Application, tags: dict[str, str]) -> None:
    """An ask or allocation created before the application was submitted moves its
    submission time back, which fifo order reads (apache/yunikorn-core be3bb48
    pkg/scheduler/objects/application.go AddAllocationAsk, addAllocationInternal): a
    scheduler restart keeps the order pods were created in, whatever order they come back."""
    created = creation_time(tags)
    if created is not None and created < app.submit_time:
        app.submit_time = created
        policies.app_changed(app)


def add_ask(p: PartitionState, msg: si.AllocationAsk) -> None:
    app = p.apps.get(msg.application_id)
    reason = ""
    if app is None:
        reason = f"application {msg.application_id} is not known in partition {p.name}"
    elif app.state not in TAKES_ASKS:
        reason = f"application {app.id} is {app.state.lower()}"
    resource = msg.resource_ask.as_dict()
    if not reason and not res.any_positive(resource):
        reason = "the ask requests no resources"
    existing = app.asks.get(msg.allocation_key) if app is not None else None
    allocated_before = existing.allocated_count if existing is not None else 0
    if not reason and existing is not None and existing.pending_repeats == 0 \
            and _same(existing, msg, resource):
        # An informer resync re-sends what runs: refusing it would kill a running pod.
        p.core.event(p.rm_id, ET.REQUEST, msg.allocation_key,
                     f"ask {msg.allocation_key} of application {msg.application_id} re-sent "
                     "unchanged and already allocated: nothing to do", si.EventChangeType.NONE,
                     msg.application_id)
        return
    if not reason and msg.execution_timeout_milli_seconds < 0:
        reason = (f"executionTimeoutMilliSeconds {msg.execution_timeout_milli_seconds} is "
                  "negative")
    if not reason and app is not None:
        repeats = max(0, msg.max_allocations - allocated_before)
        wanted = resource if repeats == 1 else res.multiply(resource, repeats)
        # What the ask replaces only lowers the total: without an overflow over the whole
        # pending total there is none, and the exact sum is only needed near the limit.
        over = res.overflow(p.root.pending, wanted)
        if over and existing is not None:
            over = res.overflow(res.sub(p.root.pending, res.multiply(
                existing.resource, ledger.counted_repeats(existing))), wanted)
        if over:
            reason = (f"the ask's {over} would take the pending total of partition {p.name} "
                      "past the int64 limit")
    if not reason and existing is not None and existing.parked_on:
        reason = (f"ask {msg.allocation_key} is waiting for placeholder "
                  f"{existing.parked_on} to be released and can not be changed now")
    if not reason and msg.max_allocations <= allocated_before:
        reason = (f"maxAllocations {msg.max_allocations} is not above the "
                  f"{allocated_before} repeats of ask {msg.allocation_key} already allocated")
    if not reason and app is not None and msg.placeholder and msg.task_group_name:
        reason = check_placeholder_room(app, msg, resource, allocated_before)
    if reason or app is None:
        p.core.reject_ask(p.rm_id, msg.application_id, msg.allocation_key, reason)
        if app is not None:
            # 002 "Lifecycle of AllocationAsk": Initial -> Rejected, "Rejected by Scheduler".
            refused = Ask(app, msg.allocation_key, resource, msg.max_allocations, msg.priority,
                          p.core.next_seq(), p.core.clock.now())
            p.core.fire(refused, "reject", p.rm_id, app.id)
        return
    ask = Ask(
        app, msg.allocation_key, resource, msg.max_allocations, msg.priority,
        p.core.next_seq(), p.core.clock.now(), msg.execution_timeout_milli_seconds,
        dict(msg.tags), msg.task_group_name, msg.placeholder, msg.originator,
        preemption.allow_self(msg.preemption_policy), preemption.allow_other(msg.preemption_policy),
    )
    if existing is not None:
        drop_ask(p, existing, "replaced by an update from the RM")
    p.core.fire(ask, "ask", p.rm_id, app.id)
    note_created(app, ask.tags)
    ask.max_allocations = msg.max_allocations
    ask.allocated_count = allocated_before
    ask.pending_repeats = msg.max_allocations - allocated_before
    ledger.add_pending(app, ask)
    if ask.placeholder:
        # The gang's real asks wait for its placeholders again: free their nodes.
        reservations.cancel_app(p, app, real_only=True)
    if app.state == "New":
        appstate.fire_app(p, app, "accept")
    elif app.state == "Completing":
        appstate.fire_app(p, app, "run")


def _same(ask: Ask, msg: si.AllocationAsk, resource: Resource) -> bool:
    """Whether ``msg`` says exactly what ``ask`` already says."""
    return (res.equal(ask.resource, resource) and ask.max_allocations == msg.max_allocations
            and ask.priority == msg.priority and ask.task_group == msg.task_group_name
            and ask.placeholder == (msg.placeholder and bool(msg.task_group_name))
            and ask.execution_timeout_ms == msg.execution_timeout_milli_seconds
            and ask.tags == dict(msg.tags) and ask.originator == msg.originator
            and ask.preempt_self == preemption.allow_self(msg.preemption_policy)
            and ask.preempt_other == preemption.allow_other(msg.preemption_policy))


def check_placeholder_room(
    app: Application, msg: si.AllocationAsk, resource: Resource, allocated_before: int
) -> str:
    """Placeholders may not ask for more than the application's ``placeholderAsk``.

    ``001`` "Total placeholder size": the placeholderAsk is the total all
    task group members will request; keeping every placeholder within it
    keeps the submission-time quota check meaningful.
    """
    if not res.any_positive(app.placeholder_ask):
        return "a placeholder ask needs a placeholderAsk on its application"
    wanted = dict(app.placeholder_allocated)
    for k in app.pending_asks.values():
        if k.placeholder and k.key != msg.allocation_key:
            res.add_into(wanted, res.multiply(k.resource, k.pending_repeats))
    res.add_into(wanted, res.multiply(resource, msg.max_allocations - allocated_before))
    if not res.fits(wanted, app.placeholder_ask):
        return (f"placeholders would request {res.to_str(wanted)}, more than the "
                f"application's placeholderAsk {res.to_str(app.placeholder_ask)}")
    return ""


def drop_ask(p: PartitionState, ask: Ask, why: str) -> None:
    """Take a pending ask out of every account and reject it."""
    app = ask.app
    if ask.state == "Pending":
        ledger.remove_pending(app, ask)
        p.core.fire(ask, "reject", p.rm_id, app.id, why)
    reservations.cancel(p, app.id, ask.key)
    if ask.parked_on:
        placeholder = app.allocations.get(ask.parked_on)
        if placeholder is not None and placeholder.replacing_key == ask.key:
            placeholder.replacing_key = ""
        ledger.unpark(app, ask)
    if app.asks.get(ask.key) is ask:
        del app.asks[ask.key]
    p.core.event(p.rm_id, ET.REQUEST, ask.key, f"ask {ask.key} of application {app.id} "
                 f"removed: {why}", si.EventChangeType.REMOVE, app.id)


def release_asks(p: PartitionState, rel: si.AllocationAskRelease) -> None:
    """RM-initiated ask removal (``002`` AllocationAskRelease), confirmed back."""
    app = p.apps.get(rel.application_id)
    if rel.termination_type != TT.STOPPED_BY_RM:
        p.core.event(p.rm_id, ET.REQUEST, rel.allocation_key or rel.application_id,
                     f"ask release {rel.termination_type.name} for application "
                     f"{rel.application_id} acknowledged: only the core starts those, "
                     "nothing to do", reference_id=rel.application_id)
        return
    if app is None:
        p.core.event(p.rm_id, ET.APP, rel.application_id,
                     f"application {rel.application_id} is not known: ask release ignored")
        return
    if rel.allocation_key:
        ask = app.asks.get(rel.allocation_key)
        asks = [ask] if ask is not None else []
    else:
        asks = list(app.asks.values())
    if not asks:
        p.core.event(p.rm_id, ET.REQUEST, rel.allocation_key,
                     f"ask {rel.allocation_key} of application {app.id} is not known: "
                     "ask release ignored", reference_id=app.id)
        return
    box = p.core.outbox(p.rm_id)
    for ask in asks:
        drop_ask(p, ask, "released by the RM")
        box.ask_released(p.name, app.id, ask.key, TT.STOPPED_BY_RM,
                         rel.message or "ask released by the RM")
    appstate.maybe_wait(p, app)
