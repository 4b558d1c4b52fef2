"""Priority and headroom stories: asks of several priorities and queues with room for only
some, so the order, the headroom and the slots of a queue decide who runs."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from invariants.actions.cluster_nodes import new_node
from invariants.actions.config_texts import PREEMPTION
from invariants.actions.configs import CORE, NAMESPACES, USERS
from invariants.actions.draw import TT, Gen, rule
from invariants.actions.work import (
    _ask,
    _lands,
    _memory,
    _memory_rooms,
    _open_home,
    _queue_slots,
    _send,
    _submit_to,
)
from invariants.properties import limits
from invariants.readings import acl_placement, model
from invariants.readings import arithmetic as qty
from invariants.readings.shim import REQUIRED_NODE, RMView
from scheduler import si
from scheduler.trace import Step


@rule(1)
def priority_story(g: Gen) -> Iterator[Step]:
    """Two applications competing in one cycle, the later one (or the busier queue) of higher
    priority.

    Priority decides only when several runnable asks wait at once, and an
    order by priority differs from the policy's own only when the policy
    would pick the other one: the lower-priority application submitted first
    (fifo), or using less (fair), or sitting in the less used sibling queue.
    Drawn one request at a time, with a cycle after most of them, that
    situation is rare; this rule builds it as a shim would see it happen.
    """
    home = _priority_home(g)
    if home is None:
        return
    partition, user, groups, high_leaf, low_leaf = home
    ugi = si.UserGroupInformation(user=user, groups=list(groups))

    low, high = g.new_id("app-"), g.new_id("app-")
    size = g.rng.choice((5, 10, 30))
    yield _submit_to(g, low, low_leaf, partition, ugi,
                     tags={"namespace": g.pick(list(NAMESPACES))})
    if g.rng.random() < 0.7:
        yield Step.advance(1.0)
    yield _submit_to(g, high, high_leaf, partition, ugi,
                     tags={"namespace": g.pick(list(NAMESPACES))})
    if g.rng.random() < 0.6:
        # The higher-priority side gets ahead first: more usage, so fair order disagrees.
        yield _send(g, _ask(g, high, g.new_id("ask-"), size, priority=g.rng.choice((0, 10))))
        yield Step.schedule()
    yield _send(g, _ask(g, low, g.new_id("ask-"), size, g.rng.randint(1, 2),
                        priority=g.rng.choice((-5, 0))))
    yield _send(g, _ask(g, high, g.new_id("ask-"), size, g.rng.randint(1, 2), priority=10))
    yield Step.schedule()
    # Sometimes (a side draw: the case's own draws stay as they were) the story goes on to a
    # reservation held by an application its user's limit holds back: by maxapplications,
    # or (never with the preemption configuration) by maxresources.
    roll = g.side.random()
    if roll < 0.5:
        yield from slot_story(g)
    elif roll < 0.5 + HEADROOM_ENDINGS and g.scenario.shape.text != PREEMPTION:
        yield from headroom_story(g)


HEADROOM_ENDINGS = 0.5
"""How often ``priority_story`` goes on to ``headroom_story``."""


def headroom_story(g: Gen) -> Iterator[Step]:
    """A reserved ask whose user's (or group's) ``maxresources`` fills before its node frees
    up (YuniKorn's ugm rule 7, YUNIKORN-2030): the reserved pass must check the headroom too.

    A node joins and another user's pod fills it; application A of a user with a memory
    limit on its path asks for the node's whole room (a required-node pod, or a pod too
    large for every other node's free room) and reserves it; a second pod of A takes, on a
    node of its own, just enough of the user's room that the first no longer fits in it;
    then the filler ends. Every choice comes from ``g.side``.
    """
    home = _headroom_home(g)
    if home is None:
        return
    partition, leaf, (user, groups), size, second = home
    other = _open_home(g, {"memory": size, "vcore": CORE}, avoid=(user, groups))
    rv = g.rv
    if other is None or rv is None:
        return
    _, other_leaf, other_user, other_groups = other
    elsewhere = max((_memory(rv.free(n.id)) for n in rv.nodes.values()
                     if n.partition == partition), default=0)
    required = g.side.random() < 0.5 or size <= max(elsewhere, second)
    joined = new_node(g, partition, size, 4 * CORE)
    node = joined.request.nodes[0].node_id
    yield joined
    filler, a = g.new_id("app-"), g.new_id("app-")
    yield _submit_to(g, filler, other_leaf, partition,
                     si.UserGroupInformation(user=other_user, groups=list(other_groups)),
                     tags={"namespace": "ns1"})
    yield _send(g, _ask(g, filler, g.new_id("ask-"), size, tags={REQUIRED_NODE: node}))
    yield Step.schedule()
    yield _submit_to(g, a, leaf, partition,
                     si.UserGroupInformation(user=user, groups=list(groups)),
                     tags={"namespace": "ns1"})
    pinned: dict[str, Any] = {"tags": {REQUIRED_NODE: node}} if required else {}
    yield _send(g, _ask(g, a, g.new_id("ask-"), size, **pinned))
    yield Step.schedule()
    spare = new_node(g, partition, second, 2 * CORE)
    yield spare
    yield _send(g, _ask(g, a, g.new_id("ask-"), second,
                        tags={REQUIRED_NODE: spare.request.nodes[0].node_id}))
    yield Step.schedule()
    rv = g.rv
    held = [x for x in rv.running() if x.app == filler] if rv is not None else []
    if rv is not None and held:
        yield g.request("update_allocation", rv.release_request(held, TT.STOPPED_BY_RM))
        yield from _filler_gone(g, filler, partition)
    yield Step.schedule()


def _headroom_home(g: Gen) -> tuple[str, str, tuple[str, tuple[str, ...]], int, int] | None:
    """For ``headroom_story``: a partition, a leaf and a user (``_open_home``) with a memory
    limit on the path, the reserved pod's size within the user's room there, and the second
    pod's, which leaves the first no room (drawn from ``g.side``)."""
    rv = g.rv
    home = _open_home(g, {"memory": 5, "vcore": 2 * CORE}, limited=True)
    if rv is None or home is None:
        return None
    partition, leaf, user, groups = home
    pm = rv.config.partitions[partition]
    chain = pm.chain(leaf)
    room = min(_memory_rooms(rv, partition, chain, user, groups), default=0)
    sizes = [s for s in (5, 10, 20) if s <= room - 2]
    if not sizes:
        return None
    size = g.side.choice(sizes)
    second = room - size + 1
    need = {"memory": room + 1 + size, "vcore": 3 * CORE}
    if any(q.max and not qty.within(qty.plus(rv.usage_below(partition, q.path), need), q.max)
           for q in chain):
        return None
    return partition, leaf, (user, groups), size, second


def slot_story(g: Gen) -> Iterator[Step]:
    """An application that has not started holds a reservation, and its user's (or group's)
    ``maxapplications`` fills before the node frees up (YuniKorn's ugm rule 7, YUNIKORN-1986).

    A node joins and another user's pod fills it; application A of a user whose limit has
    a few slots left asks for the node's whole room (a required-node pod, or a pod too large
    for every other node's free room) and reserves it; as many applications B of the same
    user as there are slots start first on a node of their own; then the filler ends. The
    reserved pass must not start A while the Bs hold the user's (or group's) last slot.
    Every choice comes from ``g.side``.
    """
    home = _slot_home(g)
    if home is None:
        return
    partition, leaf, (user, groups), (other, other_groups, other_leaf), slots, cap = home
    rv = g.rv
    largest = max((_memory(n.capacity) for n in rv.nodes.values()
                   if n.partition == partition), default=0) if rv is not None else 0
    largest = max(largest, 5 * slots + 5)  # the fillers' node, which joins below
    size = g.side.choice([s for s in (10, 20, 30) if s <= cap])
    required = g.side.random() < 0.5 or size <= largest or largest + 5 > cap
    if not required:
        size = largest + 5
    joined = new_node(g, partition, size, 4 * CORE)
    node = joined.request.nodes[0].node_id
    yield joined
    spare = new_node(g, partition, 5 * slots + 5, (slots + 1) * CORE)
    spare_node = spare.request.nodes[0].node_id
    yield spare
    filler, a = g.new_id("app-"), g.new_id("app-")
    yield _submit_to(g, filler, other_leaf, partition,
                     si.UserGroupInformation(user=other, groups=list(other_groups)),
                     tags={"namespace": "ns1"})
    yield _send(g, _ask(g, filler, g.new_id("ask-"), size, tags={REQUIRED_NODE: node}))
    yield Step.schedule()
    ugi = si.UserGroupInformation(user=user, groups=list(groups))
    yield _submit_to(g, a, leaf, partition, ugi, tags={"namespace": "ns1"})
    pinned: dict[str, Any] = {"tags": {REQUIRED_NODE: node}} if required else {}
    yield _send(g, _ask(g, a, g.new_id("ask-"), size, **pinned))
    yield Step.schedule()
    for _ in range(slots):
        b = g.new_id("app-")
        yield _submit_to(g, b, leaf, partition, ugi, tags={"namespace": "ns1"})
        yield _send(g, _ask(g, b, g.new_id("ask-"), 5, tags={REQUIRED_NODE: spare_node}))
    yield Step.schedule()
    rv = g.rv
    held = [x for x in rv.running() if x.app == filler] if rv is not None else []
    if rv is not None and held:
        yield g.request("update_allocation", rv.release_request(held, TT.STOPPED_BY_RM))
        yield from _filler_gone(g, filler, partition)
    yield Step.schedule()


def _filler_gone(g: Gen, filler: str, partition: str) -> Iterator[Step]:
    """A filler pod today's RM could not bind is pending again (``SCHEDULING_FAILED_ON_RM``):
    the RM withdraws it, or, as a required-node pod, it would share the reserved node and
    take the room back (several required-node reservations on one node)."""
    rv = g.rv
    if rv is None or not any(k[0] == filler and a.pending > 0 for k, a in rv.asks.items()):
        return
    yield g.request("update_allocation", si.AllocationRequest(
        rm_id=g.rm_id, releases=si.AllocationReleasesRequest(allocation_asks_to_release=[
            si.AllocationAskRelease(partition_name=partition, application_id=filler,
                                    allocation_key="", termination_type=TT.STOPPED_BY_RM)])))


def _slot_rooms(rv: RMView, partition: str, chain: list[model.QueueModel], user: str,
                groups: tuple[str, ...]) -> list[int]:
    """The applications each user or group ``maxapplications`` on the path still lets
    ``user`` start."""
    return [lim.max_applications - sum(1 for a in mine if rv.holds_slot(a))
            for _, _, _, lim, mine in limits.limited_on_path(
                rv, partition, chain, user, limits.group_for(chain, groups))
            if lim.max_applications > 0]


SLOTS_TO_FILL = 3
"""The most applications ``slot_story`` starts to fill a user's last slots."""


def _slot_home(g: Gen) -> tuple[str, str, tuple[str, tuple[str, ...]],
                                 tuple[str, tuple[str, ...], str], int, int] | None:
    """By the shim's records and the configuration in force: a leaf its placement keeps an
    application in, a user who may submit there whose user or group limits on the path leave
    it one to ``SLOTS_TO_FILL`` more applications than it runs there now (none full
    already), another user with such a leaf, how many slots are left, and the most memory
    the held application may ask (at least 10): beside the fillers' pods (5 each) within its
    user's and group's memory limits, and with the other user's pod as large on the queues'
    maxes, whose ``maxapplications`` leave room for them all; not a stateaware leaf. Only
    the slot may hold the application back."""
    rv = g.rv
    if rv is None or rv.paused or rv.stopped:
        return None
    homes = []
    for name in sorted(rv.config.partitions):
        pm = rv.config.partitions[name]
        for leaf in pm.leaves():
            if pm.queues[leaf].sort_policy == "stateaware":
                continue  # the fillers would wait behind A, the first Accepted application
            chain = pm.chain(leaf)
            queue_slots = _queue_slots(rv, name, chain)
            for user, groups in USERS:
                if not acl_placement.may_submit(chain, user, groups) \
                        or not _lands(pm, leaf, user, groups):
                    continue
                room = _slot_rooms(rv, name, chain, user, groups)
                if not room or not 1 <= min(room) <= SLOTS_TO_FILL:
                    continue
                slots = min(room)
                if queue_slots < slots + 2:
                    continue
                cap = min([min(_memory_rooms(rv, name, chain, user, groups), default=1 << 30)
                           - 5 * slots,
                           *((_memory(q.max) - _memory(rv.usage_below(name, q.path))
                              - 5 * slots) // 2 for q in chain if q.max and "memory" in q.max)])
                if cap < 10:
                    continue
                others = [(u, gs, p) for u, gs in USERS if u != user and not set(gs) & set(groups)
                          for p in pm.leaves() if acl_placement.may_submit(pm.chain(p), u, gs)
                          and _lands(pm, p, u, gs)
                          and _free_to_fill(rv, name, p, u, gs, min(cap, 30))]
                if others:
                    homes.append((name, leaf, (user, groups),
                                  others[g.side.randrange(len(others))], slots, cap))
    return homes[g.side.randrange(len(homes))] if homes else None


def _free_to_fill(rv: RMView, partition: str, leaf: str, user: str, groups: tuple[str, ...],
                  size: int) -> bool:
    """Whether ``user``'s limits let a new application of ``size`` memory start in
    ``leaf`` (``slot_story``'s filler must run, or the node it fills stays free)."""
    chain = rv.config.partitions[partition].chain(leaf)
    return min(_slot_rooms(rv, partition, chain, user, groups), default=1) >= 1 and \
        min(_memory_rooms(rv, partition, chain, user, groups), default=size) >= size


def _priority_home(g: Gen) -> tuple[str, str, tuple[str, ...], str, str] | None:
    """A partition, a user, and two leaves it may submit to: one leaf twice, or siblings."""
    config = model.read(g.scenario.shape.text)
    homes = []
    for name in sorted(config.partitions):
        pm = config.partitions[name]
        leaves = pm.leaves()
        for user, groups in USERS:
            open_ = [p for p in leaves if acl_placement.may_submit(pm.chain(p), user, groups)]
            for a in open_:
                homes.append((name, user, groups, a, a))
                for b in open_:
                    if a != b and a.rsplit(".", 1)[0] == b.rsplit(".", 1)[0]:
                        homes.append((name, user, groups, a, b))
    return homes[g.rng.randrange(len(homes))] if homes else None
