"""General preemption: an ask of a queue under its guarantee takes room from queues above theirs.

Apache YuniKorn's ``Preemptor`` (``preemption.md``, v1.5; restated in
``docs/design-notes.md``, "Preemption"). The cycle asks :func:`try_preempt`
only for an ask that failed its queue headroom (``nodes_tried=False``) or
found no node and made no new reservation (``nodes_tried=True``). Then:

1. preconditions: the partition switch, ``allowPreemptOther``, never
   preempted before, no required node, older than its leaf's
   ``preemption.delay``, 15 s since its last check (which is recorded);
2. candidates: from the fence root (the first queue up from the ask's leaf that is
   root, ``fence``, or would go past its max with the ask) down, leaves other than
   the ask's, not
   ``disabled``, above their capped guarantee, allocations not already being
   released, without a required node, with a priority not above the ask's
   priority adjusted by the offsets on the way (or any, under a priority fence);
3. feasibility: with every candidate gone the ask's leaf would be within its
   guarantee (law 4: only a queue under its guarantee triggers);
4. per node, victims in YuniKorn's order that keep their leaf at or above its
   guarantee (laws 2 and 5), and the index from which the ask fits;
5. the RM's ``preemption_predicates`` in batches of 10, nodes ordered by that
   index then id (a callback without it accepts the first choice);
6. further victims from any node until the ask's leaf is within its guarantee;
7. commit (``victims``): releases, ``preempting``, the node reserved.

Nothing changes unless every step succeeds. Work stays proportional to what
is looked at: candidates are walked lazily, a node's victims are read from
the node, and nodes are visited in id order only until the first batch of
best-possible choices is complete.
"""

from __future__ import annotations

from collections.abc import Iterator

from .. import preemption as settings
from .. import resources as res
from .. import si
from ..objects import Allocation, Application, Ask, Node, Queue
from ..resources import Resource
from . import allocate, victims
from .state import PartitionState

ET = si.EventRecordType

SCORE_ORIGINATOR = 1 << 33
SCORE_OPTED_OUT = 1 << 34
"""A choice that preempts an originator or an opted-out allocation is only taken when no
batch offers a better one (YuniKorn's ``scoreOriginator`` / ``scoreNoPreempt``)."""

MESSAGE = "preempting allocations to free up resources to run ask: "

Check = tuple[int, str, Node, list[Allocation]]
"""``(start index, node id, node, victims in order)``: one node offered to the RM."""


def _min_permissive(a: Resource, b: Resource) -> Resource:
    """Per type the smaller value; a type set on one side only keeps that value."""
    out = dict(a)
    for k, v in b.items():
        out[k] = min(v, out[k]) if k in out else v
    return out


class Snap:
    """One queue as preemption sees it: usage at the start, guarantee and cap on its path."""

    __slots__ = ("cap", "chain", "guaranteed", "max", "path", "used")

    guaranteed: Resource
    max: Resource

    def __init__(self, queue: Queue, parent: Snap | None, root_max: Resource) -> None:
        self.path = queue.path
        self.chain: tuple[Snap, ...] = (self, *(parent.chain if parent else ()))
        own_max = (queue.max or {}) if parent is not None else root_max
        # G*: the smallest guarantee on the path, per type; the effective max likewise.
        self.guaranteed = _min_permissive(queue.guaranteed or {},
                                          parent.guaranteed if parent else {})
        self.max = _min_permissive(own_max, parent.max if parent else {})
        self.cap = _min_permissive(self.guaranteed, self.max)
        used = dict(queue.allocated)
        for k, v in queue.preempting.items():
            used[k] = used.get(k, 0) - v
        self.used = used


class Trial:
    """Snapshots of the queues involved, and one speculative change to their usage."""

    __slots__ = ("delta", "root_max", "snaps")

    def __init__(self, snaps: dict[str, Snap], root_max: Resource) -> None:
        self.snaps = snaps
        self.root_max = root_max
        self.delta: dict[str, Resource] = {}

    def fresh(self) -> Trial:
        """The same snapshots with no change applied."""
        return Trial(self.snaps, self.root_max)

    def of(self, queue: Queue) -> Snap:
        snap = self.snaps.get(queue.path)
        if snap is None:
            parent = self.of(queue.parent) if queue.parent is not None else None
            snap = self.snaps[queue.path] = Snap(queue, parent, self.root_max)
        return snap

    def move(self, snap: Snap, r: Resource, sign: int) -> None:
        """Add (sign 1) or remove (sign -1) ``r`` on the queue and its ancestors."""
        for q in snap.chain:
            d = self.delta.get(q.path)
            if d is None:
                d = self.delta[q.path] = {}
            for k, v in r.items():
                d[k] = d.get(k, 0) + sign * v

    def used(self, snap: Snap) -> Resource:
        d = self.delta.get(snap.path)
        if not d:
            return snap.used
        out = dict(snap.used)
        for k, v in d.items():
            out[k] = out.get(k, 0) + v
        return out

    def within(self, leaf: Snap) -> bool:
        """Within guarantee: the leaf has one, and no queue of its path uses more than its cap."""
        if not leaf.guaranteed:
            return False
        for q in leaf.chain:
            used = self.used(q)
            for k, c in q.cap.items():
                if used.get(k, 0) > c:
                    return False
        return True

    def at_or_above(self, leaf: Snap) -> bool:
        """Over its cap in some type, or using at least its guarantee in every guaranteed type."""
        used = self.used(leaf)
        for k, c in leaf.cap.items():
            if used.get(k, 0) > c:
                return True
        return all(used.get(k, 0) >= g for k, g in leaf.guaranteed.items())

    def shortfall(self, leaf: Snap) -> Resource:
        """Per type, how far the path of ``leaf`` is over its caps (what a victim must free)."""
        out: Resource = {}
        for q in leaf.chain:
            used = self.used(q)
            for k, c in q.cap.items():
                over = used.get(k, 0) - c
                if over > out.get(k, 0):
                    out[k] = over
        return out


def _node_shortfall(ask: Resource, available: Resource) -> Resource:
    return {k: v - available.get(k, 0) for k, v in ask.items() if v > available.get(k, 0)}


def victim_order(alloc: Allocation) -> tuple[bool, bool, int]:
    """Opted in first, then non-originators, then newest first (creation order)."""
    return (not alloc.preempt_self, alloc.originator, -alloc.seq)


def try_preempt(
    p: PartitionState, app: Application, ask: Ask, nodes_tried: bool, budget: list[int]
) -> bool:
    """Preempt for ``ask`` if YuniKorn would; True when victims were released.

    ``budget`` holds the attempts its leaf has left in this step; one is
    spent when the preconditions pass.
    """
    leaf = app.queue
    if not p.preemption_enabled or budget[0] <= 0 or not ask.preempt_other or ask.preempted \
            or ask.required_node or leaf is None:
        return False
    now = p.core.clock.now()
    if now < ask.created + leaf.preemption_delay:
        return False
    if ask.preempt_checked is not None and now < ask.preempt_checked + settings.ATTEMPT_INTERVAL:
        return False
    ask.preempt_checked = now
    budget[0] -= 1
    return Preemptor(p, app, ask, leaf, nodes_tried).run()


def fenced_by_max(queue: Queue, ask: Resource) -> bool:
    """The ask would take ``queue`` past its max in a type the max names: room freed
    outside it could never let the ask in, so the queue fences the victim search as a
    ``fence`` policy does. Reaching the max exactly, a max naming no type of the usage
    and ask, or no max does not fence (YUNIKORN-3241, apache/yunikorn-core be3bb48
    pkg/scheduler/objects/queue.go findPreemptionFenceRoot)."""
    if not queue.max:
        return False
    projected = res.add(queue.allocated, ask)
    return any(k in projected and projected[k] > limit for k, limit in queue.max.items())


class Preemptor:
    """One attempt for one ask (YuniKorn's ``Preemptor``)."""

    def __init__(
        self, p: PartitionState, app: Application, ask: Ask, leaf: Queue, nodes_tried: bool
    ) -> None:
        self.p = p
        self.app = app
        self.ask = ask
        self.leaf = leaf
        self.nodes_tried = nodes_tried
        self.base = Trial({}, p.capacity)
        self.ask_snap = self.base.of(leaf)
        # Per victim leaf: the ask's priority adjusted to it, and whether a priority fence
        # above it makes every task eligible.
        self.rules: dict[str, tuple[int, bool]] = {}
        self.leaves: list[Queue] = []

    # -- 1. where victims may come from -----------------------------------------------
    def find_leaves(self) -> None:
        """Walk up to the fence root recording the ask's priority, then down for victims."""
        seen: dict[str, int] = {}
        prio = self.ask.priority
        q: Queue = self.leaf
        while True:
            prio = q.priority_offset if q.priority_fence else prio + q.priority_offset
            seen[q.path] = prio
            if q.parent is None or q.preemption_policy == settings.FENCE \
                    or fenced_by_max(q, self.ask.resource):
                break
            q = q.parent
        self._walk(q, seen[q.path], False, seen)

    def _walk(self, q: Queue, prio: int, fenced: bool, seen: dict[str, int]) -> None:
        if q is self.leaf:
            return
        if q.is_leaf:
            if q.preemption_policy == settings.DISABLED:
                return
            cap = self.base.of(q).cap
            if all(q.allocated.get(k, 0) <= c for k, c in cap.items()):
                return  # within its capped guarantee: never a victim source
            self.rules[q.path] = (prio, fenced)
            self.leaves.append(q)
            return
        for child in q.children.values():
            child_prio = seen.get(child.path)
            child_fenced = False
            if child_prio is None:
                if child.priority_fence:
                    if child.priority_offset > prio:
                        continue
                    child_fenced, child_prio = True, prio
                else:
                    child_prio = prio - child.priority_offset
            self._walk(child, child_prio, fenced or child_fenced, seen)

    def eligible(self, alloc: Allocation) -> bool:
        queue = alloc.app.queue
        rule = self.rules.get(queue.path) if queue is not None else None
        if rule is None or alloc.state != "Allocated" or alloc.required_node:
            return False
        return rule[1] or alloc.priority <= rule[0]

    def candidates(self) -> Iterator[Allocation]:
        for queue in self.leaves:
            for app in queue.apps.values():
                for alloc in app.allocations.values():
                    if self.eligible(alloc):
                        yield alloc

    # -- 2. law 4: could the ask's leaf get within its guarantee at all ---------------------
    def feasible(self) -> bool:
        trial = self.base.fresh()
        trial.move(self.ask_snap, self.ask.resource, 1)
        for alloc in self.candidates():
            trial.move(trial.of(alloc.app.queue), alloc.resource, -1)  # type: ignore[arg-type]
            if trial.within(self.ask_snap):
                return True
        return False

    # -- 3. per node -----------------------------------------------------------------------
    def node_victims(self, node: Node) -> tuple[int, list[Allocation]] | None:
        """The victims on ``node`` in order and the index from which the ask fits, or None."""
        r = self.ask.resource
        available = node.available
        if all(v <= available.get(k, 0) for k, v in r.items()):
            return (-1, [])
        ordered = sorted((a for a in node.allocations.values() if self.eligible(a)),
                         key=victim_order)
        if not ordered:
            return None
        # Pass 1: keep victims whose leaf stays at or above its guarantee; those that
        # reduce the node's shortfall first.
        trial = self.base.fresh()
        room = dict(available)
        head: list[Allocation] = []
        tail: list[Allocation] = []
        for victim in ordered:
            snap = trial.of(victim.app.queue)  # type: ignore[arg-type]
            trial.move(snap, victim.resource, -1)
            if not trial.at_or_above(snap):
                trial.move(snap, victim.resource, 1)
                continue
            grown = dict(room)
            for k, v in victim.resource.items():
                grown[k] = grown.get(k, 0) + v
            if _node_shortfall(r, room) == _node_shortfall(r, grown):
                trial.move(snap, victim.resource, 1)
                tail.append(victim)
            else:
                room = grown
                head.append(victim)
        head += tail
        if not head:
            return None
        # Pass 2: the order is fixed; keep what still holds, note where the ask fits.
        trial = self.base.fresh()
        room = dict(available)
        results: list[Allocation] = []
        index = -1
        for victim in head:
            snap = trial.of(victim.app.queue)  # type: ignore[arg-type]
            trial.move(snap, victim.resource, -1)
            if not trial.at_or_above(snap):
                trial.move(snap, victim.resource, 1)
                continue
            for k, v in victim.resource.items():
                room[k] = room.get(k, 0) + v
            if index < 0 and all(v <= room.get(k, 0) for k, v in r.items()):
                index = len(results)
            results.append(victim)
        return None if index < 0 else (index, results)

    def checks(self) -> Iterator[Check]:
        """Nodes offered to the RM, ordered by start index then node id, computed lazily.

        Nodes are visited in id order: one whose index is the best possible
        (-1 when a node may take the ask as it is, else 0) is final at once;
        the others wait, sorted, until every node was visited.
        """
        best = 0 if self.nodes_tried else -1
        mine = (self.app.id, self.ask.key)
        later: list[Check] = []
        p = self.p
        for node_id in p.node_ids():
            node = p.nodes[node_id]
            if not node.schedulable or not node.open_to(mine):
                continue
            found = self.node_victims(node)
            if found is None:
                continue
            index, listed = found
            if not listed and self.nodes_tried:
                continue  # a node with room was tried already: only mode (a) offers it
            check = (index, node_id, node, listed)
            if index == best:
                yield check
            else:
                later.append(check)
        later.sort(key=lambda c: (c[0], c[1]))
        yield from later

    # -- 4. the RM's word ------------------------------------------------------------------
    def choose(self) -> tuple[Node, list[Allocation]] | None:
        p = self.p
        if p.preemption_predicates is None:
            for index, _nid, node, listed in self.checks():
                if listed or allocate.predicates(p, self.ask, node, True):
                    return node, listed[: index + 1]
            return None
        best: tuple[int, Node, list[Allocation]] | None = None
        batch: list[Check] = []
        for check in self.checks():
            batch.append(check)
            if len(batch) < settings.PREDICATE_BATCH:
                continue
            best = self.judge(batch, best)
            batch = []
            if best is not None and best[0] < SCORE_ORIGINATOR:
                break
        else:
            if batch:
                best = self.judge(batch, best)
        return None if best is None else (best[1], best[2])

    def judge(
        self, batch: list[Check], best: tuple[int, Node, list[Allocation]] | None
    ) -> tuple[int, Node, list[Allocation]] | None:
        """Ask the RM about each node of the batch; keep the lowest score."""
        for start, _nid, node, listed in batch:
            index = self.ask_rm(start, node, listed)
            if index is None:
                continue
            chosen = listed[: index + 1]
            score = index + 1
            if any(v.originator for v in chosen):
                score |= SCORE_ORIGINATOR
            if any(not v.preempt_self for v in chosen):
                score |= SCORE_OPTED_OUT
            if best is None or score < best[0]:
                best = (score, node, chosen)
        return best

    def ask_rm(self, start: int, node: Node, listed: list[Allocation]) -> int | None:
        """The RM's index for this node (-1: no victim needed), or None when it says no."""
        p, ask = self.p, self.ask
        if not listed:
            return -1 if allocate.predicates(p, ask, node, True) else None
        method = p.preemption_predicates
        assert method is not None
        args = si.PreemptionPredicatesArgs.model_construct(
            allocation_key=ask.key, node_id=node.id,
            preempt_allocation_keys=[v.ask_key for v in listed], start_index=start)
        try:
            answer = method(args)
            success = bool(getattr(answer, "success", False))
            index = int(getattr(answer, "index", 0))
        except Exception as exc:  # a shim's bug must not break the cycle
            p.core.event(p.rm_id, ET.NODE, node.id, f"node {node.id}: the preemption "
                         f"predicates for ask {ask.key} raised {type(exc).__name__}: {exc}",
                         reference_id=ask.key)
            return None
        if not success:
            return None
        if not 0 <= index < len(listed):
            p.core.event(p.rm_id, ET.NODE, node.id, f"node {node.id}: the preemption "
                         f"predicates for ask {ask.key} answered index {index}, outside the "
                         f"{len(listed)} allocations offered; the node is not used",
                         reference_id=ask.key)
            return None
        return index

    # -- 5. enough for the queue -----------------------------------------------------------
    def additional(self, chosen: list[Allocation]) -> list[Allocation] | None:
        """Victims from any node until the ask's leaf is within its guarantee (None: never)."""
        trial = self.base.fresh()
        trial.move(self.ask_snap, self.ask.resource, 1)
        for victim in chosen:
            trial.move(trial.of(victim.app.queue), victim.resource, -1)  # type: ignore[arg-type]
        if trial.within(self.ask_snap):
            return []
        taken = {v.uuid for v in chosen}
        rest = sorted((a for a in self.candidates() if a.uuid not in taken), key=victim_order)
        extra: list[Allocation] = []
        for victim in rest:
            if trial.within(self.ask_snap):
                break
            snap = trial.of(victim.app.queue)  # type: ignore[arg-type]
            before = trial.shortfall(self.ask_snap)
            trial.move(snap, victim.resource, -1)
            if trial.at_or_above(snap) and trial.shortfall(self.ask_snap) != before:
                extra.append(victim)
            else:
                trial.move(snap, victim.resource, 1)
        return extra if trial.within(self.ask_snap) else None

    def run(self) -> bool:
        self.find_leaves()
        if not self.leaves or not self.feasible():
            return False
        choice = self.choose()
        if choice is None:
            return False
        node, chosen = choice
        extra = self.additional(chosen)
        if extra is None or not chosen + extra:
            return False
        victims.commit(self.p, self.app, self.ask, node, chosen + extra, MESSAGE + self.ask.key)
        return True
