"""Broken cores of scheduling: the cycle, the sort policies and priorities, asks, and the
core's messages."""

from __future__ import annotations

from invariants.selftest.edits import M, Mutant
from scheduler import (
    Scheduler,
    outbox,
    policies,
    priority,
    resources,
)
from scheduler.partition import (
    asks,
    cycle,
    ledger,
    queues,
    state,
    waiting,
)

CORES: tuple[Mutant, ...] = (
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
    M("priority.reload_not_applied", "priority",
      "YuniKorn Queue.ApplyConf: a reload applies a queue's priority.offset, priority.policy "
      "and application.sort.priority to the queue priorities at once", priority, "rebuild",
      "    walk(root)\n", "    pass\n"),
    M("priority.created_leaf_no_offset", "priority",
      "YuniKorn priority 3.1: a leaf a placement rule creates takes priority.offset and "
      "priority.policy from its parent's childtemplate (YUNIKORN-1486)", queues, "create",
      "        priority.configure(queue, queue.properties)\n",
      "        priority.configure(queue, {})\n"),
    # Routing by the partition a request names (002 partitionName; YuniKorn looks there only).
    M("routing.ask_to_applications_partition", "asks",
      "002 AllocationAsk.partitionName: an ask goes to the partition it names; one naming "
      "a partition that does not hold its application is rejected", Scheduler,
      "_seed_allocation", "        partition = rm.partition(ask.partition_name)\n",
      "        partition = next((x for x in rm.partitions.values()\n"
      "                          if ask.application_id in x.apps), None) \\\n"
      "            or rm.partition(ask.partition_name)\n"),
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
    M("messages.schedule_count_short", "messages",
      "The API: schedule() returns the number of allocations it made (the background loop "
      "sleeps on 0)", cycle, "schedule",
      "            if step == ALLOCATED:\n                count += 1\n",
      "            if step == ALLOCATED and count == 0:\n                count += 1\n"),
    M("sorting.unguaranteed_usage_weightless", "sorting",
      "YuniKorn fair sorting: usage of a type without a guarantee weighs in full, not as "
      "nothing", resources, "shares", "out.append(float(v))", "out.append(0.0)"),
    M("scheduling.failed_size_memo_inverted", "scheduling",
      "004 'skip requests that can not be satisfied and find the next': only an ask at least "
      "as large as one that found no node is skipped", resources.ShapeMemo, "covers",
      "if fits(shape, r):", "if fits(r, shape):"),
    M("priority.swap_held_ask_counts", "priority",
      "YuniKorn allocateAsk, updateAskMaxPriority: a real ask matched to a placeholder is "
      "allocated at the match and leaves its application's priority",
      priority, "app_priority", "first = app.pending_asks.first_counted()",
      "first = app.pending_asks.first()"),
)
