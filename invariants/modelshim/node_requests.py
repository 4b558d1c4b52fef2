"""The model shim's judging of an RM's node requests: what each must do (registration,
recovery of the allocations a node brings, its actions), noted before the core runs it."""

from __future__ import annotations

from invariants.modelshim.requests import NA, NODE_PARTITION
from invariants.properties import protocol as P
from invariants.readings import arithmetic as qty
from invariants.readings.calls import Call, Monitor
from invariants.readings.shim import (
    REQUIRED_NODE,
    AllocView,
    AskView,
    Kept,
    NodeView,
    RMView,
)
from scheduler import si


def begin_nodes(rv: RMView, call: Call, req: si.NodeRequest) -> None:
    """Note the node requests the shim knows are invalid; a decommission ends the node's
    allocations, which the core must confirm."""
    known = set(rv.nodes)
    totals: dict[str, dict[str, int]] = {}
    for n in rv.nodes.values():
        totals[n.partition] = qty.plus(totals.get(n.partition, {}), n.capacity)
    for info in req.nodes:
        if info.action == NA.CREATE:
            capacity = info.schedulable_resource.as_dict() if info.schedulable_resource else {}
            partition = info.attributes.get(NODE_PARTITION) or "default"
            total = qty.plus(totals.get(partition, {}), capacity)
            # A partition the configuration no longer has (removed by a reload: it drains,
            # 003 'Update and Remove partition') takes no new node.
            if info.node_id in known or any(v > qty.INT64_MAX for v in total.values()) \
                    or rv.config.partition(partition) is None or _uuids_clash(rv, info) \
                    or _recovery_misplaced(rv, info, partition):
                call.must_reject_nodes.append(info.node_id)
            else:
                totals[partition] = total
            known.add(info.node_id)
            continue
        node = rv.nodes.get(info.node_id)
        grown = info.schedulable_resource.as_dict() if info.schedulable_resource else {}
        bad = (node is None or info.action == NA.UNKNOWN_ACTION_FROM_RM
               or (info.action == NA.DRAIN_NODE and node.state != "Schedulable")
               or (info.action == NA.DRAIN_TO_SCHEDULABLE and node.state != "Draining")
               or (info.action == NA.UPDATE and any(
                   v > qty.INT64_MAX for v in qty.plus(qty.minus(
                       totals.get(node.partition, {}), node.capacity), grown).values())))
        if bad:
            call.must_reject_nodes.append(info.node_id)
        elif info.action == NA.DECOMISSION:
            for a in rv.allocs_on(info.node_id):
                call.confirm_expected[a.uuid] += 1
                call.gone[a.uuid] = rv.allocs.pop(a.uuid)


def _uuids_clash(rv: RMView, info: si.NodeInfo) -> bool:
    """A registration whose recovered allocations name no uuid, one uuid twice, or one the
    RM already runs can not attach them all: ``002`` gives every allocation one uuid."""
    uuids = [a.uuid for a in info.existing_allocations]
    return any(not u or u in rv.allocs for u in uuids) or len(set(uuids)) != len(uuids)


def _recovery_misplaced(rv: RMView, info: si.NodeInfo, partition: str) -> bool:
    """A registration reporting an allocation of another node, or of an application the RM
    does not run in the node's partition (unknown, ended, elsewhere): ``001`` "Application
    recovery" adds the applications first, then each node with its own allocations."""
    for a in info.existing_allocations:
        app = rv.apps.get(a.application_id)
        if (a.node_id and a.node_id != info.node_id) or app is None or not app.live \
                or app.partition != partition:
            return True
    return False


def end_nodes(m: Monitor, rv: RMView, call: Call, req: si.NodeRequest) -> None:
    """Invalid node requests rejected, each registration answered once; the shim records what
    the accepted ones did."""
    for node_id in call.must_reject_nodes:
        if node_id not in call.rejected_nodes:
            m.report(P.EXPECTED_REJECTION, f"node {node_id}",
                     "an invalid node request was not rejected")
    for info in req.nodes:
        if info.node_id in call.rejected_nodes:
            if info.action == NA.CREATE:
                _check_not_recovered(m, call, info)
            continue
        if info.action == NA.CREATE:
            if call.node_answers[info.node_id] != 1:
                m.report(P.ANSWERED, f"node {info.node_id}",
                         f"answered {call.node_answers[info.node_id]} times")
            if info.node_id not in call.accepted_nodes:
                continue
            _node_created(m, rv, call, info)
        elif info.node_id in rv.nodes:
            _node_action(rv, info)


def _node_created(m: Monitor, rv: RMView, call: Call, info: si.NodeInfo) -> None:
    """A registered node and its existing allocations, recovered as the RM reported them
    (``001`` "Application recovery")."""
    partition = info.attributes.get(NODE_PARTITION) or "default"
    rv.nodes[info.node_id] = NodeView(
        info.node_id, partition,
        info.schedulable_resource.as_dict() if info.schedulable_resource else {},
        info.occupied_resource.as_dict() if info.occupied_resource else {})
    core = m.core_partition(call.rm_id, partition)
    for msg in info.existing_allocations:
        if msg.uuid in rv.allocs:
            # An earlier node of the same request recovered it: this one had to be rejected.
            m.report(P.EXPECTED_REJECTION, f"node {info.node_id}",
                     f"registered although its allocation {msg.uuid} was already recovered "
                     f"on node {rv.allocs[msg.uuid].node}")
            continue
        ask = rv.asks.get((msg.application_id, msg.allocation_key))
        rv.allocs[msg.uuid] = AllocView(
            msg.uuid, msg.application_id, msg.allocation_key, info.node_id,
            msg.resource_per_alloc.as_dict(), msg.placeholder and bool(msg.task_group_name),
            msg.task_group_name, call.now, recovered=True, sent=Kept(msg), priority=msg.priority,
            required_node=msg.allocation_tags.get(REQUIRED_NODE, ""))
        m.name(msg.uuid, msg.application_id, msg.allocation_key)
        if ask is None:
            # 001 "Application recovery": the core generates the ask it came from.
            ask = rv.asks[(msg.application_id, msg.allocation_key)] = AskView(
                msg.application_id, msg.allocation_key, msg.resource_per_alloc.as_dict(),
                0, msg.placeholder and bool(msg.task_group_name), msg.task_group_name, 0,
                priority=msg.priority, recovered=True)
            ask.max_allocations = 0
        if ask.allocated >= ask.max_allocations:
            ask.max_allocations += 1
        ask.allocated += 1
        app = rv.apps.get(msg.application_id)
        if app is not None:
            app.created(msg.allocation_tags)
        if app is not None and msg.placeholder and app.placeholder_start is None:
            app.placeholder_start = call.now
        held = core.allocations.get(msg.uuid) if core is not None else None
        if held is None or held.app.id != msg.application_id or held.node.id != info.node_id \
                or not qty.same(held.resource, msg.resource_per_alloc.as_dict()) \
                or held.placeholder != (msg.placeholder and bool(msg.task_group_name)) \
                or held.task_group != msg.task_group_name:
            m.report(P.RECOVERY, f"allocation {msg.uuid}",
                     "the recovered allocation is missing or differs from what the RM "
                     "reported (app, node, resource, placeholder, task group)")


def _check_not_recovered(m: Monitor, call: Call, info: si.NodeInfo) -> None:
    """A rejected registration must not have recovered the allocations it reported."""
    core = m.core_partition(call.rm_id, info.attributes.get(NODE_PARTITION) or "default")
    rv = m.rms[call.rm_id]
    for msg in info.existing_allocations:
        if msg.uuid and msg.uuid not in rv.allocs and core is not None \
                and msg.uuid in core.allocations:
            m.report(P.RECOVERY, f"allocation {msg.uuid}",
                     f"node {info.node_id} was rejected but the allocation it "
                     "reported was recovered")


def _node_action(rv: RMView, info: si.NodeInfo) -> None:
    """What an accepted update, drain, restore or decommission does to the shim's node."""
    node = rv.nodes[info.node_id]
    if info.action == NA.UPDATE:
        if info.schedulable_resource is not None:
            node.capacity = info.schedulable_resource.as_dict()
        if info.occupied_resource is not None:
            node.occupied = info.occupied_resource.as_dict()
    elif info.action == NA.DRAIN_NODE:
        node.state = "Draining"
    elif info.action == NA.DRAIN_TO_SCHEDULABLE:
        node.state = "Schedulable"
    elif info.action == NA.DECOMISSION:
        del rv.nodes[info.node_id]
