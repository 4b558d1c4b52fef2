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
from itertools import pairwise
from typing import Any

from invariants.properties import limits
from invariants.properties import priorities as priority
from invariants.properties import protocol as P
from invariants.properties.catalog import CheckContext, Violation, invariant
from invariants.properties.priorities import MAX, MIN
from invariants.properties.scheduling import PREEMPTED, unconfirmed_victim
from invariants.readings import arithmetic as qty
from invariants.readings import model, view
from invariants.readings.calls import Call, Monitor
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


def judge(m: Monitor, rv: RMView, call: Call, victims: list[AllocView], message: str) -> None:
    """One preemption decision: its victims as released in one response."""
    key = message.rsplit(":", 1)[-1].strip()
    asks = [k for k in rv.asks.values() if k.key == key and k.pending > 0]
    subject = f"preemption for ask {key or '?'}"
    if len(asks) != 1:
        if not asks:
            m.report(TRIGGER, subject, f"the release message {message!r} names no pending "
                     "ask the shim sent")
        return
    ask = asks[0]
    app = rv.apps.get(ask.app)
    if app is None:
        return
    subject = f"preemption for ask {ask.app}/{ask.key}"
    call.preemptions.append((ask.app, ask.key, ask.required_node,
                             frozenset(v.node for v in victims)))
    if ask.preempted:
        m.report(TRIGGER, subject, "the ask already triggered a preemption")
    ask.preempted = True
    held = limits.held_by_limits(rv, app, ask.resource)
    if held:
        m.report(TRIGGER, subject, f"the ask's limits hold it back ({held}), and a limit is "
                 "never a reason to preempt")
    part = rv.config.partition(app.partition)
    chain = queue_chain(rv, part, app.path) if part is not None else None
    if part is None or chain is None:
        return
    for v in victims:
        if v.uuid in call.released_again:
            m.report(VICTIMS, subject, f"victim {v.uuid} ({v.app}/{v.key}) was already being "
                     "released (an earlier release of it is unconfirmed)")
    if ask.required_node:
        _judge_required(m, rv, subject, ask, victims)
    else:
        _judge_general(m, rv, call, subject, ask, app.partition, part, chain, victims)


def _reservations(m: Monitor, rm_id: str) -> dict[tuple[str, str], str]:
    """The core's reservations now (after its cycle: the callbacks come after it)."""
    return {key: node.id for p in view.partitions(m.api) if p.rm_id == rm_id
            for key, node in p.reservations.items()}


def _reserved_by_others(m: Monitor, rv: RMView, call: Call, ask: AskView) -> set[str]:
    """Nodes held for another ask when the call began or when it ended: the cycle may
    not have offered them to this ask."""
    mine = (ask.app, ask.key)
    both = list(call.reserved_before.items()) + list(_reservations(m, rv.rm_id).items())
    return {node for key, node in both if key != mine}


def _fits_somewhere(m: Monitor, rv: RMView, ask: AskView, reserved: set[str]) -> str:
    for node in sorted(rv.nodes.values(), key=lambda n: n.id):
        if node.state != "Schedulable" or node.id in reserved:
            continue
        if node.partition != rv.apps[ask.app].partition or not m.passes(ask.key, node.id):
            continue
        if qty.fits(ask.resource, rv.free(node.id)):
            return node.id
    return ""


def _judge_general(m: Monitor, rv: RMView, call: Call, subject: str, ask: AskView,
                   partition: str, part: model.PartitionModel,
                   chain: list[model.QueueModel], victims: list[AllocView]) -> None:
    leaf = chain[0]
    if not ask.may_preempt:
        m.report(TRIGGER, subject, "the ask has no allowPreemptOther")
    if not part.preemption:
        m.report(TRIGGER, subject, f"partition {partition} has preemption.enabled false")
    age, wait = call.now - ask.sent, delay(leaf)
    if age < wait:
        m.report(TRIGGER, subject, f"the ask is {age:g} s old, its leaf {leaf.path} has "
                 f"preemption.delay {wait:g} s")
    if not guaranteed(chain):
        m.report(TRIGGER, subject, f"no queue on {leaf.path}'s path has a guarantee: it "
                 "can never be within it")
    headroom = all(q.max is None or qty.within(
        qty.plus(rv.usage_below(partition, q.path), ask.resource), q.max) for q in chain)
    room = _fits_somewhere(m, rv, ask, _reserved_by_others(m, rv, call, ask)) \
        if headroom else ""
    if room:
        m.report(TRIGGER, subject, f"the ask fitted its queue headroom and node {room}'s "
                 f"free room {qty.show(rv.free(room))}")
    all_nodes, schedulable = _clusters(rv, partition)
    root = fence_root(chain, rv, partition, ask.resource)
    removed: dict[str, dict[str, int]] = {}
    for v in victims:
        vapp = rv.apps.get(v.app)
        vchain = queue_chain(rv, part, vapp.path) if vapp is not None else None
        what = f"victim {v.uuid} ({v.app}/{v.key})"
        if vapp is None or vchain is None:
            continue
        if v.required_node:
            m.report(VICTIMS, subject, f"{what} is a required-node allocation")
        if vapp.path == leaf.path:
            m.report(VICTIMS, subject, f"{what} is in the ask's own leaf {leaf.path}")
            continue
        if not (vapp.path + ".").startswith(root + "."):
            m.report(VICTIMS, subject, f"{what} in {vapp.path} is outside the ask's "
                     f"preemption fence {root}")
            continue
        if disabled(vchain):
            m.report(VICTIMS, subject, f"{what} is in {vapp.path}, preemption.policy "
                     "disabled")
        held = rv.usage_below(partition, vapp.path)
        if not above_cap(held, cap(vchain, schedulable)):
            m.report(VICTIMS, subject, f"{what}: its leaf {vapp.path} holds {qty.show(held)}, "
                     f"not above its guarantee {qty.show(cap(vchain, schedulable))}")
        bound = victim_priority_bound(part, leaf.path, ask.priority, root, vapp.path,
                                      rv.created.get(part.name))
        if bound is None or v.priority > bound:
            m.report(VICTIMS, subject, f"{what} has priority {v.priority}, above the ask's "
                     f"{ask.priority} adjusted to {vapp.path} "
                     f"({'a priority fence above it' if bound is None else bound})")
        removed[vapp.path] = qty.plus(removed.get(vapp.path, {}), v.resource)
    for path, gone in sorted(removed.items()):
        vchain = queue_chain(rv, part, path)
        assert vchain is not None
        used = qty.minus(qty.minus(rv.usage_below(partition, path),
                                   _preempting(rv, partition, path)), gone)
        if not at_or_above(used, vchain, schedulable):
            m.report(VICTIMS, subject, f"leaf {path} is left with {qty.show(used)} in use, "
                     f"below its guarantee {qty.show(guaranteed(vchain))}")
    for i, q in enumerate(chain):
        below = qty.total(v.resource for v in victims
                          if (rv.apps[v.app].path + ".").startswith(q.path + "."))
        used = qty.plus(qty.minus(qty.minus(rv.usage_below(partition, q.path),
                                            _preempting(rv, partition, q.path)), below),
                        ask.resource)
        limit = cap(chain[i:], all_nodes)
        if not qty.within(used, limit):
            m.report(OUTCOME, subject, f"with the victims gone and the ask added, "
                     f"{q.path} uses {qty.show(used)}, over its guarantee {qty.show(limit)}")
            break
    node = _reservations(m, rv.rm_id).get((ask.app, ask.key))
    if node in rv.nodes:
        _general_choice(m, rv, call, subject, ask, chain, node, victims,
                        (all_nodes, schedulable))


def _judge_required(m: Monitor, rv: RMView, subject: str, ask: AskView,
                    victims: list[AllocView]) -> None:
    node = ask.required_node
    free = rv.free(node) if node in rv.nodes else {}
    if node in rv.nodes and qty.fits(ask.resource, free):
        m.report(TRIGGER, subject, f"its required node {node} had room "
                 f"{qty.show(free)} for it")
    for v in victims:
        what = f"victim {v.uuid} ({v.app}/{v.key})"
        if v.node != node:
            m.report(VICTIMS, subject, f"{what} runs on {v.node}, not the required node {node}")
        if v.required_node:
            m.report(VICTIMS, subject, f"{what} is itself a required-node allocation")
        if v.priority > ask.priority:
            m.report(VICTIMS, subject, f"{what} has priority {v.priority}, above the ask's "
                     f"{ask.priority}")
    freed = qty.plus(free, qty.total(v.resource for v in victims if v.node == node))
    if not qty.fits(ask.resource, freed):
        m.report(VICTIMS, subject, f"the victims with the node's free room "
                 f"({qty.show(freed)}) do not cover the ask {qty.show(ask.resource)}")
    wanted = {k for k, v in ask.resource.items() if v > 0}
    for v in victims:
        if not any(v.resource.get(k, 0) > 0 for k in wanted):
            m.report(USEFUL, subject, f"victim {v.uuid} ({v.app}/{v.key}) holds "
                     f"{qty.show(v.resource)}, no resource type of the ask "
                     f"{qty.show(ask.resource)}")
    before = qty.total(v.resource for v in victims[:-1])
    if victims and qty.fits(ask.resource, before):
        last = victims[-1]
        m.report(ENOUGH, subject, f"the victims before {last.uuid} ({last.app}/{last.key}) "
                 f"already free {qty.show(before)}, which covers the ask "
                 f"{qty.show(ask.resource)}")
    _required_order(m, rv, subject, ask, victims)


def _victim_kind(a: AllocView) -> int:
    """Regular, then opted out of preemption, then originators (behaviour 2.6 step 2)."""
    return 2 if a.originator else 1 if not a.may_be_victim else 0


def _required_order(m: Monitor, rv: RMView, subject: str, ask: AskView,
                    victims: list[AllocView]) -> None:
    """Behaviour 2.6 step 2: the candidates on the node are taken in order (kind, then
    priority ascending, then newest) until they cover the ask, so no candidate left
    running comes before a victim, and the victims are listed in that order. Age counts
    only between allocations the shim saw start at different times (the core orders those
    of one call by creation, which the shim's clock does not show); size is never needed
    (no two allocations are of one age to the core)."""
    taken = {v.uuid for v in victims}
    wanted = [k for k, v in ask.resource.items() if v]
    passed = [a for a in rv.allocs.values()
              if a.node == ask.required_node and a.uuid not in taken and a.releasing is None
              and not a.required_node and a.priority <= ask.priority
              and any(a.resource.get(k, 0) for k in wanted)]

    def before(a: AllocView, b: AllocView) -> bool:
        """Whether ``a`` surely comes before ``b``."""
        ka, kb = (_victim_kind(a), a.priority), (_victim_kind(b), b.priority)
        return ka < kb or (ka == kb and a.created > b.created)

    for v in victims:
        for a in passed:
            if before(a, v):
                m.report(ORDER, subject, f"victim {v.uuid} ({v.app}/{v.key}, priority "
                         f"{v.priority}) was taken while {a.uuid} ({a.app}/{a.key}, priority "
                         f"{a.priority}) on the same node, which comes first (regular, then "
                         "opted out, then originators; lower priority first; newer first), "
                         "was left")
                return
    for a, b in pairwise(victims):
        if before(b, a):
            m.report(ORDER, subject, f"victim {a.uuid} ({a.app}/{a.key}) is listed before "
                     f"{b.uuid} ({b.app}/{b.key}), which comes first")
            return


def _general_key(a: AllocView) -> tuple[bool, bool]:
    """Opted in first, then non-originators (behaviour 2.5 step 4); newer first after."""
    return (not a.may_be_victim, a.originator)


def _general_order(m: Monitor, rv: RMView, subject: str, run: Sequence[AllocView],
                   where: str, victims: set[str], node: str = "") -> None:
    """The victims of one run (the chosen node's, or the further ones) are listed in
    YuniKorn's order, and none is older than a twin left running (on ``node``, when
    given): an allocation of the same leaf, flags and size, of no higher priority (so a
    candidate too), not being released. The core weighs twins alike at every turn, and a
    turn can only make a later twin less welcome (its leaf holds less, the room grows), so
    the newer twin is always taken first. ``victims`` are every victim of the preemption:
    a twin taken in the other run is not left."""
    taken = victims | {v.uuid for v in run}
    for v in run:
        path = rv.apps[v.app].path
        twin = next((a for a in rv.allocs.values()
                     if a.uuid not in taken and a.releasing is None and not a.required_node
                     and (not node or a.node == node) and a.created > v.created
                     and a.priority <= v.priority and _general_key(a) == _general_key(v)
                     and qty.same(a.resource, v.resource) and a.app in rv.apps
                     and rv.apps[a.app].path == path
                     and rv.apps[a.app].partition == rv.apps[v.app].partition), None)
        if twin is not None:
            m.report(ORDER, subject, f"{where}: victim {v.uuid} ({v.app}/{v.key}, started at "
                     f"{v.created:g}) was taken while its newer twin {twin.uuid} "
                     f"({twin.app}/{twin.key}, started at {twin.created:g}, same leaf {path}, "
                     "size and flags) was left; newer victims come first")
            return
    for a, b in pairwise(run):
        ka, kb = _general_key(a), _general_key(b)
        if ka > kb or (ka == kb and a.created < b.created):
            m.report(ORDER, subject, f"{where}: victim {a.uuid} ({a.app}/{a.key}, "
                     f"{'opted out' if ka[0] else 'opted in'}"
                     f"{', originator' if ka[1] else ''}, started at {a.created:g}) comes "
                     f"before {b.uuid} ({b.app}/{b.key}, "
                     f"{'opted out' if kb[0] else 'opted in'}"
                     f"{', originator' if kb[1] else ''}, started at {b.created:g}); "
                     "opted-in first, then non-originators, then newer first")
            return


def _held_for(rv: RMView, call: Call, ask: AskView, node: str) -> str:
    """Another ask that held ``node`` when the call began and still waits for it, having
    lost the reservation to nothing the shim can see (it was not placed nor preempted in
    this call, its application still runs, it is no gang member, and no required-node ask
    of the node was placed): ``app/key``, or "" when none."""
    preempted = {(a, k) for a, k, _, _ in call.preemptions}
    placed = {(a.application_id, a.allocation_key) for a in call.new}
    if any(rv.asks.get(k) is not None and rv.asks[k].required_node == node for k in placed):
        return ""
    for key, held in sorted(call.reserved_before.items()):
        other = rv.asks.get(key)
        app = rv.apps.get(key[0])
        if held != node or key == (ask.app, ask.key) or other is None or app is None \
                or other.pending <= 0 or key in placed or key in preempted \
                or other.placeholder or other.task_group or other.required_node \
                or app.state not in ("Accepted", "Running") or rv.pending_placeholders(app.id):
            continue
        return f"{key[0]}/{key[1]}"
    return ""


def _leaf_state(rv: RMView, partition: str, chain: Sequence[model.QueueModel], ask: AskView,
                gone: Sequence[AllocView]) -> list[dict[str, int]]:
    """Per queue of the ask's path: its use with the ask added, without what is already
    being preempted below it and without ``gone``."""
    out = []
    for q in chain:
        below = qty.total(v.resource for v in gone
                          if (rv.apps[v.app].path + ".").startswith(q.path + "."))
        out.append(qty.plus(qty.minus(qty.minus(rv.usage_below(partition, q.path),
                                                _preempting(rv, partition, q.path)), below),
                            ask.resource))
    return out


def _general_choice(m: Monitor, rv: RMView, call: Call, subject: str, ask: AskView,
                    chain: Sequence[model.QueueModel], node: str, victims: list[AllocView],
                    clusters: tuple[dict[str, int], dict[str, int]]) -> None:
    """Behaviour 2.5 steps 4 and 6, read from the release: the victims are the chosen
    node's (``node``, the one the ask holds after the call) up to the first with which
    the ask fits there, then further ones while its leaf is not within its guarantee."""
    all_nodes, schedulable = clusters
    partition = rv.apps[ask.app].partition
    n = rv.nodes[node]
    if n.state != "Schedulable" or n.partition != partition:
        m.report(NODE, subject, f"node {node} ({n.state}, partition {n.partition}) is not "
                 f"a schedulable node of the ask's partition {partition}")
    other = _held_for(rv, call, ask, node)
    if other:
        m.report(NODE, subject, f"node {node} was held for ask {other}, which still waits "
                 "for it")
    room = rv.free(node)
    on_node: list[AllocView] = []
    extra: list[AllocView] = []
    for i, v in enumerate(victims):
        what = f"victim {v.uuid} ({v.app}/{v.key})"
        if not qty.fits(ask.resource, room):
            short = {k: x - room.get(k, 0) for k, x in ask.resource.items()
                     if x > room.get(k, 0)}
            if v.node != node:
                m.report(NODE, subject, f"{what} on {v.node} was taken while the ask still "
                         f"lacked {qty.show(short)} on its node {node}: its victims there "
                         "never made it fit")
                return
            if not any(v.resource.get(k, 0) > 0 for k in short):
                m.report(USEFUL, subject, f"{what} holds {qty.show(v.resource)}, none of "
                         f"what the ask still lacked on node {node}: {qty.show(short)}")
            room = qty.plus(room, v.resource)
            on_node.append(v)
            continue
        used = _leaf_state(rv, partition, chain, ask, victims[:i])
        if guaranteed(chain) and all(qty.within(u, cap(chain[j:], schedulable))
                                     for j, u in enumerate(used)):
            m.report(ENOUGH, subject, f"{what} was taken after the ask already fitted node "
                     f"{node} and its leaf {chain[0].path} was within its guarantee")
        else:
            vpath = rv.apps[v.app].path
            over = [k for j, q in enumerate(chain)
                    if (vpath + ".").startswith(q.path + ".")
                    for k, c in cap(chain[j:], all_nodes).items()
                    if used[j].get(k, 0) > c and v.resource.get(k, 0) > 0]
            if not over:
                m.report(USEFUL, subject, f"{what} in {vpath} holds {qty.show(v.resource)}, "
                         f"no type in which a queue above both it and the ask is over its "
                         "guarantee")
        extra.append(v)
    if not qty.fits(ask.resource, room):
        m.report(NODE, subject, f"with its victims there gone, node {node} has "
                 f"{qty.show(room)}, short of the ask {qty.show(ask.resource)}")
    everyone = {v.uuid for v in (*on_node, *extra)}
    _general_order(m, rv, subject, on_node, f"on node {node}", everyone, node)
    _general_order(m, rv, subject, extra, "among the further victims", everyone)


def reservations_made(m: Monitor, rv: RMView, call: Call) -> None:
    """P8: after the call every ask that preempted holds one node (its own, if required).

    A general preemption's reservation may be gone by the end of the call for one reason:
    a required-node ask whose node it is came later in the same cycle, cancelled every
    other reservation on that node and reserved it or was placed there (behaviour 2.6,
    YuniKorn's ``TestRequiredNodeCancelOtherReservations``, ``partition_test.go`` at
    apache/yunikorn-core ``be3bb48``)."""
    if not call.preemptions:
        return
    held = _reservations(m, rv.rm_id)
    for app_id, key, required, nodes in call.preemptions:
        node = held.get((app_id, key))
        subject = f"preemption for ask {app_id}/{key}"
        if node is None and not (not required and _taken_by_required(rv, call, held, nodes)):
            m.report(OUTCOME, subject, "after the call the ask holds no reservation")
        elif required and node != required:
            m.report(OUTCOME, subject, f"the ask reserved {node}, not its required node "
                     f"{required}")


def _taken_by_required(rv: RMView, call: Call, held: Mapping[tuple[str, str], str],
                       nodes: frozenset[str]) -> bool:
    """A required-node ask of one of ``nodes`` holds it now, or was placed on it in this
    call (as the shim was told)."""
    def required_on(app_id: str, key: str, node: str) -> bool:
        ask = rv.asks.get((app_id, key))
        return ask is not None and ask.required_node == node

    return any(node in nodes and required_on(app_id, key, node)
               for (app_id, key), node in held.items()) or any(
        a.node_id in nodes and required_on(a.application_id, a.allocation_key, a.node_id)
        for a in call.new)


# ---------------------------------------------------------------- accounting


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


def quota_delay(q: model.QueueModel) -> float:
    """``quota.preemption.delay`` (inherited), a positive Go duration; anything else 0, off."""
    return model.positive_duration(q.properties.get("quota.preemption.delay"), 0.0)


def _strictly_greater(larger: Mapping[str, int] | None,
                      smaller: Mapping[str, int] | None) -> bool:
    a, b = dict(larger or {}), dict(smaller or {})
    keys = set(a) | set(b)
    return all(a.get(k, 0) >= b.get(k, 0) for k in keys) \
        and any(a.get(k, 0) != b.get(k, 0) for k in keys)


def _same(a: Mapping[str, int] | None, b: Mapping[str, int] | None) -> bool:
    x, y = dict(a or {}), dict(b or {})
    return all(x.get(k, 0) == y.get(k, 0) for k in set(x) | set(y))


def _over(usage: Mapping[str, int], mx: Mapping[str, int]) -> bool:
    return any(usage.get(k, 0) > v for k, v in mx.items())


def quota_reloaded(rv: RMView, old: model.ConfigModel | None, now: float) -> None:
    """The shim's own reading of each configured queue's quota-preemption start time after a
    reload the core took (YuniKorn queue.go ``setPreemptionTime``). A queue the previous
    configuration did not name (created by a placement rule, or back after a removal) has
    an old max the shim can not read: when it is over its max its start is unknown and
    read as already passed."""
    for name, part in rv.config.partitions.items():
        before = old.partition(name) if old is not None else None
        for path, q in part.queues.items():
            if path == "root":
                continue
            key = (name, path)
            delay, mx = quota_delay(q), q.max
            usage = rv.usage_below(name, path)
            if delay == 0 or not mx or not any(mx.values()) or not _over(usage, mx):
                rv.quota_start.pop(key, None)
                continue
            oq = before.queues.get(path) if before is not None else None
            if oq is None:
                rv.quota_start[key] = float("-inf")
                continue
            old_max, old_delay = oq.max, quota_delay(oq)
            start = rv.quota_start.get(key)
            shift = delay - old_delay
            if _same(old_max, mx):
                if start is None and old_delay == 0:
                    rv.quota_start[key] = now + delay
                elif start is not None:
                    rv.quota_start[key] = start + shift
            elif _strictly_greater(old_max, mx):
                rv.quota_start[key] = now + delay if start is None else start + shift
            elif _strictly_greater(mx, old_max) and start is not None:
                rv.quota_start[key] = start + shift


def _quota_amount(rv: RMView, partition: str, chain: Sequence[model.QueueModel],
                  mx: Mapping[str, int]) -> dict[str, int]:
    """What the queue (``chain[0]``) may lose per type of its max: usage less what is being
    preempted, above the max, capped by the largest excess over a guarantee from the queue
    up to root."""
    path = chain[0].path
    usage = rv.usage_below(partition, path)
    used = qty.minus(usage, _preempting(rv, partition, path))
    over = {k: used.get(k, 0) - v for k, v in mx.items() if used.get(k, 0) > v}
    cap: dict[str, int] = {}
    for q in chain:
        g = q.guaranteed
        if not g or not any(v > 0 for v in g.values()) or any(v < 0 for v in g.values()):
            continue
        held = rv.usage_below(partition, q.path)
        for k, v in g.items():
            excess = held.get(k, 0) - v
            if excess > 0:
                cap[k] = max(cap.get(k, 0), excess)
    return {k: min(v, cap[k]) if k in cap else v for k, v in over.items()}


def judge_quota(m: Monitor, rv: RMView, call: Call, victims: list[AllocView],
                message: str) -> None:
    """One quota preemption: its victims as released in one response, in the state the
    decision was taken in."""
    path = message[len(QUOTA_MESSAGE):]
    subject = f"quota preemption of queue {path}"
    partitions = sorted({app.partition for v in victims if (app := rv.apps.get(v.app))})
    if len(partitions) != 1:
        return
    partition = partitions[0]
    key = (partition, path)
    part = rv.config.partition(partition)
    start = rv.quota_start.pop(key, None)
    if part is None:
        return
    if not part.quota_preemption:
        m.report(QUOTA, subject, f"partition {partition} has quotapreemptionenabled off")
    q = part.queues.get(path)
    if q is None and start is None:
        m.report(QUOTA, subject, "the queue is not one the configuration names")
        return
    if q is not None and quota_delay(q) == 0:
        m.report(QUOTA, subject, "the queue has no positive quota.preemption.delay")
    if start is None:
        m.report(QUOTA, subject, "no reload started the queue's clock (or it already ran)")
    elif call.now < start:
        m.report(QUOTA, subject, f"at {call.now:g} s, before the start time {start:g} s")
    for v in victims:
        app = rv.apps.get(v.app)
        if app is None or not (app.path == path or app.path.startswith(path + ".")):
            m.report(QUOTA, subject, f"victim {v.uuid} ({v.app}/{v.key}) runs outside "
                     "the queue's subtree")
        if v.required_node:
            m.report(QUOTA, subject, f"victim {v.uuid} has a required node")
        if v.uuid in call.released_again:
            m.report(QUOTA, subject, f"victim {v.uuid} was already being released")
    chain = part.chain(path)
    if q is None or not q.max or not chain:
        return
    amount = _quota_amount(rv, partition, chain, q.max)
    taken = qty.total(v.resource for v in victims)
    beyond = {k: taken[k] for k in amount if taken.get(k, 0) > amount[k]}
    if beyond:
        m.report(QUOTA, subject, f"victims hold {beyond}, more than the preemptable "
                 f"{ {k: amount.get(k, 0) for k in beyond} }")
