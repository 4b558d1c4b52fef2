"""The container scheduling states the core tells an RM, judged: a node search that found
no room (RESERVED, FAILED, SKIPPED), and an ask told it waits for the cluster to grow."""

from __future__ import annotations

from invariants.modelshim.answers import TT, _quota_of
from invariants.properties import limits
from invariants.properties import protocol as P
from invariants.readings import arithmetic as qty
from invariants.readings import model
from invariants.readings.calls import Call, Monitor
from invariants.readings.shim import (
    AskView,
    RMView,
)
from scheduler import si

WAITING_REASON = "waiting for cluster resources"
"""How the reason of the FAILED state an ask waiting for the cluster to grow is told
begins (YuniKorn's "request is waiting for cluster resources become available")."""


DELAY_REASON = "waiting for the reservation delay"
"""How the reason of the SKIPPED state an ask waiting for its reservation delay is told
begins: its node search found no room too (YuniKorn counts every ask it tried)."""


MUST, MAY, NOT = 2, 1, 0


def scheduling_state(m: Monitor, rv: RMView, call: Call,
                     request: si.UpdateContainerSchedulingStateRequest) -> None:
    """Note what a container scheduling state says of the ask: a node search found no room
    (RESERVED, FAILED), or it is told it waits for the cluster to grow."""
    key = (request.application_id, request.allocation_key)
    ask = rv.asks.get(key)
    if ask is not None and (
            request.state in (si.SchedulingState.RESERVED, si.SchedulingState.FAILED)
            or (request.state == si.SchedulingState.SKIPPED
                and request.reason.startswith(DELAY_REASON))):
        ask.searched = True
    if request.state != si.SchedulingState.FAILED or \
            not request.reason.startswith(WAITING_REASON):
        return
    if call.step.call != "schedule":
        m.report(P.WAITING, f"ask {key[0]}/{key[1]}",
                 f"told it waits for the cluster to grow in a {call.step.call} call: the "
                 "inspection runs only in schedule()")
        return
    call.waiting_told.append(key)


def waiting_for_room(m: Monitor, rv: RMView, call: Call) -> None:
    """After ``schedule()``: the asks told are asks that wait, each told once; an ask found
    waiting at the ends of calls a second apart was told (``protocol.waiting_for_room``)."""
    for key in call.waiting_told:
        ask = rv.asks.get(key)
        subject = f"ask {key[0]}/{key[1]}"
        if ask is None:
            m.report(P.WAITING, subject, "told it waits for the cluster to grow, but the shim "
                     "holds no such ask")
            continue
        if ask.told_waiting:
            m.report(P.WAITING, subject, "told twice that it waits for the cluster to grow")
            continue
        verdict, why = waits(m, rv, ask)
        if verdict == NOT:
            m.report(P.WAITING, subject, f"told it waits for the cluster to grow, but {why}")
        ask.told_waiting = True
    since = rv.waiting_since
    found: dict[tuple[str, str], float] = {}
    for key, ask in sorted(rv.asks.items()):
        if waits(m, rv, ask)[0] != MUST:
            continue
        found[key] = first = since.get(key, call.now)
        if call.now >= first + 1.0:
            m.report(P.WAITING, f"ask {key[0]}/{key[1]}",
                     f"waits for the cluster to grow since {first:g} s and was not told by "
                     f"{call.now:g} s")
    rv.waiting_since = found


def waits(m: Monitor, rv: RMView, ask: AskView) -> tuple[int, str]:
    """Whether the ask waits for the cluster to grow, by the shim's records: MUST, MAY (a
    swap of its task group is under way, and the shim can not tell for which ask) or NOT,
    with why not."""
    app = rv.apps.get(ask.app)
    if app is None or app.state not in ("Accepted", "Running", "Completing"):
        return NOT, "its application is not scheduled"
    if ask.pending <= 0:
        return NOT, "it is not pending"
    if not ask.searched:
        return NOT, "no node search found no room for it (never RESERVED or FAILED)"
    if ask.told_waiting:
        return NOT, "it was told before"
    if ask.required_node:
        return NOT, f"it must run on node {ask.required_node}"
    core = m.core_partition(rv.rm_id, app.partition)
    if core is None or core.state == "Stopped":
        return NOT, f"partition {app.partition} is not scheduled"
    group = ask.task_group
    if not ask.placeholder:
        if app.gang and rv.pending_placeholders(app.id):
            return NOT, "it waits for its gang's placeholders"
        if group and (any(k.task_group == group for k in rv.pending_placeholders(app.id))
                      or any(a.placeholder and a.task_group == group
                             and a.releasing in (None, TT.PREEMPTED_BY_SCHEDULER)
                             for a in rv.allocs_of(app.id))):
            return NOT, f"a placeholder of task group {group} is left to swap with"
    r = ask.resource
    part = rv.config.partition(app.partition)
    made = rv.created.get(app.partition, {})
    starting = not rv.holds_slot(app)
    for path in model.path_prefixes(app.path):
        q = core.queues.get(path)
        if q is None:
            continue
        mx, max_apps = _quota_of(part, made, path, q)
        used = rv.usage_below(app.partition, path)
        if mx and any(k in mx and used.get(k, 0) + v > mx[k] for k, v in r.items()):
            return NOT, f"queue {path} holds {qty.show(used)} of its max {qty.show(mx)}"
        if starting and max_apps > 0 and sum(
                1 for a in rv.apps_below(app.partition, path) if rv.holds_slot(a)) >= max_apps:
            return NOT, f"its application may not start: queue {path} runs its maxapplications"
    held = limits.held_by_limits(rv, app, r)
    if held:
        return NOT, held
    if not ask.placeholder and group and any(
            a.placeholder and a.task_group == group and a.releasing == TT.PLACEHOLDER_REPLACED
            for a in rv.allocs_of(app.id)):
        return MAY, ""
    return MUST, ""
