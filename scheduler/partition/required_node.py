"""Required-node (DaemonSet) asks: they wait for their node, take it over, and preempt on it.

Apache YuniKorn's ``simple_preemptor.md`` and ``required_node_preemptor.go``
(v1.5). An ask tagged ``yunikorn.apache.org/requiredNode`` runs on that node
or nowhere:

- it waits while the node is unknown (or not schedulable);
- it cancels every ordinary ask's reservation there; other required-node asks'
  stay, beside its own (apache/yunikorn-core be3bb48
  pkg/scheduler/objects/application.go ``tryRequiredNode``, node.go ``Reserve``);
- it is placed if the node has room and no other ask holds it, else reserves the
  node at once (no reservation delay); one that reserved beside other
  required-node asks and fits is placed in the same step (YuniKorn's next
  reserved pass, ``tryReservedAllocate``);
- if the node still can not hold it and it never preempted, it preempts
  allocations on that node: never another required-node allocation, never one
  of higher priority, only ones sharing a resource type with it; regular
  ones first, then opted-out, then originators, lower priority first, newest
  first. Guarantees, fences, offsets, ``allowPreemptOther``, the delay, the
  partition switch and the application are not considered.

YuniKorn preempts from the next cycle's reserved pass; the core does it in the
same step as the reservation (and again in the reserved pass for a reservation
that could not preempt yet), so one ``schedule()`` call reaches the same state.
"""

from __future__ import annotations

from .. import resources as res
from .. import si
from ..objects import Allocation, Application, Ask, Node
from . import allocate, reservations, victims
from .state import PartitionState

SS = si.SchedulingState
ET = si.EventRecordType

NOTHING, ALLOCATED, PROGRESS = 0, 1, 2
MESSAGE = "preempting allocations to free up resources to run daemon set ask: "


def try_required(p: PartitionState, app: Application, ask: Ask) -> int:
    """The normal pass for a required-node ask whose headroom fits: NOTHING, ALLOCATED or
    PROGRESS (a reservation was cancelled or made, or victims were released)."""
    node = p.nodes.get(ask.required_node)
    if node is None or not node.schedulable:
        why = "is not registered" if node is None else "is not schedulable"
        allocate.set_scheduling_state(
            p, ask, SS.SKIPPED, f"waiting for its required node {ask.required_node}, which {why}")
        return NOTHING
    if not res.fits(ask.resource, res.sub(node.capacity, node.occupied)):
        # Checked before any reservation is cancelled: an ask the node can never hold frees
        # nothing, and cancelling would let the ordinary ask reserve again, forever.
        allocate.report_failed(p, app, ask, f"its required node {node.id} can never hold it: ")
        return NOTHING
    mine = (app.id, ask.key)
    changed = False
    for other_app, other_key in list(node.reservations):
        if (other_app, other_key) == mine:
            continue
        other = p.apps.get(other_app)
        other_ask = other.asks.get(other_key) if other is not None else None
        if other_ask is not None and other_ask.required_node:
            continue  # required-node asks share the node; each reserves it for itself
        reservations.cancel(p, other_app, other_key)
        p.core.event(p.rm_id, ET.REQUEST, other_key,
                     f"reservation of node {node.id} for ask {other_key} of application "
                     f"{other_app} cancelled: required-node ask {ask.key} of application "
                     f"{app.id} needs the node", si.EventChangeType.REMOVE, other_app)
        changed = True
    if node.open_to(mine) and res.fits(ask.resource, node.available) \
            and allocate.predicates(p, ask, node, True):
        allocate.allocate(p, app, ask, node)
        return ALLOCATED
    if mine not in node.reservations:
        reservations.cancel(p, app.id, ask.key)
        reservations.reserve(p, app, ask, node)
        allocate.set_scheduling_state(p, ask, SS.RESERVED, f"reserved its required node {node.id}")
        changed = True
        if res.fits(ask.resource, node.available) and allocate.predicates(p, ask, node, True):
            # Other required-node asks held the node, so it reserved first; YuniKorn's next
            # reserved pass places it, as nothing changed in between: here, in this step.
            allocate.allocate(p, app, ask, node)
            return ALLOCATED
    if preempt(p, app, ask, node):
        changed = True
    return PROGRESS if changed else NOTHING


def preempt(p: PartitionState, app: Application, ask: Ask, node: Node) -> bool:
    """Release victims on the node for a required-node ask that does not fit; True if any."""
    if ask.preempted or res.fits(ask.resource, node.available):
        return False
    chosen = choose(ask, node)
    if not chosen:
        return False
    victims.commit(p, app, ask, node, chosen, MESSAGE + ask.key)
    return True


def _kind(alloc: Allocation) -> int:
    """Regular first, then opted out of preemption, then originators."""
    return 3 if alloc.originator else 2 if not alloc.preempt_self else 1


def choose(ask: Ask, node: Node) -> list[Allocation]:
    """YuniKorn's victims for ``ask`` on ``node``, or an empty list when they can not free
    enough (``GetVictims``)."""
    r = ask.resource
    wanted = [k for k, v in r.items() if v]
    candidates = sorted(
        (a for a in node.allocations.values()
         if a.state == "Allocated" and not a.required_node and a.priority <= ask.priority
         and any(a.resource.get(k, 0) for k in wanted)),
        key=lambda a: (_kind(a), a.priority, -a.seq))
    chosen: list[Allocation] = []
    freed: dict[str, int] = {}
    for alloc in candidates:
        if all(freed.get(k, 0) >= v for k, v in r.items()):
            break
        res.add_into(freed, alloc.resource)
        chosen.append(alloc)
    if chosen and all(freed.get(k, 0) + node.available.get(k, 0) >= v for k, v in r.items()):
        return chosen
    return []
