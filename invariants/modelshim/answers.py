"""Judging what the core says: allocations, releases, application states, timers.

Functions over one call (``invariants/readings/calls.py``) and what the shim knows
(``invariants/readings/shim.py``); each names the protocol check it applies. The
monitor calls them as the callbacks arrive and when the call ends.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

import statemachines
from invariants.properties import limits
from invariants.properties import preemptions as preemption
from invariants.properties import protocol as P
from invariants.readings import arithmetic as qty
from invariants.readings import model
from invariants.readings.calls import Call, Monitor
from invariants.readings.shim import (
    COMPLETING_TIMEOUT,
    RETENTION,
    AllocView,
    AppView,
    Kept,
    RMView,
)
from scheduler import si

TT = si.TerminationType


EDGES = {(t.source, t.dest) for t in statemachines.APPLICATION.transitions}


# ---------------------------------------------------------------- new allocations


def new_allocation(m: Monitor, rv: RMView, call: Call, msg: si.Allocation) -> None:
    """Judge one allocation the core announced, then record it."""
    call.new.append(msg)
    subject = f"allocation {msg.uuid} ({msg.application_id}/{msg.allocation_key})"
    r = msg.resource_per_alloc.as_dict()
    if rv.paused:
        m.report(P.PAUSED, subject, "allocated for a paused RM")
    if msg.uuid in rv.allocs or not msg.uuid:
        m.report(P.ALLOCATION_MATCHES_ASK, subject, "its uuid is empty or already running")
    app = rv.apps.get(msg.application_id)
    ask = rv.asks.get((msg.application_id, msg.allocation_key))
    if app is None or not app.live:
        m.report(P.ALLOCATION_MATCHES_ASK, subject, "its application is not one the shim runs")
    elif msg.partition_name != app.partition:
        m.report(P.ALLOCATION_MATCHES_ASK, subject,
                 f"partition {msg.partition_name}, the application is in {app.partition}")
    if ask is None:
        m.report(P.ALLOCATION_MATCHES_ASK, subject, "no ask of the shim has that key")
    else:
        if not qty.same(r, ask.resource):
            m.report(P.ALLOCATION_MATCHES_ASK, subject,
                     f"resource {qty.show(r)}, the ask wants {qty.show(ask.resource)}")
        if msg.placeholder != ask.placeholder or msg.task_group_name != ask.task_group:
            m.report(P.ALLOCATION_MATCHES_ASK, subject,
                     "placeholder flag or task group differs from the ask's")
        if not ask.recovered and (msg.priority != ask.priority
                                  or dict(msg.allocation_tags) != ask.tags):
            # 002 Allocation: "Allocation tags from AllocationAsk", "Priority of ask".
            m.report(P.ALLOCATION_MATCHES_ASK, subject,
                     f"priority {msg.priority} and tags {dict(msg.allocation_tags)}, the "
                     f"ask's are {ask.priority} and {ask.tags}")
        if ask.allocated >= ask.max_allocations:
            m.report(P.ALLOCATION_MATCHES_ASK, subject,
                     f"one more than the ask's maxAllocations {ask.max_allocations}")
    _fits_node(m, rv, msg, r, subject)
    if ask is not None and ask.required_node and msg.node_id != ask.required_node and not (
            app is not None and _replacing(call, app, msg)):
        m.report(P.FITS_NODE, subject, f"on node {msg.node_id}, the ask's requiredNode is "
                 f"{ask.required_node}")
    if app is not None:
        _quota(m, rv, call, app, r, subject)
        _gang(m, rv, call, app, msg, r, subject)
        if not _replacing(call, app, msg):
            limits.judge_allocation(m, rv, app, r, subject)
    rv.allocs[msg.uuid] = AllocView(
        msg.uuid, msg.application_id, msg.allocation_key, msg.node_id, r, msg.placeholder,
        msg.task_group_name, call.now, ask.timeout_ms if ask is not None else 0,
        sent=Kept(msg), **(preemption.victim_fields(ask) if ask is not None else {}))
    m.name(msg.uuid, msg.application_id, msg.allocation_key)
    if ask is not None:
        ask.allocated += 1
    if app is not None and msg.placeholder and app.placeholder_start is None:
        app.placeholder_start = call.now
    if app is not None and msg.placeholder and app.state != "Accepted":
        rv.allocs[msg.uuid].unspelled = True


def _fits_node(m: Monitor, rv: RMView, msg: si.Allocation, r: dict[str, int],
               subject: str) -> None:
    node = rv.nodes.get(msg.node_id)
    if node is None:
        m.report(P.FITS_NODE, subject, f"node {msg.node_id} is not a node the shim registered")
        return
    if node.state != "Schedulable":
        m.report(P.FITS_NODE, subject, f"node {node.id} is {node.state}")
    free = rv.free(node.id)
    if not qty.fits(r, free):
        m.report(P.FITS_NODE, subject,
                 f"node {node.id} has {qty.show(free)} free for {qty.show(r)}")
    if not m.passes(msg.allocation_key, node.id):
        m.report(P.FITS_NODE, subject, f"the RM's predicates refuse node {node.id}")


def _quota(m: Monitor, rv: RMView, call: Call, app: AppView, r: dict[str, int],
           subject: str) -> None:
    core = m.core_partition(rv.rm_id, app.partition)
    if core is None:
        return
    starting = not rv.holds_slot(app)
    part = rv.config.partition(app.partition)
    made = rv.created.get(app.partition, {})
    for path in model.path_prefixes(app.path):
        q = core.queues.get(path)
        if q is None:
            continue
        mx, max_apps = _quota_of(part, made, path, q)
        if mx:
            used = rv.usage_below(app.partition, path)
            over = [k for k, v in r.items() if k in mx and used.get(k, 0) + v > mx[k]]
            if over:
                m.report(P.QUOTA_ON_PATH, subject,
                         f"queue {path} holds {qty.show(used)}; with {qty.show(r)} it passes "
                         f"its max {qty.show(mx)} in {', '.join(sorted(over))}")
        if starting and max_apps > 0:
            counted = sum(1 for a in rv.apps_below(app.partition, path) if rv.holds_slot(a))
            if counted >= max_apps:
                m.report(P.QUOTA_ON_PATH, subject,
                         f"application {app.id} starts while queue {path} already runs "
                         f"{counted} of its maxapplications {max_apps}")


def _quota_of(part: model.PartitionModel | None, made: dict[str, model.Created], path: str,
              q: Any) -> tuple[Mapping[str, int] | None, int]:
    """A queue's max and maxapplications as the checker reads them: a configured queue's
    from the configuration, a leaf a placement rule created from the childtemplate it was
    created under and its applications' namespace tags (none: no quota); only a queue the
    configuration no longer has (draining) is taken at the core's word."""
    configured = part.queues.get(path) if part is not None else None
    if configured is not None:
        return configured.max, configured.max_applications
    created = made.get(path)
    if created is not None:
        # By the shim's record alone (a reload that configures the queue drops it), not
        # the core's managed flag.
        queue = model.created_queue(path, created)
        return queue.max, queue.max_applications
    return q.max, q.max_applications


def _gang(m: Monitor, rv: RMView, call: Call, app: AppView, msg: si.Allocation,
          r: dict[str, int], subject: str) -> None:
    if msg.placeholder:
        return
    if app.gang and rv.pending_placeholders(app.id):
        keys = [k.key for k in rv.pending_placeholders(app.id)]
        m.report(P.GANG_WAITS, subject, f"a real allocation while placeholder asks {keys} "
                 "are pending")
    if not msg.task_group_name or _replacing(call, app, msg):
        return
    free_ph = [a.uuid for a in rv.allocs_of(app.id)
               if a.placeholder and a.task_group == msg.task_group_name
               and a.releasing is None and qty.fits(r, a.resource)]
    if free_ph:
        m.report(P.GANG_WAITS, subject, f"allocated beside unreleased placeholders {free_ph} "
                 "of its task group instead of replacing one")


def _replacing(call: Call, app: AppView, msg: si.Allocation) -> bool:
    """A real allocation that replaces a placeholder the shim confirmed in this call."""
    return bool(msg.task_group_name) and not msg.placeholder and any(
        ph.app == app.id and ph.task_group == msg.task_group_name
        and ph.releasing == TT.PLACEHOLDER_REPLACED for ph in call.shim_confirmed.values())


# ---------------------------------------------------------------- releases


def core_release(m: Monitor, rv: RMView, call: Call, rel: si.AllocationRelease) -> None:
    """A release in ``AllocationResponse.released``: a confirmation, or one the core starts."""
    call.released.append(rel)
    subject = f"allocation {rel.uuid}"
    if rel.termination_type == TT.STOPPED_BY_RM:
        if call.confirm_expected[rel.uuid] == 0:
            m.report(P.CONFIRMATIONS, subject,
                     "released STOPPED_BY_RM, which only the RM starts, without a request")
        call.confirmed[rel.uuid] += 1
        return
    alloc = rv.allocs.get(rel.uuid)
    if alloc is None:
        m.report(P.RELEASES, subject, f"released {rel.termination_type.name}, but the shim "
                 "does not run it")
        return
    if alloc.releasing is not None:
        call.released_again.add(alloc.uuid)
        m.report(P.RELEASES, subject, f"released {rel.termination_type.name} while a "
                 f"{alloc.releasing.name} release is unconfirmed")
    if rel.termination_type not in (TT.TIMEOUT, TT.PLACEHOLDER_REPLACED, TT.PREEMPTED_BY_SCHEDULER):
        m.report(P.RELEASES, subject, f"released {rel.termination_type.name}, a type the "
                 "core does not start")
    alloc.releasing = rel.termination_type
    call.started.append((alloc, _reasons(rv, call, alloc)))


def _reasons(rv: RMView, call: Call, alloc: AllocView) -> str:
    """Why the core may have started this release, as the shim sees it now ("" if no reason)."""
    app = rv.apps.get(alloc.app)
    if app is None:
        return "unknown application"
    if alloc.releasing == TT.PREEMPTED_BY_SCHEDULER:
        return "preemption"  # judged as a whole decision by invariants.properties.preemptions
    if alloc.releasing == TT.PLACEHOLDER_REPLACED:
        fits = any(k.app == alloc.app and not k.placeholder and k.pending > 0
                   and k.task_group == alloc.task_group and qty.fits(k.resource, alloc.resource)
                   for k in rv.asks.values())
        return "replacement" if alloc.placeholder and fits else ""
    if not alloc.placeholder:
        due = alloc.timeout_ms > 0 and call.now >= alloc.created + alloc.timeout_ms / 1000
        return "execution timeout" if due else ""
    if app.placeholder_start is not None and \
            call.now >= app.placeholder_start + app.placeholder_timeout:
        return "placeholder timeout"
    if app.state in ("Completing", "Completed") and \
            call.now >= app.state_since + COMPLETING_TIMEOUT:
        return "completion"
    if any(k.app == alloc.app and not k.placeholder and k.pending > 0
           and k.task_group == alloc.task_group and not qty.fits(k.resource, alloc.resource)
           for k in rv.asks.values()):
        return "larger real ask"
    return ""


def release_reasons(m: Monitor, rv: RMView, call: Call) -> None:
    """Every release the core started in this call has a reason the shim can check."""
    for alloc, why in call.started:
        app = rv.apps.get(alloc.app)
        if why or (app is not None and app.state == "Failing"
                   and alloc.releasing == TT.TIMEOUT):
            continue
        subject = f"allocation {alloc.uuid}"
        if alloc.releasing == TT.PLACEHOLDER_REPLACED:
            m.report(P.REPLACEMENT, subject, "released PLACEHOLDER_REPLACED with no pending real "
                     "ask of its task group that fits in it")
        elif alloc.placeholder:
            m.report(P.RELEASES, subject, "a placeholder released TIMEOUT before its placeholder "
                     "timeout, not at completion, not for a larger real ask and not for a "
                     "failing gang")
        else:
            m.report(P.RELEASES, subject, "a real allocation released TIMEOUT before its "
                     "execution timeout and without its gang failing")


def confirmations(m: Monitor, rv: RMView, call: Call) -> None:
    for uuid, n in call.confirm_expected.items():
        if call.confirmed[uuid] != n:
            m.report(P.CONFIRMATIONS, f"allocation {uuid}",
                     f"the RM's release was confirmed {call.confirmed[uuid]} times, not {n}")
    for key, n in call.ask_confirm_expected.items():
        if call.ask_confirmed[key] != n:
            m.report(P.CONFIRMATIONS, f"ask {key[0]}/{key[1]}",
                     f"the RM's ask release was confirmed {call.ask_confirmed[key]} times")
    for uuid in call.shim_confirmed:
        if any(r.uuid == uuid for r in call.released):
            m.report(P.CONFIRMATIONS, f"allocation {uuid}",
                     "the core answered the RM's confirmation of a release it started")


def replacements(m: Monitor, rv: RMView, call: Call) -> None:
    """``001`` step 5: the real ask goes where its placeholder was, unless it can not.

    The SI does not say which new allocation replaced which placeholder, so when one
    request confirms several placeholders of a task group the rule holds when some
    pairing of them with the group's new real allocations explains every placement: each
    real allocation on its placeholder's node, or on another only where that node could
    not take it. Reading the pairing from the nodes alone misjudges a fallback: a real ask
    refused by its own placeholder's node may land on the node of another placeholder
    confirmed with it (the core pairs them when the swap starts, as YuniKorn links the
    two at the match: apache/yunikorn-core be3bb48 pkg/scheduler/objects/application.go
    tryPlaceholderAllocate).
    """
    groups: dict[tuple[str, str], list[AllocView]] = {}
    for ph in call.shim_confirmed.values():
        if ph.releasing == TT.PLACEHOLDER_REPLACED:
            groups.setdefault((ph.app, ph.task_group), []).append(ph)
    for (app_id, group), placeholders in groups.items():
        reals = [a for a in call.new if a.application_id == app_id and not a.placeholder
                 and a.task_group_name == group]
        if not reals:
            continue
        may = {ph.uuid: [r.uuid for r in reals
                         if r.node_id == ph.node or not _could_take(m, rv, ph, r)]
               for ph in placeholders}
        paired = _pairing([ph.uuid for ph in placeholders], may)
        if len(paired) == min(len(placeholders), len(reals)):
            continue
        real = next((r for r in reals if r.uuid not in paired), reals[0])
        if len(placeholders) == 1:
            (only,) = placeholders
            m.report(P.REPLACEMENT, f"allocation {real.uuid}",
                     f"placed on {real.node_id} although placeholder {only.uuid}'s node "
                     f"{only.node} could take it")
            continue
        shown = ", ".join(f"{p.uuid} on {p.node}" for p in placeholders)
        m.report(P.REPLACEMENT, f"allocation {real.uuid}",
                 f"placed on {real.node_id}: no pairing of the placeholders confirmed together "
                 f"({shown}) with the {len(reals)} real allocations of task group {group} "
                 "puts each on its placeholder's node, or on another only where that node "
                 "could not take it")


def _pairing(placeholders: list[str], may: dict[str, list[str]]) -> dict[str, str]:
    """A largest pairing of real allocations with placeholders, each real with one that
    ``may`` have been its own (augmenting paths, in the given order: deterministic)."""
    owner: dict[str, str] = {}

    def place(ph: str, seen: set[str]) -> bool:
        for real in may[ph]:
            if real in seen:
                continue
            seen.add(real)
            if real not in owner or place(owner[real], seen):
                owner[real] = ph
                return True
        return False

    for ph in placeholders:
        place(ph, set())
    return owner


def _could_take(m: Monitor, rv: RMView, ph: AllocView, real: si.Allocation) -> bool:
    """Whether the placeholder's node, freed of it, could have taken ``real``."""
    node = rv.nodes.get(ph.node)
    r = real.resource_per_alloc.as_dict()
    core = m.core_partition(rv.rm_id, rv.apps[ph.app].partition) if ph.app in rv.apps else None
    held = core.nodes.get(ph.node) if core is not None else None
    reserved = held is not None and bool(held.reservations) \
        and (ph.app, real.allocation_key) not in held.reservations
    return (node is not None and node.state == "Schedulable" and not reserved
            and qty.fits(r, rv.free(node.id)) and m.passes(real.allocation_key, node.id))


# ---------------------------------------------------------------- applications


def app_update(m: Monitor, rv: RMView, call: Call, u: si.UpdatedApplication) -> None:
    """One reported state change: a lifecycle edge, with the cause the shim can see."""
    call.updates.append(u)
    app = rv.apps.get(u.application_id)
    subject = f"application {u.application_id}"
    if u.state == "Rejected" and u.application_id in call.rejected_apps:
        # A refused submission the core records (it expires after the retention).
        add = next((a for a, _p, _w in call.new_apps
                    if a.application_id == u.application_id), None)
        if add is not None and (app is None or not app.live):
            app = rv.apps[u.application_id] = AppView(
                u.application_id, add.partition_name or "default", Kept(add), "",
                state_since=call.now)
    if app is None:
        m.report(P.APP_STATES, subject, f"state {u.state} reported for an application the "
                 "shim does not know")
        return
    prev, new, now = app.state, u.state, call.now
    if abs(u.state_transition_timestamp - now * 1e9) > 1e3:
        # 002 UpdatedApplication.stateTransitionTimestamp: when the state changed, in
        # nanoseconds; the core changes states only inside the call, at the call's time.
        m.report(P.APP_STATES, subject, f"{prev} -> {new} stamped "
                 f"{u.state_transition_timestamp} ns, the call ran at {int(now * 1e9)} ns")
    if (prev, new) not in EDGES:
        m.report(P.APP_STATES, subject, f"reported {prev} -> {new}, not an edge of the "
                 "application lifecycle")
    if (prev, new) == ("Accepted", "Running"):
        app.ran = True
    elif new == "Accepted":
        app.ran = False
    real_now = any(a.application_id == app.id and not a.placeholder for a in call.new)
    recovered = _recovered(call, app.id)
    recovered_real = any(not a.placeholder for a in recovered)
    held = rv.allocs_of(app.id)
    if new == "Running" and prev == "Accepted" and not (real_now or recovered_real):
        m.report(P.APP_STATES, subject, "Running without a real allocation")
    if new == "Running" and prev == "Completing" and not (
            real_now or recovered_real
            or any(k.application_id == app.id for k in call.asks_sent)):
        m.report(P.APP_STATES, subject, "Completing -> Running without a new ask or allocation")
    if new == "Completing" and (rv.pending_asks(app.id) or any(not a.placeholder for a in held)):
        m.report(P.APP_STATES, subject, "Completing while asks are pending or real "
                 "allocations run")
    if new == "Completed" and (held or now < app.state_since + COMPLETING_TIMEOUT):
        m.report(P.APP_STATES, subject, f"Completed after {now - app.state_since:g} s of "
                 f"Completing, holding {len(held)} allocations")
    if new == "Failed" and held:
        m.report(P.APP_STATES, subject, f"Failed while holding {len(held)} allocations")
    if new in ("Failing", "Resuming") and (
            app.placeholder_start is None
            or now < app.placeholder_start + app.placeholder_timeout):
        m.report(P.APP_STATES, subject, f"{new} before its placeholder timeout")
    # 002 AddApplicationRequest.gangSchedulingStyle: a Hard gang fails after the timeout,
    # a Soft one is scheduled as a normal application (the style the shim sent, not the
    # core's record of it).
    if new == "Failing" and app.style != "Hard":
        m.report(P.APP_STATES, subject, f"Failing after its placeholder timeout, but its gang "
                 f"style is {app.style}: only a Hard gang fails")
    if new == "Resuming" and app.style != "Soft":
        m.report(P.APP_STATES, subject, f"Resuming after its placeholder timeout, but its "
                 f"gang style is {app.style}: a Hard gang fails")
    if new == "Expired" and now < app.state_since + RETENTION:
        m.report(P.APP_STATES, subject, "expired before its retention")
    if new == "Accepted" and prev == "Resuming":
        app.placeholder_start = None
        if any(a.placeholder for a in held):
            m.report(P.APP_STATES, subject, "Resuming -> Accepted with placeholders running")
    if new == "Accepted":
        app.placeholder_fired = False
    app.state = new
    app.state_since = now
    if new in ("Completed", "Failed", "Rejected"):
        rv.finished[app.id] = now
        for key in [k for k in rv.asks if k[0] == app.id]:
            del rv.asks[key]
    if new == "Expired":
        rv.finished.pop(app.id, None)
        if rv.apps.get(app.id) is app:
            del rv.apps[app.id]


def _recovered(call: Call, app_id: str) -> list[si.Allocation]:
    """Allocations of the application this call's node registrations recover."""
    if call.today is not None:
        return [si.Allocation.model_construct(
            allocation_key=b.pod.allocation_key, application_id=b.pod.application_id,
            node_id=b.pod.node_id, placeholder=b.pod.placeholder)
                for b in call.today.bound.values()
                if b.good and b.pod.application_id == app_id]
    if call.step.call != "update_node":
        return []
    return [a for n in call.step.request.nodes if n.action == si.NodeAction.CREATE
            and n.node_id in call.accepted_nodes
            for a in n.existing_allocations if a.application_id == app_id]


def gang_timeout_response(m: Monitor, rv: RMView, call: Call) -> None:
    """``001`` "Cleanup": one response carries the state change and every TIMEOUT release."""
    for u in call.updates:
        if u.state not in ("Failing", "Resuming"):
            continue
        unreleased = [a.uuid for a in rv.allocs_of(u.application_id)
                      if a.placeholder and a.releasing is None]
        asks = [k.key for k in rv.pending_placeholders(u.application_id)]
        if unreleased or asks:
            m.report(P.TIMERS, f"application {u.application_id}",
                     f"{u.state} reported without releasing placeholders {unreleased} and "
                     f"placeholder asks {asks} in the same response")


def _armed(rv: RMView) -> Iterator[tuple[str, Any, float]]:
    """The timers the shim expects, read from what it sent and saw, each as ``(kind,
    target, when it falls due)``: the allocation, the application, or the id of a finished
    one."""
    for a in rv.allocs.values():
        if a.timeout_ms > 0 and not a.recovered and a.releasing is None:
            yield "execution", a, a.created + a.timeout_ms / 1000
    for app in rv.apps.values():
        if app.gang and app.placeholder_start is not None and not app.placeholder_fired:
            yield "placeholder", app, app.placeholder_start + app.placeholder_timeout
        if app.state == "Completing":
            yield "completing", app, app.state_since + COMPLETING_TIMEOUT
    for app_id, since in rv.finished.items():
        yield "retention", app_id, since + RETENTION


def expected_due(rv: RMView) -> list[float]:
    """When the timers :func:`timers` holds the core to fall due (the explorer's clock stops
    at each, so a core that set a timer late, or never, is seen when it should have acted)."""
    return [due for _kind, _target, due in _armed(rv)]


def timers(m: Monitor, rv: RMView, call: Call) -> None:
    """After ``schedule()``: everything due at the clock's time has fired."""
    for kind, target, due in _armed(rv):
        if call.now < due:
            continue
        if kind == "execution":
            m.report(P.TIMERS, f"allocation {target.uuid}",
                     f"past its execution timeout ({target.timeout_ms} ms) and not released")
        elif kind == "placeholder":
            target.placeholder_fired = True
            subject = f"application {target.id}"
            if target.state == "Accepted":
                m.report(P.TIMERS, subject, "past its placeholder timeout and still Accepted")
            elif target.state == "Running" and any(
                    a.placeholder and a.releasing is None for a in rv.allocs_of(target.id)):
                m.report(P.TIMERS, subject, "past its placeholder timeout with placeholders "
                         "not released")
        elif kind == "completing":
            subject = f"application {target.id}"
            held = rv.allocs_of(target.id)
            if not held:
                m.report(P.TIMERS, subject, "Completing for 30 s, holding nothing, not "
                         "Completed")
            elif any(a.releasing is None for a in held):
                m.report(P.TIMERS, subject, "Completing for 30 s with placeholders not released")
        else:
            done = rv.apps.get(target)
            if done is None or m.core_partition(rv.rm_id, done.partition) is None:
                continue  # its partition was removed by a reload, and it with it
            m.report(P.TIMERS, f"application {target}", "terminated longer than the retention "
                     "and not expired")
