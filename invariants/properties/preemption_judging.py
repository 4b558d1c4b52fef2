"""The judging of each preemption the core decides: the victims released in one response
against the checker's own reading of YuniKorn's preemption (``preemptions.py``), the
reservations it makes, and the required-node takeover."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from itertools import pairwise

from invariants.properties import limits
from invariants.properties.preemptions import (
    ENOUGH,
    NODE,
    ORDER,
    OUTCOME,
    TRIGGER,
    USEFUL,
    VICTIMS,
    _clusters,
    _preempting,
    above_cap,
    at_or_above,
    cap,
    delay,
    disabled,
    fence_root,
    guaranteed,
    queue_chain,
    required_candidates,
    victim_priority_bound,
)
from invariants.readings import arithmetic as qty
from invariants.readings import model, view
from invariants.readings.calls import Call, Monitor
from invariants.readings.shim import AllocView, AskView, RMView


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
        _required_headroom(m, rv, call, subject, ask, app.partition, chain)
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


def _required_headroom(m: Monitor, rv: RMView, call: Call, subject: str, ask: AskView,
                       partition: str, chain: list[model.QueueModel]) -> None:
    """Behaviour 2.6 step 1: the normal pass reaches a required-node ask only after the
    headroom checks, so an ask over a queue's max never preempts. Usage is read without
    what started at this call's time (placed in this call, maybe after the preemption):
    a lower bound of the usage the decision saw, so the check never claims too much."""
    before = [a for a in rv.allocs.values() if a.created < call.now]
    for q in chain:
        if q.max is None:
            continue
        below = {a.id for a in rv.apps_below(partition, q.path)}
        used = qty.total(a.resource for a in before if a.app in below)
        if not qty.within(qty.plus(used, ask.resource), q.max):
            m.report(TRIGGER, subject, f"the ask {qty.show(ask.resource)} is over the max "
                     f"{qty.show(q.max)} of {q.path}, which already holds {qty.show(used)}: "
                     "required-node preemption comes after the headroom checks")
            return


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
    passed = [a for a in required_candidates(rv, ask, ask.required_node)
              if a.uuid not in taken]

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
