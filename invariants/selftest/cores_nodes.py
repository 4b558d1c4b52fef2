"""Broken cores of nodes: the RM's node actions, node order, reservations."""

from __future__ import annotations

from invariants.selftest.edits import M, Mutant
from scheduler import (
    resources,
)
from scheduler.partition import (
    allocate,
    asks,
    cycle,
    ledger,
    nodes,
    required_node,
    reservations,
    state,
)

CORES: tuple[Mutant, ...] = (
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
    M("nodes.stale_room_ceiling", "node actions",
      "a node that joins is seen by the next cycle", state.PartitionState, "node_joined",
      "self.ceiling = res.component_max((self.ceiling, res.sub(node.capacity, node.occupied)))",
      "pass"),
    M("nodes.required_node_ignored", "node actions",
      "YuniKorn: an ask tagged requiredNode (a DaemonSet pod) runs on that node only",
      cycle, "try_leaf", "            if ask.required_node:\n",
      "            if False:\n"),
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
    M("reservations.kept_after_node_shrank", "reservations",
      "004 'Implementation' (reserve room against fragmentation): a reservation holds a "
      "node that can take its ask; an update shrinking the node below the ask ends it",
      nodes, "update_node", "        for app_id, key in list(node.reservations):\n",
      "        for app_id, key in []:\n"),
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
    M("nodes.removal_keeps_reservation", "reservations",
      "002 DECOMISSION with 004 reservations: a removed node keeps no reservation "
      "(YUNIKORN-1448)", nodes, "remove_node",
      "    p.nodes_changed()\n    reservations.cancel_node(p, node)\n",
      "    p.nodes_changed()\n"),
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
    M("nodes.missing_type_unlimited", "node actions",
      "002 NodeInfo.schedulableResource: a type the node does not list is not there (zero), "
      "not unlimited", resources, "fits",
      "if v > room.get(k, 0):", "if k in room and v > room[k]:"),
    M("reservations.reserved_past_occupied", "reservations",
      "004 reservations with 002 occupiedResource: a node is reserved only for an ask that "
      "could ever fit beside what the RM occupies there", allocate, "reserve_or_fail",
      "res.fits(ask.resource, res.sub(node.capacity, node.occupied))",
      "res.fits(ask.resource, node.capacity)"),
    M("nodes.duplicate_registration_accepted", "node actions",
      "002 NodeInfo / RejectedNode: a node id the partition already has is rejected with "
      "a reason", nodes, "add_node", "elif info.node_id in p.nodes:", "elif False:"),
    M("nodes.update_keeps_order", "node actions",
      "004 node sorting: a node whose capacity or occupied resource the RM changed takes its "
      "new place in the order", nodes, "update_node",
      "        p.nodes_changed()\n        p.node_order.update(node)\n",
      "        p.nodes_changed()\n"),
    M("reservations.cancel_keeps_memos", "reservations",
      "004 'Implementation' (skip only what can not be satisfied now): a reservation given "
      "up mid-cycle opens its node to the asks that failed earlier in the same cycle",
      reservations, "cancel", "        p.reset_memos()\n", "        pass\n"),
)
