"""Reservations: a node kept for an ask against fragmentation (``004`` "Implementation").

An ask holds at most one reservation. A node holds either one ordinary ask's
reservation or any number of required-node asks' (apache/yunikorn-core be3bb48
pkg/scheduler/objects/node.go ``Reserve``): an ordinary ask reserves only an
unreserved node, and a required-node ask cancels the ordinary one it finds
there. Cancelling one gives room back inside a scheduling call, so it also
forgets the call's memos of what failed.
"""

from __future__ import annotations

from .. import resources as res
from .. import si
from ..objects import Application, Ask, Node
from . import eligibility
from .state import PartitionState


def reserve(p: PartitionState, app: Application, ask: Ask, node: Node) -> None:
    node.reservations[(app.id, ask.key)] = p.core.next_seq()
    p.reservations[(app.id, ask.key)] = node
    p.core.event(p.rm_id, si.EventRecordType.REQUEST, ask.key,
                 f"ask {ask.key} of application {app.id} reserved node {node.id}",
                 si.EventChangeType.ADD, app.id)


def cancel(p: PartitionState, app_id: str, key: str) -> None:
    node = p.reservations.pop((app_id, key), None)
    if node is not None:
        node.reservations.pop((app_id, key), None)
        # The node is open to more asks again: what failed earlier in this
        # scheduling call may fit now, so the call's memos no longer hold.
        p.reset_memos()


def cancel_app(p: PartitionState, app: Application, real_only: bool) -> None:
    """Free every node reserved for the application (or for its real asks only)."""
    for app_id, key in [k for k in p.reservations if k[0] == app.id]:
        if not (real_only and app.asks[key].placeholder):
            cancel(p, app_id, key)


def cancel_node(p: PartitionState, node: Node) -> None:
    for app_id, key in list(node.reservations):
        cancel(p, app_id, key)


def still_valid(p: PartitionState, ask: Ask | None, node: Node) -> bool:
    """The ask is still pending and schedulable, and could ever fit the node."""
    return (
        ask is not None and ask.state == "Pending" and eligibility.may_schedule(ask.app, ask)
        and node.schedulable and node.id in p.nodes
        and res.fits(ask.resource, res.sub(node.capacity, node.occupied))
    )
