"""Gang scheduling flows (``001``) as plain functions.

Placeholder replacement (park the real ask, release the placeholder, place
the real ask when the shim confirms) and the placeholder timeout (Hard and
Soft). Every state change still goes through a lifecycle trigger.
"""

from __future__ import annotations

from statemachines.application import SCHEDULABLE

from .. import resources as res
from .. import si
from ..objects import Allocation, Application, Ask, Node
from . import allocate, apps, appstate, asks, eligibility, ledger
from .state import PartitionState

TT = si.TerminationType
SS = si.SchedulingState

WAITING_FOR_GANG = "waiting for the gang's placeholder asks to be allocated"


def try_replace(p: PartitionState, app: Application, ask: Ask) -> bool:
    """Start replacing a placeholder of the ask's task group; True when anything changed.

    ``001`` "Scheduler logic changes" steps 1-3: take the first unreleased
    placeholder of the same task group, mark it released, tell the shim
    (PLACEHOLDER_REPLACED) and park the real ask until the shim confirms.
    A placeholder smaller than the real ask can never be swapped: like
    YuniKorn, it is released with TIMEOUT and the next one is tried.
    """
    released = False
    for ph in list(app.allocations.values()):
        if not ph.placeholder or ph.state != "Allocated" or ph.task_group != ask.task_group:
            continue
        if not res.fits(ask.resource, ph.resource):
            ledger.core_release(p, ph, TT.TIMEOUT,
                                f"placeholder cancelled: real ask {ask.key} "
                                f"{res.to_str(ask.resource)} is larger than the placeholder")
            released = True
            continue
        ledger.core_release(p, ph, TT.PLACEHOLDER_REPLACED, f"replaced by ask {ask.key}")
        ph.replacing_key = ask.key
        ledger.park(app, ask, ph.uuid)
        return True
    return released


def complete_replacement(p: PartitionState, placeholder: Allocation) -> None:
    """The shim confirmed a PLACEHOLDER_REPLACED release: place the parked ask.

    ``001`` "Scheduler logic changes" steps 4-6: as one update, the
    placeholder is gone (already unbound) and the real ask is allocated on
    the placeholder's node; if it no longer fits there, on another node; if
    none, it stays pending and is reported FAILED so a shim can scale up.
    """
    app = placeholder.app
    ask = app.asks.get(placeholder.replacing_key)
    if ask is None or ask.parked_on != placeholder.uuid:
        return
    ledger.unpark(app, ask)
    if ask.state != "Pending" or app.state not in SCHEDULABLE:
        return
    if eligibility.gang_waiting(app):
        allocate.set_scheduling_state(p, ask, SS.SKIPPED, WAITING_FOR_GANG)
        return
    over = eligibility.queue_headroom(app, ask)
    if over:
        allocate.set_scheduling_state(p, ask, SS.SKIPPED, over)
        return
    node: Node | None = p.nodes.get(placeholder.node.id)
    if node is None or not node.schedulable or not res.fits(ask.resource, node.available) \
            or not node.open_to((app.id, ask.key)) \
            or not allocate.predicates(p, ask, node, True):
        p.failed_shapes = res.ShapeMemo()
        node = allocate.find_node(p, app, ask)
    if node is None:
        allocate.report_failed(p, app, ask, f"placeholder {placeholder.uuid} was released "
                               "but the real ask fits no node: ")
        return
    alloc = allocate.allocate(p, app, ask, node)
    alloc.replaces = placeholder.uuid
    alloc.replaced_node = placeholder.node.id
    alloc.fallback = node.id != placeholder.node.id


def placeholder_timeout(p: PartitionState, app: Application) -> None:
    """``001`` "Cleanup", placeholder asks pending: release every placeholder.

    Placeholder allocations are released with TIMEOUT and pending
    placeholder asks with an AllocationAskRelease TIMEOUT, all in this
    call's one AllocationResponse. Hard: the application fails (its real
    allocations are released too, so Failed holds nothing) and is Failed
    once the shim confirmed every release. Soft: it resumes and is Accepted
    again once its placeholders are gone. An application that already runs,
    or is Completing, and has no placeholder ask pending only loses its
    leftover placeholders (YuniKorn's timeoutPlaceholderProcessing, case 1:
    ``IsRunning() || IsCompleting()``, apache/yunikorn-core be3bb48
    ``objects/application.go``); one still Accepted with every placeholder allocated is
    treated as timed out, as in YuniKorn, so it can not wait forever.
    """
    pending_ph = [k for k in app.pending_asks.values() if k.placeholder]
    if app.state in ("Running", "Completing") and not pending_ph:
        release_placeholders(p, app, "placeholder timeout: not replaced in time")
        return
    if not app.LIFECYCLE.can(app.state, "fail"):
        return
    # One AllocationResponse in decision order: releases first, then the ask releases.
    release_placeholders(p, app, "placeholder timeout")
    hard = app.gang_style == "Hard"
    if hard:
        for alloc in list(app.allocations.values()):
            if alloc.state == "Allocated":
                ledger.core_release(p, alloc, TT.TIMEOUT, "gang failed: placeholder timeout")
    box = p.core.outbox(p.rm_id)
    for ask in pending_ph:
        asks.drop_ask(p, ask, "placeholder timeout")
        box.ask_released(p.name, app.id, ask.key, TT.TIMEOUT,
                         "placeholder timeout: placeholder ask released")
    if hard:
        appstate.fire_app(p, app, "fail", "the placeholder timeout passed (gang style Hard); "
                          "everything it holds is being released")
    elif app.LIFECYCLE.can(app.state, "resume"):
        appstate.fire_app(p, app, "resume", "the placeholder timeout passed (gang style Soft); "
                          "its placeholders are being released")
    apps.after_release(p, app)


def release_placeholders(p: PartitionState, app: Application, message: str) -> None:
    """Release every placeholder of the application that is not released yet (TIMEOUT)."""
    for alloc in list(app.allocations.values()):
        if alloc.placeholder and alloc.state == "Allocated":
            ledger.core_release(p, alloc, TT.TIMEOUT, message)


def wait_for_preempted(p: PartitionState, app: Application, ask: Ask) -> bool:
    """A real ask waits while a preempted placeholder of its task group is unconfirmed.

    A preempted placeholder is never replaced (it is not ``Allocated``); until
    the RM confirms it the group still counts it (YuniKorn's ``canReplace``),
    and once it is gone the group's real asks are scheduled as normal asks.
    """
    for ph in app.allocations.values():
        if ph.placeholder and ph.preempted and ph.task_group == ask.task_group:
            allocate.set_scheduling_state(
                p, ask, SS.SKIPPED, f"waiting for the preempted placeholder {ph.uuid} of task "
                f"group {ask.task_group} to be released")
            return True
    return False
