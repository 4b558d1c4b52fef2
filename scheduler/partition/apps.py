"""Applications: submission (placement, ACLs, gang admission), removal, and moving on.

``003`` "Operations to add/remove app"; placement and ACLs follow YuniKorn
(``scheduler.placement``); gang admission follows ``001`` "Application submit
handling". :func:`after_release` moves an application on once what it waited
for has been released (``001`` "Cleanup").
"""

from __future__ import annotations

from statemachines.application import LIVE

from .. import policies, si, ugm
from .. import resources as res
from ..config import sort_policy
from ..objects import Application, Queue
from ..placement import RECOVERY_QUEUE, Placement, QueueInfo, place, qualify
from . import appstate, asks, ledger, nsquota, queues
from .state import PartitionState

TT = si.TerminationType
ET = si.EventRecordType


def add_application(p: PartitionState, req: si.AddApplicationRequest) -> None:
    app_id = req.application_id
    existing = p.apps.get(app_id)
    if existing is not None and existing.state in LIVE:
        p.core.reject_app(p.rm_id, app_id, f"application {app_id} already exists "
                          f"(state {existing.state})")
        return
    user, groups = req.ugi.user, list(req.ugi.groups)

    def queue_info(path: str) -> QueueInfo | None:
        queue = p.queues.get(path)
        return None if queue is None else QueueInfo(queue.is_leaf)

    def refusal(placement: Placement) -> str:
        return placement_refusal(p, placement, user, groups)

    placement = place(p.placement_rules, req.queue_name, user, groups, req.tags, queue_info,
                      refusal, force_created(req.tags))
    path = placement.path if isinstance(placement, Placement) else qualify(req.queue_name)
    app = Application(
        app_id, p.name, None, path or req.queue_name, user, groups, p.core.next_seq(),
        p.core.clock.now(), dict(req.tags), req.execution_timeout_milli_seconds,
        req.placeholder_ask.as_dict() if req.placeholder_ask else None,
    )
    reason = refused_outright(req) or (
        f"partition {p.name} is {p.state.lower()}" if p.state != "Active" else
        placement if isinstance(placement, str) else check_submission(p, app, req, placement))
    if existing is not None:
        del p.apps[app_id]
    p.apps[app_id] = app
    if reason:
        p.core.reject_app(p.rm_id, app_id, reason)
        appstate.fire_app(p, app, "reject", reason)
        appstate.start_app_timer(p, app, appstate.TERMINATED_RETENTION, "expire")
        return
    if isinstance(placement, Placement) and placement.create:
        queues.create(p, placement.create)
    queue = p.queues[path]
    apply_namespace_quota(queue, nsquota.read(req.tags))
    app.queue = queue
    app.admission = ("", ()) if force_created(req.tags) else (queue.sort_policy, tuple(
        (q.path, dict(q.max)) for q in queue.ancestry() if q.max is not None))
    queue.apps[app_id] = app
    policies.app_changed(app)
    app.tracked_group = ugm.resolve_group(groups, queue.ancestry())
    if app.tracked_group:
        app.limited_by = ((ugm.USER, user), (ugm.GROUP, app.tracked_group))
    p.core.outbox(p.rm_id).app_accepted(app_id)
    p.core.event(p.rm_id, ET.APP, app_id, f"application {app_id} added to queue {path}",
                 si.EventChangeType.ADD)


def apply_namespace_quota(queue: Queue, quota: nsquota.NamespaceQuota) -> None:
    """An application's namespace tags set the limits of the unmanaged leaf it enters, every
    time one enters (apache/yunikorn-core be3bb48 pkg/scheduler/partition.go
    ``AddApplication``); configured queues and the recovery queue keep theirs."""
    if queue.managed or queue.path == RECOVERY_QUEUE or not quota.is_set:
        return
    if quota.max_applications:
        queue.max_applications = quota.max_applications
    if quota.sets_resources:
        queue.max = dict(quota.max) if quota.max is not None else None
        queue.guaranteed = dict(quota.guaranteed) if quota.guaranteed is not None else None
        ledger.refresh_quota_flag(queue, "max lowered by an application's namespace quota")
    policies.queue_changed(queue)


def refused_outright(req: si.AddApplicationRequest) -> str:
    """What is wrong with the request whatever the queues say (YuniKorn: "empty user")."""
    if not req.ugi.user.strip():
        return f"application {req.application_id} has an empty user"
    if req.execution_timeout_milli_seconds < 0:
        return (f"executionTimeoutMilliSeconds {req.execution_timeout_milli_seconds} is "
                "negative")
    return ""


def placement_refusal(p: PartitionState, placement: Placement, user: str,
                      groups: list[str]) -> str:
    """Why a placement rule's queue fails the rule (YuniKorn ``PlaceApplication``): an
    existing leaf on a draining path, or a submit ACL that refuses the user (for queues to
    create, the ACL of their nearest existing ancestor). Queues to create below a draining
    queue pass here: :func:`check_submission` rejects them, as YuniKorn does."""
    queue = p.queues[placement.anchor]
    inactive = next((q for q in queue.ancestry() if q.state != "Active"), None)
    if inactive is not None:
        return "" if placement.create else f"queue {inactive.path} is {inactive.state.lower()}"
    if not acl_allows(queue, user, groups):
        return f"user {user!r} is not allowed to submit to queue {placement.path}"
    return ""


def check_submission(
    p: PartitionState, app: Application, req: si.AddApplicationRequest, placement: Placement
) -> str:
    """Why the application can not be accepted where it was placed, or an empty string.

    For queues a placement rule will create, the checks run against their
    nearest existing ancestor: it must be a parent and active (YuniKorn's
    ``createQueue`` and ``addChildQueue`` refuse a leaf and a draining queue),
    and the new leaf has no quota of its own; its sort policy is the one the
    ancestor's childtemplate gives (fifo without one). A force-created application
    (:func:`force_created`) is not held to the gang checks: its pods run already.
    """
    path = placement.path
    queue = p.queues[placement.anchor]
    if placement.create:
        if queue.is_leaf:
            return f"queue {path} can not be created: {queue.path} is a leaf queue"
        for q in queue.ancestry():
            if q.state != "Active":
                return f"queue {q.path} is {q.state.lower()}"
    style = req.gang_scheduling_style or "Soft"
    if style not in ("Hard", "Soft"):
        return f"gang scheduling style {req.gang_scheduling_style!r} is not Hard or Soft"
    app.gang_style = style
    if res.any_positive(app.placeholder_ask) and not force_created(req.tags):
        policy = queue.sort_policy
        limits = [(q.path, q.max) for q in queue.ancestry() if q.max is not None]
        if placement.create:
            # The leaf created below ``queue`` (directly, or below parents created with it,
            # which inherit the template) takes ``queue``'s template and nothing else.
            template = queue.child_template
            policy = sort_policy(template.properties if template is not None else {})
            if template is not None and template.resources.max:
                limits.insert(0, (path, dict(template.resources.max)))
        if path != RECOVERY_QUEUE and (placement.create or not queue.managed):
            # YuniKorn applies the namespace tags before its gang check, which so sees the
            # leaf's max they set (partition.go AddApplication); here they are applied only
            # once the application is accepted, so a rejection changes nothing.
            quota = nsquota.read(req.tags)
            if quota.sets_resources:
                limits = [(w, mx) for w, mx in limits if w != path]
                if quota.max is not None:
                    limits.insert(0, (path, quota.max))
        if policy == "fair":
            return (f"queue {path} sorts applications fair; gang applications need "
                    "fifo or stateaware (001 'Handling queue with a FAIR sort policy')")
        for where, mx in limits:
            if not res.fits_with(app.placeholder_ask, {}, mx):
                return (f"placeholder ask {res.to_str(app.placeholder_ask)} is larger than "
                        f"the max {res.to_str(mx)} of queue {where}")
    return ""


FORCE_CREATE = "yunikorn.apache.org/force-create"
"""The application tag a shim sets on an application it recovers with running pods."""

TRUE_WORDS = ("1", "t", "T", "true", "TRUE", "True")
"""The spellings YuniKorn's ``IsAppCreationForced`` takes as true (Go's ``ParseBool``)."""


def force_created(tags: dict[str, str]) -> bool:
    """Whether the shim forces the application in (YuniKorn ``IsAppCreationForced``: the
    tag's name in any case, its value a true word). A forced application runs already, so
    the gang admission checks do not apply to it."""
    value = next((v for k, v in tags.items() if k.lower() == FORCE_CREATE), "")
    return value in TRUE_WORDS


def acl_allows(queue: Queue, user: str, groups: list[str]) -> bool:
    """YuniKorn: the leaf or any ancestor granting submit or admin access is enough."""
    for q in queue.ancestry():
        for acl in (q.submitacl, q.adminacl):
            if acl is not None and acl.allows(user, groups):
                return True
    return False


def remove_application(p: PartitionState, app_id: str) -> bool:
    """The RM removes an application: its asks and allocations go, the RM is told."""
    app = p.apps.get(app_id)
    if app is None:
        return False
    for ask in list(app.pending_asks.values()):
        asks.drop_ask(p, ask, "application removed")
    for alloc in list(app.allocations.values()):
        ledger.remove_allocation(p, alloc, "stop", "its application was removed")
        ledger.report_release(p, alloc, TT.STOPPED_BY_RM, "application removed by the RM")
    if app.queue is not None:
        app.queue.apps.pop(app.id, None)
        policies.app_changed(app)
    app.timer_token += 1
    del p.apps[app_id]
    ledger.update_running_count(p, app)
    p.core.event(p.rm_id, ET.APP, app_id, f"application {app_id} removed by the RM",
                 si.EventChangeType.REMOVE)
    queues.cleanup(p)
    return True


def finish(p: PartitionState, app: Application, trigger: str) -> None:
    """Leave the queue for a terminal state; the record expires after the retention."""
    appstate.fire_app(p, app, trigger)
    if app.queue is not None:
        app.queue.apps.pop(app.id, None)
        policies.app_changed(app)
    for ask in list(app.asks.values()):
        asks.drop_ask(p, ask, f"application {app.state.lower()}")
    appstate.start_app_timer(p, app, appstate.TERMINATED_RETENTION, "expire")
    queues.cleanup(p)


def after_release(p: PartitionState, app: Application) -> None:
    """Move the application on once what it waited for has been released.

    Failing ends in Failed when nothing is allocated any more; Resuming goes
    back to Accepted when its placeholders are gone; Completing whose timeout
    already fired ends in Completed when its leftover placeholders are gone
    (``001`` "Cleanup"); otherwise an application with nothing pending and
    no real allocation starts waiting.
    """
    if p.apps.get(app.id) is not app:
        return
    if app.state == "Failing":
        if not app.allocations:
            finish(p, app, "kill")
    elif app.state == "Resuming":
        if not app.has_placeholders():
            appstate.fire_app(p, app, "accept",
                              "its placeholders are released; it is scheduled as normal")
            app.placeholder_timer_started = False
            app.placeholder_token += 1
            appstate.maybe_wait(p, app)
    elif app.state == "Completing":
        if app.completing_timed_out and not app.allocations:
            finish(p, app, "complete")
    else:
        appstate.maybe_wait(p, app)
