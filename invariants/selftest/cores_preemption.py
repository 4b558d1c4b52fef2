"""Broken cores of preemption: the trigger, the victims' choice and order, the fences,
guarantees and the reservation of the node."""

from __future__ import annotations

from invariants.selftest.edits import M, Mutant
from scheduler.partition import (
    cycle,
    ledger,
    preemptor,
    queues,
    required_node,
    victims,
)

CORES: tuple[Mutant, ...] = (
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
    M("preemption.required_spares_equal_priority", "preemption",
      "YuniKorn required-node preemption: an allocation of the ask's own priority may be "
      "taken (only higher priorities are spared)",
      required_node, "choose", " and a.priority <= ask.priority", " and a.priority < ask.priority"),
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
    M("preemption.required_victims_by_age_only", "preemption",
      "yunikorn-behaviour 2.6 step 2: a required-node ask's victims go lowest priority first "
      "(YUNIKORN-1184)", required_node, "choose",
      "key=lambda a: (_kind(a), a.priority, -a.seq))", "key=lambda a: (_kind(a), -a.seq))"),
    M("preemption.preempting_kept_after_release", "preemption",
      "YuniKorn preemption: a victim counts as being preempted on its queues until it "
      "ends, and no longer", ledger, "unbind",
      "                res.sub_from(q.preempting, r)\n", "                pass\n"),
    M("preemption.created_template_ignored", "preemption",
      "YuniKorn YUNIKORN-809: a queue a placement rule creates takes its preemption.policy "
      "from its parent's childtemplate (a disabled template: its tasks are never victims)",
      queues, "create", "preemption.configure(queue, queue.properties, inherits=False)",
      "preemption.configure(queue, {}, inherits=False)"),
)
