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

from invariants.selftest import (
    cores_gang,
    cores_lifecycle,
    cores_nodes,
    cores_placement,
    cores_preemption,
    cores_quota,
    cores_scheduling,
)
from invariants.selftest.edits import M, Mutant, applied
from scheduler import (
    dialect,
    policies,
)
from scheduler.partition import (
    allocate,
    apps,
    cycle,
    gang,
    nodes,
    queues,
    quota_preemption,
    releases,
    required_node,
)

__all__ = ["LITERAL", "MUTANTS", "SERVERS", "STALLED", "Mutant", "applied", "by_name"]

MUTANTS: tuple[Mutant, ...] = (
    *cores_gang.CORES,
    *cores_scheduling.CORES,
    *cores_quota.CORES,
    *cores_preemption.CORES,
    *cores_nodes.CORES,
    *cores_lifecycle.CORES,
    *cores_placement.CORES,
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


def by_name(name: str) -> Mutant:
    for mutant in (*MUTANTS, *LITERAL, *STALLED, *SERVERS):
        if mutant.name == name:
            return mutant
    raise KeyError(name)
