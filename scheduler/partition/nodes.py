"""Nodes: registration with recovery of existing allocations, updates, drain and removal.

``002`` "Schedulable nodes registration and updates" (``NodeInfo``
actions), ``003`` "node add" / "node update and removal", and ``001``
"Application recovery": a recovered allocation gets the ask it came from.
"""

from __future__ import annotations

from statemachines.application import RECOVERABLE

from .. import resources as res
from .. import si
from ..objects import Allocation, Application, Ask, Node
from . import apps, appstate, asks, ledger, reservations
from .state import PartitionState

TT = si.TerminationType
ET = si.EventRecordType


def add_node(p: PartitionState, info: si.NodeInfo) -> None:
    reason = ""
    if p.state != "Active":
        reason = f"partition {p.name} is {p.state.lower()}"
    elif info.node_id in p.nodes:
        reason = f"node {info.node_id} already exists"
    capacity = info.schedulable_resource.as_dict() if info.schedulable_resource else {}
    occupied = info.occupied_resource.as_dict() if info.occupied_resource else {}
    if not reason and res.overflow(p.capacity, capacity):
        reason = (f"its {res.overflow(p.capacity, capacity)} would take the total of "
                  f"partition {p.name} past the int64 limit")
    if not reason:
        reason = check_recovery(p, info)
    if reason:
        p.core.reject_node(p.rm_id, info.node_id, reason)
        return
    node = Node(info.node_id, capacity, occupied, dict(info.attributes))
    p.nodes[node.id] = node
    p.node_order.add(node)
    p.node_joined(node)
    res.add_into(p.capacity, capacity)
    p.core.outbox(p.rm_id).node_accepted(node.id)
    for msg in info.existing_allocations:
        recover(p, node, msg)
    node.recompute_available("recovered allocations exceed the node's room")
    p.node_order.update(node)
    p.core.event(p.rm_id, ET.NODE, node.id, f"node {node.id} added to partition {p.name}",
                 si.EventChangeType.ADD)


def check_recovery(p: PartitionState, info: si.NodeInfo) -> str:
    """All or nothing: a node whose recovered allocations can not attach is rejected."""
    seen: set[str] = set()
    # The partition's usage with the entries so far: every account an allocation counts
    # on (node, application, queue, user) is at most that.
    usage = dict(p.root.allocated)
    for i, a in enumerate(info.existing_allocations):
        problem = _unattachable(p, a, info.node_id, usage, seen)
        if problem:
            return f"existingAllocations[{i}]: {problem}"
    return ""


def _unattachable(p: PartitionState, a: si.Allocation, node_id: str,
                  usage: dict[str, int], seen: set[str]) -> str:
    """Why ``a`` can not attach to node ``node_id`` ("" when it can); counts it in ``usage``."""
    size = a.resource_per_alloc.as_dict()
    over = res.overflow(usage, size)
    if over:
        return f"its {over} would take the usage of partition {p.name} past the int64 limit"
    res.add_into(usage, size)
    app = p.apps.get(a.application_id)
    if app is None or app.state not in RECOVERABLE or app.queue is None:
        return (f"application {a.application_id} is not known or not live; "
                "the RM must add applications before their nodes")
    if not a.uuid:
        return "a recovered allocation needs its uuid"
    if p.core.uuid_taken(a.uuid) or a.uuid in seen:
        return f"allocation uuid {a.uuid} already exists"
    if a.node_id and a.node_id != node_id:
        return f"allocation is for node {a.node_id}, not {node_id}"
    seen.add(a.uuid)
    return ""


def bind_allocation(p: PartitionState, msg: si.Allocation) -> None:
    """A pod the RM bound to a node itself, or one it reports again after a restart.

    The same rebuilding as a recovered allocation (:func:`recover`): a pending
    ask of the key gives up a repeat to it, an unknown key gets its ask
    generated. Nothing is checked against quotas or the node's room: the pod
    runs already. The RM hears it back as allocated, as YuniKorn answers an
    allocation with a node (``scheduler/context.go`` processAllocations,
    ``partition.go`` UpdateAllocation at apache/yunikorn-core ``be3bb48``).
    """
    node = p.nodes.get(msg.node_id)
    problem = (f"node {msg.node_id} is not known in partition {p.name}" if node is None
               else _unattachable(p, msg, msg.node_id, dict(p.root.allocated), set()))
    if problem or node is None:
        p.core.reject_ask(p.rm_id, msg.application_id, msg.allocation_key, problem)
        return
    alloc = recover(p, node, msg)
    p.core.outbox(p.rm_id).allocated(alloc)


def recover(p: PartitionState, node: Node, msg: si.Allocation) -> Allocation:
    """Rebuild an allocation the RM reports on a node (``001`` "Application recovery").

    The core generates the ask the allocation came from (Initial -> Pending
    -> Allocated) so the application's asks and allocations stay paired.
    """
    app = p.apps[msg.application_id]
    resource = msg.resource_per_alloc.as_dict()
    placeholder = msg.placeholder and bool(msg.task_group_name)
    ask = app.asks.get(msg.allocation_key)
    if ask is None:
        ask = Ask(app, msg.allocation_key, resource, 1, msg.priority, p.core.next_seq(),
                  p.core.clock.now(), 0, dict(msg.allocation_tags), msg.task_group_name,
                  placeholder)
        p.core.fire(ask, "ask", p.rm_id, app.id)
        ledger.add_pending(app, ask)
        ledger.consume_repeat(p, app, ask)
    elif ask.state == "Pending":
        ledger.consume_repeat(p, app, ask)
    else:
        ask.max_allocations += 1
        ask.allocated_count += 1
    alloc = Allocation(msg.uuid, app, msg.allocation_key, node, resource,
                       p.core.clock.now(), placeholder, msg.task_group_name,
                       msg.priority, dict(msg.allocation_tags), recovered=True)
    # A pod reported again is as new as its report (YuniKorn's createTime without the
    # creationTime tag is the time it is read): the newest of victims of its kind.
    alloc.seq = p.core.next_seq()
    asks.note_created(app, alloc.tags)
    over_quota = app.queue is not None and any(
        q.max is not None and not res.fits_with(resource, q.allocated, q.max)
        for q in app.queue.ancestry())
    alloc.over_capacity = not res.fits(resource, node.available)
    ledger.bind(p, alloc)
    node.recompute_available("recovered allocations exceed the node's room")
    if over_quota:
        alloc.over_quota = True
        for q in app.queue.ancestry() if app.queue else ():
            ledger.refresh_quota_flag(q, "recovered allocations exceed the max")
    recovered = f"allocation {alloc.uuid} was recovered on node {node.id}"
    if app.state == "New":
        appstate.fire_app(p, app, "accept", recovered)
    if not placeholder and app.LIFECYCLE.can(app.state, "run"):
        appstate.fire_app(p, app, "run", recovered)
    if placeholder and not app.placeholder_timer_started:
        appstate.start_placeholder_timer(p, app)
    p.core.event(p.rm_id, ET.REQUEST, alloc.uuid,
                 f"allocation {alloc.uuid} of application {app.id} recovered on node {node.id}",
                 si.EventChangeType.ADD, app.id)
    return alloc


def resize_allocation(p: PartitionState, uuid: str, resource: dict[str, int]) -> str:
    """A running pod resized in place: its new size counts everywhere the old one did.

    YuniKorn applies the change at any cost, over a queue's max or a node's
    room alike (``partition.go`` UpdateAllocation, ``objects/application.go``
    UpdateAllocationResources at apache/yunikorn-core ``be3bb48``). Only an
    allocation the core has not released can change: "" when done, else why not.
    """
    alloc = p.allocations.get(uuid)
    if alloc is None or alloc.state != "Allocated" or alloc.release_type:
        return f"allocation {uuid} is being released and can not change"
    if alloc.placeholder:
        return (f"placeholder {uuid} keeps its task group's size: the gang's placeholders stay "
                "within its placeholderAsk (001 'Total placeholder size')")
    if not res.any_positive(resource):
        return "the new size requests no resources"
    token = alloc.timer_token
    ledger.unbind(p, alloc)
    before = alloc.resource
    alloc.resource = dict(resource)
    ask = alloc.app.asks.get(alloc.ask_key)
    if ask is not None and ask.pending_repeats == 0:
        ask.resource = dict(resource)
    ledger.bind(p, alloc)
    alloc.timer_token = token
    alloc.node.recompute_available("an allocation resized in place exceeds the node's room")
    p.node_order.update(alloc.node)
    if alloc.app.queue is not None:
        for q in alloc.app.queue.ancestry():
            ledger.refresh_quota_flag(q, "an allocation resized in place exceeds the max")
    p.core.event(p.rm_id, ET.REQUEST, alloc.uuid,
                 f"allocation {alloc.uuid} of application {alloc.app.id} resized in place from "
                 f"{res.to_str(before)} to {res.to_str(alloc.resource)}",
                 si.EventChangeType.SET, alloc.app.id)
    return ""


def update_node(p: PartitionState, info: si.NodeInfo) -> None:
    """``UPDATE``, ``DRAIN_NODE``, ``DRAIN_TO_SCHEDULABLE`` and ``DECOMISSION`` of a known node."""
    node = p.nodes.get(info.node_id)
    if node is None:
        p.core.reject_node(p.rm_id, info.node_id, f"node {info.node_id} is not known")
        return
    action = info.action
    if action == si.NodeAction.UPDATE:
        grown = info.schedulable_resource.as_dict() if info.schedulable_resource else {}
        over = res.overflow(res.sub(p.capacity, node.capacity), grown)
        if over:
            p.core.reject_node(p.rm_id, node.id, f"its {over} would take the total of "
                               f"partition {p.name} past the int64 limit")
            return
        if info.schedulable_resource is not None:
            res.sub_from(p.capacity, node.capacity)
            node.capacity = info.schedulable_resource.as_dict()
            res.add_into(p.capacity, node.capacity)
        if info.occupied_resource is not None:
            node.occupied = info.occupied_resource.as_dict()
        if info.attributes:
            node.attributes = dict(info.attributes)
        node.recompute_available("capacity or occupied changed by the RM")
        p.nodes_changed()
        p.node_order.update(node)
        for app_id, key in list(node.reservations):
            app = p.apps.get(app_id)
            if not reservations.still_valid(
                    p, app.asks.get(key) if app is not None else None, node):
                reservations.cancel(p, app_id, key)
        p.core.event(p.rm_id, ET.NODE, node.id, f"node {node.id} updated",
                     si.EventChangeType.SET)
    elif action == si.NodeAction.DRAIN_NODE:
        if node.state != "Schedulable":
            p.core.reject_node(p.rm_id, node.id, f"node {node.id} is {node.state.lower()}")
            return
        p.core.fire(node, "drain", p.rm_id)
        p.node_order.discard(node)
        p.nodes_changed()
        reservations.cancel_node(p, node)
    elif action == si.NodeAction.DRAIN_TO_SCHEDULABLE:
        if node.state != "Draining":
            p.core.reject_node(p.rm_id, node.id,
                               f"node {node.id} is {node.state.lower()}, not draining")
            return
        p.core.fire(node, "restore", p.rm_id)
        p.node_order.add(node)
        p.node_joined(node)
    elif action == si.NodeAction.DECOMISSION:
        remove_node(p, node)
    else:
        p.core.reject_node(p.rm_id, node.id, f"node action {action.name} is not supported")


def remove_node(p: PartitionState, node: Node, message: str = "node decommissioned") -> None:
    """DECOMISSION: allocations on it leave every account and the RM is told."""
    p.core.fire(node, "remove", p.rm_id)
    p.node_order.discard(node)
    p.nodes_changed()
    reservations.cancel_node(p, node)
    touched: list[Application] = []
    for alloc in list(node.allocations.values()):
        ledger.remove_allocation(p, alloc, "stop", f"its node {node.id} left the partition")
        ledger.report_release(p, alloc, TT.STOPPED_BY_RM, message)
        if alloc.app not in touched:
            touched.append(alloc.app)
    res.sub_from(p.capacity, node.capacity)
    del p.nodes[node.id]
    for app in touched:
        apps.after_release(p, app)
