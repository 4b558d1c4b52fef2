"""Eligibility: whether an application or ask may be placed now, room aside.

Read-only questions the cycle, reservations and gang replacement all ask:
may the application start (``maxapplications`` on the path), does the ask fit
the queue headroom (``max`` on the path), is a real ask held back by its
gang's pending placeholders (``001`` "Scheduler logic changes"), and is the
ask parked on a placeholder.
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


def can_start(app: Application) -> bool:
    """``maxapplications``: an application not yet counted needs a free slot on its path."""
    if app.counted_running or app.queue is None:
        return True
    return all(
        q.max_applications <= 0 or q.running_apps < q.max_applications
        for q in app.queue.ancestry()
    )


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


def headroom(app: Application, ask: Ask) -> bool:
    """Whether one more repeat of the ask stays within every ``max`` on the queue path."""
    r = ask.resource
    for q in app.queue.ancestry() if app.queue else ():
        if q.max is not None and not res.fits_with(r, q.allocated, q.max):
            return False
    return True
