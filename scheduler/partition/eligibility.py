"""Eligibility: whether an application or ask may be placed now, room aside.

Read-only questions the cycle, reservations and gang replacement all ask:
may the application start (``maxapplications`` on the path, its user's and
group's), does one more repeat of the ask fit (``max`` on the path, its user's
and group's ``maxresources``), is a real ask held back by its gang's pending
placeholders (``001`` "Scheduler logic changes"), and is the ask parked on a
placeholder. The four limits answer alike: why not, or "" when nothing holds
the application or ask back.
"""

from __future__ import annotations

from statemachines.application import SCHEDULABLE

from .. import resources as res
from .. import ugm
from ..objects import Application, Ask
from .state import PartitionState


def gang_waiting(app: Application) -> bool:
    """``001``: real asks wait while the application has placeholder asks pending."""
    return bool(app.placeholder_ask) and any(k.placeholder for k in app.pending_asks.values())


def may_schedule(app: Application, ask: Ask) -> bool:
    """Whether the cycle may place this ask at all right now (room aside)."""
    return (app.state in SCHEDULABLE and not ask.parked_on
            and (ask.placeholder or not gang_waiting(app)))


QUEUE_SLOT_FULL = "maxapplications reached on the queue path"
QUEUE_QUOTA_REACHED = "queue quota reached"


def queue_slot(app: Application) -> str:
    """Why ``maxapplications`` on the path holds a not yet started application back ("" when
    it may start: it is counted already, or every queue of its path has a free slot)."""
    if app.counted_running or app.queue is None:
        return ""
    if all(q.max_applications <= 0 or q.running_apps < q.max_applications
           for q in app.queue.ancestry()):
        return ""
    return QUEUE_SLOT_FULL


def user_slot(p: PartitionState, app: Application) -> str:
    """Why the user's or group's ``maxapplications`` holds a not yet started application
    back ("" when it may start)."""
    if not p.limited or app.counted_running or app.queue is None:
        return ""
    return ugm.no_slot(p.users, app.limited_by, app.queue.ancestry())


def user_headroom(p: PartitionState, app: Application, ask: Ask) -> str:
    """Why one more repeat of the ask would take its user or group past a ``maxresources``
    on the path ("" when it fits)."""
    if not p.limited or app.queue is None:
        return ""
    return ugm.over_limit(p.users, app.limited_by, app.queue.ancestry(), ask.resource)


def queue_headroom(app: Application, ask: Ask) -> str:
    """Why one more repeat of the ask would take a queue of its path past its ``max`` (""
    when it fits)."""
    r = ask.resource
    for q in app.queue.ancestry() if app.queue else ():
        if q.max is not None and not res.fits_with(r, q.allocated, q.max):
            return QUEUE_QUOTA_REACHED
    return ""
