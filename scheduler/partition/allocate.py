"""Placing one ask: find a node, allocate there, or reserve one (``004`` "Implementation").

The node walk follows the partition's node order; predicates (``002``
"Scheduler plugin") are asked for every candidate. An ask that fits no
node's free room but fits some node's capacity reserves that node; one that
fits no node at all is reported ``FAILED``.
"""

from __future__ import annotations

from .. import resources as res
from .. import si
from ..objects import Allocation, Application, Ask, Node
from . import appstate, ledger, reservations
from .state import PartitionState

SS = si.SchedulingState
ET = si.EventRecordType


def allocate(p: PartitionState, app: Application, ask: Ask, node: Node) -> Allocation:
    """Bind one repeat of the ask to the node and report it to the RM."""
    core = p.core
    uuid = core.new_uuid(app.id, ask.key)
    alloc = Allocation(uuid, app, ask.key, node, ask.resource, core.clock.now(),
                       ask.placeholder, ask.task_group, ask.priority, ask.tags)
    alloc.seq = core.next_seq()
    alloc.preempt_self = ask.preempt_self
    alloc.originator = ask.originator
    ledger.bind(p, alloc)
    box = core.outbox(p.rm_id)
    box.allocated(alloc)
    ledger.consume_repeat(p, app, ask)
    if p.reservations:
        reservations.cancel(p, app.id, ask.key)
    if not ask.placeholder and app.LIFECYCLE.can(app.state, "run"):
        appstate.fire_app(p, app, "run")
    if ask.execution_timeout_ms > 0:
        core.schedule_timer(ask.execution_timeout_ms / 1000.0, "execution", alloc,
                            alloc.timer_token, p.timer_owner)
    if ask.placeholder and not app.placeholder_timer_started:
        appstate.start_placeholder_timer(p, app)
    if ask.placeholder and app.state == "Running":
        # 001 "Definition": placeholders are not active allocations. A running application
        # whose last pending ask was a placeholder, and that holds nothing real, waits.
        appstate.maybe_wait(p, app)
    if ask.last_scheduling_state is not None and ask.last_scheduling_state != SS.SCHEDULED:
        set_scheduling_state(p, ask, SS.SCHEDULED, f"allocated on node {node.id}")
    if core.emit_events:
        box.event(ET.REQUEST, uuid, f"allocation {uuid} of application {app.id} (ask "
                  f"{ask.key}) allocated on node {node.id}", si.EventChangeType.ADD, app.id)
    return alloc


def find_node(p: PartitionState, app: Application, ask: Ask) -> Node | None:
    """The first node in order with free room that passes predicates (not reserved for another)."""
    r = ask.resource
    if p.predicates is None and p.failed_shapes.covers(r):
        return None
    mine = (app.id, ask.key)
    for node in p.node_order:
        if not node.open_to(mine):
            continue
        if res.fits(r, node.available) and predicates(p, ask, node, True):
            return node
    return None


NO_RESERVATION, HELD_RESERVATION, NEW_RESERVATION = 0, 1, 2


def reserve_or_fail(p: PartitionState, app: Application, ask: Ask, report: bool = True) -> int:
    """No node has room: reserve the first that could ever hold the ask, or report FAILED.

    Returns whether the ask holds a reservation now, and whether it is new; with
    ``report=False`` the caller reports FAILED itself (preemption may still help).
    """
    key = (app.id, ask.key)
    if key in p.reservations:
        set_scheduling_state(p, ask, SS.RESERVED, "waiting for the reserved node")
        return HELD_RESERVATION
    no_predicates = p.predicates is None
    if no_predicates and p.unreservable.covers(ask.resource):
        if report:
            report_failed(p, app, ask)
        return NO_RESERVATION
    if not may_reserve(p, ask):
        if report:
            report_failed(p, app, ask)
        return NO_RESERVATION
    for node in p.node_order:
        if node.reservations:
            continue  # an ordinary ask reserves only an unreserved node (node.go Reserve)
        if res.fits(ask.resource, res.sub(node.capacity, node.occupied)) and \
                predicates(p, ask, node, False):
            reservations.reserve(p, app, ask, node)
            set_scheduling_state(p, ask, SS.RESERVED, f"reserved node {node.id}")
            return NEW_RESERVATION
    if no_predicates:
        p.unreservable.add(ask.resource)
    if report:
        report_failed(p, app, ask)
    return NO_RESERVATION


def may_reserve(p: PartitionState, ask: Ask) -> bool:
    """The ask has waited the reservation delay since it arrived.

    YuniKorn reserves only for an ask older than ``reservationDelay``, measured from the
    ask's creation (apache/yunikorn-core be3bb48 pkg/scheduler/objects/application.go
    ``tryNodes``: ``askAge > reservationDelay``). On the injected clock the delay counts
    from the ask's arrival (an update is a new ask) and ends at, not after, the mark, so
    0 means at once and the moment it ends is one a caller can step the clock to.
    """
    return p.core.clock.now() >= ask.created + p.core.reservation_delay


def report_failed(p: PartitionState, app: Application, ask: Ask, prefix: str = "") -> None:
    """Report FAILED with the real reason; worked out only when the state changes.

    An ask that could reserve a node but is younger than the reservation delay is
    SKIPPED instead: it waits for its own clock, and the FAILED or RESERVED that follows
    is a change the RM hears with its reason then.
    """
    if ask.last_scheduling_state != SS.FAILED:
        reason = unplaceable_reason(p, app, ask)
        state = SS.SKIPPED if not prefix and reason.startswith(WAITING) else SS.FAILED
        set_scheduling_state(p, ask, state, prefix + reason)


WAITING = "waiting for the reservation delay"


def unplaceable_reason(p: PartitionState, app: Application, ask: Ask) -> str:
    """Why no node takes the ask now, nor can be reserved for it, as a shim would say it.

    Runs only when an ask turns FAILED: no schedulable node, none large enough
    (read off ``room_ceiling`` without a walk, as every ask larger than any
    node turns FAILED once), the ones that fit reserved for other asks, or the
    shim's predicates refused them (those walk the nodes once more).
    """
    r = ask.resource
    count = len(p.node_order)
    if not count:
        draining = len(p.nodes)
        return f"partition {p.name} has no schedulable node" + (
            f" ({draining} draining)" if draining else "")
    # Past the per-type maximum no node is large enough, without a walk.
    fit = [n for n in p.node_order if res.fits(r, res.sub(n.capacity, n.occupied))] \
        if res.fits(r, p.room_ceiling()) else []
    if not fit:
        return (f"ask {ask.key} needs {res.to_str(r)}, more than any of the {count} "
                "schedulable nodes can hold")
    mine = (app.id, ask.key)
    taken = [n for n in fit if not n.open_to(mine)]
    if len(taken) == len(fit):
        if len(fit) == 1:
            others = ", ".join(f"{k} of application {a}" for a, k in taken[0].reservations)
            kind = "another ask" if len(taken[0].reservations) == 1 else "other asks"
            return f"the only node that fits ({taken[0].id}) is reserved for {kind} ({others})"
        return (f"every node that fits ({', '.join(n.id for n in fit)}) is reserved for "
                "another ask")
    if not may_reserve(p, ask):
        return (f"{WAITING} ({p.core.reservation_delay:g} s from its arrival): no node has "
                "room for it now")
    if p.predicates is not None:
        return (f"the shim's predicates refused every node that fits "
                f"({', '.join(n.id for n in fit if n not in taken)})")
    return "no node has room for it now and none can be reserved"

def predicates(p: PartitionState, ask: Ask, node: Node, allocate: bool) -> bool:
    """The RM's predicates for this ask on this node; a callback that raises says no."""
    if p.predicates is None:
        return True
    args = si.PredicatesArgs.model_construct(
        allocation_key=ask.key, node_id=node.id, allocate=allocate)
    try:
        return bool(p.predicates(args))
    except Exception as exc:  # a shim's bug must not break the cycle
        p.core.event(p.rm_id, ET.NODE, node.id, f"node {node.id}: the predicates for ask "
                     f"{ask.key} raised {type(exc).__name__}: {exc}", reference_id=ask.key)
        return False


def set_scheduling_state(
    p: PartitionState, ask: Ask, state: si.SchedulingState, reason: str
) -> None:
    """Report an ask's container scheduling state to the RM when it changes (``002``).

    RESERVED, FAILED and SKIPPED while the reservation delay runs say a node search found
    no room: the ask may now wait for the cluster to grow (``waiting``; YuniKorn counts an
    ask the scheduler tried, reserved or not)."""
    searched = state is SS.RESERVED or state is SS.FAILED or (
        state is SS.SKIPPED and reason.startswith(WAITING))
    if searched and not ask.searched:
        ask.searched = True
        p.searched[(ask.app.id, ask.key)] = ask
    if ask.last_scheduling_state == state:
        return
    ask.last_scheduling_state = state
    p.core.outbox(p.rm_id).scheduling.append((ask.app.id, ask.key, state, reason))
