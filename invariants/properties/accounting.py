"""Accounting, quota, reference and state-agreement invariants of the core.

Each check recomputes a total from the objects that make it up and compares
it with the total the core maintains incrementally; a difference means a
resource was lost or counted twice somewhere on a path through the flows of
``003``.
"""

from __future__ import annotations

from collections.abc import Iterator

from invariants.properties.catalog import CheckContext, Violation, invariant
from invariants.properties.sums import held
from invariants.readings import arithmetic as qty
from invariants.readings.shim import REQUIRED_NODE
from invariants.readings.view import PartitionState, partitions
from scheduler import si
from statemachines.application import LIVE, SCHEDULABLE

REPLACED = si.TerminationType.PLACEHOLDER_REPLACED.value

F003 = "003 'Operations to remove allocations and add or remove asks', 'Allocations'"


def _fmt(r: dict[str, int]) -> str:
    return qty.show(r)


@invariant(
    "accounting.application",
    "An application's allocated equals the sum of its real allocations, its "
    "placeholder_allocated the sum of its placeholders, and its pending the sum of "
    "resource x pending repeats over its pending asks, less one repeat of each real ask "
    "a placeholder is being replaced for (YuniKorn allocates it at the match).",
    f"{F003}; 001 'Scheduler storage object changes' (allocatedPlaceholder)",
    "The application's totals drifted from what it holds: quota, sorting and the "
    "shim's view are computed from wrong numbers.",
)
def _app_totals(ctx: CheckContext) -> Iterator[Violation]:
    for p in partitions(ctx.scheduler):
        for app in p.apps.values():
            sums = held(ctx, p, app)
            real, ph = sums.real, sums.placeholders
            # A placeholder released with PLACEHOLDER_REPLACED names the real ask it makes
            # room for: that ask's swap started, one of its repeats is taken.
            swapping = {a.replacing_key for a in app.allocations.values()
                        if a.placeholder and a.state == "Releasing"
                        and a.release_type == REPLACED and a.replacing_key}
            pending: dict[str, int] = {}
            for k in app.pending_asks.values():
                qty.add(pending, k.resource, k.pending_repeats - (k.key in swapping))
            subject = f"application {p.name}/{app.id}"
            for what, have, want in (("allocated", app.allocated, real),
                                     ("placeholder_allocated", app.placeholder_allocated, ph),
                                     ("pending", app.pending, pending)):
                if not qty.same(have, want):
                    yield Violation("accounting.application", subject,
                                    f"{what} is {_fmt(have)} but its objects sum to {_fmt(want)}")
            for k in app.asks.values():
                listed = app.pending_asks.get(k.sort_key) is k
                if (k.state == "Pending") != listed or (k.state == "Pending") != (
                        k.pending_repeats > 0):
                    yield Violation("accounting.application", subject,
                                    f"ask {k.key} is {k.state} with {k.pending_repeats} pending "
                                    f"repeats (listed as pending: {listed})")


@invariant(
    "accounting.queue",
    "Every queue's allocated and pending equal the sums over the applications in its "
    "subtree (placeholders count on queues like real allocations).",
    f"{F003}; 001 'Queue & Node' (placeholders counted as real allocations)",
    "A queue's usage drifted: quota is enforced against a wrong number, so the "
    "scheduler may refuse work it could do or exceed a max.",
)
def _queue_totals(ctx: CheckContext) -> Iterator[Violation]:
    for p in partitions(ctx.scheduler):
        alloc: dict[str, dict[str, int]] = {path: {} for path in p.queues}
        pend: dict[str, dict[str, int]] = {path: {} for path in p.queues}
        counts = dict.fromkeys(p.queues, 0)
        for app in p.apps.values():
            if app.queue is None or app.state not in LIVE:
                continue
            for q in app.queue.ancestry():
                if q.path not in alloc:
                    yield Violation("accounting.queue", f"application {p.name}/{app.id}",
                                    f"its queue path contains {q.path}, which is not in the "
                                    "partition")
                    continue
                qty.add(alloc[q.path], app.allocated)
                qty.add(alloc[q.path], app.placeholder_allocated)
                qty.add(pend[q.path], app.pending)
                if app.counted_running and p.queues[q.path] is q:
                    counts[q.path] += 1
        for path, q in p.queues.items():
            if not qty.same(q.allocated, alloc[path]):
                yield Violation("accounting.queue", f"queue {p.name}/{path}",
                                f"allocated is {_fmt(q.allocated)} but its applications hold "
                                f"{_fmt(alloc[path])}")
            if not qty.same(q.pending, pend[path]):
                yield Violation("accounting.queue", f"queue {p.name}/{path}",
                                f"pending is {_fmt(q.pending)} but its applications ask "
                                f"{_fmt(pend[path])}")
            counted = counts[path]
            if counted != q.running_apps:
                yield Violation("accounting.queue", f"queue {p.name}/{path}",
                                f"running_apps is {q.running_apps} but {counted} applications "
                                "count as running below it")


@invariant(
    "accounting.node",
    "Every node's allocated equals the sum of the allocations on it, and its available "
    "equals capacity - occupied - allocated (occupied counts as used); a partition's "
    "total capacity is the sum of its nodes' capacities.",
    "003 'Node lock'; 003 'Partition Lock' ('Update of Node Resource ... also affects the "
    "Partition's total allocatable Resource'); 002 NodeInfo.occupiedResource",
    "A node's free room drifted: the scheduler may place pods where there is no room, "
    "or leave room unused.",
)
def _node_totals(ctx: CheckContext) -> Iterator[Violation]:
    for p in partitions(ctx.scheduler):
        total = qty.total(n.capacity for n in p.nodes.values())
        if not qty.same(p.capacity, total):
            yield Violation("accounting.node", f"partition {p.name}",
                            f"capacity is {_fmt(p.capacity)} but its nodes sum to "
                            f"{_fmt(total)}")
        for node in p.nodes.values():
            subject = f"node {p.name}/{node.id}"
            held = qty.total(a.resource for a in node.allocations.values())
            if not qty.same(node.allocated, held):
                yield Violation("accounting.node", subject,
                                f"allocated is {_fmt(node.allocated)} but its allocations sum to "
                                f"{_fmt(held)}")
            room = dict(node.capacity)
            qty.add(room, node.occupied, -1)
            qty.add(room, node.allocated, -1)
            if not qty.same(node.available, room):
                yield Violation("accounting.node", subject,
                                f"available is {_fmt(node.available)}, expected {_fmt(room)}")


@invariant(
    "quota.queue_max",
    "No queue's allocated exceeds its max, unless recovery or a lowered max put it there "
    "(then the queue is flagged with the reason and takes nothing new).",
    "004 'Configurations & Semantics' (max-capacity); 001 'Scheduling in queues with a "
    "quota set'",
    "The scheduler allocated past a quota on some level of the queue path.",
)
def _queue_max(ctx: CheckContext) -> Iterator[Violation]:
    for p in partitions(ctx.scheduler):
        for q in p.queues.values():
            if q.max is not None and not qty.within(q.allocated, q.max) \
                    and not q.over_quota_reason:
                yield Violation("quota.queue_max", f"queue {p.name}/{q.path}",
                                f"allocated {_fmt(q.allocated)} exceeds max {_fmt(q.max)} "
                                "with no recovery or configuration change to explain it")


@invariant(
    "capacity.node",
    "No node holds more than capacity - occupied, unless recovery or an RM update that "
    "shrank it put it there (flagged with the reason).",
    "002 NodeInfo (schedulableResource, occupiedResource, existingAllocations)",
    "The scheduler placed an allocation on a node without room for it.",
)
def _node_capacity(ctx: CheckContext) -> Iterator[Violation]:
    for p in partitions(ctx.scheduler):
        for node in p.nodes.values():
            used = qty.plus(node.allocated, node.occupied)
            if not qty.within(used, node.capacity) and not node.over_capacity_reason:
                yield Violation("capacity.node", f"node {p.name}/{node.id}",
                                f"allocated + occupied {_fmt(used)} exceeds capacity "
                                f"{_fmt(node.capacity)} with no recovery or shrink to explain it")


@invariant(
    "references.allocation",
    "Every allocation's node, application and queue exist and agree: the node and the "
    "application both list it, the partition index lists exactly the allocations "
    "applications hold, and uuids are unique across the scheduler.",
    "003 'How to merge Cache and scheduler objects' (one object model)",
    "An allocation is orphaned or duplicated: it would be counted twice or never "
    "released.",
)
def _references(ctx: CheckContext) -> Iterator[Violation]:
    seen: dict[str, str] = {}
    for p in partitions(ctx.scheduler):
        held: dict[str, object] = {}
        for app in p.apps.values():
            for uuid, a in app.allocations.items():
                held[uuid] = a
                subject = f"allocation {p.name}/{uuid}"
                if uuid in seen:
                    yield Violation("references.allocation", subject,
                                    f"uuid also used in partition {seen[uuid]}")
                seen[uuid] = p.name
                if a.app is not app or a.uuid != uuid:
                    yield Violation("references.allocation", subject,
                                    "listed by an application it does not belong to")
                if p.nodes.get(a.node.id) is not a.node:
                    yield Violation("references.allocation", subject,
                                    f"its node {a.node.id} is not in the partition")
                elif a.node.allocations.get(uuid) is not a:
                    yield Violation("references.allocation", subject,
                                    f"node {a.node.id} does not list it")
                if app.queue is None or p.queues.get(app.queue.path) is not app.queue:
                    yield Violation("references.allocation", subject,
                                    "its application has no queue in the partition")
                elif not app.queue.is_leaf:
                    yield Violation("references.allocation", subject,
                                    f"its application sits in parent queue {app.queue.path}")
                if a.state not in ("Allocated", "Releasing"):
                    yield Violation("references.allocation", subject,
                                    f"is still held in final state {a.state}")
        for node in p.nodes.values():
            for uuid, a in node.allocations.items():
                if held.get(uuid) is not a:
                    yield Violation("references.allocation", f"allocation {p.name}/{uuid}",
                                    f"node {node.id} lists it but no application holds it")
        if set(p.allocations) != set(held) or any(p.allocations[u] is not held[u]
                                                  for u in p.allocations):
            yield Violation("references.allocation", f"partition {p.name}",
                            "the partition's allocation index differs from what applications "
                            "hold")


@invariant(
    "reservations.valid",
    "A reservation is held only on a schedulable node of the partition, for an ask "
    "that is still pending and fits the node's capacity - occupied; node and "
    "partition agree on it; once a node is reserved, only the reserved ask is allocated "
    "on it. An ordinary reservation (not a required-node ask's, not a preempting ask's) "
    "is made only on a node the RM's predicates accept for the ask.",
    "004 'Implementation' (reserve room against fragmentation); 002 Predicates "
    "(allocate=false: a reservation); YuniKorn reserves only where the predicates pass "
    "(YUNIKORN-87)",
    "A node is kept for an ask that can never use it: other work is blocked for nothing.",
)
def _reservations(ctx: CheckContext) -> Iterator[Violation]:
    # The checker's own predicates function (the one the model shim registered).
    passes = ctx.extra.get("predicate")
    for p in partitions(ctx.scheduler):
        for (app_id, key), node in p.reservations.items():
            subject = f"reservation {p.name}/{app_id}/{key}"
            app = p.apps.get(app_id)
            ask = app.asks.get(key) if app is not None else None
            if ask is not None and passes is not None and p.predicates is not None \
                    and not ask.required_node and not ask.preempted \
                    and not passes(key, node.id):
                yield Violation("reservations.valid", subject,
                                f"the RM's predicates refuse ask {key} on node {node.id}")
            if ask is None or ask.state != "Pending":
                yield Violation("reservations.valid", subject, "its ask is not pending")
            elif app is not None and app.state not in SCHEDULABLE:
                yield Violation("reservations.valid", subject,
                                f"its application is {app.state} and can not be scheduled")
            elif ask.parked_on:
                yield Violation("reservations.valid", subject,
                                f"its ask is parked on placeholder {ask.parked_on}")
            elif app is not None and not ask.placeholder and app.placeholder_ask and any(
                    k.placeholder for k in app.pending_asks.values()):
                yield Violation("reservations.valid", subject,
                                "a real ask of a gang still placing its placeholders")
            if p.nodes.get(node.id) is not node or not node.schedulable:
                yield Violation("reservations.valid", subject,
                                f"node {node.id} is not a schedulable node of the partition")
            if (app_id, key) not in node.reservations:
                yield Violation("reservations.valid", subject,
                                f"node {node.id} records {list(node.reservations)}")
            if ask is not None and not qty.fits(ask.resource,
                                                qty.minus(node.capacity, node.occupied)):
                yield Violation("reservations.valid", subject,
                                f"the ask no longer fits node {node.id} at all")
        for node in p.nodes.values():
            held = node.reservations
            for entry in held:
                if p.reservations.get(entry) is not node:
                    yield Violation("reservations.valid", f"node {p.name}/{node.id}",
                                    f"records reservation {entry} the partition does not know")
            if not held:
                continue
            # Only required-node asks share a node (reservations.shared); then any
            # required-node ask of the node may go there, as it reserves the node first.
            shared = all(_required_of(p, entry) == node.id for entry in held)
            first = min(held.values())
            taken = sorted(a.uuid for a in node.allocations.values()
                           if a.seq > first and not a.recovered
                           and (a.app.id, a.ask_key) not in held
                           and not (shared and a.tags.get(REQUIRED_NODE) == node.id))
            if taken:
                names = ", ".join(f"{a}/{k}" for a, k in held)
                yield Violation("reservations.valid", f"node {p.name}/{node.id}",
                                f"reserved for {names}, yet {taken} were allocated on it "
                                "after the reservation")


def _required_of(p: PartitionState, key: tuple[str, str]) -> str | None:
    """The node a reserved ask requires ("" for an ordinary ask, None when it is gone)."""
    app = p.apps.get(key[0])
    ask = app.asks.get(key[1]) if app is not None else None
    return None if ask is None else ask.tags.get(REQUIRED_NODE, "")


@invariant(
    "reservations.shared",
    "A node holds either one ordinary ask's reservation, alone, or any number of "
    "required-node asks' reservations, each ask requiring that node; a required-node ask "
    "reserves only its own node.",
    "004 'Implementation' (reserve room against fragmentation; silent on sharing); YuniKorn "
    "apache/yunikorn-core be3bb48 pkg/scheduler/objects/node.go Reserve (several "
    "reservations only for required-node asks), application.go tryNodes (an ordinary ask "
    "reserves an unreserved node), tryRequiredNode (cancels the ordinary ones)",
    "An ordinary ask shares a node with another reservation: two asks wait for one room, "
    "and a required-node ask, which can run nowhere else, waits behind an ask that could.",
)
def _reservations_shared(ctx: CheckContext) -> Iterator[Violation]:
    for p in partitions(ctx.scheduler):
        for node in p.nodes.values():
            kinds = [(key, _required_of(p, key)) for key in node.reservations]
            for (app_id, key), required in kinds:
                if required and required != node.id:
                    yield Violation("reservations.shared", f"reservation {p.name}/{app_id}/{key}",
                                    f"node {node.id} reserved for an ask that requires node "
                                    f"{required}")
            if len(kinds) > 1 and any(required != node.id for _, required in kinds):
                names = ", ".join(f"{a}/{k}" + ("" if r == node.id else " (ordinary)")
                                  for (a, k), r in kinds)
                yield Violation("reservations.shared", f"node {p.name}/{node.id}",
                                f"an ordinary ask shares the node's reservations: {names}")


@invariant(
    "reservations.delay",
    "An ordinary reservation (not a required-node ask's, not a preempting ask's) is held "
    "only by an ask that has waited the scheduler's reservation delay since it arrived: "
    "checked right after every step, so a reservation made too early is seen in the call "
    "that made it.",
    "004 'Implementation' (reserve room against fragmentation; silent on when); YuniKorn "
    "apache/yunikorn-core be3bb48 pkg/scheduler/objects/application.go tryNodes "
    "(askAge > reservationDelay, 2 s)",
    "A node is kept for an ask that had no time to find room as it frees up: nodes are "
    "closed to every other ask at the first miss, and fragmentation becomes starvation.",
)
def _reservation_delay(ctx: CheckContext) -> Iterator[Violation]:
    delay = ctx.scheduler.reservation_delay
    now = ctx.scheduler.clock.now()
    for p in partitions(ctx.scheduler):
        for (app_id, key), node in p.reservations.items():
            app = p.apps.get(app_id)
            ask = app.asks.get(key) if app is not None else None
            if ask is None or ask.tags.get(REQUIRED_NODE) or ask.preempted:
                continue
            if now - ask.created < delay - 1e-9:
                yield Violation("reservations.delay", f"reservation {p.name}/{app_id}/{key}",
                                f"ask {key} reserved node {node.id} {now - ask.created:g} s "
                                f"after it arrived, before its {delay:g} s delay")


@invariant(
    "application.state_agrees",
    "An application's state agrees with what it holds: New has no asks; Accepted holds "
    "no real allocation, and has a pending ask or a placeholder; Running has a pending "
    "ask or a real allocation (placeholders are not active allocations); Completing has "
    "no pending ask and no real allocation; Failing is releasing everything it holds; "
    "Resuming still holds a placeholder being released; "
    "Completed, Failed, Rejected and Expired hold no asks and no allocations.",
    "001 'Application completion', 'Definition' ('An application enters the waiting state "
    "at the time that there are no active allocations ... and pending allocation asks'; "
    "'Placeholders are not considered active allocations'), 'Cleanup'",
    "The lifecycle and the accounting disagree: an application is reported finished "
    "while it still holds resources, or waits while it runs.",
)
def _app_state(ctx: CheckContext) -> Iterator[Violation]:
    for p in partitions(ctx.scheduler):
        for app in p.apps.values():
            subject = f"application {p.name}/{app.id}"
            real = any(not a.placeholder for a in app.allocations.values())
            if app.state == "New" and app.asks:
                yield Violation("application.state_agrees", subject, "New but has asks")
            if app.state == "Accepted" and real:
                yield Violation("application.state_agrees", subject,
                                "Accepted but holds a real allocation")
            if app.state == "Running" and not app.pending_asks and not real:
                yield Violation("application.state_agrees", subject,
                                "Running with no pending ask and no real allocation (only "
                                "placeholders or nothing): it should be Completing")
            if app.state == "Accepted" and not app.pending_asks and not app.allocations:
                yield Violation("application.state_agrees", subject,
                                "Accepted with no pending ask and no allocation: it should "
                                "be Completing")
            if app.state == "Completing" and (app.pending_asks or real):
                yield Violation("application.state_agrees", subject,
                                "Completing but still has pending asks or real allocations")
            if app.state not in LIVE and (app.asks or app.pending_asks or app.allocations):
                held = sorted(app.asks) or sorted(app.allocations)
                yield Violation("application.state_agrees", subject,
                                f"{app.state} but still holds asks or allocations "
                                f"({', '.join(held[:3])})")
            if app.state == "Resuming" and not any(a.placeholder
                                                   for a in app.allocations.values()):
                yield Violation("application.state_agrees", subject,
                                "Resuming with no placeholder left to release: it should "
                                "be Accepted again")
            if app.state == "Failing" and any(a.state == "Allocated"
                                              for a in app.allocations.values()):
                yield Violation("application.state_agrees", subject,
                                "Failing while an allocation is not being released")


@invariant(
    "shim.view_agrees",
    "Once every release is confirmed, the allocations the shim was told about (new "
    "minus released) are exactly the allocations the core holds, on the same nodes.",
    "002 'RM and scheduler updates'; 001 'AllocationRelease Response and Request'",
    "The core and the RM disagree on what runs where: a pod the core forgot, or "
    "resources the core still counts for a pod that is gone.",
    needs=("shim_view",),
)
def _shim_view(ctx: CheckContext) -> Iterator[Violation]:
    view = ctx.shim_view
    assert view is not None
    core: dict[str, tuple[str, str]] = {}
    for p in partitions(ctx.scheduler):
        for uuid, a in p.allocations.items():
            core[uuid] = (a.app.id, a.node.id)
    for uuid in sorted(set(view) | set(core)):
        if uuid not in core:
            yield Violation("shim.view_agrees", f"allocation {uuid}",
                            "the shim runs it but the core does not hold it")
        elif uuid not in view:
            yield Violation("shim.view_agrees", f"allocation {uuid}",
                            "the core holds it but the shim was never told (or was told "
                            "it was released)")
        elif view[uuid] != core[uuid]:
            yield Violation("shim.view_agrees", f"allocation {uuid}",
                            f"the shim has it as {view[uuid]}, the core as {core[uuid]}")
