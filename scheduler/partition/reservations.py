"""Reservations: a node kept for one ask against fragmentation (``004`` "Implementation").

At most one reservation per node and per ask. Cancelling one gives room back
inside a scheduling call, so it also forgets the call's memos of what failed.
"""

from __future__ import annotations

from .. import resources as res
from .. import si
from ..objects import Application, Ask, Node
from . import eligibility
from .state import PartitionState


def reserve(p: PartitionState, app: Application, ask: Ask, node: Node) -> None:
    node.reservation = (app.id, ask.key)
    node.reserved_at = p.core.next_seq()
    p.reservations[(app.id, ask.key)] = node
    p.core.event(p.rm_id, si.EventRecordType.REQUEST, ask.key,
                 f"ask {ask.key} of application {app.id} reserved node {node.id}",
                 si.EventChangeType.ADD, app.id)


def cancel(p: PartitionState, app_id: str, key: str) -> None:
    node = p.reservations.pop((app_id, key), None)
    if node is not None:
        node.reservation = None
        # The node is open to every ask again: what failed earlier in this
        # scheduling call may fit now, so the call's memos no longer hold.
        p.reset_memos()


def cancel_app(p: PartitionState, app: Application, real_only: bool) -> None:
    """Free every node reserved for the application (or for its real asks only)."""
    for app_id, key in [k for k in p.reservations if k[0] == app.id]:
        if not (real_only and app.asks[key].placeholder):
            cancel(p, app_id, key)


def cancel_node(p: PartitionState, node: Node) -> None:
    if node.reservation is not None:
        cancel(p, *node.reservation)


def still_valid(p: PartitionState, ask: Ask | None, node: Node) -> bool:
    """The ask is still pending and schedulable, and could ever fit the node."""
    return (
        ask is not None and ask.state == "Pending" and eligibility.may_schedule(ask.app, ask)
        and node.schedulable and node.id in p.nodes
        and res.fits(ask.resource, res.sub(node.capacity, node.occupied))
    )
