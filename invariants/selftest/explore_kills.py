"""The explorer's self-test: which scope finds which deliberately broken core, at what depth.

Each broken core of ``invariants/selftest/mutants.py`` (the checker's set and the
literal readings of the seeds) is explored in every scope, in its own
process. Breadth-first search is deterministic, so a row is the same on
every run; its depth is the length of a shortest counterexample in that
scope. ``yunikorn-fsm explore --self-test`` prints the table;
``docs/checker.md`` records it.
"""

from __future__ import annotations

import multiprocessing
import sys
from dataclasses import dataclass

from invariants.explore.named_scopes import SCOPES
from invariants.explore.search import Options, search
from invariants.selftest.mutants import LITERAL, MUTANTS, STALLED, applied, by_name

BEYOND_SCOPES: dict[str, str] = {
    "preemption.disabled_ignored": "no scope has a preemption-disabled leaf",
    "preemption.victims_within_guarantee": "every leaf of the preemption scope has a "
                                           "guarantee",
    "preemption.fence_ignored": "no scope has a preemption fence",
    "apps.force_create_spelled_one_way": "a scope's restart tags a recovered application "
                                         "force-create=true, as a Kubernetes shim does; the "
                                         "random checker varies the spelling",
    "preemption.switch_ignored": "no scope turns preemption off",
    "preemption.ask_not_within": "no queue on the asking path but root is over its "
                                 "guarantee",
    "preemption.no_reservation": "no max in the preemption scope: the ask always holds a "
                                 "reservation when it preempts",
    "preemption.while_it_fits": "the hog's room is all or none while the late ask waits",
    "preemption.limit_held_preempts": "the preemption scope has no user or group limit",
    "gang.other_task_group_replaced": "the gang scope's application has one task group",
    "gang.timeout_from_last_placeholder": "not reached within the gang scopes' depths: "
                                          "two placeholders placed at different times, "
                                          "then the timeout",
    "apps.completed_id_blocks_resubmission": "no scope submits a completed application's "
                                             "id again",
    "acl.adminacl_ignored": "no scope's configuration has an admin ACL",
    "queues.draining_queue_accepts_apps": "no scope reloads the configuration",
    "queues.removed_leaf_with_apps_stays_active": "no scope's reload removes a queue",
    "preemption.created_template_ignored": "no scope preempts in a queue a placement rule "
                                           "creates",
    "queues.configured_again_stays_draining": "no scope reloads the configuration",
    "partitions.removed_partition_takes_nodes": "no scope reloads the configuration",
    "recovery.pending_ask_not_consumed": "not reached within the scopes' depths: a restart "
                                         "with an ask of several repeats, some running",
    "reservations.kept_after_node_shrank": "no scope shrinks a node",
    "recovery.repeated_uuid_accepted": "no scope's resync repeats a uuid",
    "rm.paused_rm_scheduled": "no scope runs a cycle while the RM is paused: a restart "
                              "registers again within the same action",
    "sorting.fifo_newest_first": "no scope submits two applications to one fifo leaf at "
                                 "different times: the scopes that move the clock (tick, "
                                 "wait) have one application per leaf, and limits', "
                                 "admission's and sorting's are all submitted at one "
                                 "instant (a tie, broken by id)",
    "priority.apps_by_policy_only": "no scope has two applications of different priorities "
                                    "in one leaf",
    "nodes.update_keeps_partition_total":
        "no scope changes a node's capacity (an UPDATE of its schedulable resource)",
    "limits.wildcard_not_on_root":
        "no scope sets a `*` user limit on root",
    "limits.parent_against_leaf_usage":
        "no user of the limits scope holds allocations in both leaves under the limited parent",
    "limits.reserved_skips_headroom":
        "no scope reserves a node for an ask of a limited user",
    "limits.wildcard_group_ignored":
        "the limits scope has no `*` group limit",
    "limits.reserved_skips_maxapplications":
        "no scope reserves a node for an application its user's maxapplications holds back",
    "preemption.victim_already_released":
        "the preemption scope preempts once: no second preemption while victims are unconfirmed",
    "preemption.unguaranteed_leaf_triggers":
        "every leaf of the preemption scope has a guarantee",
    "preemption.reserved_only_within_headroom":
        "no max in the preemption scope: the asking leaf's headroom always fits",
    "release.uuid_outside_named_application":
        "no scope releases one application's allocation under another's id (the routing "
        "scope's stray releases have one application)",
    "release.app_wide_core_type_ignored": "no scope releases without a uuid",
    "release.unsolicited_confirmation_taken":
        "no scope sends PLACEHOLDER_REPLACED of a placeholder the core is not replacing "
        "(confirm_unasked sends TIMEOUT, where the core differs only in the end state's name)",
    "placement.deny_filter_allows": "no scope's placement rule has a filter",
    "placement.parent_filter_ignored": "no scope's placement rule has a filter",
    "placement.dot_kept": "no scope places by a user name or tag value with a dot",
    "placement.parent_queue_taken":
        "no scope submits to a parent queue with a later rule that would place it",
    "placement.case_sensitive": "no scope names a queue in capitals",
    "recovery.other_node_attached":
        "every scope's resync reports each allocation on its own node",
    "recovery.ended_application_recovered":
        "every scope's resync reports only the applications the core accepted again",
    "apps.unknown_gang_style_accepted": "no scope submits a gang style other than Hard or Soft",
    "sorting.app_usage_not_rekeyed":
        "no scope's fair leaf holds, within one cycle, a running application with repeats "
        "still pending beside a rival: there an application's usage first changes with its "
        "first allocation, which also changes its state and so re-keys it",
    "sorting.fair_base_partition_only": "no scope's fair leaf has a guarantee",
    "sorting.woken_application_left_out":
        "beyond every scope: a state is thawed from its snapshot, which holds the kept "
        "orders empty (a cache, rebuilt at first use), so an order left stale when one "
        "schedule() call ends is whole again at the next action",
    "sorting.woken_queue_left_out":
        "beyond every scope, as sorting.woken_application_left_out: the kept orders are "
        "rebuilt after every thaw",
    "gang.placeholder_room_ignores_running":
        "no scope sends a gang's placeholders again while some of them run",
    "rm.paused_rm_timers_fire": "no scope runs a cycle while the RM is paused: a restart "
                                "registers again within the same action",
    "queues.created_inherits_parent_properties":
        "every leaf the template scope creates gets a childtemplate, and no scope's parent "
        "of a created queue sets a property that shows without one",
    "queues.finished_application_kept_in_queue":
        "no scope completes an application in a created queue (the template scope does not "
        "move the clock)",
    "limits.kept_on_removed_queue": "no scope's reload removes a queue that has limits",
    "sorting.unguaranteed_usage_weightless":
        "no scope's fair order is decided by usage of a type its base does not guarantee",
    "scheduling.failed_size_memo_inverted":
        "no scope has, within one cycle, an ask that finds no node before a smaller one "
        "that would fit",
    "reservations.reserved_past_occupied": "no scope's node has an occupied resource",
    "quota.maxapplications_leaf_only": "no scope sets maxapplications on a parent queue",
    "nodes.duplicate_registration_accepted": "no scope registers a known node id again",
    "nodes.update_keeps_order":
        "no scope changes a node's capacity or occupied resource (an UPDATE)",
    "queues.draining_parent_accepts_apps": "no scope's reload removes a queue",
    "placement.refusal_rejects": "no scope's rule proposes a queue that refuses the "
                                 "application: every scope's root admits everyone and no "
                                 "leaf drains",
    "placement.rule_error_falls_through": "no scope's rule can err: every parent rule is "
                                          "fixed, and every name valid",
    "placement.created_below_leaf": "no scope's application names a queue below a leaf",
    "placement.default_queue_unchecked": "no scope's root.default refuses an application "
                                         "(every scope's root admits everyone)",
    "queues.created_below_draining_queue": "no scope's reload removes a queue",
    "reservations.cancel_keeps_memos":
        "no scope's asks differ in more than one resource (every ask takes one core)",
}
"""Broken cores whose bug needs something no scope's alphabet has, and why: the random
checker's self-test finds them (``docs/checker.md``); here a miss is reported, not failed."""


@dataclass(frozen=True)
class Row:
    """One broken core against every scope: ``(scope, depth, rule)`` where it was found."""

    mutant: str
    found: tuple[tuple[str, int, str], ...]


def hunt(name: str, seconds: float) -> Row:
    found = []
    with applied(by_name(name)):
        for scope in (s for s in SCOPES.values() if s.hunted):
            result = search(Options(scope, min(scope.depth, scope.hunt_depth),
                                    seconds=seconds))
            if result.found is not None:
                rule = (result.found.violations[0].invariant if result.found.violations
                        else "closure: " + ", ".join(result.found.verdict))
                found.append((scope.name, len(result.found.path), rule))
    return Row(name, tuple(found))


def _task(args: tuple[str, float]) -> Row:
    return hunt(*args)


def self_test(seconds: float, workers: int) -> int:
    """Print the table; exit 0 when every broken core some scope can express is found."""
    names = [m.name for m in (*MUTANTS, *LITERAL, *STALLED)]
    print(f"explore self-test: {len(names)} broken cores x {len(SCOPES)} scopes "
          f"({', '.join(SCOPES)}), {seconds:g}s per search", flush=True)
    ctx = multiprocessing.get_context("fork" if sys.platform != "win32" else "spawn")
    rows: list[Row] = []
    with ctx.Pool(max(1, workers)) as pool:
        for row in pool.imap(_task, [(n, seconds) for n in names]):
            rows.append(row)
            where = "; ".join(f"{s} at depth {d} ({r})" for s, d, r in row.found)
            beyond = BEYOND_SCOPES.get(row.mutant)
            mark = "found " if row.found else "beyond" if beyond else "MISSED"
            print(f"  {mark} {row.mutant:<42} {where or beyond or 'in no scope'}", flush=True)
    missed = [r.mutant for r in rows if not r.found and r.mutant not in BEYOND_SCOPES]
    print(f"found: {len(rows) - len(missed)}/{len(rows)}"
          + (f"; missed: {', '.join(missed)}" if missed else ""))
    return 1 if missed else 0
