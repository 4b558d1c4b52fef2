"""The homes and endings the preemption story draws from: the queues, nodes, fillers and
victims each ending needs."""

from __future__ import annotations

from collections.abc import Callable, Generator, Iterator
from typing import Any

from invariants.actions.cluster_nodes import joining, new_node
from invariants.actions.configs import CORE, USERS
from invariants.actions.draw import TT, Gen
from invariants.actions.work import _ask, _memory_rooms, _placement, _send, _submit_to
from invariants.properties import limits
from invariants.properties.preemptions import delay as preemption_delay
from invariants.properties.preemptions import disabled
from invariants.readings import acl_placement, model
from invariants.readings.shim import REQUIRED_NODE
from scheduler import si
from scheduler.trace import Step

User = tuple[str, tuple[str, ...]]


def _memory_guarantee(chain: list[model.QueueModel]) -> int:
    """The smallest memory guarantee on the path (0: none)."""
    return min(((q.guaranteed or {}).get("memory") or 0 for q in chain
                if (q.guaranteed or {}).get("memory")), default=0)


def _limits_of(chain: list[model.QueueModel], user: User) -> list[int]:
    """The memory limits of ``user`` (its own or its tracked group's) on the path; a user
    under any other limit (maxapplications) counts as limited too, with no memory figure."""
    name, groups = user
    group = limits.group_for(chain, groups)
    out: list[int] = []
    for q in chain:
        for kind, who in ((limits.USER, name), (limits.GROUP, group)):
            lim = limits.limit_for(q, kind, who)
            if lim is not None:
                out.append(lim.max_resources.get("memory", 1 << 30)
                           if lim.max_resources else 1 << 30)
        if q.max_applications:
            out.append(1 << 30)
    return out


def _held(g: Gen, partition: str, path: str) -> int:
    """Memory the applications below ``path`` hold, not counting victims being released."""
    rv = g.rv
    if rv is None:
        return 0
    apps = {a.id for a in rv.apps_below(partition, path)}
    return sum(a.resource.get("memory", 0) for a in rv.allocs.values()
               if a.app in apps and a.releasing != TT.PREEMPTED_BY_SCHEDULER)


def _room_under(g: Gen, partition: str, chain: list[model.QueueModel]) -> int:
    """How much more memory the path may take and stay within every memory guarantee."""
    return min((q.guaranteed["memory"] - _held(g, partition, q.path) for q in chain
                if q.guaranteed and q.guaranteed.get("memory")), default=0)


def _placed(g: Gen, app_id: str, leaf: str) -> bool:
    rv = g.rv
    return rv is not None and app_id in rv.apps and rv.apps[app_id].path == leaf \
        and rv.apps[app_id].live


def _clear(g: Gen, partition: str, chain: list[model.QueueModel]) -> Iterator[Step]:
    """The applications below the highest queue of ``chain`` (root aside) with a memory
    guarantee are removed, pods and asks: the ask's path starts empty, within it."""
    rv = g.rv
    top = next((q.path for q in reversed(chain) if q.path != model.ROOT
                and (q.guaranteed or {}).get("memory")), None)
    if rv is None or top is None:
        return
    gone = sorted(a.id for a in rv.apps_below(partition, top) if a.live)
    if gone:
        yield g.request("update_application", si.ApplicationRequest(rm_id=g.rm_id, remove=[
            si.RemoveApplicationRequest(application_id=a, partition_name=partition)
            for a in gone]))


SLOT = "example.com/slot"
"""An extended resource only the directed endings' node has (a device, as a shim reports
one), and no vcore: their victims' pods and their ask need one slot each and no vcore, so
those pods run there, the ask can run nowhere else however much room the rest of the
cluster has, and no other pod (every one asks for vcore) takes the node's room."""


def _slotted(ask: si.AllocationAsk) -> si.AllocationAsk:
    memory = ask.resource_ask.as_dict()["memory"]
    return ask.model_copy(update={"resource_ask": si.Resource.model_validate(
        {"resources": {"memory": {"value": memory}, SLOT: {"value": 1}}})})


def _slot_node(g: Gen, node_id: str, partition: str, memory: int, slots: int) -> Step:
    """A node of the directed endings: ``memory`` and ``slots`` slots, no vcore."""
    return joining(g, node_id, partition, si.Resource.of(memory=memory, **{SLOT: slots}))


def _hog(g: Gen, partition: str, leaf: str, user: User, size: int, pods: int,
         split: bool = False, spare: bool = False) -> Iterator[Step]:
    """A node with ``pods`` slots and room for ``pods`` pods of ``size`` joins, and an
    application of ``leaf`` fills it. ``split``: half the pods a second later than the
    others (twins of two ages). ``spare``: two slots more, and a pod holding one slot and
    nothing else (it frees nothing a pod of the endings lacks there)."""
    yield _slot_node(g, g.new_id("node-"), partition, pods * size, pods + 2 * spare)
    hog = g.new_id("app-")
    yield _submit_to(g, hog, leaf, partition, si.UserGroupInformation(
        user=user[0], groups=list(user[1])))
    if _placed(g, hog, leaf):
        first = pods // 2 if split else pods
        yield _send(g, _slotted(_ask(g, hog, g.new_id("ask-"), size, first)))
        yield Step.schedule()
        if split:
            yield Step.advance(1.0)
            yield _send(g, _slotted(_ask(g, hog, g.new_id("ask-"), size, pods - first)))
            yield Step.schedule()
        if spare:
            yield _send(g, _slot_only(_ask(g, hog, g.new_id("ask-"), size)))
            yield Step.schedule()


def _slot_only(ask: si.AllocationAsk) -> si.AllocationAsk:
    """``ask`` holding one slot and nothing else."""
    return ask.model_copy(update={"resource_ask": si.Resource.model_validate(
        {"resources": {SLOT: {"value": 1}}})})


def _preempting_ask(g: Gen, partition: str, leaf: str, user: User, size: int,
                    app_id: str = "",
                    meanwhile: Callable[[], Iterator[Step]] | None = None) -> Iterator[Step]:
    """An application of ``leaf`` (``app_id``, submitted unless the shim knows it) asks
    ``size`` with allowPreemptOther, and waits past its leaf's preemption.delay (and the
    15 s between two attempts); ``meanwhile``'s steps come after the ask's first cycle,
    before the wait."""
    rv = g.rv
    app_id = app_id or g.new_id("app-")
    if rv is None or app_id not in rv.apps:
        yield _submit_to(g, app_id, leaf, partition, si.UserGroupInformation(
            user=user[0], groups=list(user[1])))
    if not _placed(g, app_id, leaf):
        return
    yield _send(g, _slotted(_ask(g, app_id, g.new_id("ask-"), size, priority=10,
                                 preemption_policy=si.PreemptionPolicy(
                                     allow_preempt_self=True, allow_preempt_other=True))))
    yield Step.schedule()
    if meanwhile is not None:
        yield from meanwhile()
    pm = model.read(g.scenario.shape.text).partitions[partition]
    yield Step.advance(max(preemption_delay(pm.chain(leaf)[0]), 15.0) + 1.0)
    yield from _reserve_then_preempt()


def _reserve_then_preempt() -> Iterator[Step]:
    """The cycles after an ask's preemption delay: the first reserves a node once the ask
    is past its reservation delay (YuniKorn's tryNodes returns that reservation, and
    preemption waits), the next preempts for it (tryAllocate, the ask holding its
    reservation)."""
    yield Step.schedule()
    yield Step.schedule()


def _fence_ending(g: Gen, partition: str, ask_leaf: str, victim: str, askers: list[User],
                  hogs: list[User]) -> Iterator[Step]:
    """The victims' leaf, outside the ask's preemption fence, fills the slot node; the ask
    is within its guarantee. Nothing outside the fence may be preempted (law 7)."""
    pm = model.read(g.scenario.shape.text).partitions[partition]
    yield from _clear(g, partition, pm.chain(ask_leaf))
    room = _room_under(g, partition, pm.chain(ask_leaf))
    size = next((s for s in (20, 10, 5) if s <= room), 0)
    if not size:
        return
    guarantee = _memory_guarantee(pm.chain(victim))
    yield from _hog(g, partition, victim, hogs[g.ending.randrange(len(hogs))], size,
                    (guarantee + size) // size + 2)
    yield from _preempting_ask(g, partition, ask_leaf, askers[g.ending.randrange(len(askers))],
                               size)


def _limit_ending(g: Gen, partition: str, ask_leaf: str, victim: str, askers: list[User],
                  hogs: list[User]) -> Iterator[Step]:
    """The victims' leaf fills the slot node; then a user whose limit on the ask's path is
    below its leaf's guarantee asks more than the limit leaves it, within the guarantee.
    The ask waits for its limit: it never preempts."""
    rv = g.rv
    pm = model.read(g.scenario.shape.text).partitions[partition]
    chain = pm.chain(ask_leaf)
    user = askers[g.ending.randrange(len(askers))]
    yield from _clear(g, partition, chain)
    if rv is None:
        return
    name, groups = user
    left = min(_memory_rooms(rv, partition, chain, name, groups), default=1 << 30)
    size = max(5, left + 5)
    if size > min(_room_under(g, partition, chain), 60):
        return
    yield from _hog(g, partition, victim, hogs[g.ending.randrange(len(hogs))], 5,
                    (_memory_guarantee(pm.chain(victim)) + size) // 5 + 2)
    yield from _preempting_ask(g, partition, ask_leaf, user, size)


def _filled(g: Gen, partition: str, ask_leaf: str, victim: str,
            hogs: list[User]) -> Generator[Step, None, int]:
    """The asking path cleared and the victims' leaf filling a slot node past its guarantee
    with pods of the size the ask will take (the largest of 20, 10, 5 within the asking
    path's guarantees); returns that size (0: no room, nothing played after the clearing)."""
    pm = model.read(g.scenario.shape.text).partitions[partition]
    chain = pm.chain(ask_leaf)
    yield from _clear(g, partition, chain)
    size = next((s for s in (20, 10, 5) if s <= _room_under(g, partition, chain)), 0)
    if size:
        guarantee = _memory_guarantee(pm.chain(victim))
        split, spare = g.victims.random() < 0.5, g.victims.random() < 0.5
        yield from _hog(g, partition, victim, hogs[g.ending.randrange(len(hogs))], size,
                        (guarantee + 2 * size) // size + 2, split, spare)
    return size


def _second_ending(g: Gen, partition: str, ask_leaf: str, victim: str, askers: list[User],
                   hogs: list[User]) -> Iterator[Step]:
    """The victims' leaf fills the slot node and an ask preempts; the shim deletes that ask
    (its reservation goes with it) before it confirms the victims, and another ask of the
    same application waits past the delay: its preemption must not choose a victim already
    being released (YUNIKORN-3003, YUNIKORN-2141)."""
    size = yield from _filled(g, partition, ask_leaf, victim, hogs)
    if not size:
        return
    user = askers[g.ending.randrange(len(askers))]
    app_id = g.new_id("app-")
    yield from _preempting_ask(g, partition, ask_leaf, user, size, app_id)
    rv = g.rv
    if rv is None or not _placed(g, app_id, ask_leaf):
        return
    first = [k for k in rv.pending_asks(app_id) if k.preempted]
    if not first:
        return
    yield g.request("update_allocation", si.AllocationRequest(
        rm_id=g.rm_id, releases=si.AllocationReleasesRequest(allocation_asks_to_release=[
            si.AllocationAskRelease(partition_name=partition, application_id=app_id,
                                    allocation_key=k.key, termination_type=TT.STOPPED_BY_RM)
            for k in first])))
    yield from _preempting_ask(g, partition, ask_leaf, user, size, app_id)


def _room_ending(g: Gen, partition: str, ask_leaf: str, victim: str, askers: list[User],
                 hogs: list[User]) -> Iterator[Step]:
    """The victims' leaf fills the slot node, an ask that may preempt finds no room; then a
    second slot node with room for it joins before the cycle that passes its delay. The ask
    is placed there: preemption is only for an ask that found no node (YuniKorn
    ``Application.tryAllocate``)."""
    size = yield from _filled(g, partition, ask_leaf, victim, hogs)
    if not size:
        return
    user = askers[g.ending.randrange(len(askers))]

    def room() -> Iterator[Step]:
        yield _slot_node(g, g.new_id("node-"), partition, size, 1)

    yield from _preempting_ask(g, partition, ask_leaf, user, size, g.new_id("app-"), room)


def _required_ending(g: Gen, partition: str, ask_leaf: str, victim: str, askers: list[User],
                     hogs: list[User]) -> Iterator[Step]:
    """A slot node holds two pods of the victims' leaf, the older of priority 0, the newer
    of priority 5; a DaemonSet pod of priority 10 that requires the node needs the room of
    one: the victim is the lower priority one, not the newer (yunikorn-behaviour 2.6 step 2,
    YUNIKORN-1184)."""
    size = g.ending.choice((5, 10))
    # Variants: both pods of priority 0, a second apart (the newer is the victim); a pod
    # holding only a slot, newest, and a DaemonSet pod asking memory alone (that pod is no
    # candidate: it shares no resource type with the ask).
    twins, unshared = g.victims.random() < 0.4, g.victims.random() < 0.4
    node_id = g.new_id("node-")
    yield _slot_node(g, node_id, partition, 2 * size, 3 if unshared else 2)
    hog, user = g.new_id("app-"), hogs[g.ending.randrange(len(hogs))]
    yield _submit_to(g, hog, victim, partition, si.UserGroupInformation(
        user=user[0], groups=list(user[1])))
    if not _placed(g, hog, victim):
        return
    for priority in (0, 0) if twins else (0, 5):
        yield _send(g, _slotted(_ask(g, hog, g.new_id("ask-"), size, priority=priority)))
        yield Step.schedule()
        if twins:
            yield Step.advance(1.0)
    if unshared:
        yield _send(g, _slot_only(_ask(g, hog, g.new_id("ask-"), size)))
        yield Step.schedule()
    asker = askers[g.ending.randrange(len(askers))]
    daemon = g.new_id("app-")
    yield _submit_to(g, daemon, ask_leaf, partition, si.UserGroupInformation(
        user=asker[0], groups=list(asker[1])))
    if not _placed(g, daemon, ask_leaf):
        return
    pod = _ask(g, daemon, g.new_id("ask-"), size, priority=10, tags={REQUIRED_NODE: node_id})
    yield _send(g, pod.model_copy(update={"resource_ask": si.Resource.of(memory=size)})
                if unshared else _slotted(pod))
    yield Step.schedule()


def _parent_ending(g: Gen, partition: str, ask_leaf: str, victim: str, askers: list[User],
                   hogs: list[User], parent: str) -> Iterator[Step]:
    """Two leaves below a parent with a memory guarantee: the victims' leaf fills the
    slot node with pods as large as the ask, then the ask comes, within its own leaf's
    guarantee, but the parent stays over its guarantee whatever victims the victims' leaf
    may lose and stay at or above its own (law 2). Nothing may be preempted (law 4)."""
    pm = model.read(g.scenario.shape.text).partitions[partition]
    achain, vchain = pm.chain(ask_leaf), pm.chain(victim)
    yield from _clear(g, partition, achain)
    pg = (pm.queues[parent].guaranteed or {})["memory"]
    other = _held(g, partition, parent) - _held(g, partition, victim)
    below = [q for q in achain if len(q.path) > len(parent)]
    room = min(pg - other, _room_under(g, partition, below)) if _memory_guarantee(below) \
        else pg - other
    size = next((s for s in (30, 20, 15, 10, 5) if s <= room), 0)
    guarantee = _memory_guarantee(vchain)
    if not size:
        return
    yield from _hog(g, partition, victim, hogs[g.ending.randrange(len(hogs))], size,
                    guarantee // size + 3)
    held = _held(g, partition, victim)
    losable = (held - guarantee) // size
    other = _held(g, partition, parent) - held
    if losable < 1 or held - losable * size + size + other <= pg or other + size > pg:
        return
    yield from _preempting_ask(g, partition, ask_leaf, askers[g.ending.randrange(len(askers))],
                               size)


def _second_preemption(g: Gen, app_id: str, leaf: str, partition: str, size: int,
                       others: tuple[str, ...] = ()) -> Iterator[Step]:
    """While the victims of a preemption are released and not yet confirmed, another ask
    of the same application arrives and waits past its leaf's delay: a second preemption
    must not pick a victim already being released (YUNIKORN-3003, YUNIKORN-2141). Drawn
    from ``g.side`` (the story's own draws stay as they were)."""
    rv = g.rv
    if rv is None or app_id not in rv.apps or not any(
            a.releasing == TT.PREEMPTED_BY_SCHEDULER for a in rv.running()):
        return
    pm = model.read(g.scenario.shape.text).partitions.get(partition)
    chain = pm.chain(leaf) if pm is not None else []
    wait = preemption_delay(chain[0]) if chain else 30.0
    # The first ask leaves the node it holds (a second preemption never looks at a node
    # reserved for another ask): the shim deletes its pod, or room comes elsewhere.
    # Every other pod that never ran is deleted too: their reservations go with them.
    first = [k for k in rv.pending_asks(app_id) if k.preempted] + [
        k for a in sorted(rv.apps) if a != app_id and rv.apps[a].partition == partition
        for k in rv.pending_asks(a)]
    if first and g.side.random() < 0.5:
        yield g.request("update_allocation", si.AllocationRequest(
            rm_id=g.rm_id, releases=si.AllocationReleasesRequest(allocation_asks_to_release=[
                si.AllocationAskRelease(partition_name=rv.apps[k.app].partition,
                                        application_id=k.app,
                                        allocation_key=k.key,
                                        termination_type=TT.STOPPED_BY_RM)
                for k in first])))
    elif first:
        yield new_node(g, partition, size, 4 * CORE)
        yield Step.schedule()
    yield _send(g, _ask(g, app_id, g.new_id("ask-"), g.side.choice((size, 5)),
                        priority=g.side.choice((0, 10)),
                        preemption_policy=si.PreemptionPolicy(allow_preempt_self=True,
                                                              allow_preempt_other=True)))
    yield Step.schedule()
    yield Step.advance(max(wait, 15.0) + 1.0)
    yield from _reserve_then_preempt()


def _preemption_home(g: Gen) -> tuple[str, str, tuple[str, ...], str, str] | None:
    """Two leaves one user may submit to, usually different: mostly both with a guarantee
    on their path (often the asking one behind a preemption fence the victim is outside
    of); sometimes the victim's side without one (it must never lose tasks), or the asking
    side (it must never preempt)."""
    config = model.read(g.scenario.shape.text)
    guarded: list[tuple[str, str, tuple[str, ...], str, str]] = []
    asking, other, fenced = [], [], []
    # A partition first (the small one with preemption off counts as much as the big one).
    for name in [g.pick(sorted(config.partitions))]:
        pm = config.partitions[name]
        for user, groups in USERS:
            open_ = [p for p in pm.leaves() if acl_placement.may_submit(pm.chain(p), user, groups)]
            for victim in open_:
                for ask in open_:
                    if victim == ask and g.rng.random() < 0.8:
                        continue
                    home = (name, user, groups, victim, ask)
                    if not any(q.guaranteed for q in pm.chain(ask)):
                        other.append(home)
                    elif any(q.guaranteed for q in pm.chain(victim)):
                        guarded.append(home)
                        fence = next((q.path for q in pm.chain(ask) if q.own.get(
                            "preemption.policy", "").lower() == "fence"), None)
                        if fence is not None and not victim.startswith(fence + "."):
                            fenced.append(home)
                    else:
                        asking.append(home)
    # An asking side without a guarantee is worth judging only against a victim that could
    # lose tasks (one with a guarantee on its path): that pair must still never preempt
    # (YUNIKORN-1951).
    other = [h for h in other if any(q.guaranteed for q in config.partitions[h[0]].chain(
        h[3]))] or other
    draw = g.rng.random()
    # A fence matters only when the room sits outside it: that pair gets a share of its own.
    homes = (fenced if draw < 0.25 else guarded if draw < 0.7 else asking if draw < 0.85
             else other) or guarded or asking or other
    return homes[g.rng.randrange(len(homes))] if homes else None


def _created_home(g: Gen, partition: str, user: str, groups: tuple[str, ...]
                  ) -> tuple[str, dict[str, str]] | None:
    """A queue name and tags for which the placement rules create a leaf (or place in the
    one they created) for ``user``, below a parent whose childtemplate gives a guarantee;
    or None."""
    pm = model.read(g.scenario.shape.text).partitions[partition]
    found: dict[str, tuple[str, dict[str, str]]] = {}
    # The namespace of the stories, or the tags the preemption configuration's rules read.
    for tags in ({"namespace": "ns1"}, {"made": "m1"}, {"spare": "s1"}):
        for name in [*pm.leaves(), *(f"{p}.made" for p in pm.parents())]:
            placed = _placement(pm, name, user, groups, tags)
            if placed is None or not placed.create or placed.path in found:
                continue
            template = model.handed_down(pm, {}, placed.path.rsplit(".", 1)[0])
            if template is not None and template.guaranteed:
                found[placed.path] = (name, tags)
    homes = list(found.values())
    return homes[g.side.randrange(len(homes))] if homes else None


def _refusal_home(g: Gen, partition: str, user: str, groups: tuple[str, ...],
                  story: str) -> tuple[str, str, int] | None:
    """For a third of the stories (by their id): two leaves where a refusal can happen at
    all, or None. The victim's side has a memory guarantee and may lose tasks; the asking
    side has a guarantee of its own below root and no user or application limits, shares
    nothing with the victim's but root (the hog's usage then counts on no queue of the
    asking path) and no fence keeps the victim out, in a partition with preemption on.
    So the ask is within its guarantee, its victims are candidates, and only the victim
    leaf's guarantee can refuse them (YuniKorn's law 2). The third item is the asking
    side's smallest memory guarantee below root."""
    if int(story.rsplit("-", 1)[-1]) % 3:
        return None
    pm = model.read(g.scenario.shape.text).partitions[partition]
    if not pm.preemption:
        return None
    leaves = [p for p in pm.leaves() if acl_placement.may_submit(pm.chain(p), user, groups)]

    def guarantee(chain: list[model.QueueModel]) -> int:
        return min(((q.guaranteed or {}).get("memory") or 0 for q in chain
                    if q.path != "root" and (q.guaranteed or {}).get("memory")), default=0)

    pairs = []
    for victim in leaves:
        vchain = pm.chain(victim)
        if disabled(vchain) or not guarantee(vchain):
            continue
        for ask in leaves:
            achain = pm.chain(ask)
            shared = {q.path for q in vchain} & {q.path for q in achain}
            fence = next((q.path for q in achain if q.own.get(
                "preemption.policy", "").lower() == "fence"), None)
            if ask != victim and shared == {"root"} and guarantee(achain) \
                    and (fence is None or victim.startswith(fence + ".")) \
                    and not any(q.users or q.groups or q.max_applications for q in achain):
                pairs.append((victim, ask, guarantee(achain)))
    return pairs[g.rng.randrange(len(pairs))] if pairs else None


def _refusal_filler(g: Gen, partition: str, user: str, groups: tuple[str, ...],
                    victim_leaf: str, story: str) -> tuple[str, int] | None:
    """Sometimes (a third of the stories, by their id, whose victim leaf has a memory
    guarantee and may lose tasks, when the user may submit to a leaf without any
    guarantee): that leaf, to fill the room the victim's leaf leaves, and the victim
    leaf's guarantee."""
    pm = model.read(g.scenario.shape.text).partitions[partition]
    chain = pm.chain(victim_leaf)
    guarantee = min((q.guaranteed or {}).get("memory", 1 << 30) for q in chain)
    open_ = [p for p in pm.leaves() if not any(q.guaranteed for q in pm.chain(p))
             and acl_placement.may_submit(pm.chain(p), user, groups)]
    # Decided by the story's id, not by a draw: the other stories draw as before.
    if guarantee >= 1 << 30 or not open_ or disabled(chain) or int(story.rsplit("-", 1)[-1]) % 3:
        return None
    return open_[g.rng.randrange(len(open_))], guarantee


def _victim_policy(g: Gen) -> dict[str, Any]:
    if g.rng.random() < 0.3:
        return {"preemption_policy": si.PreemptionPolicy(
            allow_preempt_self=g.rng.random() < 0.5, allow_preempt_other=False)}
    return {}
