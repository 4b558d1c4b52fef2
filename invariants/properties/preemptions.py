"""Preemption as the checker reads it: YuniKorn's laws and rules restated, not the core's.

Everything here is computed from what the shim knows (the asks and
allocations it was told about, its own reading of the configuration and its
clock), never from the core's preemption code (``scheduler/partition/
preemptor.py`` and its neighbours). A preemption reaches the shim as one
``AllocationResponse.released`` listing every victim with
``PREEMPTED_BY_SCHEDULER`` and a message naming the ask; the callbacks of a
call arrive in decision order, so when that response is judged the shim's
model holds exactly the state the decision was taken in.

Where YuniKorn's code and its design documents differ in a way that matters
here, the reading that accepts both is taken (a check that can only be
weaker than the core it judges never reports a correct core).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from invariants.properties import priorities as priority
from invariants.properties import protocol as P
from invariants.properties.catalog import CheckContext, Violation, invariant
from invariants.properties.priorities import MAX, MIN
from invariants.properties.scheduling import PREEMPTED, unconfirmed_victim
from invariants.readings import arithmetic as qty
from invariants.readings import model, view
from invariants.readings.shim import AllocView, AskView, RMView
from scheduler import si

TT = si.TerminationType


SOURCE = ("YuniKorn preemption (design/preemption.md, design/simple_preemptor.md; "
          "objects/preemption.go, objects/required_node_preemptor.go, objects/queue.go)")


DEFAULT_DELAY = 30.0


ATTEMPT_INTERVAL = 15.0
"""Seconds between two preemption checks of one ask (YuniKorn's ``preemptAttemptFrequency``)."""


TRIGGER = P.check(
    "preemption.trigger",
    "A preemption is started only for an ask the shim sent and still has pending, named by "
    "the release message, and only once per ask. A general preemption needs "
    "allowPreemptOther, the partition's preemption.enabled, an ask at least its leaf's "
    "preemption.delay old, a guarantee on the ask's leaf or an ancestor, and an ask that "
    "failed its queue headroom or fitted no schedulable node; a required-node preemption "
    "needs its node to lack the room. Neither is started for an ask its user or group "
    "limits hold back (a limit is never a reason to preempt).",
    f"{SOURCE}: laws 4 and 1; Preemptor.CheckPreconditions; Application.tryAllocate; "
    "YuniKorn user and group limits (the user headroom is checked before preemption)",
    "The core preempts where nothing allowed it, or when the ask would have run anyway: "
    "work is killed for nothing.",
)


VICTIMS = P.check(
    "preemption.victims",
    "General preemption takes victims only from other leaves inside the ask's preemption "
    "fence (the first queue up from the ask's leaf that is preemption.policy fence or "
    "whose max its usage plus the ask would exceed, else root) that are not "
    "preemption.policy disabled and hold more than their guarantee "
    "(capped by their max), with a priority at most the ask's priority as adjusted down to "
    "the victim's leaf (any priority inside a priority-fenced subtree whose offset is at "
    "most that priority), never a required-node allocation, never one already being "
    "released; after the victims leave, every victim leaf is still at or above its "
    "guarantee. Required-node preemption takes victims only on the required node, never "
    "a required-node allocation or one of a higher priority than the ask, and they with the "
    "node's free room cover the ask.",
    f"{SOURCE}: laws 2, 3, 5, 6, 7; findEligiblePreemptionVictims, findPreemptionFenceRoot "
    "(YUNIKORN-3241); "
    "tryRequiredNodePreemption",
    "A queue is pushed below its guarantee, a fence or a priority is crossed, or an "
    "allocation that must stay is killed.",
)


OUTCOME = P.check(
    "preemption.outcome",
    "After a general preemption's victims leave, the ask's leaf with the ask added is within "
    "its guarantee on every queue of its path; after the call the ask holds a reservation "
    "on one node (for a required-node ask: its node), unless a required-node ask of its "
    "victims' node took that node later in the same cycle.",
    f"{SOURCE}: law 4; checkPreemptionQueueGuarantees; the commit (reserve the node)",
    "Victims die but the ask can not use what they free, or nothing keeps their room "
    "for it.",
)


ENOUGH = P.check(
    "preemption.enough",
    "No victim beyond what the ask needs. A required-node preemption stops at the first "
    "victim with which the victims alone cover the ask. A general preemption takes victims "
    "on its chosen node only until the ask fits there, and takes further victims (from "
    "any node) only while the ask's leaf, with the ask added and the victims so far gone, "
    "is not within its guarantee.",
    f"{SOURCE}: calculateVictimsByNode (startIndex), calculateAdditionalVictims, "
    "tryRequiredNodePreemption",
    "A task is killed that the ask never needed: work is lost for nothing.",
)


USEFUL = P.check(
    "preemption.useful",
    "Every victim frees something the ask lacks. A required-node preemption's victim holds "
    "some resource type the ask asks for. A general preemption's victim on its chosen node "
    "holds some type the ask still lacks on that node when it is taken; a further victim "
    "holds some type in which a queue on the ask's path that is also above the victim is "
    "still over its guarantee.",
    f"{SOURCE}: tryRequiredNodePreemption (candidates share a resource type), "
    "calculateVictimsByNode (victims that reduce the node's shortfall first), "
    "calculateAdditionalVictims (the ask queue's remaining guarantee changes)",
    "A task is killed whose room the ask can not use.",
)


NODE = P.check(
    "preemption.node",
    "A general preemption chooses a node the ask could use: a schedulable node of the ask's "
    "partition, not held for another ask that is still waiting for it, on which the ask "
    "fits once that node's victims are gone.",
    f"{SOURCE}: calculateVictimsByNode (schedulable nodes not reserved for another ask; a "
    "node where the ask never fits is dropped)",
    "Victims die on a node the ask can never run on, or on one another ask was promised.",
)


ORDER = P.check(
    "preemption.order",
    "Victims are chosen and listed in YuniKorn's order. On a required node: regular "
    "allocations, then opted-out ones, then originators; within one kind lower priority "
    "first, then newer first; no candidate left running comes before a victim. In a "
    "general preemption, the victims on the chosen node, and the further victims, each go "
    "opted-in first, then non-originators, then newer first.",
    f"{SOURCE}: sortVictimsForPreemption, tryRequiredNodePreemption (sortCandidates)",
    "The wrong tasks are killed: an originator or an opted-out task before a regular one, "
    "an older or more important task before a newer or less important one.",
)


def victim_fields(ask: AskView) -> dict[str, Any]:
    """What an allocation keeps of its ask, for judging it as a victim later."""
    return {"priority": ask.priority, "required_node": ask.required_node,
            "may_be_victim": ask.may_be_victim, "originator": ask.originator}


# ---------------------------------------------------------------- the configuration


def queue_chain(rv: RMView, part: model.PartitionModel, path: str
                ) -> list[model.QueueModel] | None:
    """The queues from ``path`` up to root, configured or created (as the shim recorded
    their creation), or None when a level is neither (a removed queue, draining)."""
    chain = model.levels(part, rv.created.get(part.name, {}), path)
    return None if any(q is None for q in chain) else [q for q in chain if q is not None]


def _policy(q: model.QueueModel) -> str:
    return q.own.get("preemption.policy", "").strip().lower()


def disabled(chain: Sequence[model.QueueModel]) -> bool:
    """``disabled`` is the one preemption policy configured children inherit; a queue's
    own value, even one that reads as default, overrides its parent's. A created queue
    inherits nothing (YUNIKORN-809): only its template's value counts."""
    for q in chain:
        policy = _policy(q)
        if policy or q.created:
            return policy == "disabled"
    return False


def delay(q: model.QueueModel) -> float:
    """``preemption.delay`` (inherited), a Go duration; bad or not positive: 30 s."""
    return model.positive_duration(q.properties.get("preemption.delay"), DEFAULT_DELAY)


def guaranteed(chain: Sequence[model.QueueModel]) -> dict[str, int]:
    """G*: per type, the smallest guarantee over the queue and its ancestors that set it."""
    out: dict[str, int] = {}
    for q in chain:
        for k, v in (q.guaranteed or {}).items():
            out[k] = min(out.get(k, v), v)
    return out


def cap(chain: Sequence[model.QueueModel], cluster: Mapping[str, int]) -> dict[str, int]:
    """Per type, the smaller of G* and the effective max (root's max is the cluster)."""
    out = guaranteed(chain)
    limits: dict[str, int] = dict(cluster)
    for q in chain:
        for k, v in (q.max or {}).items():
            limits[k] = min(limits.get(k, v), v)
    for k, v in limits.items():
        out[k] = min(out.get(k, v), v)
    return out


def above_cap(used: Mapping[str, int], c: Mapping[str, int]) -> bool:
    return any(used.get(k, 0) > v for k, v in c.items())


def at_or_above(used: Mapping[str, int], chain: Sequence[model.QueueModel],
                cluster: Mapping[str, int]) -> bool:
    """The victim's side: over its cap in some type, or at its guarantee in every one."""
    g = guaranteed(chain)
    return above_cap(used, cap(chain, cluster)) or all(used.get(k, 0) >= v
                                                        for k, v in g.items())


# ---------------------------------------------------------------- priorities


def _shown(p: int, q: model.QueueModel) -> int:
    """The ask's priority seen from ``q`` going up (no special case for the lowest int32:
    YuniKorn's findPreemptionFenceRoot has none, unlike the queue's own priority)."""
    s = priority.of(q)
    return s.offset if s.fence else max(MIN, min(MAX, p + s.offset))


def victim_priority_bound(part: model.PartitionModel, ask_path: str, ask_priority: int,
                          fence_root: str, victim_path: str,
                          made: Mapping[str, model.Created] | None = None) -> int | None:
    """The highest victim priority the ask may preempt in ``victim_path``; None when its
    subtree is priority-fenced above the ask (no victim), MAX inside a fenced subtree the
    ask reaches (any priority). ``made``: the shim's records of created queues."""

    def at(path: str) -> model.QueueModel:
        q = model.queue_at(part, made or {}, path)
        assert q is not None, path
        return q

    recorded: dict[str, int] = {}
    p = ask_priority
    for path in model.path_prefixes(ask_path):
        q = at(path)
        p = _shown(p, q)
        recorded[path] = p
        if path == fence_root:
            break
    p = recorded[fence_root]
    fenced = False
    parts = victim_path.split(".")
    depth = len(fence_root.split("."))
    for d in range(depth + 1, len(parts) + 1):
        path = ".".join(parts[:d])
        if path in recorded:
            p = recorded[path]
            continue
        s = priority.of(at(path))
        if s.fence:
            if s.offset > p:
                return None
            fenced = True
        elif not fenced:
            p -= s.offset
    return MAX if fenced else p


def fence_root(chain: Sequence[model.QueueModel], rv: RMView | None = None,
               partition: str = "", ask: Mapping[str, int] | None = None) -> str:
    """The first queue from the leaf up whose preemption.policy is fence, or (with the
    shim's usage and the ask) whose max the usage below it plus the ask exceeds in a type
    the max names: reaching it exactly does not fence (YUNIKORN-3241, YuniKorn
    ``findPreemptionFenceRoot``); root otherwise."""
    for q in chain[:-1]:
        if _policy(q) == "fence":
            return q.path
        if rv is not None and ask is not None and q.max:
            used = qty.plus(rv.usage_below(partition, q.path), ask)
            if any(used.get(k, 0) > limit for k, limit in q.max.items()):
                return q.path
    return chain[-1].path


# ---------------------------------------------------------------- when preemption is due


def ready(rv: RMView, ask: AskView, now: float
          ) -> tuple[str, model.PartitionModel, list[model.QueueModel]] | None:
    """``(partition, configuration, chain)`` when YuniKorn's preconditions let ``ask`` try
    a general preemption now, as the shim reads them: a pending real pod outside any gang
    of a live application, allowPreemptOther, no required node, never preempted, the
    partition's switch on, a guarantee on its path, past its leaf's preemption.delay; and
    no user, group or maxapplications limit on its path (not reasoned about here)."""
    app = rv.apps.get(ask.app)
    if app is None or app.state not in ("Accepted", "Running") or ask.pending <= 0 \
            or ask.placeholder or ask.task_group or not ask.may_preempt or ask.preempted \
            or ask.required_node or rv.pending_placeholders(ask.app):
        return None
    part = rv.config.partition(app.partition)
    chain = queue_chain(rv, part, app.path) if part is not None else None
    if part is None or chain is None or not part.preemption or not guaranteed(chain) \
            or any(q.users or q.groups or q.max_applications for q in chain) \
            or now < ask.sent + delay(chain[0]):
        return None
    return app.partition, part, chain


def within_below_root(rv: RMView, partition: str, chain: Sequence[model.QueueModel],
                      ask: AskView, cluster: Mapping[str, int]) -> bool:
    """With the ask added, every queue of its path but root is within its guarantee (root's
    cap is the cluster: any victim that makes room on a node brings root within)."""
    return all(qty.within(qty.plus(rv.usage_below(partition, q.path), ask.resource),
                          cap(chain[i:], cluster)) for i, q in enumerate(chain[:-1]))


def victim_verdict(rv: RMView, part: model.PartitionModel, chain: Sequence[model.QueueModel],
                   ask: AskView, v: AllocView, cluster: Mapping[str, int]) -> bool | None:
    """None when YuniKorn does not count ``v`` a victim candidate of ``ask`` (its own leaf,
    outside the fence, disabled, a leaf not above its guarantee, a priority above the ask's,
    a required node, already released); else whether taking ``v`` alone leaves its leaf
    at or above its guarantee (law 2)."""
    vapp = rv.apps.get(v.app)
    vchain = queue_chain(rv, part, vapp.path) if vapp is not None else None
    if vapp is None or vchain is None or v.releasing is not None or v.required_node \
            or vapp.path == chain[0].path:
        return None
    root = fence_root(chain, rv, part.name, ask.resource)
    if not (vapp.path + ".").startswith(root + ".") or disabled(vchain):
        return None
    used = rv.usage_below(vapp.partition, vapp.path)
    if not above_cap(used, cap(vchain, cluster)):
        return None
    bound = victim_priority_bound(part, chain[0].path, ask.priority, root, vapp.path,
                                  rv.created.get(part.name))
    if bound is None or v.priority > bound:
        return None
    return at_or_above(qty.minus(used, v.resource), vchain, cluster)


# ---------------------------------------------------------------- judging one decision


def required_candidates(rv: RMView, ask: AskView, node: str) -> list[AllocView]:
    """What a required-node ask may take on ``node`` (behaviour 2.6 step 2): allocations
    not being released, not required-node ones, of a priority at most the ask's, holding a
    resource type the ask asks for; in the shim's order."""
    wanted = [k for k, v in ask.resource.items() if v > 0]
    return [a for a in rv.allocs_on(node)
            if a.releasing is None and not a.required_node and a.priority <= ask.priority
            and any(a.resource.get(k, 0) > 0 for k in wanted)]


def _clusters(rv: RMView, partition: str) -> tuple[dict[str, int], dict[str, int]]:
    """Root's max read two ways: every node of the partition, only the schedulable ones."""
    nodes = [n for n in rv.nodes.values() if n.partition == partition]
    return (qty.total(n.capacity for n in nodes),
            qty.total(n.capacity for n in nodes if n.state == "Schedulable"))


def _preempting(rv: RMView, partition: str, path: str) -> dict[str, int]:
    """What is already being preempted below ``path`` (unconfirmed)."""
    apps = {a.id for a in rv.apps_below(partition, path)}
    return qty.total(a.resource for a in rv.allocs.values()
                     if a.app in apps and a.releasing == PREEMPTED)


@invariant(
    "preemption.accounting",
    "Every queue's preempting resources are the sum of the allocations below it that the "
    "core released PREEMPTED_BY_SCHEDULER and the RM has not confirmed; so they are zero "
    "once every such release is confirmed.",
    SOURCE,
    "A victim's resources are counted twice or forgotten while it is still running: "
    "guarantees are judged on a wrong usage, and more or fewer tasks are preempted.",
)
def _accounting(ctx: CheckContext) -> Iterator[Violation]:
    for p in view.partitions(ctx.scheduler):
        want: dict[str, dict[str, int]] = {}
        for app in p.apps.values():
            queue = app.queue
            for x in app.allocations.values():
                if not unconfirmed_victim(ctx, x) or queue is None:
                    continue
                for q in queue.ancestry():
                    want[q.path] = qty.plus(want.get(q.path, {}), x.resource)
        for q in p.queues.values():
            have = {k: v for k, v in q.preempting.items() if v}
            if not qty.same(have, want.get(q.path, {})):
                yield Violation("preemption.accounting", f"queue {p.name}/{q.path}",
                                f"preempting {qty.show(have)}, the unconfirmed preemption "
                                f"releases below it hold {qty.show(want.get(q.path, {}))}")


# ---------------------------------------------------------------- quota preemption


QUOTA_MESSAGE = "preempting allocations to enforce new max quota for queue : "
"""How a quota preemption's releases begin, then the queue's path (YuniKorn
quota_preemptor.go ``preemptVictims``)."""


QUOTA_SOURCE = ("YuniKorn 1.8 quota preemption (YUNIKORN-3193; objects/quota_preemptor.go, "
                "objects/queue.go setPreemptionTime and tryAcquirePreemption, scheduler.go "
                "triggerQuotaPreemption)")


QUOTA = P.check(
    "preemption.quota",
    "A quota preemption (releases whose message names the queue whose lowered max they "
    "enforce) comes only from a configured queue of a partition with "
    "preemption.quotapreemptionenabled on and a positive quota.preemption.delay, no "
    "earlier than the start time a reload set (the reload that lowered the max below its "
    "usage, plus the delay; a changed delay shifts it, a delay of 0 or usage within the "
    "max clears it), once per start time; its victims run in that queue's subtree, have no "
    "required node, are not already being released, and together hold, in each type the "
    "queue is over its max in, no more than its usage less what is being preempted above "
    "that max, capped by the largest excess over a guarantee on its path.",
    f"{QUOTA_SOURCE}: setPreemptableResources, GetPreemptableResource, filterAllocations, "
    "preemptVictims",
    "Work is killed without the administrator's consent (a switch off, before the grace "
    "period), outside the queue whose quota changed, or beyond what brings it within its "
    "max.",
)
