"""Quota preemption: a reload that lowers a queue's max below its usage releases work.

Apache YuniKorn 1.8 (YUNIKORN-3193; the seeds say nothing of it), off unless
two switches are on: the partition's ``preemption.quotapreemptionenabled``
and the queue property ``quota.preemption.delay`` (a positive Go duration;
anything else is 0, off). Only configured queues take part.

- **When.** :func:`after_reload` restates apache/yunikorn-core be3bb48
  pkg/scheduler/objects/queue.go ``setPreemptionTime``: a lowered max above
  which the queue's usage sits starts a clock (now + delay), a changed delay
  shifts a running clock by the difference, a delay of 0, no max or usage
  within the max clears it. A partition timer marks the start time; once due,
  :func:`run_due` walks from root as ``Queue.TryQuotaPreemption`` does: a queue
  still above its max runs once and clears its start time, and its subtree
  waits for the next second (scheduler.go ``internalQuotaPreemption`` ticks
  every second).
- **How much and which.** :func:`preemptable`, :func:`spread` and
  :func:`choose` restate quota_preemptor.go ``setPreemptableResources``,
  ``getChildQueuesPreemptableResource``, ``filterAllocations``,
  ``sortAllocations`` (preemption_utilities.go ``SortAllocationsBasedOnAsk``) and
  ``preemptVictims``.
- **What the RM sees.** The victims' releases (``victims.release``, the
  general preemption's commit), with :data:`MESSAGE` and the queue's path, and
  one ``QUEUE`` event beginning with :data:`SUMMARY` (today's SI: change detail
  ``QUEUE_PREEMPTION``).
"""

from __future__ import annotations

import math
from collections.abc import Mapping

from .. import preemption as settings
from .. import resources as res
from .. import si
from ..config import PartitionConfig
from ..objects import Allocation, Queue
from ..resources import Resource
from . import victims as commit
from .state import PartitionState

DELAY = "quota.preemption.delay"
MESSAGE = "preempting allocations to enforce new max quota for queue : "
"""The release message, followed by the queue's path (quota_preemptor.go ``preemptVictims``)."""
SUMMARY = "Quota Preemption results summary: "
"""How the queue event's message begins (quota_preemptor.go ``tryPreemption``)."""
TICK = 1.0
"""Seconds between two walks (scheduler.go ``internalQuotaPreemption``)."""
TIMER = "quota"


def delay_of(properties: Mapping[str, str]) -> float:
    """``quota.preemption.delay`` in seconds; missing, bad or not positive is 0, off
    (queue.go ``convertDelay`` with ``DefaultQuotaPreemptionDelay``)."""
    text = properties.get(DELAY)
    value = settings.parse_duration(text) if text is not None else None
    return value if value is not None and value > 0 else 0.0


def _strictly_greater(larger: Resource | None, smaller: Resource | None) -> bool:
    """resources.go ``StrictlyGreaterThan``: at least as large in every type (missing = 0)
    and not equal."""
    a, b = larger or {}, smaller or {}
    return res.le(b, a) and not res.equal(a, b)


def after_reload(p: PartitionState, queue: Queue, old_max: Resource | None,
                 old_delay: float) -> None:
    """Set, shift or clear the queue's start time after a reload (queue.go
    ``setPreemptionTime``, called from ``UpdateQueueProperties``).

    A max set where there was none counts as raised, so it starts nothing, as in YuniKorn.
    """
    queue.quota_delay = delay_of(queue.properties)
    if not queue.managed or queue.parent is None:
        return
    delay, start = queue.quota_delay, queue.quota_start
    if delay == 0 or queue.max is None or res.is_zero(queue.max) \
            or res.within(queue.allocated, queue.max):
        queue.quota_start = None
        return
    shift = delay - old_delay
    if res.equal(old_max or {}, queue.max):
        if start is None:
            if old_delay == 0:
                queue.quota_start = p.core.clock.now() + delay
        elif shift:
            queue.quota_start = start + shift
    elif _strictly_greater(old_max, queue.max):
        queue.quota_start = p.core.clock.now() + delay if start is None else start + shift
    elif _strictly_greater(queue.max, old_max) and start is not None:
        queue.quota_start = start + shift


def snapshot(p: PartitionState) -> dict[str, tuple[Resource | None, float]]:
    """Each queue's max and delay before a reload (``UpdateQueueProperties``'s old values)."""
    return {path: (q.max, q.quota_delay) for path, q in p.queues.items()}


def reloaded(p: PartitionState, config: PartitionConfig,
             before: Mapping[str, tuple[Resource | None, float]]) -> None:
    """After a reload: the partition switch, every queue's clock, their timers."""
    p.quota_preemption_enabled = bool(config.preemption.quotapreemptionenabled)
    for path, queue in p.queues.items():
        old_max, old_delay = before.get(path, (None, 0.0))
        after_reload(p, queue, old_max, old_delay)
    arm(p)


def arm(p: PartitionState) -> None:
    """A timer for every start time (older ones lapse): a reload may have moved them, or
    turned the partition switch on for one already passed."""
    now = p.core.clock.now()
    for queue in p.queues.values():
        queue.quota_token += 1
        if queue.quota_start is not None:
            p.core.schedule_timer(max(0.0, queue.quota_start - now), TIMER, queue,
                                  queue.quota_token, p.timer_owner)


def on_timer(p: PartitionState, queue: Queue, token: int) -> None:
    """A start time fell due: walk, if the timer still stands."""
    if p.queues.get(queue.path) is queue and queue.quota_token == token:
        run_due(p)


def run_due(p: PartitionState) -> None:
    """queue.go ``TryQuotaPreemption`` from root, with scheduler.go
    ``triggerQuotaPreemption``'s partition switch: a queue that runs keeps its subtree
    from running in the same walk, whose due queues try again a second later."""
    if not p.quota_preemption_enabled or p.state == "Stopped":
        return
    now = p.core.clock.now()
    waiting: list[Queue] = []

    def visit(queue: Queue) -> None:
        if _acquire(queue, now):
            preempt(p, queue)
            queue.quota_start = None
            waiting.extend(q for q in _below(queue) if q.quota_start is not None)
            return
        for name in sorted(queue.children):
            visit(queue.children[name])

    visit(p.root)
    for queue in waiting:
        queue.quota_token += 1
        start = queue.quota_start if queue.quota_start is not None else now
        p.core.schedule_timer(max(TICK, start - now), TIMER, queue, queue.quota_token,
                              p.timer_owner)


def _below(queue: Queue) -> list[Queue]:
    out: list[Queue] = []
    for name in sorted(queue.children):
        child = queue.children[name]
        out.append(child)
        out.extend(_below(child))
    return out


def _acquire(queue: Queue, now: float) -> bool:
    """queue.go ``tryAcquirePreemption``: configured, above its max (allocated, in-flight
    victims included) and past its start time; usage back within the max clears it."""
    if not queue.managed or queue.parent is None:
        return False
    if queue.max is None or res.within(queue.allocated, queue.max):
        queue.quota_start = None
        return False
    return queue.quota_start is not None and now >= queue.quota_start


def _guarantee(queue: Queue) -> Resource | None:
    """The guarantee as YuniKorn keeps it: none unless some type is positive and none
    negative (queue.go ``setResources``)."""
    g = queue.guaranteed
    return g if g and res.any_positive(g) and not res.has_negative(g) else None


def preemptable(queue: Queue) -> Resource | None:
    """quota_preemptor.go ``setPreemptableResources``: per type, usage (allocated less
    preempting) above the max, capped where a queue from root down to this one holds more
    than its guarantee by the largest such excess (queue.go ``GetPreemptableResource``)."""
    used = {k: v - queue.preempting.get(k, 0) for k, v in queue.allocated.items()}
    if not queue.max or not used:
        return None
    net = {k: used.get(k, 0) - v for k, v in queue.max.items() if used.get(k, 0) > v}
    acc: Resource | None = None
    for q in reversed(queue.chain):
        g = _guarantee(q)
        own = dict(q.allocated) if g is None \
            else {k: v - q.allocated.get(k, 0) for k, v in g.items()}
        acc = own if acc is None else _min_union(own, acc)
    cap = {k: -v for k, v in (acc or {}).items() if v < 0}
    out = {k: min(v, cap[k]) if k in cap else v for k, v in net.items()}
    return out or None


def _min_union(a: Resource, b: Resource) -> Resource:
    """resources.go ``ComponentWiseMin``: the smaller where both set a type, else the one."""
    out = dict(b)
    for k, v in a.items():
        out[k] = min(v, b[k]) if k in b else v
    return out


def spread(parent: Queue, amount: Resource | None,
           out: list[tuple[Queue, Resource | None]]) -> None:
    """quota_preemptor.go ``getChildQueuesPreemptableResource``: each child with usage
    above its guarantee (all of it without one) takes the floor of its share of that
    usage, per type, down to the leaves."""
    if amount is None:
        return
    above: list[tuple[Queue, Resource]] = []
    total: Resource = {}
    for name in sorted(parent.children):
        child = parent.children[name]
        alloc = child.allocated
        g = _guarantee(child)
        if not res.any_positive(alloc) or (g is not None and _covers(g, alloc)):
            continue
        part = {k: abs(v - alloc.get(k, 0)) for k, v in g.items()} if g is not None \
            else dict(alloc)
        above.append((child, part))
        res.add_into(total, part)
    for child, part in above:
        share: Resource = {}
        for k, v in part.items():
            if k in amount:
                ratio = (v / total[k] if total.get(k) else float(v)) if v else 0.0
                share[k] = math.floor(ratio * amount[k])
        if child.is_leaf:
            out.append((child, share))
        else:
            spread(child, share, out)


def _covers(g: Resource, alloc: Resource) -> bool:
    """resources.go ``StrictlyGreaterThanOrEqualsOnlyExisting`` of a guarantee over usage:
    no shared type above it, and true when they share no type at all."""
    return all(alloc[k] <= v for k, v in g.items() if k in alloc)


def choose(leaf: Queue, amount: Resource | None, total: Resource) -> tuple[
        list[Allocation], list[Allocation]]:
    """The leaf's candidates and, of them, its victims (quota_preemptor.go
    ``filterAllocations``, ``sortAllocations``, ``preemptVictims``).

    Candidates share a type with the amount, have no required node and are not being
    released. Sorted as ``SortAllocationsBasedOnAsk`` sorts (its score first, higher
    first: originators and opted-out allocations lead; then lower priority, the younger
    hour, the smaller share of the max in the amount's types), ties newest first. Taken
    greedily while each fits what is left and the total stays within the amount.
    """
    if amount is None or res.is_zero(amount):
        return [], []
    found = [alloc for app in leaf.apps.values() for alloc in app.allocations.values()
             if alloc.state == "Allocated" and not alloc.preempted and not alloc.required_node
             and any(k in alloc.resource for k in amount)]
    found.sort(key=lambda a: -a.seq)
    found.sort(key=lambda a: _order(a, amount, total))
    taken: list[Allocation] = []
    claimed: Resource = {}
    for alloc in found:
        if any(v > max(0, amount[k]) for k, v in alloc.resource.items() if k in amount):
            continue
        after = res.add(claimed, alloc.resource)
        if all(after[k] <= v for k, v in amount.items() if k in after):
            taken.append(alloc)
            claimed = after
    return found, taken


def _order(alloc: Allocation, amount: Resource, total: Resource) -> tuple[object, ...]:
    score = (1 << 33 if alloc.originator else 0) + (0 if alloc.preempt_self else 1 << 34)
    kinds = alloc.resource
    score += (sum(1 for k in amount if k in kinds) * 100 // len(kinds)) if kinds else 0
    shares = sorted((float(v) / total[k] if total.get(k) else float(v))
                    for k, v in kinds.items() if k in amount and v)
    return (-score, alloc.priority, -math.floor(alloc.created / 3600.0),
            tuple(reversed(shares)))


def _go_map(r: Resource | None) -> str:
    """A resource as Go prints YuniKorn's ``Resource.String``."""
    if r is None:
        return "nil resource"
    return "map[" + " ".join(f"{k}:{r[k]}" for k in sorted(r)) + "]"


def preempt(p: PartitionState, queue: Queue) -> None:
    """quota_preemptor.go ``tryPreemption`` for a queue whose start time passed."""
    amount = preemptable(queue)
    plans: list[tuple[Queue, Resource | None]] = [(queue, amount)] if queue.is_leaf else []
    if not queue.is_leaf:
        spread(queue, amount, plans)
    candidates = 0
    chosen: list[Allocation] = []
    claimed: Resource | None = None
    for leaf, share in plans:
        found, taken = choose(leaf, share, leaf.max or {})
        candidates += len(found)
        if taken:
            chosen.extend(taken)
            claimed = res.add(claimed or {}, res.total(a.resource for a in taken))
    if not queue.is_leaf and claimed is None:
        claimed = {}
    if chosen:
        commit.release(p, chosen, MESSAGE + queue.path,
                       f"preempted to bring queue {queue.path} within its max")
    if candidates:
        p.core.event(p.rm_id, si.EventRecordType.QUEUE, queue.path,
                     f"{SUMMARY}preemptable resources: {_go_map(amount)}, claimed resources: "
                     f"{_go_map(claimed)}, selected victims: {candidates}, "
                     f"preempted victims: {len(chosen)}", si.EventChangeType.SET)
