"""Sorting order as the checker reads it: which queue, application, ask and node go first.

``004`` "Implementation": sort queues and applications by their resource
usage, let the partition choose how nodes are sorted; the policies follow
YuniKorn as ``docs/design-notes.md`` ("Scheduling", "Order") states them.
They are restated here from that text and the checker's own reading of the
configuration, never taken from ``scheduler/policies.py``, whose kept orders
are what these checks judge.

Each allocation of a ``schedule()`` call is judged against the partition as
it was just before it (``priority.judged``: usage only grows within a call,
so that state is rebuilt from the one after the call). Where an allocation
went against an order only because of priority, ``priority.order`` judges it;
these checks compare what is left: the policy's keys with priority as their
tie-break, or among equal priorities.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping

from invariants.properties.catalog import CheckContext, Violation, invariant
from invariants.properties.priorities import (
    Before,
    Reserved,
    below,
    created_from,
    fitting_asks,
    judged,
    open_nodes,
    settings,
    sorts_by_priority,
)
from invariants.readings import model
from invariants.readings.shim import REQUIRED_NODE
from invariants.readings.view import Allocation, Application, Node, PartitionState, Queue

SOURCE = ("004 'Implementation' (sort queues and applications by resource usage, nodes by "
          "the partition's policy); docs/design-notes.md 'Scheduling' (YuniKorn's fair, "
          "fifo and stateaware policies, nodesortpolicy)")
DEFAULT_WEIGHTS = {"memory": 1.0, "vcore": 1.0}
_EPSILON = 1e-9


def shares(used: Mapping[str, int], base: Mapping[str, int]) -> list[float]:
    """Per resource the usage has: used / base, or the raw usage where the base has none;
    largest first (two lists compare on the dominant share, then the next)."""
    out = [v / base[k] if base.get(k, 0) > 0 else float(v) if v > 0 else 0.0
           for k, v in used.items()]
    return sorted(out, reverse=True)


class Facts:
    """A queue's sorting settings from the configuration (a created leaf's from its
    parent's childtemplate)."""

    __slots__ = ("guaranteed", "policy", "priority_first")

    def __init__(self, policy: str, guaranteed: Mapping[str, int] | None,
                 priority_first: bool) -> None:
        self.policy = policy
        self.guaranteed = guaranteed
        self.priority_first = priority_first


def facts(part: model.PartitionModel | None, queue: Queue) -> Facts | None:
    """None when the configuration no longer has the queue, or when a queue a placement
    rule created, of which the shim holds no record, may have been made under another
    template than today's (nothing is judged there: a reload leaves created queues as they
    were). With the record (``model.Created``), a created queue is judged by it."""
    s = settings(part, queue)
    if part is None or s is None:
        return None
    configured = part.queues.get(queue.path)
    if configured is not None:
        return Facts(configured.sort_policy, configured.guaranteed, s.sort)
    template = created_from(part, queue)
    policy = model.policy_of(template.properties if template is not None else {})
    guaranteed = template.guaranteed if template is not None else None
    record = part.made.get(queue.path)
    if record is not None:  # its applications' namespace tags may have replaced it
        guaranteed = model.created_queue(queue.path, record).guaranteed
    if queue.path not in part.made and (
            policy != queue.sort_policy or dict(guaranteed or {}) != dict(queue.guaranteed or {})):
        # Without the shim's record of its creation, a queue that differs may have been
        # created under an earlier configuration's template: not judged.
        return None
    return Facts(policy, guaranteed, s.sort)


def _app_used(app: Application, before: Before) -> dict[str, int]:
    used: dict[str, int] = {}
    for uuid, a in app.allocations.items():
        if uuid not in before.later:
            for k, v in a.resource.items():
                used[k] = used.get(k, 0) + v
    return {k: v for k, v in used.items() if v}


def submitted(ctx: CheckContext, p: PartitionState, app: Application) -> float:
    """The submission time fifo order reads, as the model shim saw it: acceptance, moved
    back by any earlier ``creationTime`` tag the core took (the core's own time without
    that record)."""
    since: Mapping[tuple[str, str], float] = ctx.extra.get("fifo_since") or {}
    return since.get((p.rm_id, app.id), app.submit_time)


def app_key(app: Application, f: Facts, before: Before, capacity: Mapping[str, int],
            since: float) -> tuple[object, ...]:
    """The leaf's order: fifo (and stateaware) by submission time (``since``), the highest
    pending priority, the id; fair by usage shares against the leaf's guarantee (else the
    partition's capacity), priority, submission; priority first when the leaf sorts
    by priority."""
    prio = -before.apps.get(app.id, 0)
    if f.policy == "fair":
        s = shares(_app_used(app, before), f.guaranteed or capacity)
        return (prio, s, app.submit_seq, app.id) if f.priority_first else (
            s, prio, app.submit_seq, app.id)
    return (prio, since, app.id) if f.priority_first else (since, prio, app.id)


def pending_below(queue: Queue, before: Before) -> int:
    """The sum of the quantities the applications below ``queue`` had pending just before
    (each ask's resource times its repeats then pending)."""
    total = 0
    for app in below(queue):
        for key, repeats in before.pending.get(app.id, {}).items():
            ask = app.asks.get(key)
            if ask is not None and repeats > 0:
                total += repeats * sum(ask.resource.values())
    return total


def queue_key(queue: Queue, f: Facts, before: Before, values: Mapping[str, int],
              priority_first: bool) -> tuple[object, ...]:
    """A parent's order: usage shares against the queue's guarantee, priority, more
    pending first, path (priority first when the parent sorts by priority).

    YuniKorn's ``sortQueuesByPriorityAndFairness`` puts a queue first when its
    pending is at least the other's in every type and more in one; the sum of the
    pending quantities orders every such pair that way, and is the core's documented
    order for the pairs YuniKorn leaves to map iteration."""
    s = shares(before.queue_used.get(queue.path, {}), f.guaranteed or {})
    prio = -values.get(queue.path, 0)
    more = -pending_below(queue, before)
    return (prio, s, more, queue.path) if priority_first else (s, prio, more, queue.path)


def _started_before(app: Application, before: Before) -> bool:
    """It held an allocation just before (made earlier in the call or before it)."""
    return any(uuid not in before.later for uuid in app.allocations)


def _accepted_before_call(ctx: CheckContext, p: PartitionState, app: Application) -> bool:
    """Accepted when the call started (without that record, as it is now)."""
    states: Mapping[tuple[str, str, str], str] | None = ctx.extra.get("states_before")
    state = app.state if states is None else states.get((p.rm_id, p.name, app.id), "")
    return state == "Accepted"


def _accepted_then(ctx: CheckContext, p: PartitionState, app: Application) -> bool:
    """Accepted just before the allocation, for an application that held no real allocation
    then: still Accepted, or Accepted when the call started and Running now (a cycle moves
    an application only Accepted -> Running, by its first real allocation)."""
    return app.state == "Accepted" or (app.state == "Running"
                                       and _accepted_before_call(ctx, p, app))


def _waiting(ctx: CheckContext, p: PartitionState, app: Application, before: Before) -> bool:
    """Accepted and holding nothing just before the allocation."""
    return not _started_before(app, before) and _accepted_then(ctx, p, app)


def _starting(ctx: CheckContext, p: PartitionState, app: Application, before: Before) -> bool:
    """Accepted and holding allocations just before the allocation: only placeholders
    keep an application Accepted, so all it held then were placeholders."""
    held = [a for uuid, a in app.allocations.items() if uuid not in before.later]
    if not held or any(not a.placeholder for a in held):
        return False
    return _accepted_then(ctx, p, app)


@invariant(
    "scheduling.order",
    "When an application gets an allocation that was not reserved, among what could have "
    "been placed just before it (a runnable application, an ask within its queue path's "
    "headroom and its user's and group's limits, a schedulable node with room not reserved "
    "for another ask): no sibling queue on its path sorted before (fair: usage shares of "
    "the guarantee, then priority, then more pending first by the sum of its pending "
    "quantities, then path), no application of its leaf sorted before "
    "(fifo and stateaware: submission time, moved back by an earlier creationTime tag of "
    "an ask the core took or an allocation it recovered, then priority, id; fair: usage "
    "shares of the "
    "leaf's guarantee or the partition's capacity, priority, submission), and no ask of "
    "its own application sorted before (priority, then arrival) could be placed; in a "
    "stateaware leaf an application not yet started is the first in fifo order of those "
    "waiting, and starts only while no other application of the leaf is starting "
    "(Accepted, holding allocations).",
    SOURCE,
    "The cycle served the wrong queue, application or ask: a policy is ignored or "
    "inverted, usage is read stale, or stateaware lets several applications start at "
    "once (001: a gang's placeholders then compete with another application's pods).",
    needs=("after_schedule",),
)
def _order(ctx: CheckContext) -> Iterator[Violation]:
    for p, part, before, values, x, reserved in judged(ctx):
        v = _judge(ctx, p, part, before, values, x, reserved)
        if v is not None:
            yield v


def _judge(ctx: CheckContext, p: PartitionState, part: model.PartitionModel | None,
           before: Before, values: Mapping[str, int], x: Allocation,
           reserved: Reserved) -> Violation | None:
    app = x.app
    leaf = app.queue
    subject = f"allocation {p.name}/{x.uuid}"
    ask = app.asks.get(x.ask_key)
    if leaf is None or ask is None or x.replaces:
        return None
    first = next(fitting_asks(ctx, p, part, before, app, reserved, offered=True), None)
    if first is not None and first is not ask and (-first.priority, first.seq) < (
            -ask.priority, ask.seq):
        return Violation("scheduling.order", subject,
                         f"went to ask {ask.key} (priority {ask.priority}) of {app.id} "
                         f"while its ask {first.key} (priority {first.priority}), sorted "
                         "before it, could be placed")
    f = facts(part, leaf)
    if f is None:
        return None
    mine = before.apps.get(app.id, 0)
    if f.policy == "stateaware" and _waiting(ctx, p, app, before):
        for other in leaf.apps.values():
            if other is not app and _starting(ctx, p, other, before):
                return Violation("scheduling.order", subject,
                                 f"started {app.id} in stateaware {leaf.path} while "
                                 f"{other.id} was starting")
        waiting = [o for o in leaf.apps.values() if _waiting(ctx, p, o, before)
                   and any(n > 0 for n in before.pending.get(o.id, {}).values())]
        fifo = min(waiting, key=lambda o: (submitted(ctx, p, o), -before.apps.get(o.id, 0),
                                           o.id), default=app)
        if fifo is not app:
            return Violation("scheduling.order", subject,
                             f"started {app.id} in stateaware {leaf.path} while {fifo.id}, "
                             "submitted before it, was waiting")
    key = app_key(app, f, before, p.capacity, submitted(ctx, p, app))
    for other in leaf.apps.values():
        if other is app or (f.priority_first and before.apps.get(other.id, 0) != mine):
            continue
        if app_key(other, f, before, p.capacity, submitted(ctx, p, other)) < key:
            found = next(fitting_asks(ctx, p, part, before, other, reserved), None)
            if found is not None:
                return Violation("scheduling.order", subject,
                                 f"went to {app.id} in {leaf.path} ({f.policy}) while "
                                 f"{other.id}, sorted before it, could place ask {found.key}")
    child = leaf
    while child.parent is not None:
        parent = child.parent
        first_by_priority = sorts_by_priority(p, part, parent)
        mine_f = facts(part, child)
        if mine_f is None:
            return None
        key = queue_key(child, mine_f, before, values, first_by_priority)
        for sibling in parent.children.values():
            if sibling is child or (first_by_priority
                                    and values.get(sibling.path) != values.get(child.path)):
                continue
            sf = facts(part, sibling)
            if sf is None or not queue_key(sibling, sf, before, values,
                                           first_by_priority) < key:
                continue
            for other in below(sibling):
                found = next(fitting_asks(ctx, p, part, before, other, reserved), None)
                if found is not None:
                    return Violation("scheduling.order", subject,
                                     f"went below {child.path} while {sibling.path}, sorted "
                                     f"before it, had {other.id} able to place ask "
                                     f"{found.key}")
        child = parent
    return None


# ---------------------------------------------------------------------------- nodes


def node_score(node: Node, free: Mapping[str, int], weights: Mapping[str, float]) -> float:
    """The weighted mean over ``weights`` of the share of capacity in use (occupied and
    allocated), types with no capacity or no weight left out."""
    num = den = 0.0
    for k, w in weights.items():
        cap = node.capacity.get(k, 0)
        if w <= 0 or cap <= 0:
            continue
        num += w * ((cap - free.get(k, 0)) / cap)
        den += w
    return num / den if den else 0.0


@invariant(
    "nodes.order",
    "An allocation that was not reserved, not a replacement and not for a required node "
    "went to the first node in the partition's nodesortpolicy order among the schedulable "
    "nodes that had room for it just before, were not reserved for another ask and passed "
    "the shim's predicates: fair the least used first, binpacking the most used first (the "
    "weighted mean of used / capacity over resourceweights, default memory and vcore "
    "1.0), then node id.",
    SOURCE,
    "The node policy is ignored or inverted, or a node's usage is read stale: pods pile "
    "onto busy nodes under fair, or spread under binpacking.",
    needs=("after_schedule",),
)
def _nodes(ctx: CheckContext) -> Iterator[Violation]:
    for p, part, before, _values, x, reserved in judged(ctx):
        ask = x.app.asks.get(x.ask_key)
        if part is None or ask is None or x.replaces or ask.tags.get(REQUIRED_NODE):
            continue
        weights = part.node_weights or DEFAULT_WEIGHTS
        binpacking = part.node_policy == "binpacking"
        mine = node_score(x.node, before.free[x.node.id], weights)
        for node in open_nodes(ctx, p, before, x.app, ask, reserved):
            if node is x.node:
                continue
            score = node_score(node, before.free[node.id], weights)
            diff = (mine - score) if binpacking else (score - mine)
            if diff < -_EPSILON or (diff == 0 and node.id < x.node.id):
                yield Violation("nodes.order", f"allocation {p.name}/{x.uuid}",
                                f"placed on {x.node.id} (usage {mine:.4f}) while {node.id} "
                                f"(usage {score:.4f}) comes first under "
                                f"{part.node_policy}")
                break
