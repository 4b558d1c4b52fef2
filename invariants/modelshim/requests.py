"""Judging the shim's requests: what each must do, noted before the core runs it, then checked.

The monitor (``invariants/modelshim/monitor.py``) calls a ``begin_*`` function before
the core runs an application, node or allocation request: it applies the
request to what the shim knows (``invariants/readings/shim.py``) and notes in the call
(``invariants/readings/calls.py``) what the SI then requires: the admission the
checker's own reading decides, the rejections the shim can foresee, the
confirmations owed. The ``end_*`` function judges the answers once the call
returns, and undoes what a rejection took back.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from typing import Any

from invariants.modelshim.configured import created_settings, queue_lookup
from invariants.properties import limits
from invariants.properties import protocol as P
from invariants.readings import acl_placement, model
from invariants.readings import arithmetic as qty
from invariants.readings.calls import Call, Monitor
from invariants.readings.shim import (
    REQUIRED_NODE,
    AllocView,
    AppView,
    AskView,
    Kept,
    RMView,
)
from scheduler import si

TT = si.TerminationType


NA = si.NodeAction


RM_STARTED = (TT.STOPPED_BY_RM, TT.UNKNOWN_TERMINATION_TYPE)
"""The types of a release the RM starts (an unset type is one): confirmed STOPPED_BY_RM."""


NODE_PARTITION = "si/node-partition"
"""The node attribute naming the partition a node registers in (empty: ``default``)."""


def begin_apps(m: Monitor, rv: RMView, call: Call, req: si.ApplicationRequest) -> None:
    """Decide each new application's admission by the checker's own reading; a removal ends
    the application's allocations, which the core must confirm."""
    overlays: dict[str, dict[str, bool]] = {}
    retagged: dict[str, dict[str, dict[str, int] | None]] = {}
    taken = {a for a, v in rv.apps.items() if v.live}
    for add in req.new:
        overlay = overlays.setdefault(add.partition_name, {})
        tagged_now = retagged.setdefault(add.partition_name, {})
        placed, why = _admission(m, rv, call.rm_id, add, overlay, tagged_now, taken)
        call.new_apps.append((add, placed, why))
        if placed is not None:
            taken.add(add.application_id)
            for i, path in enumerate(placed.create):
                overlay[path] = i == len(placed.create) - 1
            quota = model.namespace_quota(add.tags)
            pm = rv.config.partition(add.partition_name)
            if quota.sets_resources and pm is not None and placed.path not in pm.queues \
                    and placed.path != acl_placement.RECOVERY_QUEUE:
                # Its tags replaced the unmanaged leaf's max for the applications after it.
                tagged_now[placed.path] = dict(quota.max) if quota.max is not None else None
    for remove in req.remove:
        if remove.application_id in rv.apps \
                and held_by(rv, remove.application_id, remove.partition_name):
            call.removed_apps.append(remove.application_id)
            for a in rv.allocs_of(remove.application_id):
                call.confirm_expected[a.uuid] += 1
                call.gone[a.uuid] = rv.allocs.pop(a.uuid)


def _admission(m: Monitor, rv: RMView, rm_id: str, add: si.AddApplicationRequest,
               overlay: dict[str, bool], retagged: Mapping[str, dict[str, int] | None],
               taken: set[str]) -> tuple[acl_placement.Placed | None, str]:
    """The checker's own admission decision: where the application goes, or why not."""
    if add.application_id in taken:
        return None, "duplicate"
    if not add.ugi.user.strip():
        return None, "empty user"
    if add.execution_timeout_milli_seconds < 0:
        return None, "negative execution timeout"
    pm = rv.config.partition(add.partition_name)
    core = m.core_partition(rm_id, add.partition_name)
    if pm is None or core is None:
        return None, "no such partition"
    if core.state != "Active":
        return None, "partition not active"
    lookup = queue_lookup(m, rm_id, add.partition_name, overlay)
    user, groups = add.ugi.user, list(add.ugi.groups)

    made = rv.created.get(add.partition_name or "default", {})

    def draining(anchor: str) -> bool:
        # Read from the configuration's history, not the core's queue states: a queue
        # drains when a reload removed it (configured once, not now), or one above it.
        return any(prefix in core.queues and prefix not in pm.queues and prefix not in made
                   for prefix in model.path_prefixes(anchor))

    def may(placed: acl_placement.Placed) -> bool:
        # A draining leaf, or one the user may not submit to, fails the rule; queues to
        # create below a draining queue do not (they are rejected below), else the submit
        # ACL of their nearest existing ancestor decides.
        anchor = placed.anchor
        if draining(anchor):
            return bool(placed.create)
        return acl_placement.may_submit(pm.chain(anchor), user, groups)

    placed = acl_placement.place(pm.rules, add.queue_name, user, groups, add.tags, lookup, may)
    if placed is None:
        return None, "placement"
    anchor = placed.anchor
    if placed.create and lookup(anchor):
        return None, "create below a leaf"
    if draining(anchor):
        return None, "queue not active"
    style = add.gang_scheduling_style or "Soft"
    if style not in ("Hard", "Soft"):
        return None, "gang style"
    ph = add.placeholder_ask.as_dict() if add.placeholder_ask else {}
    if qty.positive(ph) and not model.force_created(add.tags):
        policy, maxes = _gang_rules(pm, core, anchor, placed, made, add.tags, retagged)
        if policy == "fair":
            return None, "gang in a fair queue"
        if any(not qty.within(ph, mx) for mx in maxes):
            return None, "gang over a max"
    return placed, ""


def _gang_rules(pm: model.PartitionModel, core: Any, anchor: str, placed: acl_placement.Placed,
                made: dict[str, model.Created], tags: Mapping[str, str],
                retagged: Mapping[str, dict[str, int] | None]
                ) -> tuple[str, list[dict[str, int]]]:
    """The sort policy and the maxes a gang is admitted against (created leaf included:
    when the application's namespace tags give a max or a guarantee and its leaf is
    unmanaged, the tags' max is the leaf's, as YuniKorn sets them before its gang check;
    ``retagged``: the leaf maxes earlier applications of the same request set so)."""
    quota = model.namespace_quota(tags)
    unmanaged = placed.path != acl_placement.RECOVERY_QUEUE and placed.path not in pm.queues and (
        bool(placed.create) or placed.path in made or core.queues.get(placed.path) is None)
    tag_max: Mapping[str, int] | None = None
    if unmanaged and quota.sets_resources:
        tagged, tag_max = True, quota.max
    elif unmanaged and placed.path in retagged:
        tagged, tag_max = True, retagged[placed.path]
    else:
        tagged = False
    parts = anchor.split(".")
    maxes = []
    for depth in range(len(parts), 0, -1):
        path = ".".join(parts[:depth])
        q = core.queues.get(path)
        if q is not None and q.max and not (tagged and path == placed.path):
            maxes.append(dict(q.max))
    if tag_max is not None:
        maxes.append(dict(tag_max))

    def held(path: str) -> bool:
        return path in pm.queues or core.queues.get(path) is not None

    def nearest_held(path: str) -> str:
        # Queues created by an earlier application of this same request are not held yet:
        # they have what the nearest held queue above them has.
        while not held(path) and "." in path:
            path = path.rsplit(".", 1)[0]
        return path

    def props_of(path: str) -> dict[str, str]:
        # The shim's record of a created queue, not the core's copy, says what it has.
        configured, record = pm.queues.get(path), made.get(path)
        if configured is not None:
            return dict(configured.properties)
        if record is not None:
            return record.properties
        queue = core.queues.get(path)
        return dict(queue.properties) if queue is not None else {}

    # A leaf created now below the anchor (directly, or below parents created with it), or
    # created by an earlier application of this same request, gets the template the nearest
    # held queue above it hands down (created parents inherit it: YUNIKORN-193,
    # YUNIKORN-814) and nothing of its parent's properties (YUNIKORN-809).
    if placed.create:
        creator: str | None = anchor
    elif not held(anchor):
        creator = anchor.rsplit(".", 1)[0]
    else:
        creator = None
    if creator is None:
        return model.policy_of(props_of(anchor)), maxes
    template = model.handed_down(pm, made, nearest_held(creator))
    if template is None:
        return model.policy_of({}), maxes
    if template.max and not tagged:
        maxes.append(dict(template.max))
    return model.policy_of(template.properties), maxes


def settle_created(m: Monitor, rv: RMView, call: Call) -> None:
    """The queues the call's applications created or entered have what the shim's records
    say, judged once every application of the call entered (a later one's tags win)."""
    for partition, paths in call.settle:
        core = m.core_partition(call.rm_id, partition)
        if core is not None:
            created_settings(m, core, rv.created.get(partition or "default", {}), paths)


def end_apps(m: Monitor, rv: RMView, call: Call) -> None:
    """Each new application answered once, as the admission reading says; removed ones forgotten."""
    answers_per_id = Counter(add.application_id for add, _p, _w in call.new_apps)
    for add, placed, why in call.new_apps:
        app_id = add.application_id
        n = call.app_answers[app_id]
        if n != answers_per_id[app_id]:
            m.report(P.ANSWERED, f"application {app_id}",
                     f"answered {n} times in the call that added it")
        accepted = app_id in call.accepted_apps
        if placed is None and accepted:
            m.report(P.ADMISSION, f"application {app_id}",
                     f"accepted, but the checker's reading says reject ({why})")
        elif placed is not None and not accepted:
            m.report(P.ADMISSION, f"application {app_id}",
                     f"rejected, but the checker's reading accepts it into "
                     f"{placed.path}")
    for app_id in call.removed_apps:
        rv.apps.pop(app_id, None)
        rv.finished.pop(app_id, None)
        for k in [k for k in rv.asks if k[0] == app_id]:
            del rv.asks[k]


def accepted(m: Monitor, rv: RMView, call: Call, add: si.AddApplicationRequest,
             placed: acl_placement.Placed | None) -> None:
    """The shim now runs the application, in the queue the checker's placement reading names."""
    app_id = add.application_id
    ph = add.placeholder_ask.as_dict() if add.placeholder_ask else {}
    timeout = add.execution_timeout_milli_seconds
    path = placed.path if placed is not None else acl_placement.qualify(add.queue_name)
    part = rv.config.partition(add.partition_name)
    rv.apps[app_id] = AppView(
        app_id, add.partition_name or "default", Kept(add), path,
        gang=qty.positive(ph), style=add.gang_scheduling_style or "Soft",
        placeholder_timeout=timeout / 1000.0 if timeout > 0 else 15 * 60.0,
        state_since=call.now, accepted_at=call.now, fifo_since=call.now,
        group=limits.group_for(part.chain(path), add.ugi.groups) if part else "",
        placed=placed)
    rv.finished.pop(app_id, None)
    for k in [k for k in rv.asks if k[0] == app_id]:
        del rv.asks[k]
    made = rv.created.setdefault(add.partition_name or "default", {})
    if placed is not None and placed.create and part is not None:
        for i, created in enumerate(placed.create):
            made[created] = model.created_record(part, created, i == len(placed.create) - 1,
                                                 made)
    settle = list(placed.create) if placed is not None else []
    record = made.get(path) if placed is not None else None
    if record is not None and record.leaf and path != acl_placement.RECOVERY_QUEUE:
        # YuniKorn (partition.go AddApplication): an application entering an unmanaged
        # leaf sets its namespace tags on it, every time one enters.
        made[path] = record.entered(model.namespace_quota(add.tags))
        settle.append(path)
    if settle:
        call.settle.append((add.partition_name, tuple(dict.fromkeys(settle))))
    core = m.core_partition(call.rm_id, add.partition_name)
    app = core.apps.get(app_id) if core is not None else None
    if placed is not None and (app is None or app.queue is None
                               or app.queue.path != placed.path):
        where = None if app is None or app.queue is None else app.queue.path
        m.report(P.ADMISSION, f"application {app_id}",
                 f"accepted into {where}, the checker's placement reading says "
                 f"{placed.path}")


def begin_allocation(rv: RMView, call: Call, req: si.AllocationRequest) -> None:
    """Apply what the request does to the shim's knowledge before the core answers."""
    for ask in req.asks:
        # In order, each against what the asks before it left: a key sent twice is an
        # update of the first (003 "ask add"; YuniKorn's processAllocations loop).
        call.asks_sent.append(ask)
        key = (ask.application_id, ask.allocation_key)
        sends = call.ask_sends.setdefault(key, [])
        app = rv.apps.get(ask.application_id)
        old = rv.asks.get(key)
        if app is None or not app.live or app.state == "Failing" \
                or not held_by(rv, ask.application_id, ask.partition_name) \
                or not qty.positive(ask.resource_ask.as_dict()) \
                or ask.execution_timeout_milli_seconds < 0:
            call.must_reject_asks.append(key)
            sends.append(("reject", old, old))
            continue
        kept = old is not None and old.pending == 0 and _resent(old, ask)
        if kept:
            call.must_take_asks.append(key)
        elif _pending_overflows(rv, app.partition, ask, old) or _not_above(old, ask):
            call.must_reject_asks.append(key)
            sends.append(("reject", old, old))
            continue
        may_preempt, may_be_victim = _policy(ask.preemption_policy)
        rv.asks[key] = AskView(
            ask.application_id, ask.allocation_key, ask.resource_ask.as_dict(),
            ask.max_allocations, ask.placeholder and bool(ask.task_group_name),
            ask.task_group_name, ask.execution_timeout_milli_seconds,
            allocated=old.allocated if old is not None else 0, priority=ask.priority,
            sent=old.sent if kept and old is not None else call.now,
            may_preempt=may_preempt, may_be_victim=may_be_victim,
            required_node=ask.tags.get(REQUIRED_NODE, ""), originator=ask.originator,
            tags=dict(ask.tags), preempted=kept and old is not None and old.preempted)
        sends.append(("take" if kept else "update", old, rv.asks[key]))
    releases = req.releases
    if releases is None:
        return
    for ask_rel in releases.allocation_asks_to_release:
        for key in asks_released_by(rv, ask_rel):
            # The core forgets a released ask: the same key later is a new ask.
            call.ask_confirm_expected[key] += 1
            del rv.asks[key]
    for rel in releases.allocations_to_release:
        for a in released_by(rv, rel):
            if rel.termination_type in RM_STARTED:
                call.confirm_expected[a.uuid] += 1
                call.gone[a.uuid] = rv.allocs.pop(a.uuid)
            elif a.releasing == rel.termination_type:
                call.shim_confirmed[a.uuid] = rv.allocs.pop(a.uuid)
            else:
                # The RM ends it with a type only the core starts: gone, answered with
                # nothing (YuniKorn's removeAllocation; 001 "For releases initiated by the
                # core no such confirmation message can or must be sent").
                call.gone[a.uuid] = rv.allocs.pop(a.uuid)


def asks_released_by(rv: RMView, rel: si.AllocationAskRelease) -> list[tuple[str, str]]:
    """The asks one ``AllocationAskRelease`` ends, by the shim's records: the RM's
    (``STOPPED_BY_RM``) release of the ask it names, or of every ask of the application
    when it names none, in the partition that holds the application."""
    if rel.termination_type != TT.STOPPED_BY_RM \
            or not held_by(rv, rel.application_id, rel.partition_name):
        return []
    return [k for k in rv.asks if k[0] == rel.application_id
            and (not rel.allocation_key or k[1] == rel.allocation_key)]


def released_by(rv: RMView, rel: si.AllocationRelease) -> list[AllocView]:
    """What one ``AllocationRelease`` ends, by the shim's records, whatever its type: the
    allocation it names, or every allocation of the application when it names none (the
    shim's confirmation of a release the core started with that type, or the RM ending
    it, as YuniKorn's removeAllocation). The application named, if any, and the partition
    named must hold it."""
    if rel.uuid:
        targets = [rv.allocs[rel.uuid]] if rel.uuid in rv.allocs else []
    else:
        targets = rv.allocs_of(rel.application_id)
    return [a for a in targets if (not rel.application_id or a.app == rel.application_id)
            and held_by(rv, a.app, rel.partition_name, unknown=True)]


def held_by(rv: RMView, app_id: str, partition: str, unknown: bool = False) -> bool:
    """Whether the partition a request names (empty: ``default``) holds the application:
    the core looks for an ask, an ask release or a release in that partition only, so one
    naming another partition is refused or ignored. ``unknown``: what to say of an
    application the shim no longer knows."""
    app = rv.apps.get(app_id)
    return unknown if app is None else app.partition == (partition or "default")


def _pending_overflows(rv: RMView, partition: str, ask: si.AllocationAsk,
                       old: AskView | None) -> bool:
    """Whether the partition's pending total would pass int64 with this ask."""
    pending = qty.total(qty.times(k.resource, k.pending) for k in rv.asks.values()
                        if rv.apps.get(k.app) is not None and rv.apps[k.app].partition
                        == partition and k is not old)
    repeats = ask.max_allocations - (old.allocated if old is not None else 0)
    wanted = qty.plus(pending, qty.times(ask.resource_ask.as_dict(), max(0, repeats)))
    return any(v > qty.INT64_MAX for v in wanted.values())


def _same_ask(old: AskView, ask: si.AllocationAsk) -> bool:
    """Every field the core compares to tell a re-send from an update is as the shim last
    sent it."""
    return (qty.same(old.resource, ask.resource_ask.as_dict())
            and old.max_allocations == ask.max_allocations
            and old.placeholder == (ask.placeholder and bool(ask.task_group_name))
            and old.task_group == ask.task_group_name
            and old.timeout_ms == ask.execution_timeout_milli_seconds
            and old.priority == ask.priority and old.tags == dict(ask.tags)
            and old.originator == ask.originator
            and (old.may_preempt, old.may_be_victim) == _policy(ask.preemption_policy))


def _resent(old: AskView, ask: si.AllocationAsk) -> bool:
    """The shim sends again, unchanged, an ask it already holds (an informer resync; only
    a plain pod: no tags, not an originator)."""
    return (not old.recovered and not ask.tags and not ask.originator
            and _same_ask(old, ask))


def _not_above(old: AskView | None, ask: si.AllocationAsk) -> bool:
    """An update whose ``maxAllocations`` does not exceed the repeats already allocated
    (``docs/design-notes.md`` "Ask updates": rejected, the old ask kept). Only where the
    core can not take it for an unchanged re-send: the old ask still had repeats pending,
    or a field the core compares differs."""
    if old is None or old.recovered or ask.max_allocations > old.allocated:
        return False
    return old.pending > 0 or not _same_ask(old, ask)


def _policy(policy: si.PreemptionPolicy | None) -> tuple[bool, bool]:
    """(allowPreemptOther, allowPreemptSelf); absent: may not preempt, may be a victim."""
    return (False, True) if policy is None else (policy.allow_preempt_other,
                                                 policy.allow_preempt_self)


def end_allocation(m: Monitor, rv: RMView, call: Call, req: si.AllocationRequest) -> None:
    """Asks the shim knows are invalid rejected; a rejected ask leaves the one before it in
    place (the previous request's, or an earlier ask of the same key in this one)."""
    for key, sends in call.ask_sends.items():
        rejected = call.rejected_asks.count(key)
        forced = sum(verdict == "reject" for verdict, _, _ in sends)
        updates = [(before, after) for verdict, before, after in sends if verdict == "update"]
        if rejected < forced:
            m.report(P.EXPECTED_REJECTION, f"ask {key[0]}/{key[1]}",
                     "an ask the shim knows is invalid was not rejected")
        elif rejected > forced + len(updates) and key in call.must_take_asks:
            m.report(P.EXPECTED_REJECTION, f"ask {key[0]}/{key[1]}",
                     "an unchanged re-send of a fully allocated ask was rejected (a shim "
                     "failing the task on it would kill a running pod)")
        refused = min(max(0, rejected - forced), len(updates))
        taken = rv.asks.get(key)
        owner = rv.apps.get(key[0])
        if rejected == 0 and taken is not None and owner is not None:
            owner.created(taken.tags)  # a creationTime tag moves its submission back
        if refused == 0:
            continue
        state = updates[0][0] if refused == len(updates) else _refused_among(
            m, rv, key, updates)
        if state is None:
            rv.asks.pop(key, None)
        else:
            rv.asks[key] = state


def _refused_among(m: Monitor, rv: RMView, key: tuple[str, str],
                   updates: list[tuple[Any, Any]]) -> Any:
    """Some, not all, updates of one key in one request were refused for a reason the shim
    can not foresee (a placeholder past its gang's ``placeholderAsk``): which ones, the
    answers do not say (a refusal names the key only). The ask left is the last update
    taken, or the one before them all; the core's ask picks among those candidates only
    (naming, as the bridge names allocations): what it may be is the traffic's."""
    app = rv.apps.get(key[0])
    core = m.core_partition(rv.rm_id, app.partition if app is not None else "default")
    held = core.apps.get(key[0]) if core is not None else None
    ask = held.asks.get(key[1]) if held is not None else None
    candidates = [after for _, after in reversed(updates)] + [updates[0][0]]
    if ask is None:
        return candidates[-1]
    for state in candidates:
        if state is not None and qty.same(ask.resource, state.resource) \
                and ask.max_allocations == state.max_allocations \
                and ask.priority == state.priority:
            return state
    return candidates[0]
