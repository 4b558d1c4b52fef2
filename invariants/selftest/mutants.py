"""Deliberately broken cores: small edits of the real code, each a design bug of a known kind.

The checker proves its teeth by finding every one of them: ``tests/test_mutants.py``
runs a bounded check against each, and ``yunikorn-fsm check --self-test``
prints the kill score and the time to detection. A mutant is a textual edit
of one function of the core (the snippet must exist, so a mutant can not go
stale silently), applied by replacing the function in its module; the core's
flows call each other through module attributes, so the edit takes effect.
This module reaches into the core's internals on purpose (an import-linter
exception, ``pyproject.toml``).
"""

from __future__ import annotations
import __future__

import inspect
import textwrap
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from types import FunctionType, ModuleType
from typing import Any

from scheduler import (
    Scheduler,
    context,
    dialect,
    outbox,
    placement,
    policies,
    priority,
    resources,
    ugm,
)
from scheduler.partition import (
    allocate,
    apps,
    appstate,
    asks,
    cycle,
    eligibility,
    gang,
    ledger,
    nodes,
    preemptor,
    queues,
    quota_preemption,
    releases,
    required_node,
    reservations,
    state,
    victims,
    waiting,
)


@dataclass(frozen=True)
class Mutant:
    """One broken core: where the edit is, what it breaks, and the edit itself."""

    name: str
    area: str
    breaks: str
    owner: ModuleType | type
    function: str
    old: str
    new: str


M = Mutant
MUTANTS: tuple[Mutant, ...] = (
    M("gang.real_asks_do_not_wait", "gang",
      "001: real asks wait until every placeholder ask is allocated",
      eligibility, "gang_waiting",
      "return bool(app.placeholder_ask) and any(", "return False and any("),
    M("gang.released_placeholder_reused", "gang",
      "001 step 2: a placeholder being released may not be released or replaced again",
      gang, "try_replace",
      'if not ph.placeholder or ph.state != "Allocated" or ph.task_group != ask.task_group:',
      "if not ph.placeholder or ph.task_group != ask.task_group:"),
    M("gang.real_ask_not_parked", "gang",
      "001 step 3: the real ask is parked until the shim confirms the placeholder release",
      gang, "try_replace", "        ledger.park(app, ask, ph.uuid)\n", ""),
    M("waiting.over_headroom_told", "scheduling",
      "YuniKorn Queue.GetOutstandingRequests: only an ask within its queue's headroom is "
      "told it waits for the cluster to grow",
      waiting, "eligible", "or could_replace(app, ask) or eligibility.queue_headroom(app, ask)",
      "or could_replace(app, ask)"),
    M("waiting.never_told", "scheduling",
      "YuniKorn Scheduler.inspectOutstandingRequests: an ask that waits for the cluster to "
      "grow is told so within a second",
      waiting, "after_cycle", "    if due is not None and now >= due:",
      "    if due is not None and now >= due + 3600:"),
    M("gang.swap_ask_still_pending", "gang",
      "YuniKorn Application.tryPlaceholderAllocate: the real ask of a started swap is "
      "allocated at the match and no longer counts as pending",
      ledger, "park", "    _shift_pending(app, ask.resource, -1)\n", ""),
    M("gang.placeholder_timeout_never_fires", "gang",
      "001 'Cleanup': pending placeholder asks time out", gang, "placeholder_timeout",
      "    pending_ph = [k for k", "    return\n    pending_ph = [k for k"),
    M("gang.hard_failure_keeps_real_allocations", "gang",
      "001 'Cleanup': a killed application holds nothing", gang, "placeholder_timeout",
      '            if alloc.state == "Allocated":', "            if False:"),
    M("gang.completion_keeps_placeholders", "completion",
      "001 'Allocated placeholders': leftover placeholders are released on completion",
      cycle, "on_timer",
      '        gang.release_placeholders(p, app, "application completing: placeholder not used")\n',
      ""),
    M("gang.completing_ignores_placeholder_timeout", "gang",
      "001 'Placeholder timeout': no placeholder outlives the timeout (YuniKorn releases a "
      "Completing application's leftovers too)", gang, "placeholder_timeout",
      'if app.state in ("Running", "Completing") and not pending_ph:',
      'if app.state == "Running" and not pending_ph:'),
    M("gang.admission_ignores_parent_max", "gang",
      "001 'Total placeholder size': reject a gang larger than the quota of any queue on "
      "the path", apps, "check_submission",
      "for q in queue.ancestry() if q.max is not None]", "for q in [queue] if q.max is not None]"),
    M("gang.admitted_into_fair_queue", "gang",
      "001 'Handling queue with a FAIR sort policy': reject gangs in fair queues",
      apps, "check_submission", 'if policy == "fair":', 'if policy == "no-such-policy":'),
    M("quota.leaf_max_only", "quota",
      "004 max-capacity: a parent's max limits the whole subtree", eligibility, "queue_headroom",
      "for q in app.queue.ancestry() if app.queue else ():",
      "for q in [app.queue] if app.queue else ():"),
    M("quota.maxapplications_ignored", "quota",
      "maxapplications on every queue of the path", eligibility, "queue_slot",
      "if app.counted_running or app.queue is None:", "if True:"),
    M("reservations.reserved_node_taken", "reservations",
      "004 reservations: a reserved node takes only the reserved ask", allocate, "find_node",
      "        if not node.open_to(mine):\n"
      "            continue\n", ""),
    M("reservations.kept_after_allocation", "reservations",
      "a reservation ends when its ask is allocated", allocate, "allocate",
      "    if p.reservations:\n        reservations.cancel(p, app.id, ask.key)\n", ""),
    M("nodes.drained_node_still_used", "node actions",
      "002 DRAIN_NODE: no new allocations on the node", nodes, "update_node",
      "        p.core.fire(node, \"drain\", p.rm_id)\n        p.node_order.discard(node)\n",
      "        p.core.fire(node, \"drain\", p.rm_id)\n"),
    M("nodes.restored_node_never_used", "node actions",
      "002 DRAIN_TO_SCHEDULABLE: the node takes work again", nodes, "update_node",
      "        p.core.fire(node, \"restore\", p.rm_id)\n        p.node_order.add(node)\n",
      "        p.core.fire(node, \"restore\", p.rm_id)\n"),
    M("nodes.occupied_update_ignored", "node actions",
      "002 UPDATE: the node's occupied resource is what the RM last reported", nodes,
      "update_node", "            node.occupied = info.occupied_resource.as_dict()\n",
      "            pass\n"),
    M("nodes.decommissioned_node_kept", "node actions",
      "002 DECOMISSION: the node leaves the partition", nodes, "remove_node",
      "    del p.nodes[node.id]\n", ""),
    M("nodes.decommission_keeps_allocations", "node actions",
      "002 DECOMISSION: allocations on the node stop and the RM is told", nodes, "remove_node",
      "    for alloc in list(node.allocations.values()):", "    for alloc in []:"),
    M("recovery.placeholder_recovered_as_real", "recovery",
      "001 'Application recovery': recovered allocations keep their placeholder flag",
      nodes, "recover", "placeholder = msg.placeholder and bool(msg.task_group_name)",
      "placeholder = False"),
    M("recovery.over_quota_not_flagged", "recovery",
      "recovered allocations over a max are flagged and the queue takes nothing new",
      nodes, "recover", "    if over_quota:\n", "    if False:\n"),
    M("acl.ancestors_ignored", "ACL/placement",
      "004 acls: the submit ACL of an ancestor grants access", apps, "acl_allows",
      "for q in queue.ancestry():", "for q in [queue]:"),
    M("placement.creates_without_create", "ACL/placement",
      "placement rules create queues only with create: true", placement, "_rule_path",
      "    if not rule.create and lookup(path) is None:\n        return None\n", ""),
    M("lifecycle.state_assigned", "lifecycle",
      "every state change goes through a declared trigger", appstate, "maybe_wait",
      '        fire_app(p, app, "wait")', '        app.state = "Completing"'),
    M("release.rm_release_not_confirmed", "releases",
      "001/002: the RM's release is confirmed with the same type", releases,
      "release_allocations",
      '            ledger.report_release(p, alloc, TT.STOPPED_BY_RM, rel.message or "released '
      'by the RM")', "            pass"),
    M("release.unsolicited_confirmation_taken", "releases",
      "001: a release the core never started confirms nothing: the RM ends the allocation "
      "as stopped, whatever its type (nothing is swapped in)", releases,
      "release_allocations",
      '        confirms = ttype in CONFIRM_TRIGGERS and alloc.state == "Releasing" \\\n'
      "            and alloc.release_type == ttype.value\n",
      '        confirms = ttype in CONFIRM_TRIGGERS \\\n'
      "            and alloc.release_type in (None, ttype.value)\n"),
    M("timer.execution_timeout_early", "timeouts",
      "002 executionTimeoutMilliSeconds: released when the timeout is reached, not before",
      allocate, "allocate", "core.schedule_timer(ask.execution_timeout_ms / 1000.0,",
      "core.schedule_timer(ask.execution_timeout_ms / 2000.0,"),
    M("timer.expiry_never_fires", "timeouts",
      "terminated applications expire after the retention", cycle, "on_timer",
      '    elif kind == "expire" and', '    elif False and'),
    M("accounting.placeholder_release_leaks_queue", "quota",
      "001 'Queue & Node': placeholders count on the queue like real allocations, and stop "
      "counting when they go", ledger, "unbind",
      "            res.sub_from(q.allocated, r)",
      "            res.sub_from(q.allocated, {} if alloc.placeholder else r)"),
    M("nodes.stale_room_ceiling", "node actions",
      "a node that joins is seen by the next cycle", state.PartitionState, "node_joined",
      "self.ceiling = res.component_max((self.ceiling, res.sub(node.capacity, node.occupied)))",
      "pass"),
    M("asks.update_forgets_allocations", "asks",
      "002 maxAllocations: an update of an ask counts the repeats already allocated",
      asks, "add_ask",
      "allocated_before = existing.allocated_count if existing is not None else 0",
      "allocated_before = 0"),
    M("asks.unchanged_resend_rejected", "asks",
      "an unchanged re-send of a fully allocated ask (an informer resync) is a no-op",
      asks, "add_ask",
      "    if not reason and existing is not None and existing.pending_repeats == 0 \\\n",
      "    if False and existing is not None and existing.pending_repeats == 0 \\\n"),
    M("apps.empty_user_accepted", "ACL/placement",
      "an application with an empty user is rejected (YuniKorn)", apps, "refused_outright",
      "    if not req.ugi.user.strip():", "    if False:"),
    M("apps.removal_keeps_allocations", "lifecycle",
      "002 RemoveApplicationRequest: its allocations are removed", apps, "remove_application",
      '        ledger.remove_allocation(p, alloc, "stop", "its application was removed")\n', ""),
    M("limits.leaf_only", "limits",
      "YuniKorn ugm: a user's or group's limit on any queue of the path holds an ask back",
      eligibility, "user_headroom",
      "app.queue.ancestry(), ask.resource)", "[app.queue], ask.resource)"),
    M("limits.group_room_ignored", "limits",
      "YuniKorn ugm: the tracked group's maxresources applies as well as the user's",
      ugm, "over_limit", "        for key in who:", "        for key in who[:1]:"),
    M("limits.wildcard_over_named", "limits",
      "YuniKorn ugm: a named user limit overrides the '*' limit of its queue",
      ugm.QueueLimits, "for_user",
      "return self.users.get(user) or self.users.get(WILDCARD)",
      "return self.users.get(WILDCARD) or self.users.get(user)"),
    M("limits.maxapplications_ignored", "limits",
      "YuniKorn ugm: an application starts only within its user's and group's "
      "maxapplications", eligibility, "user_slot",
      "if not p.limited or app.counted_running or app.queue is None:", "if True:"),
    M("limits.release_not_subtracted", "limits",
      "YuniKorn ugm: every removal subtracts from the user's and group's usage",
      ledger, "unbind",
      "            p.users.add(app.limited_by, app.queue.chain, r, -1)\n",
      "            pass\n"),
    M("limits.group_resolved_from_root", "limits",
      "YuniKorn ugm: the tracked group is resolved from the leaf towards root",
      ugm, "resolve_group", "    for queue in path:", "    for queue in reversed(path):"),
    M("priority.stale_after_allocation", "priority",
      "YuniKorn updateAskMaxPriority: an application's priority follows every allocation",
      ledger, "consume_repeat",
      "        del app.pending_asks[ask.sort_key]\n        priority.refresh_app(app)\n",
      "        del app.pending_asks[ask.sort_key]\n"),
    M("priority.offset_ignored", "priority",
      "YuniKorn priorityValueByPolicy: a queue shows its priority plus its priority.offset",
      priority, "by_policy", "return max(MIN_PRIORITY, min(MAX_PRIORITY, raw + offset))",
      "return raw"),
    M("priority.apps_by_policy_only", "priority",
      "YuniKorn sortApplications: with application.sort.priority enabled, a leaf's "
      "applications go by priority first, then by the policy",
      policies.AppOrder, "_set", "elif self._first:", "elif False:"),
    M("sorting.fifo_newest_first", "sorting",
      "004 'Implementation', YuniKorn's fifo: a leaf's applications go by submission time, "
      "oldest first", policies.AppOrder, "_set",
      "key = (-app.priority, app.submit_time, app_id, app)",
      "key = (-app.priority, -app.submit_time, app_id, app)"),
    M("sorting.creation_time_ignored", "sorting",
      "YuniKorn AddAllocationAsk, addAllocationInternal: an ask or recovered allocation "
      "whose creationTime tag is earlier moves its application's submission time back, "
      "which fifo order reads", asks, "note_created",
      "if created is not None and created < app.submit_time:",
      "if False and created is not None and created < app.submit_time:"),
    M("backoff.never", "sorting",
      "YUNIKORN-3115 (Application.tryAllocate): once application.unschedasks.backoff asks "
      "of one application found no node in a pass, the application is skipped for "
      "application.unschedasks.backoff.delay", cycle, "try_leaf",
      "if threshold and unschedulable >= threshold:", "if False:"),
    M("backoff.not_respected", "sorting",
      "YUNIKORN-3115 (Queue.TryAllocate): an application backing off is not scheduled "
      "before its backoff ends", cycle, "try_leaf",
      "if app.backoff_until > now:", "if False:"),
    M("sorting.fair_apps_ignore_usage", "sorting",
      "004 'Implementation': a fair leaf sorts its applications by their resource usage",
      policies.AppOrder, "_set", "shares = res.shares(used, self._base)", "shares = []"),
    M("sorting.queues_ignore_usage", "sorting",
      "004 'Implementation': a parent sorts its children by their resource usage (shares "
      "of their guarantee)", policies.ChildOrder, "_set",
      "shares = res.shares(child.allocated, child.guaranteed or _NONE)", "shares = []"),
    M("sorting.stateaware_admits_all", "sorting",
      "001 'Handling queue with a FAIR sort policy': a stateaware leaf starts one "
      "application at a time", policies.AppOrder, "walk",
      'if policy != "stateaware":', "if True:"),
    M("sorting.asks_newest_first", "sorting",
      "YuniKorn: an application's asks go by priority, then arrival (oldest first)",
      cycle, "try_leaf",
      "unschedulable = 0\n        for ask in app.pending_asks.values():",
      "unschedulable = 0\n"
      "        for ask in reversed(list(app.pending_asks.values())):"),
    M("nodes.required_node_ignored", "node actions",
      "YuniKorn: an ask tagged requiredNode (a DaemonSet pod) runs on that node only",
      cycle, "try_leaf", "            if ask.required_node:\n",
      "            if False:\n"),
    M("nodes.binpacking_ignored", "sorting",
      "004 'Implementation': the partition's nodesortpolicy orders the nodes (binpacking: "
      "the most used first)", policies.NodeCollection, "set_policy",
      'self._binpacking = self.policy == "binpacking"', "self._binpacking = False"),
    M("nodes.order_not_updated", "sorting",
      "004 'Implementation': nodes are sorted by their current usage", policies.NodeCollection,
      "update", "if key != node.sort_key:", "if False:"),
    M("priority.queues_tie_break_only", "priority",
      "YuniKorn sortQueue: with application.sort.priority enabled, a parent's children go by "
      "priority first, then by their usage share",
      policies.ChildOrder, "_set", "(-child.priority, shares, more, path, child) if self._sort",
      "(-child.priority, shares, more, path, child) if False"),
    M("preemption.own_leaf_victims", "preemption",
      "YuniKorn preemption law 3: the ask's own leaf never supplies victims",
      preemptor.Preemptor, "_walk", "    if q is self.leaf:\n        return\n",
      "    if False:\n        return\n"),
    M("preemption.disabled_ignored", "preemption",
      "YuniKorn preemption.policy disabled: the queue's tasks are never victims",
      preemptor.Preemptor, "_walk", "if q.preemption_policy == settings.DISABLED:",
      "if False:"),
    M("preemption.victims_within_guarantee", "preemption",
      "YuniKorn preemption law 5: only a queue over its guarantee loses tasks",
      preemptor.Preemptor, "_walk",
      "if all(q.allocated.get(k, 0) <= c for k, c in cap.items()):", "if False:"),
    M("preemption.priority_ignored", "preemption",
      "YuniKorn preemption law 6: a victim's priority is at most the ask's, adjusted by offsets",
      preemptor.Preemptor, "eligible", "return rule[1] or alloc.priority <= rule[0]",
      "return True"),
    M("preemption.fence_ignored", "preemption",
      "YuniKorn preemption law 7: victims lie inside the ask's preemption fence",
      preemptor.Preemptor, "find_leaves",
      "if q.parent is None or q.preemption_policy == settings.FENCE \\\n",
      "if q.parent is None or False \\\n"),
    M("preemption.max_fence_ignored", "preemption",
      "YUNIKORN-3241 (findPreemptionFenceRoot): a queue whose max the ask would exceed "
      "fences the victim search as a fence policy does",
      preemptor, "fenced_by_max",
      "return any(k in projected and projected[k] > limit for k, limit in queue.max.items())",
      "return False"),
    M("preemption.delay_ignored", "preemption",
      "YuniKorn preemption.delay: an ask preempts only once it is that old",
      preemptor, "try_preempt", "if now < ask.created + leaf.preemption_delay:", "if False:"),
    M("preemption.switch_ignored", "preemption",
      "YuniKorn partition preemption.enabled: false turns general preemption off",
      preemptor, "try_preempt", "if not p.preemption_enabled or budget[0] <= 0",
      "if budget[0] <= 0"),
    M("preemption.twice", "preemption",
      "YuniKorn Preemptor.CheckPreconditions: an ask triggers preemption once, ever",
      preemptor, "try_preempt", "or not ask.preempt_other or ask.preempted",
      "or not ask.preempt_other"),
    M("preemption.victim_below_guarantee", "preemption",
      "YuniKorn preemption law 2: no victim's queue is left below its guarantee",
      preemptor.Trial, "at_or_above",
      "return all(used.get(k, 0) >= g for k, g in leaf.guaranteed.items())", "return True"),
    M("preemption.ask_not_within", "preemption",
      "YuniKorn preemption law 4: nothing is preempted unless the ask's queue ends within "
      "its guarantee", preemptor.Preemptor, "additional",
      "return extra if trial.within(self.ask_snap) else None", "return extra"),
    M("preemption.preempting_not_counted", "preemption",
      "YuniKorn preemption commit: a victim counts as preempting on its queues until confirmed",
      victims, "release", "            res.add_into(q.preempting, victim.resource)\n",
      "            pass\n"),
    M("preemption.no_reservation", "preemption",
      "YuniKorn preemption commit: the chosen node is reserved for the ask",
      victims, "commit", "        reservations.reserve(p, app, ask, node)\n",
      "        pass\n"),
    M("preemption.required_higher_priority", "preemption",
      "YuniKorn required-node preemption: never a victim of higher priority than the ask",
      required_node, "choose", " and a.priority <= ask.priority", ""),
    M("preemption.required_takes_required", "preemption",
      "YuniKorn required-node preemption: never another required-node allocation",
      required_node, "choose", "and not a.required_node and", "and"),
    M("preemption.while_it_fits", "preemption",
      "YuniKorn Application.tryAllocate: preemption only for an ask that found no node",
      cycle, "try_leaf", "            node = allocate.find_node(p, app, ask)\n",
      "            node = None if ask.preempt_other and preemptor.try_preempt(\n"
      "                p, app, ask, True, budget) else allocate.find_node(p, app, ask)\n"),
    M("preemption.limit_held_preempts", "preemption",
      "YuniKorn user and group limits: an ask over its user's or group's headroom is "
      "skipped, never a reason to preempt", cycle, "try_leaf",
      "                failed.add((app.id, ask.key))\n"
      "                allocate.set_scheduling_state(p, ask, SS.SKIPPED, over)\n",
      "                failed.add((app.id, ask.key))\n"
      "                if ask.preempt_other and preemptor.try_preempt(p, app, ask, False,\n"
      "                                                                budget):\n"
      "                    return PROGRESS\n"
      "                allocate.set_scheduling_state(p, ask, SS.SKIPPED, over)\n"),
    # -- the seed audit (docs/seed-audit.md): rules no broken core tested before ----------
    M("gang.soft_fails_like_hard", "gang",
      "002 gangSchedulingStyle: a Soft gang is scheduled as a normal application after the "
      "placeholder timeout, it does not fail", gang, "placeholder_timeout",
      '    hard = app.gang_style == "Hard"', "    hard = True"),
    M("gang.hard_resumes_like_soft", "gang",
      "002 gangSchedulingStyle: a Hard gang fails after the placeholder timeout",
      gang, "placeholder_timeout", '    hard = app.gang_style == "Hard"', "    hard = False"),
    M("gang.timeout_from_last_placeholder", "gang",
      "001 'Cleanup': the placeholder timeout starts when the first placeholder is allocated",
      allocate, "allocate", "    if ask.placeholder and not app.placeholder_timer_started:",
      "    if ask.placeholder:\n        app.placeholder_token += 1"),
    M("gang.placeholder_starts_app", "gang",
      "001 'Scheduler logic changes': a placeholder allocation leaves the application "
      "Accepted", allocate, "allocate",
      '    if not ask.placeholder and app.LIFECYCLE.can(app.state, "run"):',
      '    if app.LIFECYCLE.can(app.state, "run"):'),
    M("gang.timeout_ask_release_missing", "gang",
      "001 'Cleanup': a gang's timeout releases its pending placeholder asks (TIMEOUT) in the "
      "response that carries its state change", gang, "placeholder_timeout",
      "        box.ask_released(p.name, app.id, ask.key, TT.TIMEOUT,",
      "        (p.name, app.id, ask.key, TT.TIMEOUT,"),
    M("gang.replacement_on_drained_node", "gang",
      "002 DRAIN_NODE with 001 step 5: a replacement whose placeholder's node was drained "
      "goes to another node", gang, "complete_replacement",
      "if node is None or not node.schedulable or", "if node is None or"),
    M("gang.replacement_ignores_placeholder_node", "gang",
      "001 step 5: the real ask goes to the node of the placeholder it replaces whenever that "
      "node can take it", gang, "complete_replacement",
      "    node: Node | None = p.nodes.get(placeholder.node.id)\n",
      "    node: Node | None = None\n"),
    M("lifecycle.placeholders_keep_running", "lifecycle",
      "001 'Definition': placeholders are not active allocations; an application with only "
      "placeholders and nothing pending waits", appstate, "maybe_wait",
      "not any(\n        not a.placeholder for a in app.allocations.values()\n    )",
      "not app.allocations"),
    M("lifecycle.no_wait_after_ask_release", "lifecycle",
      "001 'Definition': an application whose last ask the RM removed waits",
      asks, "release_asks", "    appstate.maybe_wait(p, app)", "    pass"),
    M("lifecycle.completed_before_timeout", "lifecycle",
      "001 'Definition': an application completes only after waiting the completing timeout",
      apps, "after_release",
      "        if app.completing_timed_out and not app.allocations:",
      "        if not app.allocations:"),
    M("apps.completed_id_blocks_resubmission", "ACL/placement",
      "001 'Allocated placeholders': a completed application does not stop a new one with "
      "its id", apps, "add_application",
      "if existing is not None and existing.state in LIVE:", "if existing is not None:"),
    M("acl.adminacl_ignored", "ACL/placement",
      "004 acls (YuniKorn): the admin ACL of the queue or an ancestor also grants submission",
      apps, "acl_allows", "for acl in (q.submitacl, q.adminacl):", "for acl in (q.submitacl,):"),
    M("queues.draining_queue_accepts_apps", "queues",
      "003 'Update and Remove partition': a queue removed from the configuration takes no "
      "new application", apps, "placement_refusal",
      "    if inactive is not None:", "    if False:"),
    M("queues.removed_while_holding_apps", "queues",
      "003 'Update and Remove partition': a removed queue goes only once empty",
      queues, "clean_drained", "and _empty(queue) \\\n", "and not queue.children \\\n"),
    M("queues.configured_again_stays_draining", "queues",
      "003 'Update and Remove partition': a queue configured again is active again",
      queues, "_apply_queue", '        p.core.fire(queue, "start", p.rm_id)', "        pass"),
    M("partitions.removed_partition_takes_nodes", "node actions",
      "003 'Update and Remove partition': a partition removed from the configuration takes "
      "no new node", nodes, "add_node", '    if p.state != "Active":', "    if False:"),
    M("nodes.partition_total_kept", "node actions",
      "003 'Partition Lock': node changes update the partition's total resource",
      nodes, "remove_node", "    res.sub_from(p.capacity, node.capacity)\n", ""),
    M("nodes.reserved_allocation_skips_predicates", "node actions",
      "002 Predicates: an allocation on a reserved node still needs the RM's predicates",
      cycle, "allocate_reserved",
      "                and not eligibility.queue_headroom(app, ask)\n"
      "                and allocate.predicates(p, ask, node, True)):",
      "                and not eligibility.queue_headroom(app, ask)):"),
    M("reservations.kept_after_ask_removed", "reservations",
      "004 reservations: removing an ask frees its node", asks, "drop_ask",
      "    reservations.cancel(p, app.id, ask.key)\n", ""),
    M("reservations.kept_on_drained_node", "reservations",
      "002 DRAIN_NODE: a draining node keeps no reservation", nodes, "update_node",
      "        reservations.cancel_node(p, node)\n", ""),
    M("quota.headroom_before_adding", "quota",
      "004 max-capacity: the ask itself must fit under the max (an off-by-one check of usage "
      "before the ask)", eligibility, "queue_headroom",
      "if q.max is not None and not res.fits_with(r, q.allocated, q.max):",
      "if q.max is not None and not res.fits(q.allocated, q.max):"),
    M("quota.maxapplications_off_by_one", "quota",
      "maxapplications: at most that many applications run on the queue",
      eligibility, "queue_slot", "q.running_apps < q.max_applications",
      "q.running_apps <= q.max_applications"),
    M("quota.lowered_max_not_flagged", "quota",
      "004 max-capacity: a reload that lowers a max below the usage flags the queue, which "
      "takes nothing new", queues, "_apply_queue",
      '    ledger.refresh_quota_flag(queue, "max lowered by a configuration update")\n', ""),
    M("recovery.pending_ask_not_consumed", "recovery",
      "001 'Application recovery': a recovered allocation of a pending ask takes one of its "
      "repeats (not counted twice)", nodes, "recover",
      '    elif ask.state == "Pending":\n        ledger.consume_repeat(p, app, ask)\n',
      '    elif ask.state == "Pending":\n        pass\n'),
    M("release.ask_release_not_confirmed", "releases",
      "001/002 AllocationAskRelease: the RM's ask release is confirmed with the same type",
      asks, "release_asks",
      "        box.ask_released(p.name, app.id, ask.key, TT.STOPPED_BY_RM,",
      "        (p.name, app.id, ask.key, TT.STOPPED_BY_RM,"),
    M("release.unknown_ask_key_releases_all", "releases",
      "002 AllocationAskRelease.allocationKey: a release naming an ask the application does "
      "not have is ignored (only an empty key means every ask)", asks, "release_asks",
      "        asks = [ask] if ask is not None else []\n",
      "        asks = [ask] if ask is not None else list(app.asks.values())\n"),
    M("release.core_type_ask_release_taken", "releases",
      "001/002 AllocationAskRelease: the RM removes an ask with STOPPED_BY_RM; a release of "
      "a type only the core starts is acknowledged and changes nothing", asks, "release_asks",
      "    if rel.termination_type != TT.STOPPED_BY_RM:\n",
      "    if rel.termination_type == TT.UNKNOWN_TERMINATION_TYPE:\n"),
    M("release.uuid_outside_named_application", "releases",
      "002 AllocationRelease: a release names its application; the uuid of another "
      "application's allocation is not released", releases, "release_allocations",
      "            alloc = app.allocations.get(rel.uuid)\n",
      "            alloc = p.allocations.get(rel.uuid)\n"),
    M("release.unknown_application_by_uuid", "releases",
      "002 AllocationRelease: a release naming an application the core does not know is "
      "ignored, even when its uuid exists", releases, "release_allocations",
      "            alloc = None\n", "            alloc = p.allocations.get(rel.uuid)\n"),
    M("release.app_wide_core_type_ignored", "releases",
      "002 AllocationRelease UUID: without a uuid every allocation of the application is "
      "released, whatever the termination type (YuniKorn's processAllocationRelease)",
      releases, "release_allocations",
      "    elif app is not None:\n",
      "    elif app is not None and ttype in RM_TYPES:\n"),
    M("release.untyped_release_ignored", "releases",
      "YuniKorn's removeAllocation: a release without a termination type is the RM's own, "
      "removed and confirmed STOPPED_BY_RM", releases, "release_allocations",
      "    ttype = rel.termination_type\n",
      "    ttype = rel.termination_type\n    if ttype == TT.UNKNOWN_TERMINATION_TYPE:\n"
      "        return\n"),
    M("release.rm_core_type_release_ignored", "releases",
      "001 TIMEOUT releases from the shim are processed 'as normal': the RM's release of an "
      "allocation the core never released removes it whatever its type (YuniKorn's "
      "removeAllocation)", releases, "release_allocations",
      '            ledger.remove_allocation(p, alloc, "stop", f"released by the RM with '
      'termination "\n'
      '                                     f"type {ttype.name}: nothing sent back")\n',
      "            continue\n"),
    M("release.core_type_release_answered", "releases",
      "001 'For releases initiated by the core no such confirmation message can or must be "
      "sent': the RM's release with a type only the core starts is not answered",
      releases, "release_allocations",
      "        elif ttype in RM_TYPES:\n", "        elif True:\n"),
    M("nodes.drain_of_draining_unanswered", "nodes",
      "002 NodeInfo.ActionFromRM: DRAIN_NODE of a node that is not schedulable is refused "
      "with a reason, not dropped", nodes, "update_node",
      '            p.core.reject_node(p.rm_id, node.id, f"node {node.id} is '
      '{node.state.lower()}")\n            return\n',
      "            return\n"),
    M("nodes.restore_of_schedulable_unanswered", "nodes",
      "002 NodeInfo.ActionFromRM: DRAIN_TO_SCHEDULABLE of a node that is not draining is an "
      "error, answered with a reason", nodes, "update_node",
      "            p.core.reject_node(p.rm_id, node.id,\n"
      '                               f"node {node.id} is {node.state.lower()}, not '
      'draining")\n            return\n',
      "            return\n"),
    M("nodes.unknown_action_taken_as_update", "nodes",
      "002 NodeInfo.ActionFromRM: an action the core does not know is refused, not taken "
      "as an UPDATE", nodes, "update_node",
      "    if action == si.NodeAction.UPDATE:\n",
      "    if action in (si.NodeAction.UPDATE, si.NodeAction.UNKNOWN_ACTION_FROM_RM):\n"),
    M("timer.zero_timeout_expires", "timeouts",
      "002 executionTimeoutMilliSeconds: 0 or negative means never expire",
      allocate, "allocate", "    if ask.execution_timeout_ms > 0:",
      "    if ask.execution_timeout_ms >= 0:"),
    M("rm.paused_rm_scheduled", "lifecycle",
      "002 RM lifecycle: a paused RM gets no new allocation", Scheduler, "_schedule",
      '            if rm.state != "Running":\n                continue\n', ""),
    M("gang.other_task_group_replaced", "gang",
      "001 'Scheduler logic changes' step 1: a real ask replaces a placeholder of its own "
      "task group", gang, "try_replace",
      ' or ph.task_group != ask.task_group:', ':'),
    M("gang.larger_real_ask_swapped", "gang",
      "YuniKorn (001 step 1): a placeholder smaller than its real ask is never swapped; it "
      "is released with TIMEOUT", gang, "try_replace",
      "        if not res.fits(ask.resource, ph.resource):", "        if False:"),
    M("recovery.repeated_uuid_accepted", "recovery",
      "002 'Allocation of resources': an allocation has one UUID; a registration that "
      "recovers one twice is rejected (all or nothing)", nodes, "_unattachable",
      "    if p.core.uuid_taken(a.uuid) or a.uuid in seen:", "    if False:"),
    M("reservations.kept_after_node_shrank", "reservations",
      "004 'Implementation' (reserve room against fragmentation): a reservation holds a "
      "node that can take its ask; an update shrinking the node below the ask ends it",
      nodes, "update_node", "        for app_id, key in list(node.reservations):\n",
      "        for app_id, key in []:\n"),
    # -- YuniKorn's history: lifecycles, releases, recovery and node actions ---------------
    M("recovery.app_left_accepted", "recovery",
      "001 'Application recovery' with the application lifecycle: a recovered real "
      "allocation moves its application to Running like any real allocation (YUNIKORN-513)",
      nodes, "recover", '    if not placeholder and app.LIFECYCLE.can(app.state, "run"):',
      '    if False and app.LIFECYCLE.can(app.state, "run"):'),
    M("lifecycle.completing_ignores_new_ask", "lifecycle",
      "001 'Cleanup': a new ask moves a waiting (Completing) application back to Running "
      "(YUNIKORN-484)", asks, "add_ask",
      '    elif app.state == "Completing":\n        appstate.fire_app(p, app, "run")\n', ""),
    M("lifecycle.completing_timer_missing", "timeouts",
      "001 'Application completion': a waiting application completes when the waiting "
      "timeout passes (YUNIKORN-484)", appstate, "maybe_wait",
      '        start_app_timer(p, app, COMPLETING_TIMEOUT, "complete")', "        pass"),
    M("lifecycle.no_wait_after_release", "lifecycle",
      "001 'Definition': an application whose last allocation is released with nothing "
      "pending waits, placeholders or not (YUNIKORN-1337)", apps, "after_release",
      "    else:\n        appstate.maybe_wait(p, app)", "    else:\n        pass"),
    M("lifecycle.state_change_unreported", "lifecycle",
      "002 UpdatedApplication: every application state change is reported to the RM "
      "(YUNIKORN-204)", appstate, "fire_app",
      "    p.core.outbox(p.rm_id).app_updated(app.id, app.state, app.state_since, message)",
      '    if trigger != "complete":\n'
      "        p.core.outbox(p.rm_id).app_updated(app.id, app.state, app.state_since, "
      "message)"),
    M("apps.finished_keeps_asks", "lifecycle",
      "001 'Cleanup': a finished (Completed or Failed) application holds no asks "
      "(YUNIKORN-1453)", apps, "finish",
      '        asks.drop_ask(p, ask, f"application {app.state.lower()}")', "        pass"),
    M("nodes.update_keeps_partition_total", "node actions",
      "002 UPDATE with 003 'Partition Lock': a node's new capacity changes the partition's "
      "total (YUNIKORN-466)", nodes, "update_node",
      "            res.sub_from(p.capacity, node.capacity)\n"
      "            node.capacity = info.schedulable_resource.as_dict()\n"
      "            res.add_into(p.capacity, node.capacity)\n",
      "            node.capacity = info.schedulable_resource.as_dict()\n"),
    M("nodes.removed_node_still_sorted", "node actions",
      "002 DECOMISSION: a removed node takes no new allocation (YUNIKORN-2171)",
      nodes, "remove_node",
      '    p.core.fire(node, "remove", p.rm_id)\n    p.node_order.discard(node)\n',
      '    p.core.fire(node, "remove", p.rm_id)\n'),
    M("nodes.removal_strands_parked_ask", "node actions",
      "002 DECOMISSION with 001 step 3: a real ask parked on a placeholder that leaves "
      "without being replaced is scheduled again (YUNIKORN-854)", ledger, "remove_allocation",
      '    if alloc.replacing_key and trigger != "replace":', "    if False:"),
    M("lifecycle.resuming_stuck", "lifecycle",
      "002 gangSchedulingStyle Soft: a resuming application is Accepted again once its "
      "placeholders are released (YUNIKORN-582)", apps, "after_release",
      '    elif app.state == "Resuming":\n        if not app.has_placeholders():',
      '    elif app.state == "Resuming":\n        if False:'),
    M("lifecycle.failed_before_released", "lifecycle",
      "001 'Cleanup': a killed application is Failed only once the RM confirmed the release "
      "of everything it held, real allocations too (YUNIKORN-574)", apps, "after_release",
      '    if app.state == "Failing":\n        if not app.allocations:',
      '    if app.state == "Failing":\n        if not app.has_placeholders():'),
    M("recovery.placeholder_timeout_default", "recovery",
      "001 'Application recovery' with 002 executionTimeoutMilliSeconds: a recovered gang "
      "times out after its own placeholder timeout, not the default (YUNIKORN-1155)",
      nodes, "recover",
      "    if placeholder and not app.placeholder_timer_started:\n"
      "        appstate.start_placeholder_timer(p, app)\n",
      "    if placeholder and not app.placeholder_timer_started:\n"
      "        app.placeholder_timer_started = True\n"
      '        p.core.schedule_timer(appstate.PLACEHOLDER_TIMEOUT, "placeholder", app,\n'
      "                              app.placeholder_token, p.timer_owner)\n"),
    M("nodes.removal_keeps_reservation", "reservations",
      "002 DECOMISSION with 004 reservations: a removed node keeps no reservation "
      "(YUNIKORN-1448)", nodes, "remove_node",
      "    p.nodes_changed()\n    reservations.cancel_node(p, node)\n",
      "    p.nodes_changed()\n"),
    # From YuniKorn's history (resources and policy): each a fixed bug of that kind.
    M("limits.wildcard_not_on_root", "limits",
      "YuniKorn ugm rule 4: a queue's '*' user limit applies to every user without a named "
      "one, root included (YUNIKORN-2441)", ugm, "over_limit",
      "            limit = limits.for_user(key[1]) if key[0] == USER else",
      "            limit = (limits.users.get(key[1]) if queue.parent is None\n"
      "                     else limits.for_user(key[1])) if key[0] == USER else"),
    M("limits.parent_against_leaf_usage", "limits",
      "YuniKorn ugm rule 6: the headroom on each queue of the path is that queue's limit less "
      "the usage on that queue, not the leaf's (YUNIKORN-1920)", ugm, "over_limit",
      "            used = per_path.get(queue.path, _NO_USE) if",
      "            used = per_path.get(path[0].path, _NO_USE) if"),
    M("limits.group_not_subtracted", "limits",
      "YuniKorn ugm rule 1: a removal subtracts from the tracked group's usage as well as "
      "the user's (YUNIKORN-1893)", ledger, "unbind",
      "            p.users.add(app.limited_by, app.queue.chain, r, -1)\n",
      "            p.users.add(app.limited_by[:1], app.queue.chain, r, -1)\n"),
    M("limits.reserved_skips_headroom", "limits",
      "YuniKorn ugm rule 7: the reserved path checks the user's and group's headroom too "
      "(YUNIKORN-2030)", cycle, "allocate_reserved",
      "                and not eligibility.user_headroom(p, app, ask)\n", ""),
    M("limits.wildcard_group_ignored", "limits",
      "YuniKorn ugm rule 3: a user in no named group of a queue's limits is tracked against "
      "that queue's shared '*' group (YUNIKORN-1864)", ugm, "resolve_group",
      "        if WILDCARD in limits.groups:\n            return WILDCARD\n", ""),
    M("quota.undefined_type_zero", "quota",
      "004 max-capacity (YuniKorn): a type a max does not name is unlimited, not zero "
      "(YUNIKORN-813)", eligibility, "queue_headroom",
      "        if q.max is not None and not res.fits_with(r, q.allocated, q.max):",
      "        if q.max is not None and (not res.fits_with(r, q.allocated, q.max)\n"
      "                                  or any(v > 0 and k not in q.max for k, v in r.items())):"),
    M("priority.created_leaf_no_offset", "priority",
      "YuniKorn priority 3.1: a leaf a placement rule creates takes priority.offset and "
      "priority.policy from its parent's childtemplate (YUNIKORN-1486)", queues, "create",
      "        priority.configure(queue, queue.properties)\n",
      "        priority.configure(queue, {})\n"),
    M("queues.created_leaf_no_template_quota", "quota",
      "004 max-capacity with YuniKorn's childtemplate: a leaf a placement rule creates takes "
      "the template's max and maxapplications (YUNIKORN-193, YUNIKORN-2033)", queues, "create",
      "            queue.max = dict(template.resources.max) or None\n", ""),
    M("queues.created_parent_drops_template", "quota",
      "YuniKorn childtemplate inheritance: a parent a placement rule creates inherits its "
      "parent's template, which the leaves created below it then take (YUNIKORN-193, "
      "YUNIKORN-814)", queues, "create",
      "            queue.child_template = template\n", "            pass\n"),
    M("queues.configured_parent_drops_template", "quota",
      "YuniKorn childtemplate inheritance: a configured parent without a template of its own "
      "takes its parent's, and an empty template is none (YUNIKORN-193, YUNIKORN-814)",
      queues, "_apply_queue",
      "    queue.child_template = effective_template(cfg.childtemplate, parent)\n",
      "    queue.child_template = cfg.childtemplate\n"),
    M("limits.reserved_skips_maxapplications", "limits",
      "YuniKorn ugm rule 7: the reserved path holds an application that has not started while "
      "its user's or group's maxapplications is reached (YUNIKORN-1986)", cycle,
      "allocate_reserved",
      "                and not eligibility.user_slot(p, app)\n"
      "                and not eligibility.user_headroom(p, app, ask)\n",
      "                and not eligibility.user_headroom(p, app, ask)\n"),
    M("preemption.victim_already_released", "preemption",
      "YuniKorn preemption: an allocation already being released (preempted earlier and not "
      "yet confirmed, or a placeholder being replaced) is never chosen as a victim again "
      "(YUNIKORN-3003, YUNIKORN-2141)", preemptor.Preemptor, "eligible",
      'if rule is None or alloc.state != "Allocated" or alloc.required_node:',
      "if rule is None or alloc.required_node:"),
    # Preemption's victim choice (yunikorn-behaviour 2.5 steps 4 and 6, 2.6 step 2).
    M("preemption.required_takes_more", "preemption",
      "YuniKorn objects/required_node_preemptor.go: candidates are taken only until they "
      "cover the ask", required_node, "choose",
      "        if all(freed.get(k, 0) >= v for k, v in r.items()):\n            break\n", ""),
    M("preemption.required_unshared_type", "preemption",
      "YuniKorn objects/required_node_preemptor.go: a candidate shares at least one resource "
      "type with the ask", required_node, "choose",
      "\n         and any(a.resource.get(k, 0) for k in wanted)", ""),
    M("preemption.required_oldest_first", "preemption",
      "YuniKorn objects/required_node_preemptor.go sortCandidates: within one kind and "
      "priority, newer candidates first", required_node, "choose",
      "a.priority, -a.seq))", "a.priority, a.seq))"),
    M("preemption.node_victims_beyond_fit", "preemption",
      "YuniKorn objects/preemption.go calculateVictimsByNode: the victims on a node end at "
      "startIndex, the first with which the ask fits", preemptor.Preemptor, "node_victims",
      "return None if index < 0 else (index, results)",
      "return None if index < 0 else (len(results) - 1, results)"),
    M("preemption.node_victims_not_reducing", "preemption",
      "YuniKorn objects/preemption.go calculateVictimsByNode: victims that reduce the node's "
      "shortfall come first, so none that frees nothing the ask lacks is taken",
      preemptor.Preemptor, "node_victims",
      "if _node_shortfall(r, room) == _node_shortfall(r, grown):", "if False:"),
    M("preemption.node_never_fits", "preemption",
      "YuniKorn objects/preemption.go calculateVictimsByNode: a node where the ask never fits, "
      "whatever its victims, is dropped", preemptor.Preemptor, "node_victims",
      "return None if index < 0 else (index, results)",
      "return (index if index >= 0 else len(results) - 1, results)"),
    M("preemption.reserved_node_used", "preemption",
      "YuniKorn objects/preemption.go calculateVictimsByNode: a node reserved for another ask "
      "is not a candidate", preemptor.Preemptor, "checks",
      "or not node.open_to(mine):", ":"),
    M("preemption.victims_oldest_first", "preemption",
      "YuniKorn objects/preemption.go sortVictimsForPreemption: newer victims first",
      preemptor, "victim_order", "-alloc.seq)", "alloc.seq)"),
    # From YuniKorn's history (gang, preemption, reservations): each a fixed bug of that kind.
    M("preemption.unguaranteed_leaf_triggers", "preemption",
      "yunikorn-behaviour 2.3 'Within guarantee' (law 4): a leaf with no guarantee on its path "
      "is never within it, so its asks never preempt (YUNIKORN-1951)",
      preemptor.Trial, "within",
      "    if not leaf.guaranteed:\n        return False\n", ""),
    M("preemption.reserved_only_within_headroom", "preemption",
      "yunikorn-behaviour 2.5 step 7: the chosen node is reserved for the ask even when its "
      "queue headroom does not fit it yet (YUNIKORN-2270)", victims, "commit",
      "    if mine not in node.reservations:\n",
      "    if (mine not in node.reservations\n"
      "            and not reservations.eligibility.queue_headroom(app, ask)):\n"),
    M("reservations.kept_when_placed_elsewhere", "reservations",
      "004 reservations: an ask placed on another node than the one it reserved frees the "
      "reserved node (YUNIKORN-2978)", allocate, "allocate",
      "    if p.reservations:\n        reservations.cancel(p, app.id, ask.key)\n",
      "    if p.reservations.get((app.id, ask.key)) is node:\n"
      "        reservations.cancel(p, app.id, ask.key)\n"),
    M("reservations.reserved_without_predicates", "reservations",
      "002 Predicates (allocate=false) with 004 reservations: a node is reserved only if the "
      "RM's predicates accept the ask there (YUNIKORN-87)", allocate, "reserve_or_fail",
      "        if res.fits(ask.resource, res.sub(node.capacity, node.occupied)) and \\\n"
      "                predicates(p, ask, node, False):",
      "        if res.fits(ask.resource, res.sub(node.capacity, node.occupied)):"),
    M("preemption.required_waits_behind_reservation", "reservations",
      "yunikorn-behaviour 2.6 step 1: a required-node ask cancels an ordinary ask's "
      "reservation of its node; only other required-node asks' stay (YUNIKORN-1398)",
      required_node, "try_required",
      "        if other_ask is not None and other_ask.required_node:",
      "        if other_ask is not None:"),
    M("gang.extra_real_asks_wait", "gang",
      "001 'Scheduler logic changes' with yunikorn-behaviour 2.7: a real ask of a task group "
      "with no placeholder left to replace is scheduled as a normal ask (YUNIKORN-1242)",
      cycle, "try_leaf",
      "                if gang.wait_for_preempted(p, app, ask):\n                    continue\n",
      "                continue\n"),
    M("preemption.required_victims_by_age_only", "preemption",
      "yunikorn-behaviour 2.6 step 2: a required-node ask's victims go lowest priority first "
      "(YUNIKORN-1184)", required_node, "choose",
      "key=lambda a: (_kind(a), a.priority, -a.seq))", "key=lambda a: (_kind(a), -a.seq))"),
    M("gang.timeout_releases_replaced_placeholder", "gang",
      "001 'Cleanup' with step 2: the placeholder timeout leaves a placeholder already being "
      "replaced alone (YUNIKORN-586)", gang, "release_placeholders",
      '        if alloc.placeholder and alloc.state == "Allocated":',
      '        if alloc.placeholder and alloc.state == "Releasing":\n'
      "            ledger.report_release(p, alloc, TT.TIMEOUT, message)\n"
      '        if alloc.placeholder and alloc.state == "Allocated":'),
    # Routing by the partition a request names (002 partitionName; YuniKorn looks there only).
    M("routing.ask_to_applications_partition", "asks",
      "002 AllocationAsk.partitionName: an ask goes to the partition it names; one naming "
      "a partition that does not hold its application is rejected", Scheduler,
      "_seed_allocation", "        partition = self._partition(rm, ask.partition_name)\n",
      "        partition = next((x for x in rm.partitions.values()\n"
      "                          if ask.application_id in x.apps), None) \\\n"
      "            or self._partition(rm, ask.partition_name)\n"),
    M("routing.ask_release_anywhere", "releases",
      "002 AllocationAskRelease.partitionName: an ask release naming a partition that does "
      "not hold the application is ignored, not confirmed", Scheduler, "_seed_allocation",
      "            p = self._partition(rm, ask_rel.partition_name)\n",
      "            p = next((x for x in rm.partitions.values()\n"
      "                      if ask_rel.application_id in x.apps), None) \\\n"
      "                or self._partition(rm, ask_rel.partition_name)\n"),
    M("routing.release_anywhere", "releases",
      "002 AllocationRelease.partitionName: a release or a confirmation naming a partition "
      "that does not hold the allocation is ignored", Scheduler, "_seed_allocation",
      "            p = self._partition(rm, rel.partition_name)\n",
      "            p = next((x for x in rm.partitions.values()\n"
      "                      if rel.uuid in x.allocations), None) \\\n"
      "                or self._partition(rm, rel.partition_name)\n"),
    M("routing.removal_anywhere", "lifecycle",
      "002 RemoveApplicationRequest.partitionName: a removal naming a partition that does "
      "not hold the application is ignored", Scheduler, "update_application",
      "            partition = self._partition(rm, remove.partition_name)\n",
      "            partition = next((x for x in rm.partitions.values()\n"
      "                              if remove.application_id in x.apps), None) \\\n"
      "                or self._partition(rm, remove.partition_name)\n"),
    # Placement rules (YuniKorn's placement rules; 002 AddApplicationRequest.queueName only
    # says "according to policy"), each read independently by ``model.place``.
    M("placement.later_rules_ignored", "ACL/placement",
      "YuniKorn placement: rules are tried in order until one places the application",
      apps, "place", "    for rule in rules or (_IMPLICIT,):\n",
      "    for rule in (rules or (_IMPLICIT,))[:1]:\n"),
    M("placement.rule_error_falls_through", "ACL/placement",
      "YuniKorn PlaceApplication: a rule that errs (an invalid queue name, a parent rule "
      "naming a leaf) rejects the application; no later rule or root.default is tried",
      apps, "place", "        if isinstance(path, _Error):\n            return ",
      "        if isinstance(path, _Error):\n            continue\n            return "),
    M("placement.created_below_leaf", "ACL/placement",
      "YuniKorn createQueue: no queue is created below a leaf queue; the application "
      "placed there is rejected", apps, "check_submission",
      "        if queue.is_leaf:\n", "        if False:\n"),
    M("placement.refusal_rejects", "ACL/placement",
      "YuniKorn PlaceApplication: a rule whose leaf is draining or whose queue the user may "
      "not submit to fails like a rule naming a parent, and the next rule is tried",
      apps, "place", "            return taken\n        refused.append(taken)\n    if forced:",
      "            return taken\n        return taken\n    if forced:"),
    M("placement.default_queue_ignored", "ACL/placement",
      "YuniKorn PlaceApplication: an application no rule places goes to root.default when "
      "that leaf exists and takes it", apps, "place",
      "    if lookup(DEFAULT_QUEUE) is not None:\n", "    if False:\n"),
    M("placement.default_queue_unchecked", "ACL/placement",
      "YuniKorn PlaceApplication: root.default takes what no rule placed only if the user "
      "may submit there and it is not draining", apps, "place",
      "        taken = _taken(DEFAULT_QUEUE, lookup, refusal)\n",
      "        taken = Placement(DEFAULT_QUEUE)\n"),
    M("placement.forced_not_recovered", "ACL/placement",
      "YuniKorn placement.go buildRules and recovery_rule.go: the recovery rule, always "
      "last, sends a force-created application no rule places to root.@recovery@",
      apps, "place", "    if forced:\n", "    if False:\n"),
    M("placement.deny_filter_allows", "ACL/placement",
      "YuniKorn placement: a deny filter skips the rule for the users it matches",
      placement, "_filter_allows", 'allow = f.type != "deny"', "allow = True"),
    M("placement.empty_deny_filter_allows", "ACL/placement",
      "YuniKorn placement/filter.go allowUser: a filter without users or groups gives its "
      "type to everyone; an empty deny filter denies all (TestAllowNoLists)",
      placement, "_filter_allows", "    if not f.users and not f.groups:\n        return allow\n",
      "    if not f.users and not f.groups:\n        return True\n"),
    M("placement.filter_expression_whole_name", "ACL/placement",
      "YuniKorn placement/filter.go filterUser: a lone expression entry matches anywhere in "
      "the name (Go MatchString), not only the whole name",
      placement, "_listed", "return re.search(entries[0], name) is not None",
      "return re.fullmatch(entries[0], name) is not None"),
    M("placement.root_parent_unqualified", "ACL/placement",
      "YuniKorn placement/*_rule.go placeApplication: a parent rule giving 'root' is "
      "qualified again, so the queue is root.root.<name> (TestUserRuleParent)",
      placement, "_rule_path",
      'parent = given if given.startswith(ROOT_QUEUE + ".") else',
      "parent = given if given.startswith(ROOT_QUEUE) else"),
    M("placement.tag_path_one_name", "ACL/placement",
      "YuniKorn placement/tag_rule.go: a tag value starting root. is a full queue path "
      "(TestTagRulePlace)", placement, "_rule_path",
      'name in ("provided", "tag") and raw.startswith', 'name == "provided" and raw.startswith'),
    M("placement.parent_filter_ignored", "ACL/placement",
      "YuniKorn placement: a parent rule's own filter can fail the rule",
      placement, "_rule_path",
      "given = _rule_path(rule.parent, queue_name,",
      'given = _rule_path(rule.parent.model_copy(update={"filter": type(rule.filter)()}), '
      "queue_name,"),
    M("placement.dot_kept", "ACL/placement",
      "YuniKorn placement: a dot in a user name or tag value becomes _dot_ in the queue name",
      placement, "_clean", 'return part.replace(".", "_dot_")', "return part"),
    M("placement.parent_queue_taken", "ACL/placement",
      "YuniKorn placement: an application goes to a leaf; a rule naming a parent fails",
      placement, "_taken", "    if found is not None and not found.is_leaf:\n",
      "    if False:\n"),
    M("recovery.other_node_attached", "recovery",
      "001 'Application recovery': a node registers with its own allocations; one the RM "
      "reports on another node is refused with the node", nodes, "_unattachable",
      "    if a.node_id and a.node_id != node_id:\n", "    if False:\n"),
    M("recovery.ended_application_recovered", "recovery",
      "001 'Application recovery': allocations are recovered for the applications the RM "
      "added again, not for one that has ended", nodes, "_unattachable",
      "if app is None or app.state not in RECOVERABLE or app.queue is None:",
      "if app is None or app.queue is None:"),
    M("apps.unknown_gang_style_accepted", "ACL/placement",
      "002 AddApplicationRequest.gangSchedulingStyle is Hard or Soft: another value is "
      "refused (docs/design-notes.md, 'Gang scheduling')", apps, "check_submission",
      '    if style not in ("Hard", "Soft"):', "    if False:"),
    M("placement.case_sensitive", "ACL/placement",
      "YuniKorn: queue names are case-insensitive (stored and looked up in lower case)",
      placement, "fold", "return name.translate(_ASCII_LOWER)", "return name"),
    # Orders kept between steps (``policies``): each misses one re-key, so an order goes
    # stale; ``scheduling.order`` and ``nodes.order`` read the order afresh every step.
    M("sorting.app_usage_not_rekeyed", "sorting",
      "004 'Implementation': a fair leaf orders its applications by their usage as it is "
      "after each allocation", ledger, "bind", "    policies.app_used(app)\n", ""),
    M("sorting.queue_usage_not_rekeyed", "sorting",
      "004 'Implementation': a parent orders its children by their usage as it is after "
      "each allocation", ledger, "bind", "            policies.queue_changed(q)\n", ""),
    M("sorting.fair_base_partition_only", "sorting",
      "004 'Implementation' (YuniKorn's fair sort): a leaf's applications compare usage "
      "shares of the leaf's guarantee when it has one", policies.AppOrder, "_rebuild",
      "self._base = dict(queue.guaranteed or capacity)", "self._base = dict(capacity)"),
    M("sorting.stateaware_starting_uncounted", "sorting",
      "001 'Handling queue with a FAIR sort policy': a stateaware leaf starts no other "
      "application while one is starting", policies.AppOrder, "_state_aware",
      "self._starting += (entry[2] if entry else 0) - (old[2] if old else 0)",
      "self._starting += 0"),
    M("sorting.binpacking_resort_fair", "sorting",
      "004 'Implementation': under binpacking a node whose usage changed keeps its place "
      "by binpacking (the most used first)", policies.NodeCollection, "update",
      "key = (-score if self._binpacking else score, node.id)", "key = (score, node.id)"),
    M("sorting.woken_application_left_out", "sorting",
      "004 'Implementation': every application with pending asks is in its leaf's order "
      "at each scheduling call (one set aside within a call comes back)",
      state.PartitionState, "wake", "            policies.app_changed(app)\n",
      "            pass\n"),
    M("sorting.woken_queue_left_out", "sorting",
      "004 'Implementation': every queue with pending asks is in its parent's order at "
      "each scheduling call (one set aside within a call comes back)",
      state.PartitionState, "wake", "            policies.queue_changed(queue)\n",
      "            pass\n"),
    M("preemption.preempting_kept_after_release", "preemption",
      "YuniKorn preemption: a victim counts as being preempted on its queues until it "
      "ends, and no longer", ledger, "unbind",
      "                res.sub_from(q.preempting, r)\n", "                pass\n"),
    M("gang.placeholder_room_ignores_running", "gang",
      "001 'Total placeholder size': the placeholders already running count against the "
      "application's placeholderAsk", asks, "check_placeholder_room",
      "    wanted = dict(app.placeholder_allocated)\n", "    wanted = {}\n"),
    M("asks.resized_resend_ignored", "asks",
      "003 'ask add' (a known key is an update; docs/design-notes.md 'Ask updates'): a "
      "running ask sent again with another size asks for no new repeat and is refused",
      asks, "_same", "return (res.equal(ask.resource, resource) and ask.max_allocations",
      "return (ask.max_allocations"),
    M("asks.update_not_above_accepted", "asks",
      "003 'ask add' (docs/design-notes.md 'Ask updates'): an update whose maxAllocations "
      "is not above the repeats already allocated is refused, the old ask kept",
      asks, "add_ask", "    if not reason and msg.max_allocations <= allocated_before:\n",
      "    if False:\n"),
    # What the core tells the RM: 002's message fields and the decision order.
    M("messages.allocation_tags_dropped", "messages",
      "002 Allocation.allocationTags: the allocation carries its ask's tags",
      outbox, "_allocation_messages", '"allocation_tags": dict(a.tags),',
      '"allocation_tags": {},'),
    M("messages.allocation_priority_dropped", "messages",
      "002 Allocation.priority: the allocation carries its ask's priority",
      outbox, "_allocation_messages", '"priority": a.priority,', '"priority": 0,'),
    M("messages.transition_time_in_seconds", "messages",
      "002 UpdatedApplication.stateTransitionTimestamp: when the state changed, in "
      "nanoseconds", outbox, "_response", "state_transition_timestamp=int(ts * 1e9)",
      "state_transition_timestamp=int(ts)"),
    M("messages.decisions_merged_out_of_order", "messages",
      "001 'AllocationRelease Response and Request': a release names an allocation the RM "
      "was told of, so one call's decisions reach it in the order they were made",
      outbox.RMOutbox, "build", " or decision[0] < group[-1][0])", ")"),
    M("timer.fired_in_creation_order", "timeouts",
      "002 and 001 timeouts: timers due in one cycle fire in the order they fall due",
      context.Timer, "__lt__", "return (self.due, self.seq) < (other.due, other.seq)",
      "return self.seq < other.seq"),
    M("rm.paused_rm_timers_fire", "lifecycle",
      "002 RM lifecycle (docs/design-notes.md, 'The RM lifecycle's timeout has no length'): "
      "a paused RM's timers do not fire", Scheduler, "_fire_timers",
      'if rm is None or rm.state != "Running" or partition is None:',
      "if rm is None or partition is None:"),
    # Queues a placement rule creates, and queues a reload removes (protocol.config_applied
    # reads the shim's record of each creation, and what the configuration no longer has).
    M("queues.created_leaf_no_template_guarantee", "queues",
      "YuniKorn childtemplate (004 'Configurations & Semantics'): a leaf created below a "
      "parent takes the template's guaranteed", queues, "create",
      "            queue.guaranteed = dict(template.resources.guaranteed) or None\n", ""),
    M("queues.created_leaf_no_template_maxapps", "queues",
      "YuniKorn childtemplate: a leaf created below a parent takes the template's "
      "maxapplications", queues, "create",
      "            queue.max_applications = template.maxapplications\n", ""),
    M("queues.created_inherits_parent_properties", "queues",
      "YuniKorn YUNIKORN-809 (the seeds are silent, docs/design-notes.md 'Queue properties "
      "are inherited'): a queue a placement rule creates takes no properties from its "
      "parent; a created leaf takes its parent's childtemplate's only (fifo without one)",
      queues, "create", "            else {}\n", "            else dict(parent.properties)\n"),
    M("preemption.created_template_ignored", "preemption",
      "YuniKorn YUNIKORN-809: a queue a placement rule creates takes its preemption.policy "
      "from its parent's childtemplate (a disabled template: its tasks are never victims)",
      queues, "create", "preemption.configure(queue, queue.properties, inherits=False)",
      "preemption.configure(queue, {}, inherits=False)"),
    M("queues.removed_leaf_with_apps_stays_active", "queues",
      "004 'Configurations & Semantics', 003: a queue a reload removes drains (it takes no "
      "new application) even while applications still run in it",
      queues, "_drain_unconfigured", "        if queue.state == \"Active\" and queue.managed:\n",
      "        if queue.state == \"Active\" and queue.managed and not queue.apps:\n"),
    M("queues.created_never_removed", "queues",
      "YuniKorn: a queue a placement rule created is removed once it holds nothing",
      queues, "cleanup",
      "if not queue.managed and _empty(queue) and queue.parent is not None:", "if False:"),
    M("queues.finished_application_kept_in_queue", "queues",
      "003 'Operations to add/remove app' (3.2, remove app from scheduler): a finished "
      "application leaves its queue, which may then go", apps, "finish",
      "        app.queue.apps.pop(app.id, None)\n", "        pass\n"),
    M("limits.kept_on_removed_queue", "limits",
      "YuniKorn ugm: a reload clears the limits of a queue it no longer configures",
      queues, "_drain_unconfigured",
      "            queue.limits = None  # YuniKorn: a reload clears the limits it no longer sets\n",
      "            pass\n"),
    M("release.application_removal_unconfirmed", "releases",
      "002 RemoveApplicationRequest / AllocationRelease: removing an application releases "
      "its allocations, each confirmed back STOPPED_BY_RM", apps, "remove_application",
      '        ledger.report_release(p, alloc, TT.STOPPED_BY_RM, "application removed by the '
      'RM")\n', ""),
    M("nodes.missing_type_unlimited", "node actions",
      "002 NodeInfo.schedulableResource: a type the node does not list is not there (zero), "
      "not unlimited", resources, "fits",
      "if v > room.get(k, 0):", "if k in room and v > room[k]:"),
    M("quota.exact_fill_refused", "quota",
      "004 max-capacity: usage may reach the max; an ask that fills it exactly fits",
      resources, "fits_with", "used.get(k, 0) + v > limit[k]", "used.get(k, 0) + v >= limit[k]"),
    M("sorting.unguaranteed_usage_weightless", "sorting",
      "YuniKorn fair sorting: usage of a type without a guarantee weighs in full, not as "
      "nothing", resources, "shares", "out.append(float(v))", "out.append(0.0)"),
    M("scheduling.failed_size_memo_inverted", "scheduling",
      "004 'skip requests that can not be satisfied and find the next': only an ask at least "
      "as large as one that found no node is skipped", resources.ShapeMemo, "covers",
      "if fits(shape, r):", "if fits(r, shape):"),
    M("reservations.reserved_past_occupied", "reservations",
      "004 reservations with 002 occupiedResource: a node is reserved only for an ask that "
      "could ever fit beside what the RM occupies there", allocate, "reserve_or_fail",
      "res.fits(ask.resource, res.sub(node.capacity, node.occupied))",
      "res.fits(ask.resource, node.capacity)"),
    M("gang.parked_ask_placed_again", "gang",
      "001 step 2: a real ask waiting for its placeholder's release is not placed again "
      "meanwhile", cycle, "try_leaf",
      "if ask.parked_on or (app.id, ask.key) in failed:", "if (app.id, ask.key) in failed:"),
    M("quota.reserved_path_past_max", "quota",
      "004 max-capacity with 004 reservations: an ask placed on its reserved node still "
      "stays within every max of its path", cycle, "allocate_reserved",
      "                and not eligibility.queue_headroom(app, ask)\n"
      "                and allocate.predicates(p, ask, node, True)):",
      "                and allocate.predicates(p, ask, node, True)):"),
    M("quota.maxapplications_leaf_only", "quota",
      "YuniKorn maxapplications: a parent's maxapplications counts every application below it",
      eligibility, "queue_slot", "for q in app.queue.ancestry()", "for q in (app.queue,)"),
    M("accounting.parent_pending_kept", "quota",
      "003 'Queue' (pending resources on every level): an allocated repeat leaves the pending "
      "of every queue on the path", ledger, "consume_repeat",
      "for q in app.queue.ancestry() if app.queue else ():",
      "for q in (app.queue,) if app.queue else ():"),
    M("nodes.duplicate_registration_accepted", "node actions",
      "002 NodeInfo / RejectedNode: a node id the partition already has is rejected with "
      "a reason", nodes, "add_node", "elif info.node_id in p.nodes:", "elif False:"),
    M("nodes.update_keeps_order", "node actions",
      "004 node sorting: a node whose capacity or occupied resource the RM changed takes its "
      "new place in the order", nodes, "update_node",
      "        p.nodes_changed()\n        p.node_order.update(node)\n",
      "        p.nodes_changed()\n"),
    M("lifecycle.decommission_leaves_application", "lifecycle",
      "001 'Application completion': an application whose last allocations went with a "
      "decommissioned node starts waiting like any other", nodes, "remove_node",
      "    for app in touched:\n        apps.after_release(p, app)",
      "    for app in touched:\n        pass"),
    M("quota.removed_application_still_running", "quota",
      "YuniKorn maxapplications: an application the RM removed no longer counts as running",
      apps, "remove_application", "    ledger.update_running_count(p, app)\n", ""),
    M("queues.draining_parent_accepts_apps", "queues",
      "003 'Update and Remove partition' (removed queues drain): no new application below a "
      "draining queue, in a leaf a placement rule created there either", apps,
      "placement_refusal", "    inactive = next((q for q in queue.ancestry() if",
      "    inactive = next((q for q in (queue,) if"),
    M("queues.created_below_draining_queue", "queues",
      "003 'Update and Remove partition' (removed queues drain) and YuniKorn addChildQueue: "
      "no queue is created below a draining queue", apps, "check_submission",
      "        for q in queue.ancestry():\n            if q.state",
      "        for q in ():\n            if q.state"),
    M("queues.created_kept_after_app_removal", "queues",
      "YuniKorn: a queue a placement rule created goes once the RM removes its last "
      "application", apps, "remove_application", "    queues.cleanup(p)\n", ""),
    M("reservations.cancel_keeps_memos", "reservations",
      "004 'Implementation' (skip only what can not be satisfied now): a reservation given "
      "up mid-cycle opens its node to the asks that failed earlier in the same cycle",
      reservations, "cancel", "        p.reset_memos()\n", "        pass\n"),
    M("priority.swap_held_ask_counts", "priority",
      "YuniKorn allocateAsk, updateAskMaxPriority: a real ask matched to a placeholder is "
      "allocated at the match and leaves its application's priority",
      priority, "app_priority", "first = app.pending_asks.first_counted()",
      "first = app.pending_asks.first()"),
)


DIALECT: tuple[Mutant, ...] = (
    M("dialect.create_drain_schedulable", "today's SI",
      "2858f4d NodeInfo.CREATE_DRAIN: the node joins Draining", dialect.TodayRequests, "node",
      "        if drain and p.nodes.get(info.node_id) not in (None, known):",
      "        if False:"),
    M("dialect.timeout_withdraws_ask", "today's SI",
      "YuniKorn partition.go removeAllocation: a release by key of type TIMEOUT leaves the "
      "key's pending ask", dialect.TodayRequests, "_release",
      "if pending and ttype != si.TerminationType.TIMEOUT:", "if pending:"),
    M("dialect.ask_releases_dropped", "today's SI",
      "2858f4d AllocationResponse.released: ask releases arrive there, by key (releasedAsks "
      "is gone)", dialect, "today_allocation_response",
      "*response.released, *response.released_asks]", "*response.released]"),
    M("dialect.rejections_lost", "today's SI",
      "2858f4d AllocationResponse.rejectedAllocations: every refused pod is answered there",
      dialect, "today_allocation_response", "for r in response.rejected])",
      "for r in response.rejected[:0]])"),
    M("dialect.bound_pod_unanswered", "today's SI",
      "YuniKorn context.go processAllocations: a pod bound to a node is heard back in new",
      nodes, "bind_allocation", "    p.core.outbox(p.rm_id).allocated(alloc)\n", ""),
    M("dialect.foreign_release_keeps_occupied", "today's SI",
      "YuniKorn partition.go removeForeignAllocation: a foreign pod's release frees its node",
      dialect.TodayRequests, "_release_foreign", "    self._occupy(p, book, gone[0])",
      "    pass"),
    M("dialect.resize_counted_twice", "today's SI",
      "YuniKorn UpdateAllocationResources: a resized pod counts its new size instead of the "
      "old one on every account", nodes, "resize_allocation", "    ledger.unbind(p, alloc)\n",
      ""),
    M("dialect.rollback_not_pending", "today's SI",
      "YUNIKORN-3316: a pod the RM could not bind is pending again and scheduled again",
      releases, "roll_back", "    ledger.add_pending(app, again)\n", ""),
    M("dialect.resent_key_node_unchecked", "today's SI",
      "YuniKorn partition.go UpdateAllocation: a pod naming a node that does not exist is "
      "refused, even for a key that runs", dialect.TodayRequests, "_bound_pod",
      "    if placed and pod.node_id not in p.nodes:", "    if False:"),
    M("dialect.change_detail_lost", "today's SI",
      "2858f4d EventRecord.eventChangeDetail: an event carries what exactly changed",
      dialect, "change_detail", '    if not text.endswith(")"):', "    if True:"),
)
"""Broken translations of today's SI (``scheduler/dialect.py``) and of the core operations
only it calls: the checker drives today's dialect through its own reading
(``invariants/modelshim/bridge.py``), so each must be caught like any broken core."""
MUTANTS = (*MUTANTS, *DIALECT)


PARITY: tuple[Mutant, ...] = (
    M("sorting.queues_ignore_pending", "sorting",
      "YuniKorn sortQueuesByPriorityAndFairness: queues tied on priority and usage go by "
      "more pending first, not by path", policies.ChildOrder, "_set",
      "more = -sum(child.pending.values())", "more = 0"),
)
"""Cores that break a rule where this core follows YuniKorn once more (queue ties, the
RM's releases of any type)."""
MUTANTS = (*MUTANTS, *PARITY)


RECOVERY: tuple[Mutant, ...] = (
    M("apps.force_create_spelled_one_way", "recovery",
      "YuniKorn IsAppCreationForced: the force-create tag's name in any case and a value "
      "ParseBool reads as true (1, t, True...) force an application in",
      apps, "force_created", "    return value in TRUE_WORDS\n",
      '    return value == "true"\n'),
)
"""Cores that break how a recovered application with running pods is taken back."""
MUTANTS = (*MUTANTS, *RECOVERY)


RESERVING: tuple[Mutant, ...] = (
    M("reservations.reserved_at_once", "reservations",
      "YuniKorn application.go tryNodes (reservationDelay): an ordinary ask reserves a "
      "node only once it is older than the reservation delay", allocate, "reserve_or_fail",
      "    if not may_reserve(p, ask):\n", "    if False:\n"),
    M("reservations.ordinary_shares_node", "reservations",
      "YuniKorn node.go Reserve and application.go tryNodes: an ordinary "
      "ask reserves only a node nothing else has reserved", allocate, "reserve_or_fail",
      "        if node.reservations:\n            continue",
      "        if False:\n            continue"),
    M("reservations.required_gives_up_on_shared_node", "reservations",
      "YuniKorn node.go Reserve and application.go tryRequiredNode (behaviour 2.6 "
      "step 1 describes an older YuniKorn): a required-node ask whose node "
      "another required-node ask holds reserves it too, and takes its room", required_node,
      "try_required",
      "        if other_ask is not None and other_ask.required_node:\n            continue",
      "        if other_ask is not None and other_ask.required_node:\n            return NOTHING"),
)
"""Cores that break how YuniKorn makes reservations: when, and how many on one node."""
MUTANTS = (*MUTANTS, *RESERVING)
DRAIN_AND_TAGS: tuple[Mutant, ...] = (
    M("queues.removed_empty_at_once", "queues",
      "YuniKorn MarkQueueForRemoval, cleanQueues: a queue a reload removes drains, empty or "
      "not, and only the periodic cleanup removes it",
      queues, "cleanup",
      "if not queue.managed and _empty(queue) and queue.parent is not None:",
      'if (not queue.managed or queue.state == "Draining") and _empty(queue) '
      "and queue.parent is not None:"),
    M("queues.cleanup_never_runs", "queues",
      "YuniKorn cleanQueues (every 10 s): a drained, empty queue is removed by the next "
      "cleanup", queues, "clean_drained",
      "if token != p.cleanup_token or not p.cleanup_armed:", "if True:"),
    M("apps.namespace_tags_ignored", "queues",
      "YuniKorn AddApplication: an application's namespace quota tags set the limits of the "
      "unmanaged leaf it enters", apps, "apply_namespace_quota",
      "if queue.managed or queue.path == RECOVERY_QUEUE or not quota.is_set:",
      "if True:"),
    M("apps.namespace_quota_keeps_guarantee", "queues",
      "YuniKorn SetResources: a namespace quota without a guarantee clears the leaf's "
      "guarantee (the template's included)", apps, "apply_namespace_quota",
      "queue.guaranteed = dict(quota.guaranteed) if quota.guaranteed is not None else None",
      "queue.guaranteed = dict(quota.guaranteed) if quota.guaranteed is not None else "
      "queue.guaranteed"),
    M("apps.gang_check_ignores_namespace_quota", "queues",
      "YuniKorn AddApplication: the namespace tags are set before the gang check, which so "
      "holds the placeholders to the tags' max", apps, "check_submission",
      "            if quota.sets_resources:\n", "            if False:\n"),
)
"""Cores that break how a queue a reload removes goes, and what namespace tags set."""
MUTANTS = (*MUTANTS, *DRAIN_AND_TAGS)


QUOTA_PREEMPTION: tuple[Mutant, ...] = (
    M("quota_preemption.delay_ignored", "preemption",
      "YuniKorn setPreemptionTime: a lowered max is enforced only once quota.preemption.delay "
      "has passed since the reload", quota_preemption, "after_reload",
      "queue.quota_start = p.core.clock.now() + delay if start is None else start + shift",
      "queue.quota_start = p.core.clock.now() if start is None else start + shift"),
    M("quota_preemption.switch_ignored", "preemption",
      "YuniKorn triggerQuotaPreemption: nothing is preempted for a quota unless the "
      "partition's preemption.quotapreemptionenabled is on", quota_preemption, "run_due",
      'if not p.quota_preemption_enabled or p.state == "Stopped":',
      'if p.state == "Stopped":'),
    M("quota_preemption.beyond_amount", "preemption",
      "YuniKorn preemptVictims: victims are taken only while their total stays within the "
      "preemptable amount", quota_preemption, "choose",
      "        if all(after[k] <= v for k, v in amount.items() if k in after):\n",
      "        if True:\n"),
)
"""Cores that break quota preemption: when a lowered max is enforced, and how much."""
MUTANTS = (*MUTANTS, *QUOTA_PREEMPTION)


LITERAL: tuple[Mutant, ...] = (
    M("gang.literal_placeholder_timeout", "gang",
      "001 read literally: the placeholder timeout acts only while placeholder asks are "
      "pending (docs/design-notes.md finding 1: an Accepted gang then waits forever)",
      gang, "placeholder_timeout",
      '    if app.state in ("Running", "Completing") and not pending_ph:\n'
      '        release_placeholders(p, app, "placeholder timeout: not replaced in time")\n'
      "        return\n",
      "    if not pending_ph:\n        return\n"),
)
"""Cores that follow a seed to the letter where our reading departs from it: the explorer
finds them in a state's quiescent closure; the random checker also by ``protocol.timers``
(the timer that must have fired by a later cycle)."""


STALLED: tuple[Mutant, ...] = (
    M("preemption.node_shortage_ignored", "preemption",
      "YuniKorn Application.tryAllocate: preemption is attempted also when the headroom fits "
      "but no node takes the ask (case b), not only when the headroom fails",
      cycle, "try_leaf",
      "                if preemptor.try_preempt(p, app, ask, True, budget):\n",
      "                if False and preemptor.try_preempt(p, app, ask, True, budget):\n"),
)
"""Cores that never break a safety rule but leave work waiting forever where YuniKorn's
rules say it must go on: only a liveness property catches them (the explorer in a state's
quiescent closure, the random checker at a case's end, driven to rest)."""


def _servers() -> tuple[Mutant, ...]:
    """Broken servers: edits of ``scheduler/rpc`` that lose or repeat an answer on its way
    to the client. The core is untouched, so only ``check --transport grpc`` can catch them
    (``tests/test_checker_wire.py`` hunts each); the default self-test runs in process and
    does not count them. Empty without the ``grpc`` extra."""
    try:
        from scheduler.rpc import session, streams
    except ImportError:
        return ()
    return (
        M("rpc.release_answer_sent_twice", "rpc",
          "002 'RPC Interface': each answer reaches the RM's stream once (a session that "
          "queues an AllocationResponse carrying releases twice, as a retry would)",
          session.Session, "send",
          "    if not self.outboxes[kind].put(data):\n",
          "    if getattr(response, \"released\", None):\n"
          "        data = data + data\n"
          "    if not self.outboxes[kind].put(data):\n"),
        M("rpc.callback_waits_for_reader", "rpc",
          "002 'RPC Interface': one RM's streams never hold up the core (a session whose "
          "callback waits until the RM read what it was sent before)",
          session.Session, "send",
          "    if not self.outboxes[kind].put(data):\n",
          "    while self.outboxes[kind]._items:\n"
          "        threading.Event().wait(0.01)\n"
          "    if not self.outboxes[kind].put(data):\n"),
        M("rpc.busy_outbox_drops", "rpc",
          "002 'RPC Interface': every answer reaches the RM's stream (an outbox that drops a "
          "message while the writer has not taken the one before it)",
          streams.Outbox, "put",
          "        if self._size and self._size + size > self._limit:\n",
          "        if self._items:\n            return True\n"
          "        if self._size and self._size + size > self._limit:\n"),
    )


SERVERS: tuple[Mutant, ...] = _servers()
"""Broken servers between the model shim and the core (``invariants/modelshim/loopback.py``)."""


def _edited(mutant: Mutant) -> Callable[..., Any]:
    original = getattr(mutant.owner, mutant.function)
    source = textwrap.dedent(inspect.getsource(original))
    if mutant.old not in source:
        raise LookupError(f"mutant {mutant.name}: the code to edit is no longer in "
                          f"{mutant.function}; update the mutant")
    code = compile(source.replace(mutant.old, mutant.new, 1), f"<mutant {mutant.name}>",
                   "exec", flags=__future__.annotations.compiler_flag, dont_inherit=True)
    module = inspect.getmodule(original)
    namespace: dict[str, Any] = dict(vars(module)) if module is not None else {}
    exec(code, namespace)
    edited = namespace[mutant.function]
    assert isinstance(edited, FunctionType)
    return edited


@contextmanager
def applied(mutant: Mutant) -> Iterator[None]:
    """The core with ``mutant``'s edit, for the duration of the block."""
    original = getattr(mutant.owner, mutant.function)
    setattr(mutant.owner, mutant.function, _edited(mutant))
    try:
        yield
    finally:
        setattr(mutant.owner, mutant.function, original)


def by_name(name: str) -> Mutant:
    for mutant in (*MUTANTS, *LITERAL, *STALLED, *SERVERS):
        if mutant.name == name:
            return mutant
    raise KeyError(name)
