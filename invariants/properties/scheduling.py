"""Scheduling invariants: what must be true right after a ``schedule()`` call.

Each rule the cycle applies (application state, ``maxapplications``, queue
``max`` on the path, gang waiting, parking, the stateaware filter, node room
and reservations) is read here again from the objects, not by calling the
core's own helpers, so a bug in one of them can not hide from this check.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping

from invariants.properties import limits
from invariants.properties.catalog import CheckContext, Violation, invariant
from invariants.readings import arithmetic as qty
from invariants.readings.shim import REQUIRED_NODE
from invariants.readings.view import (
    Allocation,
    Application,
    Ask,
    Node,
    PartitionState,
    Queue,
    partitions,
    rms,
)
from scheduler import si
from statemachines.application import SCHEDULABLE, STARTED

PREEMPTED = si.TerminationType.PREEMPTED_BY_SCHEDULER
REPLACED = si.TerminationType.PLACEHOLDER_REPLACED


def _may_start(p: PartitionState, app: Application) -> bool:
    """A slot is free on every queue of the path, or the application already holds one."""
    if limits.holds_slot(app) or app.queue is None:
        return True
    for q in app.queue.ancestry():
        if q.max_applications <= 0:
            continue
        below = sum(1 for a in p.apps.values()
                    if a.queue is not None and q in a.queue.ancestry() and limits.holds_slot(a))
        if below >= q.max_applications:
            return False
    return True


def _offered(queue: Queue, since: Mapping[tuple[str, str], float], rm_id: str,
             ) -> list[Application]:
    """The applications the leaf's policy offers resources to (stateaware filters the
    fifo order, YuniKorn's: submission time as the model shim saw it, the highest pending
    ask priority, id; the first not yet running is the one it may start)."""
    apps = sorted((a for a in queue.apps.values() if a.pending_asks), key=lambda app: (
        since.get((rm_id, app.id), app.submit_time),
        -max(k.priority for k in app.pending_asks.values()), app.id))
    if queue.sort_policy != "stateaware":
        return apps
    starting = any(a.state == "Accepted" and a.allocations for a in queue.apps.values())
    out: list[Application] = []
    admitted = False
    for app in apps:
        if app.state in STARTED or (app.state == "Accepted" and app.allocations):
            out.append(app)
        elif app.state == "Accepted" and not starting and not admitted:
            out.append(app)
            admitted = True
    return out


def backing_off(ctx: CheckContext, p: PartitionState, app: Application) -> bool:
    """The application was backing off when the call began and still is (the core's word;
    ``scheduling.backoff`` judges whether it had the right to): it is not scheduled."""
    before: Mapping[tuple[str, str, str], float] = ctx.extra.get("backoff_before") or {}
    now = ctx.scheduler.clock.now()
    return app.backoff_until > now or before.get((p.rm_id, p.name, app.id), 0.0) > now


def unconfirmed_victim(ctx: CheckContext, alloc: Allocation) -> bool:
    """Whether the core released ``alloc`` as a preemption victim and the RM has not
    confirmed it: the model shim's record of such releases, or without a shim (a scenario
    test) the core's Releasing PREEMPTED_BY_SCHEDULER allocations."""
    victims: set[str] | None = ctx.extra.get("preempting")
    if victims is not None:
        return alloc.uuid in victims
    return alloc.state == "Releasing" and alloc.release_type == PREEMPTED.value


def parked(ctx: CheckContext, ask: Ask) -> bool:
    """Whether ``ask`` waits, parked, for the RM to confirm the placeholder it replaces
    (``001`` step 3). The core names the placeholder; with a model shim that core's word
    counts only if the shim holds that placeholder's PLACEHOLDER_REPLACED release, not
    yet confirmed: a core that parks an ask on nothing the RM was told of leaves it
    waiting forever, and the checks that excuse a parked ask must not hide that."""
    if not ask.parked_on:
        return False
    replacing: set[str] | None = ctx.extra.get("replacing")
    return replacing is None or ask.parked_on in replacing


def _waits_for_victim(ctx: CheckContext, app: Application, ask: Ask) -> bool:
    """A real ask of a task group one of whose placeholders was preempted and is not yet
    confirmed: the group still counts that placeholder, which can not be replaced, so the
    ask waits for the confirmation (behaviour 2.7, YuniKorn's ``canReplace``)."""
    return bool(ask.task_group) and not ask.placeholder and any(
        x.placeholder and x.task_group == ask.task_group and unconfirmed_victim(ctx, x)
        for x in app.allocations.values())


@invariant(
    "scheduling.maximal",
    "Right after schedule(), no pending ask that may be scheduled (its application may "
    "start and is not backing off, its queue path has headroom, it is not parked on a "
    "placeholder, waiting "
    "for its gang's placeholders, or a real ask waiting for the RM to confirm a preempted "
    "placeholder of its task group) fits the free room of a schedulable node that is not "
    "reserved for another ask (a required-node ask's own node counts even then: it cancels "
    "an ordinary ask's reservation and shares the node with other required-node asks').",
    "004 'Implementation' (skip requests that can not be satisfied and find the next); "
    "Scheduler.schedule(): 'allocate until nothing more can be placed now'",
    "The cycle stopped early or skipped an ask it could have placed: work waits while "
    "room is free (a stale cache, a wrong skip, a policy that hides an application).",
    needs=("after_schedule",),
)
def _maximal(ctx: CheckContext) -> Iterator[Violation]:
    for p, app, ask, room in _schedulable(ctx):
        node = room.node_for(app, ask)
        if node is not None:
            yield Violation(
                "scheduling.maximal", f"ask {p.name}/{app.id}/{ask.key}",
                f"left pending although node {node.id} has room "
                f"{qty.show(room.free[node.id])} for {qty.show(ask.resource)}")


Candidate = tuple[PartitionState, Application, Ask, "_Room"]


def _schedulable(ctx: CheckContext) -> Iterator[Candidate]:
    """Right after a cycle, every pending ask the cycle may place (room aside): its
    application may start, its queue path has headroom, its user's and group's limits hold
    it back not, it is not parked, waiting for its gang's placeholders or for the RM to
    confirm a preempted placeholder; with the partition's schedulable nodes, their free
    room and the checker's predicates."""
    running = {rm.id for rm in rms(ctx.scheduler) if rm.state == "Running"}
    for p in partitions(ctx.scheduler):
        if p.state == "Stopped" or p.rm_id not in running:
            continue
        room = _Room(ctx, p)
        if not room.judged:
            continue
        for queue in p.queues.values():
            if not queue.is_leaf:
                continue
            for app in _offered(queue, ctx.extra.get("fifo_since") or {}, p.rm_id):
                if app.state not in SCHEDULABLE or not _may_start(p, app) \
                        or backing_off(ctx, p, app):
                    continue
                for ask in app.pending_asks.values():
                    if not room.may_go(app, ask):
                        continue
                    yield p, app, ask, room


class _Room:
    """What ``scheduling.maximal`` reads of one partition: which pending asks may be
    scheduled now and which node has room for them."""

    def __init__(self, ctx: CheckContext, p: PartitionState) -> None:
        self.ctx, self.p = ctx, p
        # With a predicates callback the check needs the same function (the checker's).
        self.passes = ctx.extra.get("predicate")
        self.judged = p.predicates is None or self.passes is not None
        self.nodes = sorted((n for n in p.nodes.values() if n.state == "Schedulable"),
                            key=lambda n: n.id)
        self.free = {n.id: qty.minus(qty.minus(n.capacity, n.occupied), n.allocated)
                     for n in self.nodes}
        configs, self.groups = ctx.extra.get("configs", {}), ctx.extra.get("groups", {})
        config = configs.get(p.rm_id)
        self.part = config.partition(p.name) if config is not None else None
        self.used, self.counted = limits.expected(ctx, p)

    def may_go(self, app: Application, ask: Ask) -> bool:
        """Not parked, not waiting for its gang or a preempted placeholder, within the
        headroom of its queue path and of its user's and group's limits."""
        gang_pending = bool(app.placeholder_ask) and any(
            k.placeholder for k in app.pending_asks.values())
        if parked(self.ctx, ask) or (gang_pending and not ask.placeholder) \
                or _waits_for_victim(self.ctx, app, ask):
            return False
        path = app.queue.ancestry() if app.queue is not None else []
        if any(q.max is not None and not qty.within(qty.plus(q.allocated, ask.resource), q.max)
               for q in path):
            return False
        return not limits.held_back(self.part, self.used, self.counted, app, ask.resource,
                                    self.groups.get((self.p.rm_id, app.id)))

    def node_for(self, app: Application, ask: Ask) -> Node | None:
        """A schedulable node whose free room fits ``ask`` and that no other ask's
        reservation closes to it."""
        p = self.p
        required = ask.tags.get(REQUIRED_NODE, "")
        for node in self.nodes:
            if required and node.id != required:
                continue
            # A required-node ask cancels an ordinary reservation of its node and shares
            # it with other required-node asks': no reservation stops it.
            if not required and node.reservations \
                    and (app.id, ask.key) not in node.reservations:
                continue
            if self.passes is not None and p.predicates is not None \
                    and not self.passes(ask.key, node.id):
                continue
            if qty.fits(ask.resource, self.free[node.id]):
                return node
        return None


def walk_would_place(ctx: CheckContext, p: PartitionState, app: Application) -> bool:
    """Whether a walk of ``app`` would place something (the end of its backoff matters):
    in its ask order, an ask that may go and has a node comes before as many asks that
    find no node as its leaf's backoff threshold (those back it off again first)."""
    room = _Room(ctx, p)
    if not room.judged or app.state not in SCHEDULABLE or not _may_start(p, app):
        return False
    limit = app.queue.backoff_asks if app.queue is not None else 0
    missed = 0
    for ask in app.pending_asks.values():
        if limit and missed >= limit:
            return False
        if not room.may_go(app, ask):
            continue
        if room.node_for(app, ask) is not None:
            return True
        missed += 1
    return False


@invariant(
    "reservations.required_held",
    "Right after schedule(), a pending required-node ask the cycle may place (as for "
    "scheduling.maximal) whose node is schedulable and could ever hold it (capacity - "
    "occupied) holds a reservation of that node: other required-node asks' reservations "
    "there stay beside its own, never instead of it.",
    "002 (the requiredNode tag: that node or nowhere); YuniKorn apache/yunikorn-core be3bb48 "
    "pkg/scheduler/objects/application.go tryRequiredNode (reserves the node whenever the "
    "ask is not placed), cancelReservations (cancels only ordinary reservations), node.go "
    "Reserve (several required-node reservations on one node)",
    "A required-node ask loses its node to another required-node ask: the two take the "
    "node from each other in turn, and neither is placed when room frees up.",
    needs=("after_schedule",),
)
def _required_held(ctx: CheckContext) -> Iterator[Violation]:
    for p, app, ask, _room in _schedulable(ctx):
        required = ask.tags.get(REQUIRED_NODE, "")
        node = p.nodes.get(required) if required else None
        if node is None or node.state != "Schedulable" or ask.task_group \
                or not qty.fits(ask.resource, qty.minus(node.capacity, node.occupied)):
            continue
        key = (app.id, ask.key)
        if p.reservations.get(key) is not node or key not in node.reservations:
            held = ", ".join(f"{a}/{k}" for a, k in node.reservations) or "nothing"
            yield Violation("reservations.required_held", f"ask {p.name}/{app.id}/{ask.key}",
                            f"left pending without a reservation of its required node "
                            f"{node.id}, which holds {held}")
