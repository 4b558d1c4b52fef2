"""The RM's ``AllocationRelease`` messages: its own releases and its confirmations.

A release of an allocation the core released with that same type is the RM's
confirmation: it ends the release (a confirmed ``PLACEHOLDER_REPLACED``
completes the replacement) and is never confirmed back (``001``
"AllocationRelease Response and Request"). Any other release, of any type,
removes the allocation, as YuniKorn's ``partition.go`` removeAllocation does:
``STOPPED_BY_RM`` (and an unset type) is confirmed with ``STOPPED_BY_RM``;
the types only the core starts (``TIMEOUT``, ``PREEMPTED_BY_SCHEDULER``,
``PLACEHOLDER_REPLACED``) are answered with nothing ("For releases initiated
by the core no such confirmation message can or must be sent"). A
``PLACEHOLDER_REPLACED`` release of an allocation the core is not replacing
swaps nothing in: there is no replacement (YuniKorn would dereference the
missing one); it ends as any other.
"""

from __future__ import annotations

from .. import si
from ..objects import Application, Ask
from . import apps, appstate, gang, ledger
from .state import PartitionState

TT = si.TerminationType
ET = si.EventRecordType

CONFIRM_TRIGGERS = {
    TT.TIMEOUT: "expire",
    TT.PREEMPTED_BY_SCHEDULER: "preempt",
    TT.PLACEHOLDER_REPLACED: "replace",
}

RM_TYPES = (TT.STOPPED_BY_RM, TT.UNKNOWN_TERMINATION_TYPE)
"""The types a release the RM starts may carry: confirmed with ``STOPPED_BY_RM``."""


def release_allocations(p: PartitionState, rel: si.AllocationRelease) -> None:
    """One ``AllocationRelease`` from the RM: a release, or a confirmation of ours."""
    ttype = rel.termination_type
    app = p.apps.get(rel.application_id) if rel.application_id else None
    if rel.uuid:
        if app is not None:
            alloc = app.allocations.get(rel.uuid)
        elif not rel.application_id:
            alloc = p.allocations.get(rel.uuid)
        else:
            alloc = None
        targets = [alloc] if alloc is not None else []
    elif app is not None:
        targets = list(app.allocations.values())
    else:
        targets = []
    if not targets:
        p.core.event(p.rm_id, ET.REQUEST, rel.uuid or rel.application_id,
                     f"allocation {rel.uuid} of application {rel.application_id} is not "
                     f"known: release {ttype.name} ignored",
                     reference_id=rel.application_id)
        return
    touched: list[Application] = []
    for alloc in targets:
        confirms = ttype in CONFIRM_TRIGGERS and alloc.state == "Releasing" \
            and alloc.release_type == ttype.value
        if confirms:
            ledger.remove_allocation(p, alloc, CONFIRM_TRIGGERS[ttype])
            if ttype == TT.PLACEHOLDER_REPLACED:
                gang.complete_replacement(p, alloc)
        elif ttype in RM_TYPES:
            ledger.remove_allocation(p, alloc, "stop")
            ledger.report_release(p, alloc, TT.STOPPED_BY_RM, rel.message or "released by the RM")
        else:
            # A type only the core starts that confirms no release of ours: the RM ends
            # the allocation all the same (YuniKorn's removeAllocation), unanswered.
            ledger.remove_allocation(p, alloc, "stop", f"released by the RM with termination "
                                     f"type {ttype.name}: nothing sent back")
        if alloc.app not in touched:
            touched.append(alloc.app)
    for touched_app in touched:
        apps.after_release(p, touched_app)


def roll_back(p: PartitionState, app_id: str, key: str, message: str) -> str:
    """The RM could not bind the pod of ``key``: its allocation goes, its ask is pending again.

    YuniKorn's answer to a ``SCHEDULING_FAILED_ON_RM`` release (YUNIKORN-3316,
    apache/yunikorn-core after ``be3bb48``): the allocation leaves its node,
    application, queue and user, and the request is scheduled again, elsewhere
    if the node stays unfit. Nothing is sent back: the RM knows. The ask that
    was allocated is terminal, so a fresh ask of the same key takes its place
    with one repeat pending. "" when done, else why not.
    """
    app = p.apps.get(app_id)
    allocs = [] if app is None else [a for a in app.allocations.values()
                                    if a.ask_key == key and a.state == "Allocated"
                                    and not a.release_type]
    ask = app.asks.get(key) if app is not None else None
    if app is None or not allocs or ask is None or ask.state != "Allocated" \
            or app.state not in ("Accepted", "Running"):
        return (f"allocation {key} of application {app_id} is not allocated to a live "
                "application: nothing to roll back")
    alloc = allocs[-1]
    if alloc.placeholder:
        return (f"placeholder {alloc.uuid} is not rolled back: a placeholder has no volumes "
                "whose binding can fail, and its gang's real asks may hold its node")
    ledger.remove_allocation(p, alloc, "stop", message or "the RM could not bind it")
    again = Ask(app, key, ask.resource, ask.max_allocations, ask.priority, p.core.next_seq(),
                p.core.clock.now(), ask.execution_timeout_ms, dict(ask.tags), ask.task_group,
                ask.placeholder, ask.originator, ask.preempt_self, ask.preempt_other)
    p.core.fire(again, "ask", p.rm_id, app.id,
                f"the RM could not bind allocation {alloc.uuid}: scheduled again")
    again.allocated_count = ask.allocated_count - 1
    again.pending_repeats = again.max_allocations - again.allocated_count
    ledger.add_pending(app, again)
    if app.state == "Completing":
        appstate.fire_app(p, app, "run")
    apps.after_release(p, app)
    return ""
