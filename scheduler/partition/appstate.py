"""Application state changes: firing, reporting to the RM, timers, and waiting.

Every application transition goes through :func:`fire_app`, which fires the
lifecycle trigger, reports an ``UpdatedApplication`` to the RM (``002``),
restarts the application's timers and keeps the ``maxapplications`` count and
the reservations in step with the new state.
"""

from __future__ import annotations

from statemachines.application import SCHEDULABLE

from .. import policies
from ..context import transition_sentence
from ..objects import Application
from . import ledger, reservations
from .state import PartitionState

COMPLETING_TIMEOUT = 30.0
TERMINATED_RETENTION = 3 * 24 * 3600.0
PLACEHOLDER_TIMEOUT = 15 * 60.0


def fire_app(p: PartitionState, app: Application, trigger: str, why: str = "") -> None:
    """Fire ``trigger``; the RM's ``UpdatedApplication.message`` says what changed and why.

    ``why`` defaults to the transition's usual reason (``scheduler.context.WHY``); the
    event and the update carry the same sentence, so a shim shows one text.
    """
    source = app.state
    p.core.fire(app, trigger, p.rm_id, why=why)
    policies.app_used(app)
    if trigger == "run":
        app.completing_timed_out = False
    if source == "Accepted" and app.state == "Running":
        app.ran = True
    elif app.state == "Accepted":
        app.ran = False
    app.state_since = p.core.clock.now()
    app.timer_token += 1
    message = transition_sentence(app, "application", trigger, source, app.state, why=why)
    p.core.outbox(p.rm_id).app_updated(app.id, app.state, app.state_since, message)
    ledger.update_running_count(p, app)
    if app.state not in SCHEDULABLE:
        reservations.cancel_app(p, app, real_only=False)


def start_app_timer(p: PartitionState, app: Application, delay: float, kind: str) -> None:
    """A timer that lapses as soon as the application changes state."""
    p.core.schedule_timer(delay, kind, app, app.timer_token, p.timer_owner)


def start_placeholder_timer(p: PartitionState, app: Application) -> None:
    """``001`` "Cleanup": the timeout starts when the first placeholder is allocated."""
    app.placeholder_timer_started = True
    delay = (app.execution_timeout_ms / 1000.0 if app.execution_timeout_ms > 0
             else PLACEHOLDER_TIMEOUT)
    p.core.schedule_timer(delay, "placeholder", app, app.placeholder_token, p.timer_owner)


def maybe_wait(p: PartitionState, app: Application) -> None:
    """``001`` "Definition": nothing pending and no real allocation -> Completing."""
    if app.LIFECYCLE.can(app.state, "wait") and not app.pending_asks and not any(
        not a.placeholder for a in app.allocations.values()
    ):
        fire_app(p, app, "wait")
        start_app_timer(p, app, COMPLETING_TIMEOUT, "complete")
