"""The ``sometimes`` goals: situations the checker must reach, each detected from the
traffic and the transitions of one step (``coverage.StepRecord``). They register on import
(``modelshim/bridge.py``, which declares the goals of today's SI, imports them first)."""

from __future__ import annotations

from invariants.properties.coverage import TT, StepRecord, goal
from scheduler import si


def _confirmed(rec: StepRecord, ttype: si.TerminationType) -> list[si.AllocationRelease]:
    req = rec.step.request
    if rec.step.call != "update_allocation" or req.releases is None:
        return []
    return [r for r in req.releases.allocations_to_release if r.termination_type == ttype]


@goal("gang.replaced_on_same_node",
      "A placeholder was replaced: its release confirmed and the real ask allocated on its node.")
def _replaced_same(rec: StepRecord) -> bool:
    confirmed = _confirmed(rec, TT.PLACEHOLDER_REPLACED)
    nodes = {a.node.id for a in rec.moved("allocation", "Releasing", "Replaced")}
    return bool(confirmed) and any(a.node_id in nodes for a in rec.new())


@goal("gang.replaced_on_other_node",
      "A real ask replacing a placeholder fell back to another node.")
def _replaced_other(rec: StepRecord) -> bool:
    nodes = {a.node.id for a in rec.moved("allocation", "Releasing", "Replaced")}
    return bool(nodes) and any(not a.placeholder and a.task_group_name and a.node_id not in nodes
                               for a in rec.new())


@goal("gang.fallback_beside_confirmed_placeholder",
      "One request confirmed several placeholders of a task group, and a real ask whose own "
      "placeholder's node could not take it fell back onto the node of another placeholder "
      "confirmed with it.")
def _fallback_beside_confirmed(rec: StepRecord) -> bool:
    replaced = rec.moved("allocation", "Releasing", "Replaced")
    if len(replaced) < 2:
        return False
    home = {(ph.app.id, ph.replacing_key): ph.node.id for ph in replaced}
    group_nodes: dict[tuple[str, str], set[str]] = {}
    for ph in replaced:
        group_nodes.setdefault((ph.app.id, ph.task_group), set()).add(ph.node.id)
    return any(
        a.node_id != home.get((a.application_id, a.allocation_key), a.node_id)
        and a.node_id in group_nodes.get((a.application_id, a.task_group_name), ())
        for a in rec.new() if not a.placeholder)


@goal("gang.hard_failed", "A Hard gang timed out and ended Failed once its releases were "
      "confirmed.")
def _hard_failed(rec: StepRecord) -> bool:
    return bool(rec.moved("application", "Failing", "Failed"))


@goal("gang.failed_while_running",
      "A Running gang with placeholder asks pending timed out and failed (Running -> Failing).")
def _failed_running(rec: StepRecord) -> bool:
    return bool(rec.moved("application", "Running", "Failing"))


@goal("gang.soft_resumed", "A Soft gang timed out, resumed and was Accepted again.")
def _soft_resumed(rec: StepRecord) -> bool:
    return bool(rec.moved("application", "Resuming", "Accepted"))


@goal("gang.running_waits_on_placeholders",
      "A Running application left holding only placeholders went Completing "
      "(placeholders are not active allocations).")
def _waits_on_placeholders(rec: StepRecord) -> bool:
    return any(any(a.placeholder for a in o.allocations.values())
               for o in rec.moved("application", "Running", "Completing"))


@goal("gang.timeout_from_first_placeholder",
      "A gang whose placeholders were allocated at different times timed out, counted from "
      "the first of them.")
def _timeout_from_first(rec: StepRecord) -> bool:
    for app in rec.moved("application", "Accepted", "Failing") + rec.moved(
            "application", "Accepted", "Resuming"):
        times = [a.created for a in app.allocations.values() if a.placeholder]
        if len(times) > 1 and min(times) < max(times) and \
                app.state_since < max(times) + app.execution_timeout_ms / 1000:
            return True
    return False


@goal("gang.timeout_with_repeats_partly_placed",
      "A gang timed out while one of its placeholder asks had some of its repeats "
      "allocated and others pending.")
def _timeout_partly_placed(rec: StepRecord) -> bool:
    # At the timeout the pending repeats go as an ask release and the placed ones as
    # allocation releases of the same key, in one answer (the ask itself is gone by then).
    timeout = si.TerminationType.TIMEOUT
    for response in rec.of("update_allocation"):
        asks = {(r.application_id, r.allocation_key) for r in response.released_asks
                if r.termination_type == timeout}
        if any((r.application_id, r.allocation_key) in asks
               for r in response.released if r.termination_type == timeout):
            return True
    return False


@goal("gang.replacement_node_lost",
      "A placeholder's node was drained or removed while its replacement waited for the "
      "shim's confirmation; the confirmation then placed the real ask elsewhere or left it "
      "pending.")
def _replacement_node_lost(rec: StepRecord) -> bool:
    return any(a.node.state != "Schedulable"
               for a in rec.moved("allocation", "Releasing", "Replaced"))


@goal("gang.completed_after_leftover_placeholders",
      "An application completed after its leftover placeholders were released and confirmed.")
def _completed_leftovers(rec: StepRecord) -> bool:
    return bool(rec.moved("application", "Completing", "Completed")) and bool(
        _confirmed(rec, TT.TIMEOUT))


@goal("gang.incompatible_placeholder",
      "A placeholder smaller than its real ask was released with TIMEOUT.")
def _incompatible(rec: StepRecord) -> bool:
    return any(r.termination_type == TT.TIMEOUT and "larger than the placeholder" in r.message
               for r in rec.released())


@goal("gang.recovered_placeholder",
      "An RM re-registered and recovered placeholders on its nodes.")
def _recovered_placeholder(rec: StepRecord) -> bool:
    req = rec.step.request
    return rec.step.call == "update_node" and any(
        a.placeholder for n in req.nodes for a in n.existing_allocations) and bool(
        [m for r in rec.of("update_node") for m in r.accepted])


@goal("recovery.repeated_uuid_refused",
      "A node registration that reported one recovered uuid twice was rejected.")
def _repeated_uuid(rec: StepRecord) -> bool:
    req = rec.step.request
    if rec.step.call != "update_node":
        return False
    rejected = {r.node_id for resp in rec.of("update_node") for r in resp.rejected}
    seen: set[str] = set()
    for n in req.nodes:
        uuids = [a.uuid for a in n.existing_allocations]
        if n.node_id in rejected and (seen.intersection(uuids) or len(set(uuids)) < len(uuids)):
            return True
        seen.update(uuids)
    return False


@goal("reservation.honoured", "An ask reserved a node and was later allocated on it.")
def _reservation_honoured(rec: StepRecord) -> bool:
    return bool(rec.state.get("honoured"))


@goal("reservation.handed_over", "In one cycle an ask that held a reservation was placed on "
      "another node, and a later ask of the same cycle on the node it had held.")
def _reservation_handed_over(rec: StepRecord) -> bool:
    return bool(rec.state.get("handed_over"))


@goal("reservation.made", "An ask that fit no node's free room reserved a node.")
def _reservation_made(rec: StepRecord) -> bool:
    return bool(rec.states(si.SchedulingState.RESERVED))


@goal("reservation.shared", "After a cycle, two or more required-node asks held "
      "reservations of one node (YuniKorn's node.go Reserve keeps several).")
def _reservation_shared(rec: StepRecord) -> bool:
    return bool(rec.state.get("reservations_shared"))


@goal("reservation.waiting", "An ask that could reserve a node was younger than the "
      "reservation delay and was reported waiting for it.")
def _reservation_waiting(rec: StepRecord) -> bool:
    return bool(rec.state.get("waiting"))


@goal("reservation.waited", "An ask reported waiting for its reservation delay reserved a "
      "node once the delay was past.")
def _reservation_waited(rec: StepRecord) -> bool:
    return bool(rec.state.get("waited"))


@goal("waiting.told", "An ask no node had room for, within its queue's and its user's "
      "headroom, was told FAILED once: it waits for the cluster to grow.")
def _waiting_told(rec: StepRecord) -> bool:
    return any(s.reason.startswith("waiting for cluster resources")
               for s in rec.states(si.SchedulingState.FAILED))


@goal("quota.skipped", "An ask was skipped because a queue on its path was at its max.")
def _quota_skipped(rec: StepRecord) -> bool:
    return any("quota" in s.reason for s in rec.states(si.SchedulingState.SKIPPED))


@goal("quota.maxapplications_held",
      "An application was held back by maxapplications on its queue path.")
def _maxapps(rec: StepRecord) -> bool:
    return any("maxapplications" in s.reason for s in rec.states(si.SchedulingState.SKIPPED))


@goal("limits.ask_held", "An ask waited because one more repeat would take its user or "
      "group past a maxresources limit on its path.")
def _limit_room(rec: StepRecord) -> bool:
    return any("would exceed its limit" in s.reason
               for s in rec.states(si.SchedulingState.SKIPPED))


@goal("limits.app_held", "An application waited because its user or group already ran "
      "as many applications as a limit on its path allows.")
def _limit_apps(rec: StepRecord) -> bool:
    return any("application(s) on" in s.reason and s.reason.endswith("its limit")
               for s in rec.states(si.SchedulingState.SKIPPED))


LIMIT_HOLDERS = (
    ("named_user", "a limit naming its user"),
    ("wildcard_user", "the wildcard user limit (`*`) applying to its user"),
    ("named_group", "a limit naming the group its user is tracked in"),
    ("wildcard_group", "the wildcard group limit (`*`) its user is tracked in"),
    ("on_root", "a user or group limit on root"),
    ("on_parent", "a user or group limit on a parent queue of its leaf"),
    ("on_leaf", "a user or group limit on its leaf"),
)
"""The limits that hold an ask or an application back, by whom they name and where
(``modelshim/step_coverage.py``): one goal each, ``limits.held_by_<label>``."""


def _limit_goals() -> None:
    for label, who in LIMIT_HOLDERS:
        def detect(rec: StepRecord, label: str = label) -> bool:
            return label in rec.state.get("limit_held", ())

        goal(f"limits.held_by_{label}", f"An ask or an application waited because of {who}.")(
            detect)


_limit_goals()


@goal("quota.held_app_started", "An application held back by maxapplications (of a queue, "
      "a user or a group) later started.")
def _held_app_started(rec: StepRecord) -> bool:
    return bool(rec.state.get("held_app_started"))


@goal("limits.held_ask_allocated", "An ask skipped because its user's or group's limit left "
      "no room was later allocated (a release or a reload made room).")
def _held_ask_allocated(rec: StepRecord) -> bool:
    return bool(rec.state.get("held_ask_allocated"))


@goal("limits.reserved_app_held", "After a cycle, an application that had not started "
      "still waited on the node it reserved, which had room for it by then, because another "
      "application of its user or group took the only slot its maxapplications allows.")
def _reserved_slot_held(rec: StepRecord) -> bool:
    return bool(rec.state.get("reserved_slot_held"))


@goal("priority.fence_decided", "In one cycle an allocation below a priority-fenced queue and "
      "one below its sibling went against their asks' priorities: the fence's offset decided.")
def _fence_decided(rec: StepRecord) -> bool:
    return bool(rec.state.get("fence_decided"))


@goal("priority.offset_decided", "In one cycle an allocation below a queue with a "
      "priority.offset and one below its sibling went against their asks' priorities: the "
      "offset decided.")
def _offset_decided(rec: StepRecord) -> bool:
    return bool(rec.state.get("offset_decided"))


@goal("sorting.fair_decided", "A cycle served one application of a fair leaf while another "
      "of the same leaf and priority waited with an ask no larger: the usage order decided.")
def _fair_decided(rec: StepRecord) -> bool:
    return bool(rec.state.get("fair_decided"))


@goal("sorting.fifo_by_creation", "A cycle served an application of a fifo leaf that a "
      "creationTime tag moved before another of the same leaf and priority, submitted earlier "
      "and waiting with an ask no larger.")
def _fifo_by_creation(rec: StepRecord) -> bool:
    return bool(rec.state.get("fifo_by_creation"))


@goal("scheduling.backed_off", "A cycle backed an application off: as many of its asks as "
      "its leaf's application.unschedasks.backoff found no node, and another followed.")
def _backed_off(rec: StepRecord) -> bool:
    return bool(rec.state.get("backed_off"))


@goal("scheduling.backoff_ended", "An application whose backoff had ended got an allocation.")
def _backoff_ended(rec: StepRecord) -> bool:
    return bool(rec.state.get("backoff_ended"))


@goal("sorting.stateaware_held", "After a cycle, an Accepted application of a stateaware leaf "
      "waited with a pending ask while another application of the leaf was starting.")
def _stateaware_held(rec: StepRecord) -> bool:
    return bool(rec.state.get("stateaware_held"))


@goal("sorting.binpacking_decided", "A binpacking partition placed a pod on one node while "
      "another schedulable node had room for it: the node order decided.")
def _binpacking_decided(rec: StepRecord) -> bool:
    return bool(rec.state.get("binpacking_decided"))


@goal("preemption.completed", "A general preemption completed: victims released "
      "PREEMPTED_BY_SCHEDULER, confirmed, and the ask that preempted allocated.")
def _preempted(rec: StepRecord) -> bool:
    return bool(rec.state.get("preempted_for"))


@goal("preemption.quota", "A reload lowered a queue's max below its usage with quota "
      "preemption on, and once its quota.preemption.delay passed the core released victims "
      "of its subtree PREEMPTED_BY_SCHEDULER to enforce the new max.")
def _quota_preempted(rec: StepRecord) -> bool:
    return any(r.termination_type == TT.PREEMPTED_BY_SCHEDULER
               and r.message.startswith(QUOTA_MESSAGE) for r in rec.released())


QUOTA_MESSAGE = "preempting allocations to enforce new max quota for queue : "


@goal("preemption.required_node", "A required-node preemption completed: the ask that "
      "must run on one node was allocated there after its victims left.")
def _preempted_required(rec: StepRecord) -> bool:
    return bool(rec.state.get("preempted_required"))


@goal("preemption.refused_guarantee", "A preemption was refused because the victim queue "
      "would drop below its guarantee: after a cycle that preempted nothing, an ask that met "
      "every trigger condition (allowPreemptOther, past its delay, its leaf within its "
      "guarantee with it, no node with room) had victim candidates, each of which would "
      "leave its leaf below its guarantee.")
def _refused_guarantee(rec: StepRecord) -> bool:
    return bool(rec.state.get("refused_guarantee"))


@goal("preemption.spared_unshared", "A preemption released its victims from a node where "
      "a pod holding none of the ask's resource types kept running (it frees nothing the "
      "ask can use).")
def _spared_unshared(rec: StepRecord) -> bool:
    return bool(rec.state.get("spared_unshared"))


@goal("preemption.spared_fenced", "A preemption left running a pod of a leaf over its "
      "guarantee outside the ask's preemption fence.")
def _spared_fenced(rec: StepRecord) -> bool:
    return bool(rec.state.get("spared_fenced"))


@goal("preemption.spared_max_fenced", "A preemption left running a pod of a leaf over its "
      "guarantee outside a queue whose max the ask would exceed (YUNIKORN-3241), inside "
      "every preemption.policy fence.")
def _spared_max_fenced(rec: StepRecord) -> bool:
    return bool(rec.state.get("spared_max_fenced"))


@goal("preemption.spared_disabled", "A preemption left running a pod of a leaf over its "
      "guarantee whose preemption.policy is disabled.")
def _spared_disabled(rec: StepRecord) -> bool:
    return bool(rec.state.get("spared_disabled"))


@goal("preemption.spared_priority", "A preemption left running a pod of a leaf over its "
      "guarantee whose priority is above what the ask may preempt.")
def _spared_priority(rec: StepRecord) -> bool:
    return bool(rec.state.get("spared_priority"))


@goal("preemption.spared_older_twin", "A preemption released a victim while an older pod of "
      "the same application and size on its node kept running (newer victims go first).")
def _spared_older_twin(rec: StepRecord) -> bool:
    return bool(rec.state.get("spared_older_twin"))


@goal("preemption.created_victim", "A preemption took a victim from a leaf a placement "
      "rule created (its guarantee and preemption settings are its childtemplate's).")
def _created_victim(rec: StepRecord) -> bool:
    return bool(rec.state.get("created_victim"))


@goal("preemption.while_releasing", "A preemption released its victims while victims of "
      "an earlier one were still being released (not yet confirmed by the RM).")
def _preempted_while_releasing(rec: StepRecord) -> bool:
    return bool(rec.state.get("preempted_while_releasing"))


@goal("preemption.placeholder_victim", "A gang lost a placeholder to preemption and then "
      "had a real allocation.")
def _placeholder_victim(rec: StepRecord) -> bool:
    return bool(rec.state.get("placeholder_preempted_gang_ran"))


@goal("priority.higher_first", "In one cycle an application was served with an ask of a "
      "higher priority before another application's ask of a lower one.")
def _priority_first(rec: StepRecord) -> bool:
    new = [a for a in rec.new() if not a.placeholder]
    return any(a.priority > b.priority and a.application_id != b.application_id
               for i, a in enumerate(new) for b in new[i + 1:])


@goal("partition.removed_by_reload", "A reload removed a partition: it drained and stopped.")
def _partition_removed(rec: StepRecord) -> bool:
    return any(not hasattr(o, "path") for o in rec.moved("object", "Draining", "Stopped"))


@goal("queue.removed_by_reload", "A reload removed a queue: it drained and stopped once empty.")
def _queue_removed(rec: StepRecord) -> bool:
    return any(hasattr(o, "path") for o in rec.moved("object", "Draining", "Stopped"))


@goal("queue.removed_empty_by_reload", "A reload removed a queue holding nothing: it stayed "
      "Draining after the reload, for the periodic cleanup to remove (YuniKorn cleanQueues).")
def _removed_empty(rec: StepRecord) -> bool:
    return rec.step.call == "update_configuration" and any(
        hasattr(o, "path") and not o.apps and not o.children and o.state == "Draining"
        for o in rec.moved("object", "Active", "Draining"))


@goal("queue.cleaned_periodically", "The periodic cleanup removed a queue a reload drained, "
      "in a scheduling call after the queue emptied.")
def _cleaned(rec: StepRecord) -> bool:
    return rec.step.call == "schedule" and any(
        hasattr(o, "path") for o in rec.moved("object", "Draining", "Stopped"))


@goal("queue.namespace_quota", "An application's namespace quota tags set the limits of the "
      "leaf a placement rule created (YuniKorn AddApplication).")
def _namespace_quota(rec: StepRecord) -> bool:
    return bool(rec.state.get("namespace_quota"))


@goal("queue.namespace_quota_unread", "An application entered a leaf a placement rule "
      "created with namespace quota tags that read as unset (malformed, negative, zero, the "
      "legacy form): accepted, the leaf's limits unchanged.")
def _namespace_quota_unread(rec: StepRecord) -> bool:
    return bool(rec.state.get("namespace_quota_unread"))


@goal("queue.parent_removed_by_reload", "A reload removed a parent queue: it and the "
      "configured queues below it drained.")
def _parent_removed(rec: StepRecord) -> bool:
    return any(hasattr(o, "path") and not o.is_leaf
               for o in rec.moved("object", "Active", "Draining"))


@goal("queue.created_by_placement", "A placement rule created the queue it placed an "
      "application in.")
def _queue_created(rec: StepRecord) -> bool:
    return any(e.message.endswith("created by a placement rule")
               for batch in rec.of("send_event") for e in batch)


@goal("placement.later_rule", "An application was placed by a placement rule after an "
      "earlier rule found no queue for it (rules are tried in order).")
def _later_rule(rec: StepRecord) -> bool:
    return bool(rec.state.get("later_rule"))


@goal("placement.refused_then_placed", "A placement rule proposed a queue the application "
      "could not go to (its user may not submit there, or the leaf is draining), and a later "
      "rule or root.default placed it (YuniKorn PlaceApplication).")
def _refused_then_placed(rec: StepRecord) -> bool:
    return bool(rec.state.get("refused_then_placed"))


@goal("placement.default_queue", "No placement rule placed an application and root.default "
      "took it (YuniKorn PlaceApplication).")
def _default_queue(rec: StepRecord) -> bool:
    return bool(rec.state.get("default_queue"))


@goal("queue.template_inherited", "A leaf a placement rule created below a parent queue it "
      "also created took the childtemplate that parent inherited (YUNIKORN-193, YUNIKORN-814).")
def _template_inherited(rec: StepRecord) -> bool:
    return bool(rec.state.get("template_inherited"))


@goal("rm.resynced_after_pause", "An RM lost its connection, registered again and resynced.")
def _resynced(rec: StepRecord) -> bool:
    return rec.step.call == "register_resource_manager" and bool(
        rec.moved("rm", "Paused", "Stopped"))


@goal("node.decommissioned_with_allocations",
      "A node was decommissioned while allocations ran on it.")
def _decommissioned(rec: StepRecord) -> bool:
    return bool(rec.moved("node", "Schedulable", "Removed") or rec.moved(
        "node", "Draining", "Removed")) and any(
        r.termination_type == TT.STOPPED_BY_RM for r in rec.released())


@goal("node.draining_passed_over", "A cycle placed a pod elsewhere while a draining node "
      "of its partition had room for it.")
def _draining_passed_over(rec: StepRecord) -> bool:
    return bool(rec.state.get("draining_passed_over"))


@goal("app.completed", "An application completed after the completing timeout.")
def _completed(rec: StepRecord) -> bool:
    return bool(rec.moved("application", "Completing", "Completed"))


@goal("app.expired", "A terminated application expired after the retention period.")
def _expired(rec: StepRecord) -> bool:
    return any(rec.moved("application", s, "Expired") for s in ("Completed", "Failed",
                                                                 "Rejected"))


@goal("alloc.execution_timeout",
      "A real allocation passed its execution timeout and its TIMEOUT release was confirmed.")
def _exec_timeout(rec: StepRecord) -> bool:
    return any(not a.placeholder for a in rec.moved("allocation", "Releasing", "Expired"))


@goal("config.reload_refused", "A reload the running state could not take was refused.")
def _refused(rec: StepRecord) -> bool:
    return rec.step.call == "update_configuration" and bool(rec.state.get("error"))
