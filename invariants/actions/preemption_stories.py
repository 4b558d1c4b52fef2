"""The preemption story: a queue under its guarantee asks while others hold its room, and
how the story ends (a gang, a refusal, a fence, a second preemption, ...)."""

from __future__ import annotations

import functools
from collections.abc import Iterator
from typing import Any

from invariants.actions.cluster_nodes import new_node
from invariants.actions.configs import CORE, USERS
from invariants.actions.draw import NA, TT, Gen, rule
from invariants.actions.preemption_endings import (
    SLOT,
    User,
    _clear,
    _created_home,
    _fence_ending,
    _hog,
    _limit_ending,
    _limits_of,
    _memory_guarantee,
    _parent_ending,
    _placed,
    _preempting_ask,
    _preemption_home,
    _refusal_filler,
    _refusal_home,
    _required_ending,
    _reserve_then_preempt,
    _room_ending,
    _room_under,
    _second_ending,
    _second_preemption,
    _slot_node,
    _slotted,
    _victim_policy,
)
from invariants.actions.time import confirmations
from invariants.actions.work import _ask, _send, _submit_to
from invariants.properties.preemptions import disabled, fence_root
from invariants.readings import acl_placement, model
from invariants.readings.shim import REQUIRED_NODE
from scheduler import si
from scheduler.trace import Step


@rule(3)
def preemption_story(g: Gen) -> Iterator[Step]:
    """A queue over its guarantee holds the room an ask of a queue under its guarantee needs.

    General preemption needs a leaf above its guarantee, an ask that may preempt
    in a leaf with a guarantee, the ask failing its headroom or every node, and
    the clock past the leaf's preemption.delay: a dozen steps in order. A node
    joins, one application fills it from one leaf, another asks from a leaf
    with a guarantee on its path; the clock passes (or not) the delay, and the
    shim confirms the victims (or not) before the cycle places the ask. One in
    four stories is a required-node ask on the full node instead.
    """
    home = _preemption_home(g)
    if home is None:
        return
    partition, user, groups, victim_leaf, ask_leaf = home
    ugi = si.UserGroupInformation(user=user, groups=list(groups))
    hog, late = g.new_id("app-"), g.new_id("app-")
    refusal = _refusal_home(g, partition, user, groups, hog)
    if refusal is not None:
        victim_leaf, ask_leaf, within = refusal
    created = _created_home(g, partition, user, groups) \
        if refusal is None and g.side.random() < 0.8 else None
    if created is not None:
        # The hog in a leaf a placement rule creates: its guarantee and its preemption
        # settings are its childtemplate's alone (YUNIKORN-809).
        victim_leaf = created[0]
        pm = model.read(g.scenario.shape.text).partitions[partition]
        chains = [pm.chain(p) for p in pm.leaves()]
        asking = [c[0].path for c in chains if acl_placement.may_submit(c, user, groups)
                  and any(q.guaranteed for q in c) and fence_root(c) == model.ROOT
                  and not any(q.own.get("priority.policy", "").lower() == "fence"
                              for q in c)]
        if asking:
            # An asking leaf whose preemption fence (root) holds the created one, and no
            # priority fence that would shield every victim.
            ask_leaf = asking[g.side.randrange(len(asking))]
    joined = new_node(g, partition, 60, 60 * CORE)
    node = joined.request.nodes[0].node_id
    size = g.rng.choice((5, 10, 20))
    filler = _refusal_filler(g, partition, user, groups, victim_leaf, hog)
    yield joined
    yield _submit_to(g, hog, victim_leaf, partition, ugi,
                     **({"tags": created[1]} if created is not None else {}))
    # The hog's asks are drawn either way, so a refusal story draws what any story does.
    asks = [_ask(g, hog, g.new_id("ask-"), size, 60 // size,
                 priority=g.rng.choice((0, 0, -5, 10)), **_victim_policy(g))
            for _ in range(g.rng.choice((1, 2)))]
    if filler is not None:
        # Just over its guarantee, by less than one allocation: any victim would take the
        # leaf below it (YuniKorn's law 2), so the ask must wait.
        guarantee = filler[1]
        size = 15 if guarantee % 15 else 20
        asks = [_ask(g, hog, asks[0].allocation_key, size, guarantee // size + 1)]
    for ask in asks:
        yield _send(g, ask)
    yield Step.schedule()
    rv = g.rv
    if rv is not None:
        # Whatever room the nodes still have: the hog takes it too (or, when it must stay
        # just over its guarantee, an application of a leaf no guarantee protects), so the
        # ask finds none.
        room = sum(rv.free(n.id).get("memory", 0) for n in rv.nodes.values()
                   if n.partition == partition and n.state == "Schedulable")
        if filler is not None and room >= 5:
            other = g.new_id("app-")
            yield _submit_to(g, other, filler[0], partition, ugi)
            yield _send(g, _ask(g, other, g.new_id("ask-"), 5, min(room // 5, 40)))
            yield Step.schedule()
            size = 5
        elif room >= size:
            yield _send(g, _ask(g, hog, g.new_id("ask-"), size, min(room // size, 40)))
            yield Step.schedule()
    yield _submit_to(g, late, ask_leaf, partition, ugi)
    # A refusal is worth its set-up only if the ask may preempt the hog and waits long
    # enough; its draws are made all the same.
    required = {"tags": {REQUIRED_NODE: node}} if g.rng.random() < 0.25 else {}
    repeats, priority = g.rng.randint(1, 2), g.rng.choice((0, 0, 10, -5))
    may_preempt = g.rng.random() < 0.9
    if filler is not None:
        required, priority, may_preempt = {}, 0, True
        if refusal is not None:
            # Within its own leaf's guarantee, or it may not preempt at all.
            size, repeats = min(size, within), 1
    yield _send(g, _ask(g, late, g.new_id("ask-"), size, repeats, priority=priority,
                        preemption_policy=si.PreemptionPolicy(
                            allow_preempt_self=True, allow_preempt_other=may_preempt),
                        **required))
    yield Step.schedule()
    wait = g.rng.choice((2.0, 31.0, 61.0))
    yield Step.advance(max(wait, 31.0 if refusal is None else 91.0) if filler is not None
                       else wait)
    if g.rng.random() < 0.2:
        # Room comes back before the cycle: the ask must take it, not preempt.
        yield new_node(g, partition, size, 4 * CORE)
    yield from _reserve_then_preempt()
    if g.side.random() < 0.4:
        yield from _second_preemption(g, late, ask_leaf, partition, size, (hog,))
    if g.rng.random() < 0.5 or (g.side.random() < 0.6 and _victims_unconfirmed(g)):
        # Late confirmations, and the clock past the 15 s between two attempts of one ask
        # (more often while victims wait: an ask preempts once, ever).
        yield Step.advance(31.0)
        yield Step.schedule()
    yield from confirmations(g, g.rng.choice(("all", "all", "first", "none", "twice")))
    yield Step.schedule()
    yield from _directed_ending(g)
    if g.gang_victims.random() < GANG_ENDING_SHARE:
        yield from _gang_ending(g)
    if g.refusals.random() < REFUSAL_ENDING_SHARE:
        yield from _refusal_ending(g)
    if g.capped.random() < MAX_FENCE_ENDING_SHARE:
        yield from _max_fence_ending(g)


GANG_ENDING_SHARE = 0.3
"""How many preemption stories end with a gang's placeholders as the victims (where the
configuration has a place for it: ``_gang_ending``)."""


def _gang_ending(g: Gen) -> Iterator[Step]:
    """A Soft gang of the victims' leaf fills a slot node of its own with placeholders,
    past the leaf's guarantee; an ask of another leaf inside the same fence preempts one
    of them; the shim confirms, and the gang's real pod of the task group comes and takes
    a placeholder's place (goal ``preemption.placeholder_victim``). Every choice comes
    from ``g.gang_victims``, so the case's other streams draw as they did."""
    homes = _ending_homes(g.scenario.shape.text)["second"]
    rv = g.rv
    if not homes or rv is None or rv.stopped or rv.paused:
        return
    partition, ask_leaf, victim, askers, hogs = homes[g.gang_victims.randrange(len(homes))]
    pm = model.read(g.scenario.shape.text).partitions[partition]
    chain = pm.chain(ask_leaf)
    yield from _clear(g, partition, chain)
    size = next((s for s in (20, 10, 5) if s <= _room_under(g, partition, chain)), 0)
    if not size:
        return
    pods = (_memory_guarantee(pm.chain(victim)) + 2 * size) // size + 2
    yield _slot_node(g, g.new_id("node-"), partition, pods * size, pods)
    gang, user = g.new_id("gang-"), hogs[g.gang_victims.randrange(len(hogs))]
    yield _submit_to(g, gang, victim, partition, si.UserGroupInformation(
        user=user[0], groups=list(user[1])), gang_scheduling_style="Soft",
        placeholder_ask=si.Resource.model_validate({"resources": {
            "memory": {"value": pods * size}, SLOT: {"value": pods}}}))
    if not _placed(g, gang, victim):
        return
    g.gangs[gang] = [(pods, size)]
    yield _send(g, *(_slotted(_ask(g, gang, f"{gang}-tg0-ph-{g.new_id('')}", size,
                                   task_group_name="tg0", placeholder=True))
                     for _ in range(pods)))
    yield Step.schedule()
    yield from _preempting_ask(g, partition, ask_leaf,
                               askers[g.gang_victims.randrange(len(askers))], size)
    yield from confirmations(g, "all")
    yield Step.schedule()
    yield _send(g, _slotted(_ask(g, gang, f"{gang}-tg0-real-{g.new_id('')}", size,
                                 task_group_name="tg0")))
    yield Step.schedule()
    yield from confirmations(g, "all")
    yield Step.schedule()


REFUSAL_ENDING_SHARE = 0.2
"""How many preemption stories end with a preemption every victim's guarantee refuses
(where the configuration has a place for it: ``_refusal_ending``)."""


@functools.lru_cache(maxsize=64)
def _refusal_homes(text: str) -> list[tuple[str, str, str, int, int, list[User]]]:
    """Where a refusal can be played, by the configuration's reading alone: ``(partition,
    victims' leaf, asking leaf, the victims' smallest memory guarantee, the asking side's,
    users who may submit to both)``; the pairs ``_refusal_home`` takes (preemption on,
    the victims' side guaranteed and not disabled, the asking side guaranteed below root
    with no limits, nothing shared but root, no fence keeping the victims out)."""
    config = model.read(text)
    out = []
    for name in sorted(config.partitions):
        pm = config.partitions[name]
        if not pm.preemption:
            continue
        for victim in pm.leaves():
            vchain = pm.chain(victim)
            if disabled(vchain) or not _memory_guarantee(vchain[:-1]):
                continue
            for ask in pm.leaves():
                achain = pm.chain(ask)
                shared = {q.path for q in vchain} & {q.path for q in achain}
                fence = next((q.path for q in achain if q.own.get(
                    "preemption.policy", "").lower() == "fence"), None)
                users = [u for u in USERS if acl_placement.may_submit(achain, *u)
                         and acl_placement.may_submit(vchain, *u)]
                if ask != victim and shared == {model.ROOT} and users \
                        and _memory_guarantee(achain[:-1]) \
                        and (fence is None or victim.startswith(fence + ".")) \
                        and not any(q.users or q.groups or q.max_applications for q in achain):
                    out.append((name, victim, ask, _memory_guarantee(vchain[:-1]),
                                _memory_guarantee(achain[:-1]), users))
    return out


def _refusal_ending(g: Gen) -> Iterator[Step]:
    """Every application of a partition removed and the directed endings' slot nodes
    decommissioned, the victims' leaf fills a slot node of its own just past its guarantee
    (by less than one pod); an ask of a leaf within its own guarantee waits past its delay
    with no room anywhere. Taking any pod would leave the victims' leaf below its
    guarantee: nothing may be preempted (YuniKorn's law 2; goal
    ``preemption.refused_guarantee``). Every choice comes from ``g.refusals``."""
    homes = _refusal_homes(g.scenario.shape.text)
    rv = g.rv
    if not homes or rv is None or rv.stopped or rv.paused:
        return
    partition, victim, ask_leaf, guarantee, room, users = \
        homes[g.refusals.randrange(len(homes))]
    size = next((s for s in (20, 15, 10, 5) if s <= room and guarantee % s), 0)
    if not size:
        return
    gone = sorted(a.id for a in rv.apps.values() if a.partition == partition and a.live)
    if gone:
        yield g.request("update_application", si.ApplicationRequest(rm_id=g.rm_id, remove=[
            si.RemoveApplicationRequest(application_id=a, partition_name=partition)
            for a in gone]))
    slots = sorted(n.id for n in rv.nodes.values()
                   if n.partition == partition and n.capacity.get(SLOT))
    if slots:
        yield g.request("update_node", si.NodeRequest(rm_id=g.rm_id, nodes=[
            si.NodeInfo(node_id=n, action=NA.DECOMISSION) for n in slots]))
    pods = guarantee // size + 1
    user = users[g.refusals.randrange(len(users))]
    yield from _hog(g, partition, victim, user, size, pods)
    yield from _preempting_ask(g, partition, ask_leaf, user, size)


MAX_FENCE_ENDING_SHARE = 0.3
"""How many preemption stories end with an ask its queue's max fences (when the
configuration has a place for one)."""


CAPPED = """\
          - name: capped
            resources: {max: {memory: 40}}
            properties: {preemption.delay: 1s}
            queues:
              - name: c1
                resources: {guaranteed: {memory: 20}}
              - name: c2
                resources: {guaranteed: {memory: 10}}
"""
"""Queues a max-fence ending adds to the preemption configuration by a reload: ``capped``
has a max and no guarantee, its leaves a guarantee each."""


def _max_fence_ending(g: Gen) -> Iterator[Step]:
    """On the preemption configuration (as drawn, no reload since), a reload adds a capped
    parent (``CAPPED``), leaving what runs as it is (a stalled core's waiting ask stays to
    be judged at the case's end); ``root.a`` fills a slot node above its guarantee with pods of 20,
    ``capped.c2`` another with three pods of 10, and an ask of 20 in ``capped.c1`` would
    take ``capped`` to 50, past its max of 40: ``capped`` fences the victim search
    (YUNIKORN-3241) and only c2's pods may go, although one pod of ``root.a`` would make
    room on its node. Every choice comes from ``g.capped``."""
    text = g.scenario.shape.text
    rv = g.rv
    anchor = "          - name: open\n"
    if "name: fenced" not in text or anchor not in text or g.factor != 1.0 or g.removed \
            or rv is None or rv.stopped or rv.paused \
            or any(k.may_preempt and k.pending > 0 for k in rv.asks.values()):
        # Not while an ask waits to preempt: what the story left is judged at the case's
        # end (a core that never preempts for a node shortage leaves it waiting).
        return
    yield g.request("update_configuration", si.UpdateConfigurationRequest(
        rm_id=g.rm_id, policy_group="queues", config=text.replace(anchor, CAPPED + anchor, 1)))
    partition = "default"
    user = USERS[g.capped.randrange(len(USERS))]
    yield from _hog(g, partition, "root.a", user, 20, 3)
    yield from _hog(g, partition, "root.capped.c2", user, 10, 3)
    app_id = g.new_id("app-")
    yield _submit_to(g, app_id, "root.capped.c1", partition, si.UserGroupInformation(
        user=user[0], groups=list(user[1])))
    if not _placed(g, app_id, "root.capped.c1"):
        return
    yield _send(g, _slotted(_ask(g, app_id, g.new_id("ask-"), 20, priority=10,
                                 preemption_policy=si.PreemptionPolicy(
                                     allow_preempt_self=True, allow_preempt_other=True))))
    yield Step.schedule()
    yield Step.advance(16.0)
    yield from _reserve_then_preempt()


def _victims_unconfirmed(g: Gen) -> bool:
    """Whether the core preempted something the shim has not confirmed yet."""
    rv = g.rv
    return rv is not None and any(a.releasing == TT.PREEMPTED_BY_SCHEDULER
                                  for a in rv.allocs.values())


ENDING_SHARE = 0.4
"""How many preemption stories go on to one of the directed endings (when the
configuration has a place for one)."""


def _directed_ending(g: Gen) -> Iterator[Step]:
    """Sometimes, a preemption the story itself rarely sets up, played on a node of its own
    (``SLOT``) after the applications of the asking path are removed: an ask behind a
    preemption fence with the victims' leaf outside it (law 7: nothing is preempted); an
    ask its user's or group's limit holds back, its leaf under its guarantee (a limit is
    never a reason to preempt); an ask under its own leaf's guarantee whose parent, shared
    with the victims' leaf, stays over the parent's guarantee whatever victims that leaf's
    own guarantee lets go (law 4: nothing is preempted); or an ask that preempted, deleted
    by the shim before the victims are confirmed, and a second ask of its application
    (its victims must not be ones already being released). Every choice comes from
    ``g.ending``, so the case's other draws stay as they were."""
    if g.ending.random() >= ENDING_SHARE:
        return
    homes = _ending_homes(g.scenario.shape.text)
    kinds = [k for k in ("fence", "limit", "parent", "second") if homes[k]]
    if homes["second"]:
        # Played where "second" can be: two leaves inside one fence, nothing guaranteed above.
        kinds += ["room", "required"]
    rv = g.rv
    if not kinds or rv is None or rv.stopped or rv.paused:
        return
    kind = kinds[g.ending.randrange(len(kinds))]
    pool = homes["second" if kind in ("room", "required") else kind]
    home = pool[g.ending.randrange(len(pool))]
    if kind == "room":
        yield from _room_ending(g, *home)
    elif kind == "required":
        yield from _required_ending(g, *home)
    elif kind == "fence":
        yield from _fence_ending(g, *home)
    elif kind == "limit":
        yield from _limit_ending(g, *home)
    elif kind == "second":
        yield from _second_ending(g, *home)
    else:
        yield from _parent_ending(g, *home)


@functools.lru_cache(maxsize=64)
def _ending_homes(text: str) -> dict[str, list[tuple[Any, ...]]]:
    """Where each directed ending can be played in a configuration, by its reading alone
    (a user may submit to both leaves, preemption is on in the partition, the victims'
    leaf has a memory guarantee on its path and is not ``disabled``)."""
    config = model.read(text)
    out: dict[str, list[tuple[Any, ...]]] = {"fence": [], "limit": [], "parent": [],
                                             "second": []}
    for name in sorted(config.partitions):
        pm = config.partitions[name]
        if not pm.preemption:
            continue
        leaves = pm.leaves()
        users = {leaf: [u for u in USERS if acl_placement.may_submit(pm.chain(leaf), *u)]
                 for leaf in leaves}
        for ask_leaf in leaves:
            achain = pm.chain(ask_leaf)
            if not _memory_guarantee(achain) or not users[ask_leaf]:
                continue
            root = fence_root(achain)
            unlimited = [u for u in users[ask_leaf] if not _limits_of(achain, u)]
            for victim in leaves:
                vchain = pm.chain(victim)
                if victim == ask_leaf or disabled(vchain) or not _memory_guarantee(vchain) \
                        or not users[victim]:
                    continue
                above = {q.path for q in vchain}
                shared = [q for q in achain if q.path in above and q.path != model.ROOT]
                inside = (victim + ".").startswith(root + ".")
                if not inside and unlimited and not any(q.guaranteed for q in shared):
                    out["fence"].append((name, ask_leaf, victim, unlimited, users[victim]))
                if inside and unlimited and not any(q.guaranteed for q in shared):
                    out["second"].append((name, ask_leaf, victim, unlimited, users[victim]))
                if inside and not any(q.guaranteed for q in shared):
                    limited = [u for u in users[ask_leaf] if any(
                        m < _memory_guarantee(achain) for m in _limits_of(achain, u))]
                    if limited:
                        out["limit"].append((name, ask_leaf, victim, limited, users[victim]))
                parent = next((q for q in shared if (q.guaranteed or {}).get("memory")), None)
                if inside and unlimited and parent is not None:
                    out["parent"].append((name, ask_leaf, victim, unlimited, users[victim],
                                          parent.path))
    return out
