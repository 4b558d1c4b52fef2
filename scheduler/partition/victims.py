"""Committing a preemption: the victims' releases, the preempting account, the node kept.

Shared by general preemption (``preemption``) and required-node preemption
(``required_node``), which differ in how they choose victims, not in what a
choice does (YuniKorn's ``TryPreemption`` step "commit" and
``tryRequiredNodePreemption``):

- every victim goes ``Allocated -> Releasing`` (``release``) with
  ``PREEMPTED_BY_SCHEDULER``, all in this call's one ``AllocationResponse``;
  it stays counted everywhere, and on ``preempting`` of its queue and every
  ancestor, until the RM confirms (``releases``) or stops it first (``ledger``);
- the ask is marked: it never preempts again;
- the chosen node is reserved for the ask, so the reserved pass places it
  there once the victims are gone.
"""

from __future__ import annotations

from .. import resources as res
from .. import si
from ..objects import Allocation, Application, Ask, Node
from . import allocate, ledger, reservations
from .state import PartitionState

TT = si.TerminationType


def release(p: PartitionState, victims: list[Allocation], message: str, why: str) -> None:
    """Release every victim with ``PREEMPTED_BY_SCHEDULER`` and count it on ``preempting``
    of its queue and every ancestor until the RM confirms (quota preemption shares it)."""
    for victim in victims:
        ledger.core_release(p, victim, TT.PREEMPTED_BY_SCHEDULER, message, why)
        victim.preempted = True
        queue = victim.app.queue
        for q in queue.ancestry() if queue is not None else ():
            res.add_into(q.preempting, victim.resource)


def commit(
    p: PartitionState, app: Application, ask: Ask, node: Node, victims: list[Allocation],
    message: str,
) -> None:
    """Preempt ``victims`` for ``ask`` and keep ``node`` for it."""
    release(p, victims, message,
            f"preempted to make room for ask {ask.key} of application {app.id}")
    ask.preempted = True
    mine = (app.id, ask.key)
    if mine not in node.reservations:
        # An ask holds one reservation: the node chosen for it replaces any other.
        reservations.cancel(p, app.id, ask.key)
        reservations.reserve(p, app, ask, node)
    listed = ", ".join(f"{v.uuid} of application {v.app.id} on node {v.node.id}"
                       for v in victims)
    p.core.event(p.rm_id, si.EventRecordType.REQUEST, ask.key,
                 f"ask {ask.key} of application {app.id} preempts {len(victims)} "
                 f"allocation(s) to run on node {node.id}: {listed}",
                 si.EventChangeType.SET, app.id)
    allocate.set_scheduling_state(
        p, ask, si.SchedulingState.RESERVED,
        f"preempting {len(victims)} allocation(s); node {node.id} is reserved for it")
